"""The trajectory follower behaves as ros2_control's joint_trajectory_controller: start time, interpolation by
what the points carry, replacement, holding, joint reordering, and refusals with their reasons."""

import numpy as np
import pytest

from robot_id_sim.joint_trajectory_controller import ControllerParameters
from robot_id_sim.trajectory_follower import TrajectoryCommand, TrajectoryFollower

NAMES = ("a", "b", "c")
LOWER = np.array([-2.0, -2.0, -1.0])
UPPER = np.array([2.0, 2.0, 1.0])
SPEED = np.array([1.5, 1.5, 1.0])
HOLD = np.array([0.1, -0.2, 0.3])

T = np.array([0.5, 1.0, 1.8])                     # time_from_start of the points
P = np.array([[0.4, 0.0, 0.5], [0.8, 0.5, 0.2], [1.0, 0.7, -0.1]])
V = np.array([[0.6, 0.9, -0.2], [0.5, 0.3, -0.7], [0.0, 0.0, 0.0]])
A = np.array([[0.1, -1.0, 2.0], [-0.5, 0.4, 0.3], [0.0, 0.0, 0.0]])
EXACT = 1e-12
"""Point values are reproduced by evaluating a polynomial at the segment start: exact up to rounding."""


def follower() -> TrajectoryFollower:
    f = TrajectoryFollower(NAMES, LOWER, UPPER, SPEED)
    f.hold(HOLD)
    return f


def cmd(stamp=0.0, t=T, p=P, v=None, a=None, names=NAMES) -> TrajectoryCommand:
    return TrajectoryCommand(stamp, tuple(names), np.asarray(t, float), np.asarray(p, float), v, a)


def derivative(f: TrajectoryFollower, t: float, which: int, h: float = 1e-6) -> np.ndarray:
    """Central difference of desired()[which] at t."""
    return (f.desired(t + h)[which] - f.desired(t - h)[which]) / (2 * h)


def test_holds_where_it_was_put():
    f = follower()
    q, dq, ddq = f.desired(123.0)
    assert not f.following
    np.testing.assert_array_equal(q, HOLD)
    assert not dq.any() and not ddq.any()


def test_quintic_passes_through_points_with_their_velocity_and_acceleration():
    f = follower()
    now = 1.0
    assert f.command(now, cmd(v=V, a=A)) is None and f.following
    for k in range(len(T) - 1):
        q, dq, ddq = f.desired(now + T[k])
        np.testing.assert_allclose(q, P[k], atol=EXACT)
        np.testing.assert_allclose(dq, V[k], atol=EXACT)
        np.testing.assert_allclose(ddq, A[k], atol=EXACT)
    # inside a segment the velocity and acceleration are the derivatives of the position (finite differences:
    # 1e-6 s steps on polynomials of size ~1 give ~1e-8 rounding)
    for t in (now + 0.2, now + 0.7, now + 1.5):
        np.testing.assert_allclose(derivative(f, t, 0), f.desired(t)[1], atol=1e-7)
        np.testing.assert_allclose(derivative(f, t, 1), f.desired(t)[2], atol=1e-6)
    # approached from the left the point is the same (continuity across segment boundaries)
    np.testing.assert_allclose(f.desired(now + T[1] - 1e-9)[0], P[1], atol=1e-8)
    q, dq, ddq = f.desired(now + T[-1])
    np.testing.assert_array_equal(q, P[-1])
    assert not dq.any() and not ddq.any()


def test_linear_between_position_only_points():
    """Position-only points: straight lines, velocity the slope, no acceleration."""
    f = follower()
    now = 2.0
    assert f.command(now, cmd()) is None
    for k in range(len(T) - 1):
        slope = (P[k + 1] - P[k]) / (T[k + 1] - T[k])
        for s in (0.0, 0.25, 0.5, 0.9):
            t = now + T[k] + s * (T[k + 1] - T[k])
            q, dq, ddq = f.desired(t)
            np.testing.assert_allclose(q, P[k] + s * (P[k + 1] - P[k]), atol=EXACT)
            np.testing.assert_allclose(dq, slope, atol=EXACT)
            assert not ddq.any()


