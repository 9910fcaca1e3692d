"""Estimation of base, essential and friction parameters from recordings, validation and reports.

A one-way pipeline on floors; every module imports only from floors below its own (test_house_rules checks it
with the import statements; ESTIMATOR_FLOORS there is this list in code):

1. Ground floor, what every stage reads or writes and nothing computes: progress (the callback that reports), the
   Stribeck law (stribeck_law: Luo et al. 2024, eq. 7, fitted by the friction stage, evaluated by the processing,
   the exports and the validation), settings (EstimatorConfig with every stage's config: ProcessingConfig,
   PhysicalConfig), robot_setup (the arm to identify), results (the result types and their JSON) and exit_codes
   (what a result means to the command line and the report pages).
2. recordings: a Recording (the type, then the readers built on it, then load_recording dispatching to them).
3. processing: samples and the filtered base regressor, reduced (RegressionData).
4. estimation: base and essential parameters. 5. friction: the Coulomb law and the Stribeck sweeps, which
   re-estimate. 6. physical: consistent link parameters. 7. validation: every set against the data it was fitted to
   (fit_metrics) and against held-out data, the diagnosis. 8. output: model files and report pages.
9. The use cases on top: pipeline (identify), identify_and_write and validate, payload, then messages (a result as
   a ROS message), the node and the command line (__main__).

A recording's route through the stages is one way too: processing, friction, estimation, physical, validation,
output, never back to a stage it left (test/test_estimator_route.py traces it). Friction sweeps add a stage first
(their Stribeck fit) and a choice after (identify again without a joint's sweep where it predicts worse).

Synthetic data of a known model, for the tests and the benchmarks, is the lab's (robot_id_lab.synthetic).
"""
