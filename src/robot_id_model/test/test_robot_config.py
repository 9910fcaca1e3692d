"""Robot configs given by path need no description package; robot names need the installed one."""

import pathlib

import pytest
import yaml
from conftest import random_arm_urdf

from robot_id_model import ModelError, load_robot_config, robot_config

CONFIG = """robot: arm
urdf: ../urdf/arm.urdf
joint_names: [j1, j2, j3]
flange_frame: tool
gravity_m_s2: [0.0, 0.0, -9.81]
limits:
  position_lower_rad: [-2.5, -2.5, -2.5]
  position_upper_rad: [2.5, 2.5, 2.5]
  velocity_rad_s: [2.0, 2.0, 2.0]
  acceleration_rad_s2: [10.0, 10.0, 10.0]
  torque_nm: [100.0, 100.0, 100.0]
  flange_speed_m_s: 1.0
floor_z_m: 0.0
topics: {joint_states: /joint_states, joint_trajectory: /joint_trajectory}
torque_filter_time_constant_s: 0.0
state_rate_hz: 1000.0
"""


def test_config_urdf_is_relative_to_the_config_file(tmp_path: pathlib.Path):
    (tmp_path / "urdf").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "urdf" / "arm.urdf").write_text(random_arm_urdf(3, seed=1))
    (tmp_path / "config" / "arm.yaml").write_text(CONFIG)
    config = load_robot_config(tmp_path / "config" / "arm.yaml")
    assert config.urdf_path == (tmp_path / "urdf" / "arm.urdf").resolve()
    assert config.load_model(friction=()).joint_names == ("j1", "j2", "j3")
    assert config.datasheet_mass_kg is None  # optional
    (tmp_path / "config" / "arm.yaml").write_text(CONFIG + "datasheet_mass_kg: 18.0\n")
    assert load_robot_config(tmp_path / "config" / "arm.yaml").datasheet_mass_kg == 18.0


def test_robot_names_without_the_description_package_give_one_error(monkeypatch):
    monkeypatch.setattr(robot_config, "DESCRIPTION_PACKAGE", "robot_id_description_not_installed")
    with pytest.raises(ModelError, match="robot_id_description_not_installed is not installed"):
        load_robot_config("iiwa14")


COLLISION = """collision:
  geometry: ../collision/arm.yaml
  clearance_m: 0.03
  boxes: [{name: fixture, centre_m: [0.5, 0.0, 0.1], size_m: [0.2, 0.4, 0.2]}]
"""
GEOMETRY = """links:
  link1: {capsules: [{a_m: [0, 0, 0], b_m: [0, 0, 0.2], radius_m: 0.05}]}
  link3: {capsules: [{a_m: [0, 0, 0], b_m: [0.1, 0, 0], radius_m: 0.04}]}
"""


def test_the_collision_entry_gives_geometry_clearance_floor_and_boxes(tmp_path: pathlib.Path):
    """Geometry relative to the config; the floor is floor_z_m; a malformed box or a missing file is one line."""
    for folder in ("urdf", "config", "collision"):
        (tmp_path / folder).mkdir()
    (tmp_path / "urdf" / "arm.urdf").write_text(random_arm_urdf(3, seed=1))
    (tmp_path / "collision" / "arm.yaml").write_text(GEOMETRY)
    path = tmp_path / "config" / "arm.yaml"
    path.write_text(CONFIG + COLLISION)
    geometry = load_robot_config(path).collision
    assert geometry.clearance_m == 0.03 and geometry.floor_z_m == 0.0 and geometry.links == ("link1", "link3")
    assert geometry.boxes[0].name == "fixture" and list(geometry.boxes[0].half_size_m) == [0.1, 0.2, 0.1]
    assert load_robot_config(path).collision.link_hulls() == {}  # capsules without meshes: no hulls
    path.write_text(CONFIG + COLLISION.replace("size_m: [0.2, 0.4, 0.2]", "size_m: [0.2, -0.4, 0.2]"))
    with pytest.raises(ModelError, match="box 'fixture' needs a positive size_m"):
        load_robot_config(path)
    path.write_text(CONFIG + COLLISION.replace("arm.yaml", "nothing.yaml"))
    with pytest.raises(ModelError, match=r"collision geometry file .*nothing\.yaml: cannot be read \(No such file"):
        load_robot_config(path)
    path.write_text(CONFIG)
    assert load_robot_config(path).collision is None


