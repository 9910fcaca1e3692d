"""From recordings to the regression. In: Recordings and the arm. Out: averaged, filtered samples and the base
regressor filtered like the torque, streamed in chunks and reduced (processing.regression_data.RegressionData)."""
