"""Inertia bounds from each link's size: no link of kilograms comes out as a point mass, the URDF model
always meets its bounds, and the bounds come from the vendor's meshes, the URDF's <collision> elements, or nowhere
(said so)."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import identification_problem, iiwa14_setup, simulated_recording

from robot_id_estimator.physical.constraints import SIZE, ConstraintSet
from robot_id_estimator.physical.lmi import retrieve_lmi
from robot_id_estimator.physical.multistart import retrieve_multistart
from robot_id_estimator.physical.plausibility import ACTIVE_FRACTION
from robot_id_estimator.physical.problem import default_bounds
from robot_id_estimator.physical.size_bounds import LinkSize, link_hulls, size_bounds
from robot_id_estimator.pipeline import identify
from robot_id_estimator.results.plausibility import grouped_active
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_lab.synthetic import urdf_with_friction
from robot_id_model import load_robot_config
from robot_id_model.hull_moments import uniform_hull_moments
from robot_id_model.parameters import inertial_columns, nominal_parameters
from robot_id_model.physical import (
    LinkInertial,
    inertia_six,
    link_from_standard,
    link_standard_parameters,
    sigma_matrix,
)
from robot_id_model.urdf_inertials import fixed_parts, lumped_known_parts

WRIST = 5
"""lbr_link_6, 2.5 kg"""
SPREAD = 0.1
"""spread_fraction (the default)"""


def _sizes(name: str):
    config = load_robot_config(name)
    robot = config.load_model()
    setup = RobotSetup.from_config(config)
    fixed = fixed_parts(robot, setup.urdf_text, lumped_known_parts(robot, setup.urdf_text))
    hulls, _ = link_hulls(setup.collision, setup.urdf_path)
    return robot, hulls, fixed, size_bounds(robot, hulls, fixed, SPREAD)


def _spread(robot, pi: np.ndarray, j: int, size: LinkSize) -> float:
    link = link_from_standard(pi[inertial_columns(robot)[j]])
    return size.spread(sigma_matrix(inertia_six(link.inertia_com_kg_m2)))


@pytest.mark.parametrize("name", ["iiwa7", "iiwa14", "panda", "panda_hand"])
def test_every_shipped_urdf_model_meets_its_size_bounds(name):
    robot, _, fixed, sizes = _sizes(name)
    bounds = default_bounds(robot, fixed_inertials=fixed, link_sizes=sizes)
    without = dataclasses.replace(bounds, link_sizes=())
    pi0 = nominal_parameters(robot)  # the only violation is Franka's link 4's triangle inequality, as shipped
    assert ConstraintSet(robot, bounds).violations(pi0) == ConstraintSet(robot, without).violations(pi0)
    fractions = [None if size is None else size.fraction for size in sizes]
    if name.startswith("iiwa"):  # KUKA's CAD inertias are 0.4-1.0 as spread as their hulls
        assert fractions == [SPREAD] * 7
    else:  # Franka's link 4 is not consistent: no bound; link 3 is half as spread as its URDF inertial
        assert fractions[3] is None and 0.02 < fractions[2] < 0.03
        assert all(f == SPREAD for k, f in enumerate(fractions) if k not in (2, 3))


def test_a_link_carrying_a_known_part_is_bounded_by_its_own_part():
    """Panda link 7 made a point mass under the Franka Hand: the whole is spread, its own part is not."""
    robot, _, fixed, sizes = _sizes("panda_hand")
    bounds = default_bounds(robot, fixed_inertials=fixed, link_sizes=sizes)
    cols = inertial_columns(robot)[6]
    pi = nominal_parameters(robot)
    own = link_from_standard(pi[cols] - fixed[6])
    pi[cols] = fixed[6] + link_standard_parameters(LinkInertial(own.mass_kg, own.com_m, 1e-3 * own.inertia_com_kg_m2))
    assert _spread(robot, pi, 6, sizes[6]) > sizes[6].fraction  # link and hand together
    reasons = [v for v in ConstraintSet(robot, bounds).violations(pi) if v.startswith("link fer_link7")]
    assert len(reasons) == 1 and "below its size bound" in reasons[0] and SIZE in reasons[0]


@pytest.mark.parametrize("method", ["lmi", "multistart"])
def test_a_link_the_data_make_a_point_mass_keeps_the_spread_of_its_size(method):
    """Data of a 2.5 kg wrist link whose inertia is a thousandth of the URDF's: without size bounds the retrieval
    follows them below a tenth of the uniform hull's spread; with them it stops at that bound, warned by name."""
    robot, base, pi_true, w, _ = identification_problem("iiwa14")
    cols = inertial_columns(robot)[WRIST]
    link = link_from_standard(pi_true[cols])
    point = pi_true.copy()
    point[cols] = link_standard_parameters(LinkInertial(link.mass_kg, link.com_m, 1e-3 * link.inertia_com_kg_m2))
    tau = w @ (base.beta_from_pi @ point)
    _, _, _, sizes = _sizes("iiwa14")
    size = sizes[WRIST]

    def retrieve(bounds):
        if method == "lmi":
            return retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds)
        return retrieve_multistart(robot, w, tau, base.beta_from_pi, bounds, 4, 0)

    free = retrieve(default_bounds(robot))
    assert _spread(robot, free.pi, WRIST, size) < 0.5 * size.fraction
    bounds = default_bounds(robot, link_sizes=sizes)
    kept = retrieve(bounds)
    assert kept.violations == ()
    for j, link_size in enumerate(sizes):
        assert _spread(robot, kept.pi, j, link_size) >= link_size.fraction * (1 - 1e-6), j
    warning = next(line for line in grouped_active(tuple(ConstraintSet(robot, bounds).active(kept.pi,
                                                                                               ACTIVE_FRACTION)))
                   if "size bound" in line)
    assert "links at their size bound (physical.size_bounds): " in warning
    assert "lbr_link_6" in warning.split(": ")[1].split(", ")


