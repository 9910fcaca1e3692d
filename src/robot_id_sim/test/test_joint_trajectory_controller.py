"""The joint trajectory controller stand-in (joint_trajectory_controller.py) against the real controller's rules
(docs/jtc_rules.md), and every shipped motion sent the way the excitation node sends it: taken by the controller
as each vendor's stack configures it, every command ending at rest, and without a jump of the command where the
next command takes over."""

import pathlib

import numpy as np
import pytest
from vendor_controllers import FRANKA_FILE, vendor_controller

from robot_id_excitation.constraints import design_limits
from robot_id_excitation.excitation_guard import STOP_ACCELERATION_FRACTION
from robot_id_excitation.excitation_plan import approach, excitation_chunks
from robot_id_excitation.excitation_settings import ExcitationSettings
from robot_id_excitation.trajectory_file import load_trajectory, shipped_trajectories
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.joint_trajectory_controller import FLOAT_EPSILON, ControllerParameters, refusal
from robot_id_sim.trajectory_follower import TrajectoryCommand, TrajectoryFollower

SHIPPED = shipped_trajectories()
SETTINGS = ExcitationSettings()
"""the node's defaults: 100 points/s, lead 0.1 s, overlap 0.5 s, pieces of at most 30 s"""
NUM_PERIODS = 2
"""two periods show both boundaries: between pieces of a period and between periods"""
JUMP_BOUND_RAD = 1e-6
SPLICE_DEVIATION_RAD = 5e-4
"""how far the desired motion may leave the trajectory: the controller's quintic from its desired state at a
command's arrival to the command's first point, lead_s later, meets the curve in position, velocity and
acceleration at both ends but not between (measured at most 4.2e-4 rad, in a friction sweep's blend)"""
TRACKING_ERROR_RAD = 0.01
"""the measured state the controller is given is this far from the command: a controller configured as the node
requires ignores it"""


def sent(path: pathlib.Path):
    """The robot's joint names and every command of a run (approach from 0.1 rad away, NUM_PERIODS periods) as the
    node builds them: (stamp, points)."""
    trajectory = load_trajectory(path)
    config = load_robot_config(trajectory.robot)
    limits = design_limits(config)
    s = SETTINGS
    start = trajectory.evaluate(np.zeros(1))[0][0]
    q_from = np.clip(start + 0.1, limits.position_lower_rad, limits.position_upper_rad)
    move = approach(q_from, start, s.approach_speed_rad_s, s.approach_acceleration_rad_s2, s.rate_hz)
    t0_s = 100.0 + move.duration_s + s.settle_s
    chunks = excitation_chunks(trajectory, NUM_PERIODS, s.rate_hz, s.overlap_s, s.max_chunk_s,
                               STOP_ACCELERATION_FRACTION * limits.acceleration_rad_s2)
    commands = [(100.0, move.points)] + [(t0_s + c.offset_s, c.points) for c in chunks]
    return config.joint_names, trajectory, t0_s, q_from, commands


@pytest.fixture(scope="module", params=sorted(SHIPPED))
def run(request):
    return sent(SHIPPED[request.param])


def test_every_command_of_every_shipped_motion_is_taken_as_the_vendors_configure_the_controller(run):
    """Refused by neither the LBR stack's controller nor franka_ros2's with robot_id's file (nor the defaults);
    each arrives lead_s before its first point and ends at rest (the approach to rounding)."""
    names, _, _, _, commands = run
    for controller in {vendor_controller(names), ControllerParameters(names)}:
        for stamp_s, p in commands:
            assert refusal(controller, stamp_s - SETTINGS.lead_s, stamp_s, names, p.t_rel_s, p.q_rad, p.dq_rad_s,
                           p.ddq_rad_s2) is None
            assert np.abs(p.dq_rad_s[-1]).max() <= FLOAT_EPSILON and np.abs(p.ddq_rad_s2[-1]).max() <= 1e-9


