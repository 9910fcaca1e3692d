"""URDFs exactly as their packages ship them (data/urdf_corpus, sources and licences in its SOURCE.md): each one's
arm is found, its excitation design runs or is refused with the reason and what to do, its synthetic data identify
with the default settings and no --allow-* flag, identified.urdf alone predicts a held-out motion through
pinocchio, and identified.xml simulates. The steps are benchmarks/urdf_corpus.py's (here on shorter data)."""

import importlib.util
import json
import pathlib
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import coal
import numpy as np
import pinocchio as pin
import pytest

from robot_id_excitation.__main__ import main
from robot_id_excitation.command_check import CommandPoints, check_points
from robot_id_excitation.constraints import check_samples, design_limits
from robot_id_excitation.excitation_guard import allowance_refusal, trajectory_refusal
from robot_id_excitation.trajectory_file import load_trajectory, recorded_allowed_pairs
from robot_id_excitation.urdf_config import urdf_robot_config
from robot_id_model import load_robot_model
from robot_id_model.collision_geometry import ALLOWED_CLEARANCE_M
from robot_id_model.robot_config import RobotConfig
from robot_id_model.robot_model import pinocchio_configuration

ROOT = pathlib.Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("urdf_corpus", ROOT / "benchmarks" / "urdf_corpus.py")
corpus = importlib.util.module_from_spec(_spec)
sys.modules["urdf_corpus"] = corpus
_spec.loader.exec_module(corpus)

SHORT = corpus.SyntheticData(periods=2, period_s=10.0, rate_hz=100.0)
ARMS = {  # URDF: arm joints, locked joints (fingers), the design's outcome (a condition number or the refusal)
    "lbr_iiwa7.urdf": (7, 0, "cond"),
    "lbr_iiwa14.urdf": (7, 0, "cond"),
    "fer.urdf": (7, 0, "fer_link5–fer_link7 are closer than the clearance"),
    "fer_hand.urdf": (7, 2, "fer_link5–fer_link7 are closer than the clearance"),
    "fr3.urdf": (7, 0, "fr3_link5–fr3_link7 are closer than the clearance"),
    "fr3_hand.urdf": (7, 2, "fr3_link5–fr3_link7 are closer than the clearance"),
    "ur5e.urdf": (6, 0, "wrist_1_link–wrist_3_link are closer than the clearance"),
    "gen3_2f85.urdf": (7, 6, "lack a finite position, velocity or effort <limit> in the URDF; write a robot config"),
    "gen3_lite.urdf": (6, 4, "collision mesh 'package://kortex_description/"),
}
WORST_ERROR_PERCENT = 1.0
"""Held-out error of identified.urdf allowed on every joint of every URDF (the Gen3 lite's was 10.7 % on its A5 while
its gripper's fingers were counted twice: once in the identified last body, once on their own links)."""
VALIDATE_AGREEMENT = (0.10, 0.005)
"""`validate` agrees with the independent check within 10 % or 0.005 Nm, whichever is larger, on every joint."""


def test_the_corpus_is_every_urdf_with_its_source_and_licences():
    folder = corpus.CORPUS
    assert sorted(p.name for p in folder.glob("*.urdf")) == sorted(ARMS)
    source = (folder / "SOURCE.md").read_text()
    assert all(name in source for name in ARMS)
    licences = {p.name for p in folder.glob("LICENSE.*")}
    assert {"LICENSE.lbr_fri_ros2_stack", "LICENSE.franka_description", "LICENSE.Universal_Robots_ROS2_Description",
            "LICENSE.ros2_kortex", "LICENSE.ros2_robotiq_gripper"} <= licences


@pytest.mark.parametrize("urdf", sorted(ARMS))
def test_the_arm_is_found_in_the_urdf_as_shipped(urdf):
    joints, locked, _ = ARMS[urdf]
    robot = load_robot_model(corpus.CORPUS / urdf)
    assert (len(robot.joint_names), len(robot.locked)) == (joints, locked)


def _two_at_a_time(step, root: pathlib.Path) -> dict:
    """`step(urdf_path, folder)` for every URDF of the corpus, two at a time (each runs a process of one core)."""
    with ThreadPoolExecutor(2) as pool:
        futures = {urdf: pool.submit(step, corpus.CORPUS / urdf, root / urdf) for urdf in ARMS}
        return {urdf: (future.result(), root / urdf) for urdf, future in futures.items()}


@pytest.fixture(scope="module")
def designs(tmp_path_factory) -> dict:
    """Every URDF's design with no --allow-pair, and its folder."""
    return _two_at_a_time(corpus.design, tmp_path_factory.mktemp("designs"))