def test_cubic_matches_positions_and_velocities():
    f = follower()
    now = 0.5
    assert f.command(now, cmd(v=V)) is None
    for k in range(len(T) - 1):
        q, dq, _ = f.desired(now + T[k])
        np.testing.assert_allclose(q, P[k], atol=EXACT)
        np.testing.assert_allclose(dq, V[k], atol=EXACT)
        # the segment ends at the next point with its velocity (approached from the left)
        end = now + T[k + 1] - 1e-9
        np.testing.assert_allclose(f.desired(end)[0], P[k + 1], atol=1e-8)
        np.testing.assert_allclose(f.desired(end)[1], V[k + 1], atol=1e-7)
    t = now + 1.3
    np.testing.assert_allclose(derivative(f, t, 0), f.desired(t)[1], atol=1e-7)
    np.testing.assert_allclose(derivative(f, t, 1), f.desired(t)[2], atol=1e-6)


def test_zero_stamp_starts_on_arrival_a_stamp_starts_then():
    on_arrival, stamped = follower(), follower()
    assert on_arrival.command(3.0, cmd(stamp=0.0)) is None
    assert stamped.command(3.0, cmd(stamp=5.0)) is None
    for k in range(len(T) - 1):
        np.testing.assert_allclose(on_arrival.desired(3.0 + T[k])[0], P[k], atol=EXACT)
        np.testing.assert_allclose(stamped.desired(5.0 + T[k])[0], P[k], atol=EXACT)


def test_a_stamp_before_time_0_starts_then_not_on_arrival():
    """On the wall clock the robot's time 0 is its start: a trajectory stamped 0.5 s before it started (in robot
    time -0.5 s) runs as if it had started then, as joint_trajectory_controller runs a stamp in the past."""
    f = follower()
    assert f.command(0.0, cmd(stamp=-0.5)) is None
    np.testing.assert_allclose(f.desired(-0.5 + T[1])[0], P[1], atol=EXACT)


def test_before_the_first_point_it_goes_there_from_the_state_at_arrival():
    """Linear: from HOLD at arrival to P[0] at its time, then on. With a future stamp the first segment is longer
    (arrival 3 s, first point at 5 + 0.5 s)."""
    f = follower()
    assert f.command(3.0, cmd(stamp=5.0)) is None
    q, dq, _ = f.desired(3.0)
    np.testing.assert_array_equal(q, HOLD)
    for s in (0.25, 0.5, 0.75):
        t = 3.0 + s * 2.5
        np.testing.assert_allclose(f.desired(t)[0], HOLD + s * (P[0] - HOLD), atol=EXACT)
        np.testing.assert_allclose(f.desired(t)[1], (P[0] - HOLD) / 2.5, atol=EXACT)
    # quintic: the arrival state is the hold (at rest), and the arm reaches P[0] with V[0], A[0]
    g = follower()
    assert g.command(3.0, cmd(v=V, a=A)) is None
    q, dq, ddq = g.desired(3.0)
    np.testing.assert_allclose(q, HOLD, atol=EXACT)
    assert np.abs(dq).max() < EXACT and np.abs(ddq).max() < EXACT
    np.testing.assert_allclose(g.desired(3.0 + T[0])[1], V[0], atol=EXACT)


def test_a_first_point_already_past_jumps_onto_the_new_curve():
    """Stamp 1 s, points at 1.5, 2.0, 2.8 s, arrival at 1.7 s: as the controller does (Trajectory::sample with the
    first point's time passed), the arm is put on the segment from 1.5 s to 2.0 s where it is now: 40 % along."""
    f = follower()
    assert f.command(1.7, cmd(stamp=1.0)) is None
    np.testing.assert_allclose(f.desired(1.7)[0], P[0] + 0.4 * (P[1] - P[0]), atol=EXACT)
    np.testing.assert_allclose(f.desired(2.0)[0], P[1], atol=EXACT)
    # a first point due on arrival is no longer ahead: the arm is on it at once
    g = follower()
    assert g.command(1.0, cmd(t=[0.0, 0.5, 1.0], p=P)) is None
    np.testing.assert_allclose(g.desired(1.0)[0], P[0], atol=EXACT)
    np.testing.assert_allclose(g.desired(1.25)[0], 0.5 * (P[0] + P[1]), atol=EXACT)