@pytest.mark.parametrize(("key", "value", "message"), [
    ("state_rate_hz", "500 Hz", "state_rate_hz must be a positive number [Hz], got '500 Hz'"),
    ("torque_filter_time_constant_s", "16 ms",
     "torque_filter_time_constant_s must be a non-negative number [s], got '16 ms'"),
    ("floor_z_m", True, "floor_z_m must be a number [m], got True"),
    ("limits.velocity_rad_s", [2.0, 2.0],
     "limits.velocity_rad_s must be a list of 3 positive numbers [rad/s] (one per joint), got [2.0, 2.0]"),
    ("limits.flange_speed_m_s", "1 m/s", "limits.flange_speed_m_s must be a positive number [m/s], got '1 m/s'"),
    ("gravity_m_s2", "down", "gravity_m_s2 must be a list of 3 numbers [m/s²] (x, y, z in the base frame), got 'down'"),
    ("topics", "/joint_states", "topics must be a mapping of keys to values, got '/joint_states'"),
    ("datasheet_mass_kg", "18 kg", "datasheet_mass_kg must be a positive number [kg], got '18 kg'"),
    ("collision.clearance_m", "2 cm", "collision.clearance_m must be a non-negative number [m], got '2 cm'"),
    ("joint_names", None, "joint_names is missing"),
])
def test_a_wrong_value_in_a_robot_config_names_the_file_the_key_and_what_it_expects(tmp_path, key, value, message):
    """Before, `state_rate_hz: 500 Hz` gave "could not convert string to float: '500 Hz'", naming neither."""
    (tmp_path / "arm.yaml").write_text(GEOMETRY)
    raw = yaml.safe_load(CONFIG + COLLISION.replace("../collision/", ""))
    *parents, last = key.split(".")
    section = raw
    for parent in parents:
        section = section[parent]
    if value is None:
        del section[last]
    else:
        section[last] = value
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True))
    with pytest.raises(ModelError) as wrong:
        load_robot_config(path)
    assert str(wrong.value) == f"{path}: {message}"


@pytest.mark.parametrize(("old", "new", "message"), [
    ("radius_m: 0.05", "radius_m: 5 cm", "links.link1.capsules[0].radius_m must be a positive number [m], got '5 cm'"),
    ("b_m: [0.1, 0, 0]", "b_m: [0.1, 0]",
     "links.link3.capsules[0].b_m must be a list of 3 numbers [m] (x, y, z in the link frame), got [0.1, 0]"),
    ("{capsules: [{a_m: [0, 0, 0], b_m: [0.1, 0, 0], radius_m: 0.04}]}",
     "{capsules: {a_m: [0, 0, 0], b_m: [0.1, 0, 0], radius_m: 0.04}}",
     "links.link3.capsules must be a list of mappings, got {'a_m': [0, 0, 0], 'b_m': [0.1, 0, 0], 'radius_m': 0.04}"),
])
def test_a_wrong_value_in_a_collision_file_names_the_file_the_key_and_what_it_expects(tmp_path, old, new, message):
    assert old in GEOMETRY
    (tmp_path / "arm.yaml").write_text(GEOMETRY.replace(old, new))
    (tmp_path / "robot.yaml").write_text(CONFIG + COLLISION.replace("../collision/", ""))
    with pytest.raises(ModelError) as wrong:
        load_robot_config(tmp_path / "robot.yaml")
    assert str(wrong.value) == f"{tmp_path / 'arm.yaml'}: {message}"
