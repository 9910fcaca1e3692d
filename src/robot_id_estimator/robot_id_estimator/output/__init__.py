"""Files a user loads and reads. In: an identification. Out: identified.urdf, identified.xml (MJCF), the report
pages, written whole or not at all.

- urdf_export: write_identified_model, ModelFiles; urdf_edit; mjcf_export: write_mjcf
- model_files: the written model loaded as a user does; written_check: check_written_model
- report: write_identification_report, write_validation_report, render_page; report_figures, friction_figure, figures
"""