def test_by_default_a_new_command_starts_from_the_measured_state():
    """The controller's default (interpolate_from_desired_state false): the segment to the first point starts at
    the measured position and velocity, so the command jumps by the tracking error; with the parameter true it
    starts at the desired state. Linear points: the segment is linear from the start it takes."""
    measured = (HOLD + np.array([0.05, -0.02, 0.01]), np.zeros(3), None)
    f = follower()
    assert f.command(3.0, cmd(), measured) is None
    np.testing.assert_allclose(f.desired(3.0)[0], measured[0], atol=EXACT)
    np.testing.assert_allclose(f.desired(3.25)[0], 0.5 * (measured[0] + P[0]), atol=EXACT)
    g = TrajectoryFollower(NAMES, LOWER, UPPER, SPEED, controller=ControllerParameters(NAMES, open_loop_control=True))
    g.hold(HOLD)
    assert g.command(3.0, cmd(), measured) is None
    np.testing.assert_allclose(g.desired(3.0)[0], HOLD, atol=EXACT)


@pytest.mark.parametrize("order", ["linear", "cubic", "quintic"])
def test_a_new_command_replaces_the_old_one_at_once(order):
    """At the moment of replacement the desired position is continuous (velocity too for a cubic, acceleration
    too for a quintic); from then on only the new points count."""
    f = follower()
    assert f.command(0.0, cmd(v=V, a=A)) is None
    now = 0.7                                      # inside the old trajectory's second segment
    before = f.desired(now)
    new_p = np.array([[-0.5, 0.3, 0.0], [-0.6, 0.2, 0.1]])
    new_v = None if order == "linear" else np.zeros((2, 3))
    new_a = np.zeros((2, 3)) if order == "quintic" else None
    assert f.command(now, cmd(t=[0.4, 0.9], p=new_p, v=new_v, a=new_a)) is None
    after = f.desired(now)
    continuous = {"linear": 1, "cubic": 2, "quintic": 3}[order]
    for x, y in zip(after[:continuous], before[:continuous], strict=True):
        np.testing.assert_allclose(x, y, atol=EXACT)
    np.testing.assert_allclose(f.desired(now + 0.4)[0], new_p[0], atol=EXACT)
    # the old point due at 1.0 s is not desired any more
    assert np.abs(f.desired(1.0)[0] - P[1]).max() > 0.1
    np.testing.assert_array_equal(f.desired(now + 5.0)[0], new_p[-1])


def test_after_the_last_point_it_holds_it():
    f = follower()
    assert f.command(0.0, cmd(v=V)) is None
    q, dq, ddq = f.desired(T[-1] + 10.0)
    np.testing.assert_array_equal(q, P[-1])
    assert not dq.any() and not ddq.any() and not f.following
    np.testing.assert_array_equal(f.desired(T[-1] + 20.0)[0], P[-1])


def test_a_last_point_due_now_is_held_at_once():
    f = follower()
    assert f.command(2.0, cmd(stamp=0.2)) is None          # last point at 0.2 + 1.8 = 2.0 s = now
    assert not f.following
    np.testing.assert_array_equal(f.desired(2.0)[0], P[-1])


def test_joint_names_in_another_order_are_reordered():
    order = [2, 0, 1]                                # c, a, b
    names = [NAMES[i] for i in order]
    f, g = follower(), follower()
    assert f.command(0.0, cmd(v=V, a=A)) is None
    assert g.command(0.0, cmd(p=P[:, order], v=V[:, order], a=A[:, order], names=names)) is None
    for t in (0.0, 0.3, 0.5, 0.77, 1.5, 2.5):
        for x, y in zip(f.desired(t), g.desired(t), strict=True):
            np.testing.assert_array_equal(x, y)


