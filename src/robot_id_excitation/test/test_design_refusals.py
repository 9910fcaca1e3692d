"""`design` refusals of docs/troubleshooting.md's mistakes table as a user meets them, run in-process: the line
that says what to do and the exit code (3: infeasible, nothing written, as for every DesignError; 2: an input that
cannot be read)."""

from __future__ import annotations

import pathlib

from robot_id_excitation.__main__ import main

SRC = pathlib.Path(__file__).resolve().parents[2]
CORPUS = SRC / "robot_id_bringup" / "test" / "data" / "urdf_corpus"
MESHES = SRC / "robot_id_description" / "meshes"
QUICK = ["--acceleration-limit", "10", "--flange-speed", "1.0", "--harmonics", "1", "--samples", "10", "--starts", "1",
         "--max-iterations", "1"]
"""The shortest design of a URDF's arm: the refusals below come before or regardless of the optimisation."""


def _design(urdf: str, out: pathlib.Path, *options: str) -> int:
    return main(["design", "--urdf", str(CORPUS / urdf), *QUICK, *options, "--out", str(out)])


def test_floor_and_clearance_typed_in_millimetres_ask_whether_they_are_right(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(MESHES))
    assert _design("fer.urdf", tmp_path / "out", "--floor-z", "5", "--clearance", "20") == 3
    err = capsys.readouterr().err
    assert ("within the clearance of the floor in all 50 poses: are --floor-z and --clearance right (metres; the "
            "floor in the base frame)?") in err
    assert "pairs of links are closer than the clearance (20005.0 mm with its margin) in all 50 poses: is " \
           "--clearance right (metres)?" in err
    assert not (tmp_path / "out" / "excitation.yaml").exists()


def test_links_built_closer_than_the_clearance_name_the_allow_pair_that_exempts_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(MESHES))
    assert _design("fr3.urdf", tmp_path / "out", "--floor-z", "0.05") == 3
    err = capsys.readouterr().err
    assert "fr3_link5–fr3_link7 are closer than the clearance" in err and "--allow-pair fr3_link5,fr3_link7" in err
    assert not (tmp_path / "out" / "excitation.yaml").exists()


def test_a_vendor_urdf_whose_meshes_are_not_installed_names_the_mesh_and_where_they_ship(tmp_path, monkeypatch,
                                                                                          capsys):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    assert _design("fer.urdf", tmp_path / "out", "--floor-z", "0.05") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "collision mesh 'package://franka_description/meshes/robot_arms/fer/collision/link0.stl' not found" in line
    named = ("the collision meshes of lbr_description, franka_description and ur_description are in "
             "robot_id_description: ROS_PACKAGE_PATH=")
    assert named in line
    folder = pathlib.Path(line.split(named, 1)[1])  # the advice works: the mesh is there
    assert (folder / "franka_description/meshes/robot_arms/fer/collision/link0.stl").is_file()