def _with_missing_mesh(urdf_text: str) -> str:
    """The URDF with its first <collision> geometry a mesh that is nowhere."""
    head, tail = urdf_text.split("<collision>", 1)
    geometry_end = tail.index("</geometry>")
    geometry_start = tail.index("<geometry>")
    return (head + "<collision>" + tail[:geometry_start] + '<geometry><mesh filename="package://nowhere/not_there.stl"/>'
            + tail[geometry_end:])


def test_without_a_config_the_urdfs_collision_elements_give_the_hulls(tmp_path):
    shipped = iiwa14_setup()
    bare = RobotSetup("iiwa14", shipped.urdf_path, shipped.joint_names)
    hulls, source = link_hulls(bare.collision, bare.urdf_path)
    assert source.endswith("(<collision> elements)")
    # lbr_link_1's <collision> is a cylinder of radius 0.07 m and length 0.2125 m
    moments = uniform_hull_moments(hulls["lbr_link_1"])
    assert np.sort(np.linalg.eigvalsh(moments.second_moment_per_kg_m2)) == pytest.approx(
        [0.07**2 / 4, 0.07**2 / 4, 0.2125**2 / 12], rel=0.02)
    missing = tmp_path / "arm.urdf"
    missing.write_text(_with_missing_mesh(bare.urdf_text))
    hulls, source = link_hulls(None, str(missing))
    assert hulls == {} and source.startswith("no size bounds: ") and "not_there.stl" in source


def test_the_identification_says_where_its_size_bounds_come_from():
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    data = simulated_recording(robot, setup, urdf_with_friction(robot), 2)
    sign_law = EstimatorConfig(coulomb_law="sign")  # the law simulated: no choice
    notes = identify([data], setup, sign_law).physical.notes  # the default bounds
    note = next(n for n in notes if n.startswith("size bounds"))
    assert "lbr_link_1 0.1" in note and "iiwa14/collision.yaml" in note
    off = dataclasses.replace(sign_law, physical=dataclasses.replace(sign_law.physical, spread_fraction=0.0))
    assert "no size bounds (spread_fraction 0)" in identify([data], setup, off).physical.notes
