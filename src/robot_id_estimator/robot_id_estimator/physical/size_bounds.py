"""Lower bounds on how spread out each link's mass is, from the size of the link: no link of kilograms comes out as a
point mass.

The rule: at least a fraction f of a link's URDF mass m_0 fills its collision hull uniformly (its casing); whatever
else the link carries (motors, gears, cables, a tool the URDF does not know) may sit anywhere. The mass's second
moments about its CoM are then at least those of that part about its own centroid: Σ_C ⪰ f·m_0·D, D the second
moments per kilogram of the uniform hull (robot_id_model.hull_moments), a matrix inequality linear in the link's
pseudo-inertia (Wensing et al. 2017). Its measure is the link's spread, λ_min(D^-½·Σ_C·D^-½)/m_0: 1 for the URDF
mass filling the hull, 0 for a rod or a point mass; the bound is spread ≥ f. A link whose URDF inertial is less
spread than 2f gets half the URDF's spread as its bound (none if that is not positive), so that the URDF model
always meets its bounds (as eq. 18's ratios are set). A link that carries a known part (a gripper) is bounded by its
own part.

The hulls are the robot config's collision geometry (the vendor's meshes), else the URDF's <collision> elements.
"""

from __future__ import annotations

import functools
import pathlib
from dataclasses import dataclass

import numpy as np

from robot_id_model.collision_geometry import CollisionGeometry
from robot_id_model.hull_moments import uniform_hull_moments
from robot_id_model.parameters import inertial_columns, nominal_parameters
from robot_id_model.physical import inertia_six, link_from_standard, sigma_matrix
from robot_id_model.robot_model import ModelError, RobotModel
from robot_id_model.urdf_collision import urdf_collision_geometry

SIZE_MARGIN = 1e-3
"""The convex program imposes the size bounds this fraction above themselves (the check allows 1e-7 below: a bound
the data pushed against came out 1e-6 below it, and the solution went to the multistart, less accurate there)."""


@dataclass(frozen=True)
class LinkSize:
    """The size bound of one link body: Σ_C ⪰ fraction·urdf_mass_kg·D."""

    axes: np.ndarray
    """(3, 3) columns: the principal axes of the link's hull, in the link frame"""
    hull_moments_m2: np.ndarray
    """(3,) D's eigenvalues: the uniform hull's second moments per kilogram along `axes`"""
    urdf_mass_kg: float
    """m_0: the URDF's mass of the link's own body"""
    fraction: float
    """f of this link: the configured one, or half the URDF's spread where that is smaller"""

    @property
    def bound_kg_m2(self) -> np.ndarray:
        """f·m_0·D (3, 3): the least second moments of the link body."""
        return self.fraction * self.urdf_mass_kg * (self.axes * self.hull_moments_m2) @ self.axes.T

    @property
    def whitening(self) -> np.ndarray:
        """D^-½ (3, 3) [1/m]."""
        return (self.axes / np.sqrt(self.hull_moments_m2)) @ self.axes.T

    def spread(self, sigma_c_kg_m2: np.ndarray) -> float:
        """λ_min(D^-½·Σ_C·D^-½)/m_0 of a body's second moments: 1 for the URDF mass filling the hull, 0 for a rod
        or a point."""
        w = self.whitening
        return float(np.linalg.eigvalsh(w @ sigma_c_kg_m2 @ w)[0]) / self.urdf_mass_kg


def link_hulls(collision: CollisionGeometry | None, urdf_path: str) -> tuple[dict[str, np.ndarray], str]:
    """Per link, the vertices of the convex hull of its collision geometry in the link frame, and where they come
    from (or why there are none)."""
    if collision is not None:
        return collision.link_hulls(), f"collision hulls of {collision.source}"
    if not pathlib.Path(urdf_path).is_file():
        return {}, f"no size bounds: the URDF {urdf_path} is not on this machine for its <collision> elements"
    try:
        return _urdf_hulls(urdf_path, pathlib.Path(urdf_path).stat().st_mtime_ns)
    except ModelError as err:
        return {}, f"no size bounds: {err}"


@functools.lru_cache(maxsize=4)
def _urdf_hulls(urdf_path: str, _mtime_ns: int) -> tuple[dict[str, np.ndarray], str]:
    geometry = urdf_collision_geometry(urdf_path, 0.0, 0.0)
    if geometry is None:
        return {}, f"no size bounds: {urdf_path} has no <collision> elements"
    return geometry.link_hulls(), f"collision hulls of {geometry.source}"


def size_bounds(robot: RobotModel, hulls: dict[str, np.ndarray], fixed_inertials: tuple[np.ndarray | None, ...],
                fraction: float) -> tuple[LinkSize | None, ...]:
    """Per joint, the size bound of its link's own body, or None (no hull, no URDF mass of its own, or f = 0)."""
    pi0 = nominal_parameters(robot)
    out = []
    for j, cols in enumerate(inertial_columns(robot)):
        fixed = fixed_inertials[j] if j < len(fixed_inertials) else None
        own = pi0[cols] - (fixed if fixed is not None else 0.0)
        hull = hulls.get(robot.link_names[j])
        if fraction <= 0.0 or hull is None or own[0] <= 0.0:
            out.append(None)
            continue
        try:
            values, axes = np.linalg.eigh(uniform_hull_moments(hull).second_moment_per_kg_m2)
        except ValueError:  # a flat hull
            out.append(None)
            continue
        link = link_from_standard(own)
        urdf = LinkSize(axes, values, link.mass_kg, 1.0).spread(sigma_matrix(inertia_six(link.inertia_com_kg_m2)))
        f = min(fraction, 0.5 * urdf)
        out.append(LinkSize(axes, values, link.mass_kg, f) if f > 0.0 else None)
    return tuple(out)