def _identify(urdf: pathlib.Path, work: pathlib.Path) -> dict:
    work.mkdir()
    return corpus.identify_and_check(urdf, load_robot_model(urdf, friction=corpus.FRICTION), work, SHORT)


@pytest.fixture(scope="module")
def identified(tmp_path_factory) -> dict:
    """Every URDF's synthetic data identified, and the independent check's figures."""
    return _two_at_a_time(_identify, tmp_path_factory.mktemp("identified"))


@pytest.mark.parametrize("urdf", sorted(ARMS))
def test_the_design_runs_or_says_why_not_and_what_to_do(urdf, designs):
    design, folder = designs[urdf]
    expected = ARMS[urdf][2]
    assert "Traceback" not in design.summary
    if expected == "cond":
        assert design.exit_code == 0 and design.summary.startswith("cond"), design.summary
        assert (folder / "excitation.yaml").is_file()
    else:
        assert design.exit_code != 0 and expected in design.summary, design.summary
        assert not (folder / "excitation.yaml").exists()


FR3 = corpus.CORPUS / "fr3.urdf"
FR3_WRIST = ("fr3_link5", "fr3_link7")


def _vendor_mesh_distance_m(q_rad: np.ndarray) -> np.ndarray:
    """(K,) distance between the FR3's links 5 and 7 on franka_description's collision meshes at the poses q: coal's
    own STL loader and BVH distance, placed by pinocchio (0: touching), sharing nothing with the suite's collision
    code."""
    folder = corpus.MESHES / "franka_description" / "meshes" / "robot_arms" / "fr3" / "collision"
    loader, request = coal.MeshLoader(), coal.DistanceRequest()
    meshes = [loader.load(str(folder / f"link{i}.stl")) for i in (5, 7)]
    model = pin.buildModelFromUrdf(str(FR3))
    data, frames = model.createData(), [model.getFrameId(link) for link in FR3_WRIST]
    out = np.empty(len(q_rad))
    for k, q in enumerate(q_rad):
        pin.framesForwardKinematics(model, data, pinocchio_configuration(model, q))
        first, second = (coal.Transform3s(data.oMf[f].rotation, data.oMf[f].translation) for f in frames)
        out[k] = coal.distance(meshes[0], first, meshes[1], second, request, coal.DistanceResult())
    return out


@pytest.fixture(scope="module")
def fr3_allowing(designs, tmp_path_factory) -> tuple[corpus.Design, pathlib.Path]:
    """The FR3's design allowing the pair its refusal names, as the refusal tells a user to, and its folder."""
    refused, _ = designs["fr3.urdf"]
    assert refused.hinted_pairs == (",".join(FR3_WRIST),)
    folder = tmp_path_factory.mktemp("fr3_allowing")
    return corpus.design(FR3, folder, refused.hinted_pairs), folder


def test_the_design_allowing_the_pairs_its_refusal_names_keeps_them_apart_and_records_it(fr3_allowing, capsys,
                                                                                       monkeypatch):
    """FR3: its wrist links 5 and 7 are built closer than the default clearance (at most 22.5 mm apart); allowed as
    the refusal says, the design runs, and the pair still keeps ALLOWED_CLEARANCE_M: on the vendor's meshes (coal,
    here) it never touches in 3000 poses of a period, and the design's closest approach, allowed pairs included, is
    the meshes' to the grid's resolution. The allowance is in excitation.yaml and design.json, and `check` of the
    file alone (no --allow-pair) applies it and prints the design's closest approach."""
    allowed, folder = fr3_allowing
    assert allowed.exit_code == 0 and allowed.summary.startswith("cond"), allowed.summary
    path = folder / "excitation.yaml"
    assert recorded_allowed_pairs(path) == {frozenset(FR3_WRIST)}
    assert json.loads((folder / "design.json").read_text())["allowed_pairs"] == [list(FR3_WRIST)]
    trajectory = load_trajectory(path)
    q_rad = trajectory.evaluate(np.arange(3000) * trajectory.period_s / 3000)[0]
    meshes_m = _vendor_mesh_distance_m(q_rad)
    assert meshes_m.min() >= ALLOWED_CLEARANCE_M, meshes_m.min()
    if allowed.closest_pair == "–".join(FR3_WRIST):
        assert allowed.closest_mm == pytest.approx(1e3 * meshes_m.min(), abs=0.5)
    assert allowed.closest_mm <= 1e3 * meshes_m.min() + 0.5
    monkeypatch.setenv("ROS_PACKAGE_PATH", corpus.with_vendor_meshes()["ROS_PACKAGE_PATH"])
    grid = ["--samples", "800"]  # the design's verification grid: 10 × its 80 constraint samples
    assert main(["check", str(path), "--urdf", str(FR3), *corpus.DESIGN[:6], *grid, "--out", str(folder)]) == 0
    checked = corpus.CLOSEST.search(capsys.readouterr().out)
    assert (float(checked.group(1)), f"{checked.group(2)}–{checked.group(3)}") == (allowed.closest_mm,
                                                                                  allowed.closest_pair)


