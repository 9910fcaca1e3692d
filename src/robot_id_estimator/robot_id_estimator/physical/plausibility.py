"""Whether retrieved link parameters are plausible bodies, not only consistent ones: per link mass, CoM and
principal moments against the URDF and the bounds, the constraints the data pushed the solution against (active
bounds, a warning: the data would have gone further), and the arm's mass against its datasheet."""

from __future__ import annotations

import numpy as np

from robot_id_estimator.physical.constraints import ConstraintSet, body_pi, body_spread, link_size
from robot_id_estimator.physical.problem import PhysicalBounds
from robot_id_estimator.results.plausibility import LinkPlausibility, Plausibility
from robot_id_model.parameters import inertial_columns, nominal_parameters
from robot_id_model.physical import link_from_standard, relative_margin
from robot_id_model.robot_model import RobotModel

ACTIVE_FRACTION = 1e-3
"""A constraint is active when its slack is below this fraction of its scale (a bound's range, a row's terms)."""


def plausibility(robot: RobotModel, bounds: PhysicalBounds, pi: np.ndarray, urdf_mass_kg: float,
                 datasheet_mass_kg: float | None) -> Plausibility:
    """The plausibility report of retrieved standard parameters π; `urdf_mass_kg` is the URDF's total mass (every
    link), for the datasheet comparison."""
    pi0 = nominal_parameters(robot)
    cols_all = inertial_columns(robot)
    links = []
    for j, cols in enumerate(cols_all):
        link, nominal, size = link_from_standard(pi[cols]), link_from_standard(pi0[cols]), link_size(bounds, j)
        links.append(LinkPlausibility(
            link_name=robot.link_names[j],
            mass_kg=link.mass_kg,
            urdf_mass_kg=nominal.mass_kg,
            mass_bounds_kg=(float(bounds.mass_lower_kg[j]), float(bounds.mass_upper_kg[j])),
            com_m=tuple(map(float, link.com_m)),
            urdf_com_m=tuple(map(float, nominal.com_m)),
            com_bounds_m=(tuple(map(float, bounds.com_lower_m[j])), tuple(map(float, bounds.com_upper_m[j]))),
            principal_moments_kg_m2=tuple(map(float, np.linalg.eigvalsh(link.inertia_com_kg_m2))),
            urdf_principal_moments_kg_m2=tuple(map(float, np.linalg.eigvalsh(nominal.inertia_com_kg_m2))),
            inertia_diag_upper_kg_m2=float(bounds.inertia_diag_upper_kg_m2[j]),
            relative_margin=relative_margin(link_from_standard(body_pi(bounds, j, pi[cols])).inertia_com_kg_m2),
            spread=body_spread(bounds, j, pi[cols]),
            size_bound=None if size is None else size.fraction,
        ))
    masses, nominal_masses = pi[cols_all[:, 0]], pi0[cols_all[:, 0]]
    arm = None
    if datasheet_mass_kg is not None:
        carried = sum(float(pi[cols[0]] - body_pi(bounds, j, pi[cols])[0]) for j, cols in enumerate(cols_all))
        arm = float(masses.sum()) - carried + (urdf_mass_kg - float(nominal_masses.sum()))
    return Plausibility(
        links=tuple(links),
        total_mass_kg=float(masses.sum()),
        urdf_total_mass_kg=float(nominal_masses.sum()),
        total_mass_bounds_kg=tuple(map(float, bounds.total_mass_kg)),
        margin=bounds.margin,
        active=tuple(ConstraintSet(robot, bounds).active(pi, ACTIVE_FRACTION)),
        datasheet_mass_kg=datasheet_mass_kg,
        arm_mass_kg=arm,
    )
