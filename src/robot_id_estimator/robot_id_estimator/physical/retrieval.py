"""The physical stage: physically consistent link parameters whose base parameters best explain the torque
(Xu et al. 2020, section III, eq. 15), by the configured method or the other when it cannot meet every constraint.

In: the estimate's reduced (weighted) least-squares problem and the target columns. Out: results.Physical, with
each standard parameter's determination and the plausibility of the values; RetrievalError when no method meets
every constraint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from robot_id_estimator.estimation.least_squares import ReducedSystem
from robot_id_estimator.physical.determination import Determination, determination, hold_friction
from robot_id_estimator.physical.lmi import LmiPrograms, retrieve_lmi
from robot_id_estimator.physical.multistart import retrieve_multistart
from robot_id_estimator.physical.plausibility import plausibility
from robot_id_estimator.physical.problem import (
    TOOL_FRACTION,
    TOOL_REACH_M,
    PhysicalBounds,
    RetrievalError,
    RetrievalResult,
    default_bounds,
)
from robot_id_estimator.physical.size_bounds import LinkSize, link_hulls, size_bounds
from robot_id_estimator.results import Physical
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import PhysicalConfig
from robot_id_model.base_parameters import BaseParameters
from robot_id_model.parameters import nominal_mass_kg, nominal_parameters, parameter_names
from robot_id_model.robot_model import RobotModel
from robot_id_model.urdf_inertials import all_link_inertials, fixed_parts, lumped_known_parts


def retrieve_physical(
    robot: RobotModel,
    base: BaseParameters,
    setup: RobotSetup,
    w: np.ndarray,
    z_nm: np.ndarray,
    outside_sq_nm2: float,
    target_columns: np.ndarray,
    config: PhysicalConfig,
    programs: LmiPrograms | None = None,
) -> Physical:
    """Physical parameters whose `target_columns` base parameters best explain τ (Xu et al. 2020, eq. 15).

    The problem is the estimate's reduced one (estimation.ReducedSystem, weighted as the estimate, so that eq. (15)
    weighs joints alike): ‖W^½(τ − Yb·πb)‖² = ‖z − w·πb‖² + `outside_sq_nm2` with `w` (b, b), so its cost does not
    depend on the number of samples.
    Links that carry known fixed links (a gripper in the URDF) keep those parts' inertials; their own part is kept
    consistent too, unless the URDF gives the link no inertial of its own: then link and fixed parts are one body.
    `programs`: the LMI programs compiled by earlier retrievals of the same robot, setup, target and config.
    """
    w = w[:, target_columns]
    target_from_pi = base.beta_from_pi[target_columns]
    bounds, det, bounds_notes = _bounds(robot, setup, target_from_pi, config)
    result = _retrieve_checked(robot, w, z_nm, outside_sq_nm2, target_from_pi, bounds, config, programs)
    urdf_mass_kg = sum(inertial.mass_kg for inertial in all_link_inertials(setup.urdf_text))
    return Physical(
        method=result.method,
        link_names=robot.link_names,
        links=result.links,
        standard_names=tuple(parameter_names(robot)),
        standard_values=result.pi,
        base_values=base.values(result.pi),
        status=det.status,
        held_values=det.held_values,
        residual_norm_nm=result.residual_norm_nm,
        unconstrained_residual_norm_nm=result.unconstrained_residual_norm_nm,
        target=config.target,
        violations=result.violations,
        wall_time_s=result.wall_time_s,
        notes=(*result.notes, *bounds_notes),
        plausibility=plausibility(robot, bounds, result.pi, urdf_mass_kg, setup.datasheet_mass_kg),
    )


def _bounds(robot: RobotModel, setup: RobotSetup, target_from_pi: np.ndarray,
            config: PhysicalConfig) -> tuple[PhysicalBounds, Determination, tuple[str, str]]:
    """The configured bounds on the physical parameters with the friction the data do not determine held, the
    determination of each standard parameter, and notes on the size bounds and the tool allowed for."""
    lumped = lumped_known_parts(robot, setup.urdf_text)
    fixed = fixed_parts(robot, setup.urdf_text, lumped)
    sizes, sizes_note = _link_sizes(robot, setup, fixed, config.spread_fraction)
    tool_kg, tool_note = _tool_mass(robot, setup, config.tool_mass_kg)
    bounds = default_bounds(
        robot,
        mass_factor=config.mass_factor,
        com_margin_m=config.com_margin_m,
        inertia_factor=config.inertia_factor,
        total_mass_factor=config.total_mass_factor,
        fixed_inertials=fixed,
        max_inertia_ratio=config.max_inertia_ratio,
        max_off_diagonal_ratio=config.max_off_diagonal_ratio,
        orderings=config.orderings,
        margin=config.margin,
        link_sizes=sizes,
        tool_mass_kg=tool_kg,
    )
    det = determination(robot, target_from_pi, nominal_parameters(robot))
    return hold_friction(robot, bounds, det), det, (sizes_note, tool_note)


def physical_retrieval_of(robot: RobotModel, base: BaseParameters, setup: RobotSetup, target_columns: np.ndarray,
                          config: PhysicalConfig) -> Callable[[ReducedSystem], np.ndarray]:
    """The retrieval as a function of a reduced system, as the physical stage runs it: the base values of the
    physical set fitted to it (for the held-out check, which fits every set on part of the data), each retrieval
    with the LMI program the first one compiled."""
    programs = LmiPrograms()

    def physical_of(system: ReducedSystem) -> np.ndarray:
        return retrieve_physical(robot, base, setup, system.r_cols * system.scale, system.z, system.outside_sq,
                                 target_columns, config, programs).base_values

    return physical_of


def _tool_mass(robot: RobotModel, setup: RobotSetup, configured_kg: float | None) -> tuple[float, str]:
    """The tool mass the last link's bounds allow for (PhysicalConfig.tool_mass_kg) and a note saying whence."""
    if configured_kg is not None:
        source = "physical.tool_mass_kg"
        tool_kg = configured_kg
    elif setup.rated_payload_kg is not None:
        source, tool_kg = "the robot config's rated payload", setup.rated_payload_kg
    else:
        source = f"{TOOL_FRACTION:g} of the arm's URDF mass (no rated payload)"
        tool_kg = TOOL_FRACTION * nominal_mass_kg(robot)
    if tool_kg == 0.0:
        return 0.0, f"no tool allowed for on {robot.link_names[-1]} ({source} 0)"
    return tool_kg, (f"{robot.link_names[-1]} may carry a tool the URDF does not hold of up to {tool_kg:.3g} kg "
                     f"({source}), its CoM within {TOOL_REACH_M:g} m of the link's")


