"""Following trajectory_msgs/JointTrajectory the way ros2_control's joint_trajectory_controller does.

- A trajectory starts at its header stamp, or on arrival when the stamp is zero; point times are time_from_start.
- A new message replaces the rest of the old one at once. When its first point is still ahead, the arm is
  interpolated from the state at arrival to it, then along the new points: the measured state by default, the
  desired state with interpolate_from_desired_state (or Jazzy's open_loop_control), as the controller does. When its
  first point is already past, the arm jumps onto the new points' curve where it is now (the controller's rule).
- Between points: linear when points carry positions only, cubic with velocities, quintic with accelerations too.
- After the last point the arm holds it; with no trajectory it holds where it was put.
- The controller's constraints, checked against the measured state (`constraint_failure`): a position error beyond a
  joint's trajectory tolerance while a trajectory runs, or a goal still missed goal_time after the last point, makes
  it hold the measured position, with the line the controller logs.
- A message is refused as a whole, with the line the controller logs, by the controller's rules as configured
  (joint_trajectory_controller.refusal: joint names, empty, last point moving, ending in the past, times, sizes);
  also, as the robot would stop, when it holds NaN or a point lies outside the position or velocity limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_excitation.quintic import quintic_coefficients
from robot_id_sim.joint_trajectory_controller import ControllerParameters, goal_missed, path_failure, refusal

State = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Position [rad], velocity [rad/s], acceleration [rad/s²] of every joint."""


@dataclass(frozen=True)
class TrajectoryCommand:
    """One JointTrajectory message as plain arrays; stamp_s = 0 means "start on arrival"."""

    stamp_s: float
    joint_names: tuple[str, ...]
    time_from_start_s: np.ndarray           # (K,)
    positions_rad: np.ndarray               # (K, n)
    velocities_rad_s: np.ndarray | None     # (K, n) or None
    accelerations_rad_s2: np.ndarray | None


@dataclass(frozen=True)
class _Active:
    t_s: np.ndarray          # absolute times: arrival, then every point
    states: list[State]
    order: int               # 1 linear, 3 cubic, 5 quintic
    coefficients: dict[int, np.ndarray]   # (6, n) polynomial of each segment, computed when first needed