@pytest.fixture(scope="module")
def fr3_config() -> RobotConfig:
    """The FR3's config from its URDF (the corpus design's limits), no pair allowed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROS_PACKAGE_PATH", corpus.with_vendor_meshes()["ROS_PACKAGE_PATH"])
        return urdf_robot_config(FR3, None, [10.0], 1.0, 0.05)


def _allowing_the_wrist(config: RobotConfig) -> RobotConfig:
    return replace(config, collision=replace(config.collision, allowed_pairs=frozenset({frozenset(FR3_WRIST)})))


def test_an_allowed_pair_that_touches_is_a_violation(fr3_config):
    """A pose of the FR3 within its limits where links 5 and 7 touch on the vendor's meshes (coal, here) violates
    the pair's clearance though the pair is allowed closer, in the check and in the command monitor: allowed closer
    is never allowed to touch."""
    config = _allowing_the_wrist(fr3_config)
    q_rad = np.array([[0.0, 0.0, 0.0, -1.5, 0.0, 0.65, 2.2]])
    assert _vendor_mesh_distance_m(q_rad)[0] == 0.0
    zeros = np.zeros_like(q_rad)
    robot, limits = config.load_model(()), design_limits(config)
    report = check_samples(robot, limits, np.zeros(1), q_rad, zeros, zeros)
    (wrist,) = [c for c in report.violations if c.where == "–".join(FR3_WRIST)]
    assert wrist.limit == ALLOWED_CLEARANCE_M and wrist.value < 0
    command = CommandPoints(robot.joint_names, 0.0, np.zeros(1), q_rad, zeros, zeros)
    assert f"point {FR3_WRIST[0]} and {FR3_WRIST[1]} {wrist.value:.4g} m apart, clearance 0.005 m" in \
        check_points(command, robot, limits)


def test_a_trajectory_used_with_allowances_it_was_not_designed_with_is_refused_in_one_line(fr3_allowing,
                                                                                          fr3_config):
    """The FR3 design allowing links 5 and 7, run (the node's and the runner's check) against a collision geometry
    that does not allow its pair, is refused in one line, as is a trajectory that records no allowance against
    a geometry that allows the pair (the command line's `check --allow-pair`: test_collision.py)."""
    path = fr3_allowing[1] / "excitation.yaml"
    refusal = trajectory_refusal(load_trajectory(path), fr3_config.load_model(()), design_limits(fr3_config), "fr3",
                                 recorded_allowed_pairs(path))
    assert refusal.count("\n") == 0 and "designed allowing fr3_link5–fr3_link7" in refusal, refusal
    assert "does not allow" in refusal
    refusal = allowance_refusal(frozenset(), _allowing_the_wrist(fr3_config).collision)
    assert refusal.count("\n") == 0 and "not designed allowing fr3_link5–fr3_link7" in refusal, refusal
    assert allowance_refusal(recorded_allowed_pairs(path), _allowing_the_wrist(fr3_config).collision) == ""


@pytest.mark.parametrize("urdf", sorted(ARMS))
def test_the_urdf_identifies_and_identified_urdf_predicts_a_held_out_motion(urdf, identified):
    row, _ = identified[urdf]
    assert row["identify_exit"] == 0, row["stderr"]
    assert "Traceback" not in row["stderr"]
    worst = max(row["held_out_error_percent"])
    assert worst < WORST_ERROR_PERCENT, row["held_out_error_percent"]
    assert row["mujoco"] == "ok"


@pytest.mark.parametrize("urdf", sorted(ARMS))
def test_validate_reports_what_the_written_files_do(urdf, identified):
    """`validate` (the written model as its command line loads it) against the check computed apart from the tool
    (pinocchio from identified.urdf, identified.yaml's laws evaluated in the benchmark) on the same samples of a
    periodic and a non-periodic motion the identification never saw."""
    row, _ = identified[urdf]
    relative, absolute_nm = VALIDATE_AGREEMENT
    for motion, figures in row["validate_against_check"].items():
        tool, check = np.array(figures["validate_nm"]), np.array(figures["check_nm"])
        assert np.all(np.abs(tool - check) <= np.maximum(relative * check, absolute_nm)), (motion, tool, check)
