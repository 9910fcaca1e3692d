"""From recordings to the regression. In: Recordings and the arm. Out: averaged, filtered samples and the base
regressor filtered like the torque, streamed in chunks and reduced.

- regression_data: regression_data, RegressionData, N_FOLDS (the stage); coulomb_columns and replaced_by_stribeck:
  the columns the friction stage and the estimation treat apart
- samples: process, ProcessedData, the zero-phase and first-order filters
- input_checks: the refusals before anything is estimated; with_stack_torque_filter
- regression_stream, reduction (JointBlocks), model_side (torque_side): the regressor built, filtered and reduced
- torque_filter: found_time_constant, the robot's torque filter found from the data
- motion_summary: motion_summary, compare_motion, static_joints
"""
