"""The physical parameter vector µ (Xu et al. 2020, eq. 12) and its map to standard parameters π (eq. 14).

µ per joint: [m, cx, cy, cz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz, <friction terms>], CoM in the link frame, inertia
about the CoM in link axes; friction terms as in the RobotModel, mapped identically. Inertias travel as six
numbers (xx, xy, xz, yy, yz, zz) in that order everywhere (URDF, messages, µ).
"""

from __future__ import annotations

import numpy as np

from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import (
    LinkInertial,
    inertia_matrix,
    inertia_six,
    link_from_standard,
    link_standard_parameters,
)
from robot_id_model.robot_model import RobotModel

MU_NAMES = ("m", "cx", "cy", "cz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")

def link_pi(mu: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """[M, MX, ..., ZZ] of the link whose µ entries are `cols` (eq. 14)."""
    return link_standard_parameters(LinkInertial(mu[cols[0]], mu[cols[1:4]], inertia_matrix(mu[cols[4:10]])))


def pi_from_mu(robot: RobotModel, mu: np.ndarray) -> np.ndarray:
    """Standard parameters of the physical vector µ (same layout per joint as π; eq. 14)."""
    pi = mu.copy()
    for cols in inertial_columns(robot):
        pi[cols] = link_pi(mu, cols)
    return pi


def mu_from_pi(robot: RobotModel, pi: np.ndarray) -> np.ndarray:
    """Physical vector µ of standard parameters π (masses must be non-zero)."""
    mu = pi.copy()
    for cols in inertial_columns(robot):
        link = link_from_standard(pi[cols])
        mu[cols] = [link.mass_kg, *link.com_m, *inertia_six(link.inertia_com_kg_m2)]
    return mu


def pi_jacobian(robot: RobotModel, mu: np.ndarray) -> np.ndarray:
    """∂π/∂µ, block diagonal per link (eq. 14 differentiated); friction terms map identically."""
    jac = np.eye(len(mu))
    for cols in inertial_columns(robot):
        m, (cx, cy, cz) = mu[cols[0]], mu[cols[1:4]]
        block = np.zeros((10, 10))
        block[0, 0] = 1.0
        block[1:4, 0] = [cx, cy, cz]
        block[1:4, 1:4] = m * np.eye(3)
        # rows XX, XY, XZ, YY, YZ, ZZ: I_C term + m·S(c), S(c) = cᵀc E − c cᵀ
        s = [cy**2 + cz**2, -cx * cy, -cx * cz, cx**2 + cz**2, -cy * cz, cx**2 + cy**2]
        ds_dc = [
            [0.0, 2 * cy, 2 * cz],
            [-cy, -cx, 0.0],
            [-cz, 0.0, -cx],
            [2 * cx, 0.0, 2 * cz],
            [0.0, -cz, -cy],
            [2 * cx, 2 * cy, 0.0],
        ]
        block[4:10, 0] = s
        block[4:10, 1:4] = m * np.array(ds_dc)
        block[4:10, 4:10] = np.eye(6)
        jac[np.ix_(cols, cols)] = block
    return jac
