"""Every parameter set against data. In: the regression and the sets. Out: each set's torque prediction errors on
data it was not fitted to, and the diagnosis of a data mistake. (Checking a written model on other recordings is the
use case robot_id_estimator.validate.)

- fit_metrics: identification_metrics, each set against the data it was fitted to (results.Metrics)
- held_out: cross_validate, predicted_blocks (their result: results.held_out; the verdicts: results.set_checks)
- prediction_errors: predict_torque, torque errors and the momentum observer
- diagnosis_stage: diagnosis_of; diagnosis: the mistakes tried
"""
