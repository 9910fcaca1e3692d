"""URDFs exactly as their packages ship them (data/urdf_corpus, sources and licences in its SOURCE.md): each one's
arm is found, its excitation design runs or is refused with the reason and what to do, its synthetic data identify
with the default settings and no --allow-* flag, identified.urdf alone predicts a held-out motion through
pinocchio, and identified.xml simulates. The steps are benchmarks/urdf_corpus.py's (here on shorter data)."""

import importlib.util
import pathlib
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from robot_id_model import load_robot_model

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
WORST_ERROR_PERCENT = {"gen3_lite.urdf": 12.0}
"""Held-out error of identified.urdf allowed per URDF, default 2 % (the README's corpus table says why). The Gen3
lite's A5: 7.6 % while the pull towards the URDF grew with the data's SNR, 10.5–11.0 % since it is weighed against
the residual (2026-11-27), whatever the physical settings; not yet understood (README)."""


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


def test_the_design_allowing_the_pairs_its_refusal_names_runs(designs, tmp_path):
    """FR3: its wrist links 5 and 7 are built closer than the default clearance; allowed as the refusal says, the
    design runs (and keeps every other pair apart)."""
    refused, _ = designs["fr3.urdf"]
    assert refused.hinted_pairs == ("fr3_link5,fr3_link7",)
    allowed = corpus.design(corpus.CORPUS / "fr3.urdf", tmp_path, refused.hinted_pairs)
    assert allowed.exit_code == 0 and allowed.summary.startswith("cond"), allowed.summary
    assert (tmp_path / "excitation.yaml").is_file()


@pytest.mark.parametrize("urdf", sorted(ARMS))
def test_the_urdf_identifies_and_identified_urdf_predicts_a_held_out_motion(urdf, identified):
    row, _ = identified[urdf]
    assert row["identify_exit"] == 0, row["stderr"]
    assert "Traceback" not in row["stderr"]
    worst = max(row["held_out_error_percent"])
    assert worst < WORST_ERROR_PERCENT.get(urdf, 2.0), row["held_out_error_percent"]
    assert row["mujoco"] == "ok"
