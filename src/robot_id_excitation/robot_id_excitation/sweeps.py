"""Friction sweeps for the Stribeck friction experiment of Luo et al. 2024 (eq. 7, eq. 15).

The swept joints move at each of a list of constant speeds, forward and then backward over the same positions,
while the other joints hold the hold pose. Pairing a forward sample with the backward sample at the same position
cancels the rigid-body torque: τ(+v) − τ(−v) = 2·τ_f(v) (Luo et al. 2024, eq. 15).

For each speed v, with a half-travel r = min(travel_rad, v·pass_time_s)/2 and a blend of
t_b = 1.5·v/blend_acceleration (the blend's peak acceleration), every swept joint j with c = hold_rad[j] runs

    reposition (rest) → c − r − v·t_b/2 → accelerate → constant +v from c − r to c + r → decelerate → dwell
    → accelerate → constant −v from c + r to c − r → decelerate → dwell

one joint after the other, or with `simultaneous` all of them at once on the same schedule. Simultaneous passes
keep eq. (15) exact for every joint: all swept joints move by the same offset from the hold pose, so the backward
pass retraces the forward pass's joint-space path, point for point, at the opposite velocity; at the position
where one joint's forward and backward samples pair, every other joint is at the same position too, so gravity
is equal, the velocity-quadratic (Coriolis, centrifugal) torque is equal at opposite velocity, and at constant
speed there is no inertial torque.

Each piece is a quintic between joint states (quintic.py); the sweep starts and ends at rest at the hold pose.

The shipped trajectories/<robot>_friction_sweep.yaml (all joints together, 12 speeds, 78–87 s) were written by

    python -m robot_id_excitation sweep --joints all --simultaneous --pass-time 3 --blend-acceleration 5 --out DIR
        --robot iiwa7 --velocities 0.005:1.3:12 --travel 1.0
        --robot iiwa14 --velocities 0.005:1.17:12 --travel 1.0
        --robot panda --velocities 0.005:1.0:12 --travel 0.6 --hold panda   (the excitation shipped then)
        --robot panda_hand --velocities 0.005:0.65:12 --travel 1.0
        --robot fr3 --velocities 0.005:0.65:12 --travel 1.0   (and --robot fr3_hand)

and copied from DIR/friction_sweep.yaml. The top speed is the fastest joint speed of the robot's shipped
excitation (iiwa), or the fastest that the 1 m/s flange speed limit allows with every joint at that speed
(Panda, from the start pose of the excitation shipped before the collision check, where joint 4 leaves room for
0.6 rad of travel, and which keeps the clearance; the redesigned excitation starts with joint 4 too near its
limit; Panda with hand and FR3, mid-range: the FR3 hand's TCP then peaks at 0.99 m/s); the slowest speed
travels 3 s at constant speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from robot_id_excitation.quintic import evaluate_quintic, quintic_coefficients, rest_to_rest_duration

KIND = "friction_sweep"


@dataclass(frozen=True)
class Segment:
    joints: tuple[int, ...]
    """indices of the joints that move in the segment"""
    start_s: float
    duration_s: float
    coefficients: np.ndarray
    """(6, len(joints)) quintics of those joints over the segment"""
    label: str
    """reposition, accelerate, constant, decelerate or dwell"""
    velocity_rad_s: float = 0.0
    """signed speed of a constant segment"""


@dataclass(frozen=True)
class ConstantVelocityWindow:
    """A constant-speed pass: the samples the friction fit of Luo et al. 2024, eq. (15) uses."""

    joint: str
    velocity_rad_s: float
    start_s: float
    end_s: float
    position_from_rad: float
    position_to_rad: float


@dataclass(frozen=True)
class FrictionSweep:
    robot: str
    joint_names: tuple[str, ...]
    hold_rad: np.ndarray
    """(n,) pose of every joint; each swept joint sweeps about its own value"""
    joints: tuple[str, ...]
    """swept joints, one after the other unless simultaneous"""
    velocities_rad_s: tuple[float, ...]
    """positive speeds, each run forward and backward"""
    travel_rad: float = 0.6
    """longest constant-speed travel of a pass"""
    pass_time_s: float = 8.0
    """longest constant-speed duration of a pass (slow speeds travel less)"""
    blend_acceleration_rad_s2: float = 1.0
    reposition_speed_rad_s: float = 0.5
    dwell_s: float = 0.5
    simultaneous: bool = False
    """all swept joints on one schedule, by the same offsets from the hold pose"""
    kind: str = KIND

    def __post_init__(self) -> None:
        object.__setattr__(self, "hold_rad", np.asarray(self.hold_rad, dtype=float))
        object.__setattr__(self, "joint_names", tuple(self.joint_names))
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "velocities_rad_s", tuple(float(v) for v in self.velocities_rad_s))
        if self.hold_rad.shape != (len(self.joint_names),):
            raise ValueError(f"hold_rad needs one value per joint ({len(self.joint_names)})")
        unknown = [j for j in self.joints if j not in self.joint_names]
        if unknown or not self.joints:
            raise ValueError(f"swept joints {list(self.joints)} must be among {list(self.joint_names)}")
        if not self.velocities_rad_s or min(self.velocities_rad_s) <= 0:
            raise ValueError("velocities_rad_s must be a non-empty list of positive speeds")
        for name in ("travel_rad", "pass_time_s", "blend_acceleration_rad_s2", "reposition_speed_rad_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        if self.dwell_s < 0:
            raise ValueError("dwell_s must not be negative")
        if not isinstance(self.simultaneous, bool):
            raise ValueError("simultaneous must be true or false")
        if self.kind != KIND:
            raise ValueError(f"kind must be '{KIND}'")

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @cached_property
    def segments(self) -> tuple[Segment, ...]:
        out: list[Segment] = []
        clock = 0.0

        def add(joints: tuple[int, ...], duration: float, start: tuple, end: tuple, label: str,
                velocity: float = 0.0) -> None:
            """A quintic of the offset from the hold pose, the same for every joint in `joints`."""
            nonlocal clock
            if duration <= 0:
                return
            c = np.tile(quintic_coefficients(duration, start, end), (1, len(joints)))
            c[0] += self.hold_rad[list(joints)]
            out.append(Segment(joints, clock, duration, c, label, velocity))
            clock += duration

        def reposition(joints: tuple[int, ...], p_from: float, p_to: float) -> None:
            duration = rest_to_rest_duration(
                np.array([p_to - p_from]), np.array([self.reposition_speed_rad_s]),
                np.array([self.blend_acceleration_rad_s2]),
            )
            add(joints, duration, (p_from, 0, 0), (p_to, 0, 0), "reposition")

        swept = tuple(self.joint_names.index(name) for name in self.joints)
        for joints in (swept,) if self.simultaneous else tuple((j,) for j in swept):
            offset = 0.0
            for v in self.velocities_rad_s:
                r = 0.5 * min(self.travel_rad, v * self.pass_time_s)
                t_b = 1.5 * v / self.blend_acceleration_rad_s2
                lo, hi = -r - 0.5 * v * t_b, r + 0.5 * v * t_b
                reposition(joints, offset, lo)
                for sign, p_start, p_end in ((1.0, lo, hi), (-1.0, hi, lo)):
                    cv_from, cv_to = -sign * r, sign * r
                    add(joints, t_b, (p_start, 0, 0), (cv_from, sign * v, 0), "accelerate")
                    add(joints, 2 * r / v, (cv_from, sign * v, 0), (cv_to, sign * v, 0), "constant", sign * v)
                    add(joints, t_b, (cv_to, sign * v, 0), (p_end, 0, 0), "decelerate")
                    add(joints, self.dwell_s, (p_end, 0, 0), (p_end, 0, 0), "dwell")
                offset = lo
            reposition(joints, offset, 0.0)
        return tuple(out)

    @property
    def rest_pose_rad(self) -> np.ndarray:
        """The sweep starts and ends at rest at the hold pose."""
        return self.hold_rad

    @property
    def period_s(self) -> float:
        """Duration of the whole sweep (it is repeated like a period)."""
        last = self.segments[-1]
        return last.start_s + last.duration_s

    def evaluate(self, t_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q_rad, dq_rad_s, ddq_rad_s2 (K, n) at times t_s; times beyond the sweep wrap around."""
        t = np.mod(np.atleast_1d(np.asarray(t_s, dtype=float)), self.period_s)
        q = np.tile(self.hold_rad, (len(t), 1))
        dq, ddq = np.zeros_like(q), np.zeros_like(q)
        starts = np.array([s.start_s for s in self.segments])
        index = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(starts) - 1)
        for i in np.unique(index):
            seg = self.segments[i]
            rows = np.flatnonzero(index == i)
            cells = np.ix_(rows, seg.joints)
            q[cells], dq[cells], ddq[cells] = evaluate_quintic(seg.coefficients, t[rows] - seg.start_s)
        return q, dq, ddq

    def constant_velocity_windows(self) -> list[ConstantVelocityWindow]:
        """Every constant-speed pass of every swept joint, forward then backward, in time order."""
        return [
            ConstantVelocityWindow(
                self.joint_names[j], s.velocity_rad_s, s.start_s, s.start_s + s.duration_s, float(p0),
                float(p0 + s.velocity_rad_s * s.duration_s),
            )
            for s in self.segments if s.label == "constant"
            for j, p0 in zip(s.joints, s.coefficients[0], strict=True)
        ]

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "robot": self.robot,
            "joint_names": list(self.joint_names),
            "hold_rad": self.hold_rad.tolist(),
            "joints": list(self.joints),
            "simultaneous": self.simultaneous,
            "velocities_rad_s": list(self.velocities_rad_s),
            "travel_rad": self.travel_rad,
            "pass_time_s": self.pass_time_s,
            "blend_acceleration_rad_s2": self.blend_acceleration_rad_s2,
            "reposition_speed_rad_s": self.reposition_speed_rad_s,
            "dwell_s": self.dwell_s,
            "period_s": self.period_s,
        }

    @classmethod
    def from_dict(cls, data: dict) -> FrictionSweep:
        fields = ("robot", "joint_names", "hold_rad", "joints", "simultaneous", "velocities_rad_s", "travel_rad",
                  "pass_time_s", "blend_acceleration_rad_s2", "reposition_speed_rad_s", "dwell_s", "kind")
        required = ("joint_names", "hold_rad", "joints", "velocities_rad_s")
        missing = [key for key in required if key not in data]
        if missing:
            raise ValueError(f"friction sweep is missing {missing}")
        return cls(**{key: data[key] for key in fields if key in data})
