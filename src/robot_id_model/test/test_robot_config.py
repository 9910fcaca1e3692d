"""Robot configs given by path need no description package; robot names need the installed one."""

import pathlib

import pytest
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