class TrajectoryFollower:
    """Desired joint states over time from a stream of trajectory commands (arrays in `joint_names` order)."""

    def __init__(self, joint_names: Sequence[str], lower_rad: np.ndarray, upper_rad: np.ndarray,
                 velocity_rad_s: np.ndarray, tolerance_rad: float = 1e-9,
                 controller: ControllerParameters | None = None) -> None:
        """controller: the joint trajectory controller's parameters (None: its defaults for these joints)."""
        self.joint_names = tuple(joint_names)
        self.controller = controller if controller is not None else ControllerParameters(self.joint_names)
        self.lower_rad, self.upper_rad = np.asarray(lower_rad, float), np.asarray(upper_rad, float)
        self.velocity_rad_s = np.asarray(velocity_rad_s, float)
        self.tolerance_rad = tolerance_rad
        self._active: _Active | None = None
        self._hold = np.zeros(len(self.joint_names))
        self._goal_end_s: float | None = None
        """When the last trajectory's last point was, while its goal is still to be met."""

    @property
    def following(self) -> bool:
        """Whether a trajectory is being followed (False when holding)."""
        return self._active is not None

    def hold(self, q_rad: np.ndarray) -> None:
        """Drop any trajectory and hold q_rad."""
        self._active, self._goal_end_s = None, None
        self._hold = np.asarray(q_rad, dtype=float).copy()

    def command(self, now_s: float, command: TrajectoryCommand, measured: State | None = None) -> str | None:
        """Take a new trajectory at time now_s, the arm measured at `measured` (None: where it is commanded);
        returns the reason it was refused, or None."""
        reason = self._invalid(now_s, command)
        if reason:
            return reason
        order_names = [command.joint_names.index(name) for name in self.joint_names]
        start_s = command.stamp_s if command.stamp_s != 0.0 else now_s
        t_points = start_s + np.asarray(command.time_from_start_s, float)
        positions = np.asarray(command.positions_rad, float)[:, order_names]
        velocities = _reordered(command.velocities_rad_s, order_names, positions.shape)
        accelerations = _reordered(command.accelerations_rad_s2, order_names, positions.shape)
        order = 5 if command.accelerations_rad_s2 is not None else 3 if command.velocities_rad_s is not None else 1
        states = [(positions[k], velocities[k], accelerations[k]) for k in range(len(positions))]
        if t_points[0] > now_s:
            before = self.desired(now_s)
            if measured is not None and not self.controller.splices_from_desired:
                before = (np.asarray(measured[0], float), np.asarray(measured[1], float), np.zeros(len(positions[0])))
            t_s, states = np.concatenate([[now_s], t_points]), [before, *states]
        else:
            first = int(np.searchsorted(t_points, now_s, side="right")) - 1   # the segment the arm jumps onto
            t_s, states = t_points[first:], states[first:]
        self._active, self._goal_end_s = _Active(t_s, states, order, {}), None
        if len(self._active.t_s) == 1:
            self.hold(positions[-1])
        return None

    def desired(self, t_s: float) -> State:
        """The desired position, velocity and acceleration at t_s."""
        zeros = np.zeros(len(self.joint_names))
        active = self._active
        if active is None:
            return self._hold.copy(), zeros, zeros
        if t_s >= active.t_s[-1]:
            last = active.states[-1][0]
            self.hold(last)
            self._goal_end_s = float(active.t_s[-1])
            return last.copy(), zeros, zeros.copy()
        k = max(int(np.searchsorted(active.t_s, t_s, side="right")) - 1, 0)
        if k not in active.coefficients:
            duration = active.t_s[k + 1] - active.t_s[k]
            active.coefficients[k] = _coefficients(active.order, duration, active.states[k], active.states[k + 1])
        tau = max(t_s - active.t_s[k], 0.0)
        c = active.coefficients[k]
        powers = tau ** np.arange(6)
        return powers @ c, (_D1 * powers[:5]) @ c[1:], (_D2 * powers[:4]) @ c[2:]

    def constraint_failure(self, t_s: float, q_rad: np.ndarray, dq_rad_s: np.ndarray) -> str | None:
        """The controller's constraints at t_s against the measured state: the line it logs when they fail, the
        measured position then held; None while they hold."""
        if not self.controller.checks_constraints:
            return None
        desired_rad = self.desired(t_s)[0]
        if self._active is not None:
            line = path_failure(self.controller, self.joint_names, desired_rad - q_rad)
        elif self._goal_end_s is not None:
            missed = goal_missed(self.controller, self.joint_names, desired_rad - q_rad, dq_rad_s)
            late = self.controller.goal_time_s > 0.0 and t_s - self._goal_end_s > self.controller.goal_time_s
            line = f"Exceeded goal_time_tolerance: holding position... ({missed})" if missed and late else None
            if not missed or late:
                self._goal_end_s = None
        else:
            line = None
        if line:
            self.hold(q_rad)
        return line

    def _invalid(self, now_s: float, command: TrajectoryCommand) -> str | None:
        """Why a command cannot be followed, or None."""
        jtc = refusal(self.controller, now_s, command.stamp_s, command.joint_names, command.time_from_start_s,
                      command.positions_rad, command.velocities_rad_s, command.accelerations_rad_s2)
        if jtc:
            return jtc
        if sorted(command.joint_names) != sorted(self.joint_names):
            return f"joint names {list(command.joint_names)} are not the arm's {list(self.joint_names)}"
        t = np.asarray(command.time_from_start_s, float)
        positions = np.asarray(command.positions_rad, float)
        arrays = [a for a in (t, positions, command.velocities_rad_s, command.accelerations_rad_s2) if a is not None]
        if not all(np.all(np.isfinite(a)) for a in arrays):
            return "the trajectory contains NaN or infinite values"
        if np.any(t < 0.0) or np.any(np.diff(t) <= 0.0):
            return "time_from_start must be non-negative and strictly increasing"
        order = [command.joint_names.index(name) for name in self.joint_names]
        positions = positions[:, order]
        outside = (positions < self.lower_rad - self.tolerance_rad) | (positions > self.upper_rad + self.tolerance_rad)
        if outside.any():
            k, j = np.argwhere(outside)[0]
            return (f"point {k} puts {self.joint_names[j]} at {positions[k, j]:.4f} rad, outside its limits "
                    f"[{self.lower_rad[j]:.4f}, {self.upper_rad[j]:.4f}] rad")
        if command.velocities_rad_s is not None:
            speed = np.abs(np.asarray(command.velocities_rad_s, float)[:, order])
            too_fast = speed > self.velocity_rad_s + self.tolerance_rad
            if too_fast.any():
                k, j = np.argwhere(too_fast)[0]
                return (f"point {k} moves {self.joint_names[j]} at {speed[k, j]:.4f} rad/s, beyond its limit "
                        f"{self.velocity_rad_s[j]:.4f} rad/s")
        return None


def _reordered(values: np.ndarray | None, order: list[int], shape: tuple[int, int]) -> np.ndarray:
    return np.zeros(shape) if values is None else np.asarray(values, float)[:, order]


_D1 = np.arange(1.0, 6.0)                 # d/dτ of τ^k, k = 1..5
_D2 = np.arange(1.0, 5.0) * np.arange(2.0, 6.0)   # d²/dτ² of τ^k, k = 2..5


def _coefficients(order: int, duration_s: float, start: State, end: State) -> np.ndarray:
    """(6, n) coefficients of p(τ) = Σ c_k τ^k on one segment: linear, cubic (Hermite in position and
    velocity) or quintic, zero-padded to degree 5."""
    if order == 5:
        return quintic_coefficients(duration_s, start, end)
    (p0, v0, _), (p1, v1, _) = start, end
    c = np.zeros((6, len(p0)))
    t = duration_s
    if order == 1:
        c[0], c[1] = p0, (p1 - p0) / t
        return c
    c[0], c[1] = p0, v0
    c[2] = (3.0 * (p1 - p0) - (2.0 * v0 + v1) * t) / t**2
    c[3] = (2.0 * (p0 - p1) + (v0 + v1) * t) / t**3
    return c
