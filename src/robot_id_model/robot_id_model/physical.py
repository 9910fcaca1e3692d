"""Physical link parameters (Xu et al. 2020, eq. 12) ↔ standard parameters (eq. 14), inertia packing, the
pseudo-inertia and consistency checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_model.parameters import friction_columns, inertial_columns
from robot_id_model.robot_model import RobotModel

EIGEN_TOL = 1e-12
"""Eigenvalues (kg m²) at or below this count as not positive."""


@dataclass(frozen=True)
class LinkInertial:
    """Mass, centre of mass in the link frame, and the inertia tensor about the CoM in link axes."""

    mass_kg: float
    com_m: np.ndarray
    inertia_com_kg_m2: np.ndarray


_UPPER = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def inertia_six(inertia: np.ndarray) -> np.ndarray:
    """(xx, xy, xz, yy, yz, zz) of a symmetric 3×3 inertia."""
    inertia = np.asarray(inertia, dtype=float)
    return np.array([inertia[a, b] for a, b in _UPPER])


def inertia_matrix(six: np.ndarray) -> np.ndarray:
    """The symmetric 3×3 inertia of (xx, xy, xz, yy, yz, zz)."""
    xx, xy, xz, yy, yz, zz = six
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def sigma_matrix(six: np.ndarray) -> np.ndarray:
    """Σ = ½tr(I)E − I of an inertia (xx, xy, xz, yy, yz, zz); Σ ≻ 0 ⟺ strict triangle inequalities, and with a
    positive mass ⟺ a positive-definite pseudo-inertia (Wensing et al. 2017)."""
    inertia = inertia_matrix(six)
    return 0.5 * np.trace(inertia) * np.eye(3) - inertia


def sigma_basis() -> np.ndarray:
    """∂Σ/∂(Ixx, Ixy, Ixz, Iyy, Iyz, Izz), shape (6, 3, 3): Σ is linear in the inertia entries."""
    return np.array([sigma_matrix(e) for e in np.eye(6)])


def _skew_sq(c: np.ndarray) -> np.ndarray:
    """cᵀc·E − c·cᵀ, the parallel-axis term of Xu et al. 2020, eq. (14) per unit mass."""
    return float(c @ c) * np.eye(3) - np.outer(c, c)


def link_standard_parameters(link: LinkInertial) -> np.ndarray:
    """[M, MX, MY, MZ, XX, XY, XZ, YY, YZ, ZZ] of one link (Xu et al. 2020, eq. 14, parallel-axis theorem)."""
    c = np.asarray(link.com_m, dtype=float)
    inertia_origin = np.asarray(link.inertia_com_kg_m2, dtype=float) + link.mass_kg * _skew_sq(c)
    return np.array([link.mass_kg, *(link.mass_kg * c), *inertia_six(inertia_origin)])


def link_from_standard(pi_link: np.ndarray) -> LinkInertial:
    """Inverse of link_standard_parameters; the mass must be non-zero."""
    m = pi_link[0]
    if m == 0.0:
        raise ValueError("a link with zero mass has no centre of mass")
    c = np.asarray(pi_link[1:4], dtype=float) / m
    inertia_origin = inertia_matrix(pi_link[4:10])
    return LinkInertial(float(m), c, inertia_origin - m * _skew_sq(c))


def standard_vector(robot: RobotModel, links: Sequence[LinkInertial], friction: np.ndarray) -> np.ndarray:
    """π from per-link physical parameters and the (n, len(robot.friction)) friction values."""
    pi = np.zeros(robot.n_params)
    pi[inertial_columns(robot)] = [link_standard_parameters(link) for link in links]
    pi[friction_columns(robot)] = np.asarray(friction, dtype=float).reshape(robot.n_joints, -1)
    return pi


def com_inertia_jacobian(pi_link: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inertia about the CoM (xx, xy, xz, yy, yz, zz) of one link's standard parameters [M, MX, ..., ZZ] and its
    derivative (6, 10): I_C = I_O − (hᵀh·E − h·hᵀ)/m (Xu et al. 2020, eq. 14 inverted)."""
    m, h = pi_link[0], np.asarray(pi_link[1:4], dtype=float)
    s = _skew_sq(h) / m
    jac = np.zeros((6, 10))
    jac[:, 0] = inertia_six(s) / m
    for c in range(3):
        ds = 2.0 * h[c] * np.eye(3)
        ds[c, :] -= h
        ds[:, c] -= h
        jac[:, 1 + c] = -inertia_six(ds) / m
    jac[:, 4:10] = np.eye(6)
    return np.asarray(pi_link[4:10], dtype=float) - inertia_six(s), jac


def physical_from_vector(robot: RobotModel, pi: np.ndarray) -> tuple[list[LinkInertial], np.ndarray]:
    """Per-link physical parameters and the friction values (n, len(robot.friction)) of π."""
    links = [link_from_standard(pi[cols]) for cols in inertial_columns(robot)]
    return links, pi[friction_columns(robot)]


def pseudo_inertia(pi_link: np.ndarray) -> np.ndarray:
    """4×4 pseudo-inertia J = [[½tr(I)E − I, h], [hᵀ, m]] (Wensing et al. 2017), I about the link origin."""
    j = np.zeros((4, 4))
    j[:3, :3] = sigma_matrix(pi_link[4:10])
    j[:3, 3] = j[3, :3] = pi_link[1:4]
    j[3, 3] = pi_link[0]
    return j


def relative_margin(inertia_com_kg_m2: np.ndarray) -> float:
    """λ_min(Σ_C)/tr(Σ_C) of an inertia about the CoM, Σ_C = ½tr(I_C)E − I_C the mass's second moments along
    the axes (the 3×3 block of the pseudo-inertia about the CoM, Wensing et al. 2017): ≥ ε ⟺ every principal moment
    is at most the sum of the other two minus ε·tr(I_C), the triangle inequality with a relative margin; 1/3 at most
    (a uniform ball)."""
    sigma = sigma_matrix(inertia_six(inertia_com_kg_m2))
    values = np.linalg.eigvalsh(sigma)
    trace = float(values.sum())
    return float(values[0]) / trace if trace > 0.0 else -np.inf


def consistency_violations(link: LinkInertial) -> list[str]:
    """Reasons why a link is not physically consistent; empty when it is.

    Checks a positive mass, a symmetric positive-definite inertia about the CoM, the triangle inequalities
    of its principal moments, and a positive-definite pseudo-inertia.
    """
    reasons = []
    inertia = np.asarray(link.inertia_com_kg_m2, dtype=float)
    if not link.mass_kg > 0.0:
        reasons.append(f"mass {link.mass_kg:g} kg is not positive")
    if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12):
        reasons.append("inertia tensor is not symmetric")
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if moments[0] <= EIGEN_TOL:
        reasons.append(f"inertia about the CoM is not positive definite (eigenvalues {np.round(moments, 9)})")
    a, b, c = moments
    if a + b < c - EIGEN_TOL:
        reasons.append(f"triangle inequality violated: {a:.6g} + {b:.6g} < {c:.6g} kg m²")
    if not reasons:
        j_min = np.linalg.eigvalsh(pseudo_inertia(link_standard_parameters(link)))[0]
        if j_min <= EIGEN_TOL:
            reasons.append(f"pseudo-inertia is not positive definite (smallest eigenvalue {j_min:.3g})")
    return reasons