def test_the_command_does_not_jump_where_the_next_command_takes_over(run):
    """The follower as the node requires the controller (interpolate_from_desired_state), given a measured state
    TRACKING_ERROR_RAD off: at every arrival the desired position before and after agree within JUMP_BOUND_RAD, the
    new first point lies on the running command, and the desired motion is the trajectory's within
    SPLICE_DEVIATION_RAD (the old tail never runs)."""
    names, trajectory, t0_s, q_from, commands = run
    config = load_robot_config(trajectory.robot)
    lim = config.limits
    follower = TrajectoryFollower(names, lim.position_lower_rad, lim.position_upper_rad, lim.velocity_rad_s,
                                  controller=ControllerParameters.as_required(names))
    follower.hold(q_from)
    t_s = np.linspace(t0_s, t0_s + NUM_PERIODS * trajectory.period_s, 2001)
    jumps, gaps, q_desired = [], [], []
    for k, (stamp_s, p) in enumerate(commands):
        arrival_s = stamp_s - SETTINGS.lead_s
        gaps.append(np.abs(follower.desired(stamp_s)[0] - p.q_rad[0]).max())
        before = follower.desired(arrival_s)
        measured = (before[0] + TRACKING_ERROR_RAD, before[1], None)
        assert follower.command(arrival_s, TrajectoryCommand(stamp_s, names, p.t_rel_s, p.q_rad, p.dq_rad_s,
                                                              p.ddq_rad_s2), measured) is None
        jumps.append(np.abs(follower.desired(arrival_s)[0] - before[0]).max())
        next_arrival_s = commands[k + 1][0] - SETTINGS.lead_s if k + 1 < len(commands) else np.inf
        q_desired += [follower.desired(t)[0] for t in t_s[(t_s >= arrival_s) & (t_s < next_arrival_s)]]
    assert max(jumps) <= JUMP_BOUND_RAD and max(gaps[1:]) <= JUMP_BOUND_RAD
    period_s = trajectory.period_s
    q_trajectory = trajectory.evaluate(np.minimum((t_s - t0_s) % period_s, period_s))[0]
    assert np.abs(np.array(q_desired) - q_trajectory).max() < SPLICE_DEVIATION_RAD


def test_the_default_controller_starts_a_new_command_from_the_measured_state():
    """Why the node requires interpolate_from_desired_state: with the default, the command jumps to the measured
    position at the arrival of the next piece (here the iiwa14 sweep's second piece, TRACKING_ERROR_RAD off)."""
    names, _, _, q_from, commands = sent(SHIPPED["iiwa14_friction_sweep"])
    follower = TrajectoryFollower(names, np.full(7, -3.0), np.full(7, 3.0), np.full(7, 2.0),
                                  controller=ControllerParameters(names))
    follower.hold(q_from)
    for stamp_s, p in commands[:3]:              # the approach, the first piece, the second
        arrival_s = stamp_s - SETTINGS.lead_s
        before = follower.desired(arrival_s)
        follower.command(arrival_s, TrajectoryCommand(stamp_s, names, p.t_rel_s, p.q_rad, p.dq_rad_s, p.ddq_rad_s2),
                         (before[0] + TRACKING_ERROR_RAD, before[1], None))
    jump = np.abs(follower.desired(arrival_s)[0] - before[0])
    assert np.allclose(jump, TRACKING_ERROR_RAD, rtol=1e-9)


NAMES = ("j1", "j2")
T = np.array([0.5, 1.0])
P = np.array([[0.1, 0.2], [0.3, 0.4]])


DEFAULT = ControllerParameters(NAMES)


def _refusal(controller=DEFAULT, now_s=0.0, stamp_s=0.0, names=NAMES, v=None):
    return refusal(controller, now_s, stamp_s, names, T, P, v, None)


def test_a_message_the_controller_refuses_is_refused_with_its_line():
    """The lines of JointTrajectoryController::validate_trajectory_msg (Jazzy 4.42, Kilted 5.17)."""
    moving = np.array([[0.1, 0.1], [0.0, 0.2]])
    assert _refusal(v=moving) == "Velocity of last trajectory point of joint j2 is not zero: 0.200000000000000"
    assert _refusal(v=moving * 1e-8) is None                               # below float epsilon: at rest
    assert _refusal(ControllerParameters(NAMES, allow_nonzero_velocity_at_trajectory_end=True), v=moving) is None
    assert _refusal(now_s=10.0, stamp_s=8.0) == ("Received trajectory with non-zero start time (8.000000) that ends "
                                                 "in the past (9.000000)")
    assert _refusal(now_s=10.0, stamp_s=9.0) is None                       # ends at 10.0: not in the past
    assert _refusal(now_s=10.0, stamp_s=0.0) is None                       # zero stamp: starts on arrival
    assert _refusal(names=("j1", "x")) == "Incoming joint x doesn't match the controller's joints."
    assert _refusal(names=("j1",)) == "Joints on incoming trajectory don't match the controller joints."


