"""Every parameter set against data. In: an identification and recordings (its own, or others). Out: each set's
torque prediction errors and the checks that decide what is written."""
