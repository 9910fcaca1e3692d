"""Recordings in. In: CSV logs or rosbag2 bags (the recorder's period index). Out: a Recording (t, q, dq, τ per joint)
cleaned of what real logs contain, with every repair in its notes.

- recording: Recording, DataError, Unselected, select_joints, save_csv (the type every reader builds)
- loading: load_recording, the entry point (a CSV file or a bag, cleaned, cut to a time window)
- csv_reading, csv_columns (parse_column_map), bag_reading, cleaning (clean, resample): the readers and repairs
- described_excitation (Excitation), flagged_periods, period_check (detect_period, check_periods): the periods
"""
