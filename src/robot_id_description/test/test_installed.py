"""The installed package holds the source tree's descriptions and configs, and robot names resolve into it."""

import pathlib

import pytest
from ament_index_python.packages import get_package_share_directory

from robot_id_model import load_robot_config
from robot_id_model.robot_config import config_directory

SOURCE = pathlib.Path(__file__).resolve().parents[1]
SHARE = pathlib.Path(get_package_share_directory("robot_id_description"))


@pytest.mark.parametrize("pattern", ["urdf/*.urdf", "config/*.yaml", "collision/*.yaml", "meshes/**/*.stl",
                                     "meshes/*/LICENSE", "meshes/*/NOTICE", "meshes/SOURCE.md",
                                     "urdf/SOURCE.md", "urdf/*.franka_description"])
def test_share_holds_every_source_file_unchanged(pattern):
    source = {p.relative_to(SOURCE): p.read_bytes() for p in SOURCE.glob(pattern)}
    installed = {p.relative_to(SHARE): p.read_bytes() for p in SHARE.glob(pattern)}
    assert source, f"no {pattern} in the source tree"
    assert installed == source


def test_robot_names_resolve_in_the_installed_package():
    assert config_directory() == SHARE / "config"
    for path in sorted(SHARE.glob("config/*.yaml")):
        config = load_robot_config(path.stem)
        assert config.robot == path.stem
        assert config.urdf_path == (SHARE / "urdf" / f"{path.stem}.urdf").resolve()
        assert config.urdf_path.is_file()


def test_every_config_names_collision_geometry_whose_meshes_are_installed():
    """Each shipped robot is checked for collisions, on capsules and hulls of the vendor meshes installed beside it."""
    for path in sorted(SHARE.glob("config/*.yaml")):
        geometry = load_robot_config(path.stem).collision
        assert geometry is not None and geometry.clearance_m > 0, path.stem
        assert pathlib.Path(geometry.source).parent == SHARE / "collision"
        assert set(geometry.link_hulls()) == set(geometry.links), path.stem
        for entry in geometry.reference.values():
            for mesh in entry.get("meshes", ()):
                assert (SHARE / "collision" / mesh["file"]).resolve().is_file()