def test_the_controller_parameters_are_read_from_the_file_a_lab_uses():
    franka = ControllerParameters.from_yaml(FRANKA_FILE)
    assert len(franka.joints) == 7 and all(name.endswith(f"joint{i}") for i, name in enumerate(franka.joints, 1))
    assert franka.splices_from_desired and not franka.allow_nonzero_velocity_at_trajectory_end
    assert not ControllerParameters(NAMES).splices_from_desired                  # the controller's default


def test_the_constraints_are_read_from_the_file_a_lab_uses():
    franka = ControllerParameters.from_yaml(FRANKA_FILE)
    assert franka.trajectory_tolerance_rad == (0.1,) * 7 and franka.goal_tolerance_rad == (0.02,) * 7
    assert franka.goal_time_s == 0.5 and franka.stopped_velocity_tolerance_rad_s == 0.05
    lbr = vendor_controller(tuple(f"lbr_A{i}" for i in range(1, 8)))
    assert lbr.trajectory_tolerance_rad == (0.0,) * 7 and lbr.goal_time_s == 0.0          # nothing checked


TOLERANT = ControllerParameters(NAMES, trajectory_tolerance_rad=(0.1, 0.0), goal_tolerance_rad=(0.02, 0.02),
                                stopped_velocity_tolerance_rad_s=0.05, goal_time_s=0.5)


def _following(controller: ControllerParameters = TOLERANT) -> TrajectoryFollower:
    follower = TrajectoryFollower(NAMES, np.full(2, -3.0), np.full(2, 3.0), np.full(2, 2.0), controller=controller)
    follower.hold(P[0])
    assert follower.command(0.0, TrajectoryCommand(0.0, NAMES, T, P, None, None)) is None
    return follower


def test_a_path_error_beyond_the_trajectory_tolerance_holds_the_measured_position():
    """constraints.<joint>.trajectory while the trajectory runs: within it the controller goes on; beyond it it logs
    and holds where the arm is; a joint with tolerance 0 is not checked."""
    follower = _following()
    desired = follower.desired(0.7)[0]
    assert follower.constraint_failure(0.7, desired + np.array([0.09, 5.0]), np.zeros(2)) is None
    assert follower.following
    measured = desired + np.array([-0.11, 0.0])
    line = follower.constraint_failure(0.75, measured, np.zeros(2))
    assert line.startswith("State tolerances failed for joint 0: position error") and "constraints.j1.trajectory 0.1" \
        in line and line.endswith("holding position due to state tolerance violation")
    assert not follower.following and np.array_equal(follower.desired(0.8)[0], measured)


def test_a_goal_missed_beyond_the_goal_time_holds_and_a_goal_met_is_checked_no_more():
    """After the last point (1.0 s): missed for longer than goal_time (0.5 s) the controller holds; met once, it
    stops checking; with goal_time 0 it waits without limit."""
    off = P[-1] + np.array([0.03, 0.0])
    follower = _following()
    follower.desired(1.0)                                                        # the trajectory ends
    assert follower.constraint_failure(1.3, off, np.zeros(2)) is None                 # missed, within goal_time
    line = follower.constraint_failure(1.6, off, np.zeros(2))
    assert line.startswith("Exceeded goal_time_tolerance: holding position... (j1: position error 0.0300 rad")
    assert np.array_equal(follower.desired(1.7)[0], off)
    met = _following()
    met.desired(1.0)
    assert met.constraint_failure(1.1, P[-1], np.array([0.0, 0.04])) is None           # met: stopped below 0.05
    assert met.constraint_failure(1.6, off, np.zeros(2)) is None
    patient = _following(ControllerParameters(NAMES, goal_tolerance_rad=(0.02, 0.02)))
    patient.desired(1.0)
    assert patient.constraint_failure(100.0, off, np.zeros(2)) is None