def test_points_exactly_on_the_limits_are_accepted():
    f = follower()
    assert f.command(0.0, cmd(t=[1.0, 2.0, 3.0], p=[LOWER, UPPER, UPPER], v=[SPEED, -SPEED, 0 * SPEED])) is None


REFUSALS = [
    # the controller's own lines (JointTrajectoryController::validate_trajectory_msg)
    (dict(names=("a", "b", "x")), "Incoming joint x doesn't match the controller's joints."),
    (dict(names=("a", "b")), "Joints on incoming trajectory don't match the controller joints."),
    (dict(names=("a", "b", "b")), "joint names ['a', 'b', 'b'] are not the arm's ['a', 'b', 'c']"),
    (dict(t=[], p=np.zeros((0, 3))), "Empty trajectory received."),
    (dict(p=P[:, :2]), "Mismatch between joint_names size (3) and positions (2) at point #0."),
    (dict(p=P[:2]), "Mismatch between joint_names size (3) and positions (0) at point #2."),
    (dict(v=V[:, :2]), "Mismatch between joint_names size (3) and velocities (2) at point #0."),
    (dict(v=V, a=A[:2]), "Mismatch between joint_names size (3) and accelerations (0) at point #2."),
    (dict(t=[0.5, 0.5, 1.0]), "Time between points 0 and 1 is not strictly increasing, it is 0.500000 and 0.500000"),
    (dict(t=[0.5, 1.2, 1.0]), "Time between points 1 and 2 is not strictly increasing, it is 1.200000 and 1.000000"),
    (dict(v=V + 0.2), "Velocity of last trajectory point of joint a is not zero: 0.200000000000000"),
    # the arm's: as a robot stops on them
    (dict(t=[-0.1, 0.5, 1.0]), "time_from_start must be non-negative and strictly increasing"),
    (dict(p=np.where(np.eye(3, dtype=bool), np.nan, P)), "the trajectory contains NaN or infinite values"),
    (dict(v=np.where(np.eye(3, dtype=bool), np.inf, V)),
     "Velocity of last trajectory point of joint c is not zero: inf"),
    (dict(v=np.where(np.eye(3, k=1, dtype=bool), np.inf, V)), "the trajectory contains NaN or infinite values"),
    (dict(t=[0.5, np.nan, 1.8]), "the trajectory contains NaN or infinite values"),
    (dict(p=P + np.array([[0, 0, 0], [0, 0, 0.85], [0, 0, 0]])),
     "point 1 puts c at 1.0500 rad, outside its limits [-1.0000, 1.0000] rad"),
    (dict(p=P - np.array([[2.5, 0, 0], [0, 0, 0], [0, 0, 0]])),
     "point 0 puts a at -2.1000 rad, outside its limits [-2.0000, 2.0000] rad"),
    (dict(v=V + np.array([[0, 0, 0], [0, 1.6, 0], [0, 0, 0]])),
     "point 1 moves b at 1.9000 rad/s, beyond its limit 1.5000 rad/s"),
    (dict(v=-V - np.array([[0, 0, 1.3], [0, 0, 0], [0, 0, 0]])),
     "point 0 moves c at 1.1000 rad/s, beyond its limit 1.0000 rad/s"),
]


@pytest.mark.parametrize(("changes", "reason"), REFUSALS)
def test_malformed_commands_are_refused_with_the_reason(changes, reason):
    """A refused command leaves the trajectory being followed untouched."""
    f = follower()
    assert f.command(0.0, cmd(v=V)) is None
    before = f.desired(0.9)
    refused = f.command(0.8, cmd(**changes))
    assert refused is not None and reason in refused
    for x, y in zip(f.desired(0.9), before, strict=True):
        np.testing.assert_array_equal(x, y)


def test_a_trajectory_wholly_in_the_past_is_refused():
    f = follower()
    assert f.command(5.0, cmd(stamp=1.0)) == ("Received trajectory with non-zero start time (1.000000) that ends in "
                                             "the past (2.800000)")
    assert not f.following
    np.testing.assert_array_equal(f.desired(5.0)[0], HOLD)
