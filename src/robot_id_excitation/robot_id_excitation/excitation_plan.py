"""What the excitation node sends, planned before the arm moves: the approach to the start pose and every
chunk of every period, as points relative to their stamp (docs/safety.md).

A chunk's points do not depend on when the excitation starts, only its stamp does: the chunks are built (and
checked, and turned into messages) once, before the arm moves, and a periodic trajectory repeats them, so a run of
any length has as many distinct chunks as a period has pieces, plus the first (which starts without overlap).

Every command ends at rest, as ros2_controllers' joint_trajectory_controller requires by default from Jazzy on
(allow_nonzero_velocity_at_trajectory_end: false; docs/jtc_rules.md): a piece that ends in motion goes on with a
braking tail, a quintic to rest. The next command replaces it before the tail begins; the tail runs only when no
next command comes (the node stopped), and then stops the arm instead of leaving it at a moving point's position.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from robot_id_excitation.quintic import evaluate_quintic, quintic_coefficients, rest_to_rest_duration
from robot_id_excitation.trajectory_file import Trajectory


@dataclass(frozen=True, eq=False)
class Points:
    """Points for a joint trajectory controller, due at a command's stamp + t_rel_s. Compared and hashed by
    identity: a chunk that repeats is the same object, checked and turned into a message once."""

    t_rel_s: np.ndarray
    """(K,)"""
    q_rad: np.ndarray
    """(K, n), as dq_rad_s and ddq_rad_s2"""
    dq_rad_s: np.ndarray
    ddq_rad_s2: np.ndarray


@dataclass(frozen=True)
class Command:
    """Points due at stamp_s + t_rel_s (stamp_s None: on arrival)."""

    stamp_s: float | None
    points: Points


@dataclass(frozen=True)
class Chunk:
    """One excitation command: its first point is due at t0 + offset_s."""

    offset_s: float
    points: Points


@dataclass(frozen=True)
class Approach:
    """A rest-to-rest quintic from the measured pose to the start pose."""

    duration_s: float
    coefficients: np.ndarray
    points: Points


def _grid(span_s: float, rate_hz: float) -> np.ndarray:
    return np.linspace(0.0, span_s, max(2, int(np.ceil(span_s * rate_hz)) + 1))


def excitation_chunks(trajectory: Trajectory, num_periods: int, rate_hz: float, overlap_s: float,
                      max_chunk_s: float, stop_acceleration_rad_s2: np.ndarray) -> tuple[Chunk, ...]:
    """Every period in equal pieces of at most max_chunk_s, each starting overlap_s before the end of the previous
    one (the first without overlap), with points at rate_hz, and a braking tail (peak deceleration at most
    stop_acceleration_rad_s2) where a piece ends in motion; repeated pieces share their Points."""
    period_s = trajectory.period_s
    pieces = max(1, math.ceil(period_s / max_chunk_s))
    distinct: dict[tuple[int, int], Points] = {}
    chunks = []
    for k in range(num_periods):
        for j in range(pieces):
            start_s = k * period_s + j * period_s / pieces
            offset_s = start_s - min(overlap_s, start_s)
            t_rel_s = _grid(start_s - offset_s + period_s / pieces, rate_hz)
            key = (round((offset_s % period_s) * 1e9), len(t_rel_s))
            if key not in distinct:
                distinct[key] = with_braking_tail(Points(t_rel_s, *trajectory.evaluate(offset_s + t_rel_s)),
                                                  stop_acceleration_rad_s2, rate_hz)
            chunks.append(Chunk(offset_s, distinct[key]))
    return tuple(chunks)


def with_braking_tail(points: Points, stop_acceleration_rad_s2: np.ndarray, rate_hz: float) -> Points:
    """The points, and if the last one moves, a quintic from its state to rest at q + dq·T/2 + ddq·T²/12 (where a
    quintic from that state naturally comes to rest), T long enough that its peak acceleration stays within
    stop_acceleration_rad_s2, or the last point's own where that is higher (lengthened by a quarter until it does,
    from 1.5·|dq|/a, at least 0.1 s)."""
    q, dq, ddq = points.q_rad[-1], points.dq_rad_s[-1], points.ddq_rad_s2[-1]
    if not dq.any() and not ddq.any():
        return points
    a = np.maximum(np.asarray(stop_acceleration_rad_s2, float), np.abs(ddq))
    duration_s = max(0.1, float(np.max(1.5 * np.abs(dq) / a)))
    while True:
        end = (q + dq * duration_s / 2 + ddq * duration_s**2 / 12, np.zeros_like(q), np.zeros_like(q))
        coefficients = quintic_coefficients(duration_s, (q, dq, ddq), end)
        tau_s = _grid(duration_s, rate_hz)[1:]
        tail = evaluate_quintic(coefficients, tau_s)
        if np.all(np.abs(evaluate_quintic(coefficients, np.linspace(0.0, duration_s, 201))[2]) <= a * (1 + 1e-9)):
            break
        duration_s *= 1.25
    tail[1][-1], tail[2][-1] = 0.0, 0.0  # exactly at rest, not to rounding
    return Points(np.concatenate([points.t_rel_s, points.t_rel_s[-1] + tau_s]),
                  *(np.vstack([x, y]) for x, y in zip((points.q_rad, points.dq_rad_s, points.ddq_rad_s2), tail,
                                                      strict=True)))


def approach(q_from_rad: np.ndarray, q_to_rad: np.ndarray, speed_rad_s: float, acceleration_rad_s2: float,
             rate_hz: float) -> Approach:
    """The rest-to-rest quintic from q_from to q_to within the peak speed and acceleration, at rate_hz."""
    duration_s = rest_to_rest_duration(q_to_rad - q_from_rad, speed_rad_s, acceleration_rad_s2)
    zeros = np.zeros_like(q_from_rad)
    coefficients = quintic_coefficients(duration_s, (q_from_rad, zeros, zeros), (q_to_rad, zeros, zeros))
    t_rel_s = _grid(duration_s, rate_hz)
    return Approach(duration_s, coefficients, Points(t_rel_s, *evaluate_quintic(coefficients, t_rel_s)))


def distinct_points(chunks: tuple[Chunk, ...]) -> list[Points]:
    """The chunks' Points, each once, in order of first use."""
    return list(dict.fromkeys(c.points for c in chunks))


def run_now(work: Callable[[], object]) -> Future:
    """Do the work at once; its future, done."""
    future: Future = Future()
    future.set_result(work())
    return future
