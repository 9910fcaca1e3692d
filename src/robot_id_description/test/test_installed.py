"""The installed package holds the source tree's robot folders and meshes, and robot names are its folders."""

import pathlib

import pytest
from ament_index_python.packages import get_package_share_directory

from robot_id_model import load_robot_config
from robot_id_model.robot_config import robot_names, robots_directory

SOURCE = pathlib.Path(__file__).resolve().parents[1]
SHARE = pathlib.Path(get_package_share_directory("robot_id_description"))


@pytest.mark.parametrize("folder", ["robots", "meshes"])
def test_share_holds_every_source_file_unchanged(folder):
    source = {p.relative_to(SOURCE): p.read_bytes() for p in (SOURCE / folder).rglob("*") if p.is_file()}
    installed = {p.relative_to(SHARE): p.read_bytes() for p in (SHARE / folder).rglob("*") if p.is_file()}
    assert source, f"no {folder}/ in the source tree"
    assert installed == source


def test_robot_names_are_the_installed_folders_and_resolve_into_them():
    assert robots_directory() == SHARE / "robots"
    assert robot_names() == tuple(sorted(p.parent.name for p in (SOURCE / "robots").glob("*/robot.yaml")))
    assert {"iiwa14", "panda", "fr3_hand"} <= set(robot_names())
    for name in robot_names():
        config = load_robot_config(name)
        assert config.robot == name
        assert config.urdf_path == (SHARE / "robots" / name / f"{name}.urdf").resolve()
        assert config.urdf_path.is_file()


def test_every_config_names_collision_geometry_whose_meshes_are_installed():
    """Each shipped robot is checked for collisions, on capsules and hulls of the vendor meshes installed beside it."""
    for name in robot_names():
        geometry = load_robot_config(name).collision
        assert geometry is not None and geometry.clearance_m > 0, name
        assert pathlib.Path(geometry.source) == SHARE / "robots" / name / "collision.yaml"
        assert set(geometry.link_hulls()) == set(geometry.links), name
        for entry in geometry.reference.values():
            for mesh in entry.get("meshes", ()):
                assert (SHARE / "robots" / name / mesh["file"]).resolve().is_relative_to(SHARE / "meshes")
                assert (SHARE / "robots" / name / mesh["file"]).resolve().is_file()