def _link_sizes(robot: RobotModel, setup: RobotSetup, fixed: tuple[np.ndarray | None, ...],
                fraction: float) -> tuple[tuple[LinkSize | None, ...], str]:
    """Each link's size bound (none, and no mesh read, when `fraction` is 0), and a note saying which
    links have one, with what fraction, from which geometry."""
    if fraction <= 0.0:
        return (), "no size bounds (spread_fraction 0)"
    hulls, source = link_hulls(setup.collision, setup.urdf_path)
    sizes = size_bounds(robot, hulls, fixed, fraction)
    bounded = [f"{robot.link_names[j]} {size.fraction:.3g}" for j, size in enumerate(sizes) if size is not None]
    free = [robot.link_names[j] for j, size in enumerate(sizes) if size is None]
    unbounded = f"; none for {', '.join(free)}" if free else ""
    return sizes, (f"size bounds (at least this fraction of a link's URDF mass spreads over its collision hull): "
                   f"{', '.join(bounded) or 'none'}{unbounded}; {source}")


def _retrieve_checked(robot: RobotModel, w: np.ndarray, z_nm: np.ndarray, outside_sq_nm2: float,
                      target_from_pi: np.ndarray, bounds: PhysicalBounds, config: PhysicalConfig,
                      programs: LmiPrograms | None) -> RetrievalResult:
    """The configured method's result if it meets every constraint, else the other method's, else RetrievalError
    naming what each could not meet and by how much: a violating set is never the answer."""
    def run(method: str) -> RetrievalResult:
        if method == "lmi":
            return retrieve_lmi(robot, w, z_nm, target_from_pi, bounds, config.regularizer,
                                config.weight(config.regularizer), outside_sq_nm2=outside_sq_nm2, programs=programs)
        return retrieve_multistart(robot, w, z_nm, target_from_pi, bounds, config.starts, config.seed,
                                   weight=config.weight("euclidean"), outside_sq_nm2=outside_sq_nm2)

    first = run(config.method)
    if not first.violations:
        return first
    other = "multistart" if config.method == "lmi" else "lmi"
    second = run(other)
    if second.violations:
        raise RetrievalError(f"no method met every constraint: {config.method}: {'; '.join(first.violations)}; "
                             f"{other}: {'; '.join(second.violations)}")
    note = f"{config.method} did not meet every constraint ({'; '.join(first.violations)}); {other} did"
    return dataclasses.replace(second, notes=(note, *second.notes))
