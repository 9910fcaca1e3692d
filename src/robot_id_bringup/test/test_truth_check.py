"""The demo's check against the simulator's truth (truth_check), on the motion the simulated robot follows: a motion
that does not stop at its end is sent ending at rest (the joint trajectory controller's rule), and what is recorded
is the motion itself, the braking tail past it; the demo failed there with a traceback when the rule came in."""

import numpy as np

from robot_id_bringup.truth_check import followed
from robot_id_estimator.synthetic import random_motion
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.true_dynamics import TRUTH_FRICTION, urdf_dynamics


def test_a_motion_that_moves_at_its_end_is_followed_and_recorded_without_its_tail():
    config = load_robot_config("iiwa14")
    truth = urdf_dynamics(config.load_model(TRUTH_FRICTION))
    period_s = 2.0
    t_s = np.arange(0.0, 2 * period_s + 0.005, 0.01)
    motion = random_motion(config.load_model(), period_s, 3, t_s % period_s, 7)
    assert np.abs(motion[1][-1]).max() > 0.05                     # it moves at its last point
    run = followed("iiwa14", truth, t_s, motion, period_s, 3, 1, "test")
    assert len(run.t_s) == round(period_s * config.state_rate_hz)
    expected = random_motion(config.load_model(), period_s, 3, (run.t_s + period_s) % period_s, 7)[0]
    assert np.abs(run.q_rad - expected).max() < 0.01              # the motion, tracked, not a stop
