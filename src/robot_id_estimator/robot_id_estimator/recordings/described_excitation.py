"""What a bag's recorder said about the excitation it recorded (robot_id_msgs/ExcitationTrajectory and
PeriodMarker): its period and harmonics, where its first period starts, and which excitation it was (Excitation),
so that two recordings of the same excitation can be told from recordings of others."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robot_id_contract.stamps import stamp_ns


@dataclass(frozen=True)
class Excitation:
    """The excitation a recording ran, as the recorder described it (robot_id_msgs/ExcitationTrajectory): enough to
    tell a run of the same excitation from a run of another."""

    kind: str
    joint_names: tuple[str, ...]
    base_frequency_hz: float
    coefficients: np.ndarray
    """The a and b coefficients, flattened, rad/s."""
    offsets_rad: np.ndarray

    @classmethod
    def of(cls, trajectory: object) -> Excitation:
        """From anything with a trajectory's fields (kind, joint_names, base_frequency_hz, coefficients_a and _b,
        offsets_rad): a trajectory file's FourierTrajectory (coefficients (n, L)) or the recorder's message
        (flattened joint-major)."""
        t = trajectory
        return cls(t.kind, tuple(t.joint_names), float(t.base_frequency_hz),
                   np.concatenate([np.ravel(t.coefficients_a), np.ravel(t.coefficients_b)]).astype(float),
                   np.asarray(t.offsets_rad, dtype=float))

    def differs_from(self, other: Excitation) -> str:
        """What differs between the two excitations ('' when they are the same)."""
        if (self.kind, self.joint_names) != (other.kind, other.joint_names):
            return (f"a {self.kind} excitation of {', '.join(self.joint_names)}, not a {other.kind} one of "
                    f"{', '.join(other.joint_names)}")
        if not math.isclose(self.base_frequency_hz, other.base_frequency_hz, rel_tol=1e-9):
            return f"base frequency {self.base_frequency_hz:g} Hz, not {other.base_frequency_hz:g} Hz"
        if self.coefficients.shape != other.coefficients.shape or not np.allclose(self.coefficients,
                                                                                  other.coefficients, atol=1e-9):
            return "other Fourier coefficients"
        pose = np.abs(self.offsets_rad - other.offsets_rad)
        if np.any(pose > 1e-6):
            return f"another pose ({self.joint_names[int(np.argmax(pose))]} {float(pose.max()):.3g} rad off)"
        return ""


def described_excitation(description: object | None) -> Excitation | None:
    """The Excitation of a bag's ExcitationTrajectory message (None: none, or a friction sweep)."""
    if description is None or not len(description.coefficients_a):
        return None
    return Excitation.of(description)


def excitation_period(
    description: object | None, markers: list[tuple[int, float]], period_s: float | None, repairs: list[str]
) -> tuple[float | None, int | None]:
    """The period [s] (the user's, else the description's, else the markers') and the excited harmonics when the
    description is a finite Fourier series."""
    harmonics = None
    if period_s is None and description is not None and description.period_s > 0.0:
        period_s = float(description.period_s)
        if description.kind == "fourier":
            harmonics = int(description.harmonics)
        else:
            repairs.append(f"{description.kind} excitation: its boundary terms are not band-limited, so "
                           "the harmonics are not used to limit differentiation")
    if period_s is None and description is None and markers and markers[0][1] > 0.0:
        period_s = markers[0][1]
    return period_s, harmonics


def first_period_ns(description: object | None, markers: list[tuple[int, float]]) -> int | None:
    """Start of the first period [ns]: the first marker, else the description's start time when it has one."""
    if markers:
        return markers[0][0]
    if description is not None and stamp_ns(description.start_time) > 0:
        return stamp_ns(description.start_time)
    return None
