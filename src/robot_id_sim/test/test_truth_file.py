"""The truth file: what is written is what is read back, and its identification-model values are the truth's."""

import numpy as np
import pytest
import yaml

from robot_id_model.base_parameters import base_parameters
from robot_id_model.parameters import parameter_names
from robot_id_sim.sensors import SensorOptions
from robot_id_sim.true_dynamics import Perturbation, perturbed_dynamics
from robot_id_sim.truth_file import FORMAT, load_truth, truth_dict, write_truth

SENSORS = SensorOptions(torque_noise_nm=(0.1, 0.2, 0.3, 0.1, 0.1, 0.05, 0.05), encoder_noise_rad=1e-5,
                        torque_filter_time_constant_s=0.002, seed=7)


@pytest.fixture(scope="module", params=["iiwa14", "panda_hand"])
def written(request, arm, tmp_path_factory):
    """A truth file of the default truth (parent directory created by write_truth) and its raw YAML."""
    shipped = arm(request.param)
    path = tmp_path_factory.mktemp("truth") / "nested" / "truth.yaml"
    assert write_truth(path, shipped.robot, shipped.truth, "a test", SENSORS) == path
    return shipped, path, yaml.safe_load(path.read_text())


def test_round_trip_gives_back_the_truth(written):
    shipped, path, _ = written
    truth, loaded = shipped.truth, load_truth(path)
    assert len(loaded.links) == len(truth.links)
    for a, b in zip(loaded.links, truth.links, strict=True):
        assert a.mass_kg == b.mass_kg
        np.testing.assert_array_equal(a.com_m, b.com_m)
        np.testing.assert_array_equal(a.inertia_com_kg_m2, b.inertia_com_kg_m2)
    for field in ("fv1", "fv2", "fv3", "fs", "fs1", "fc", "fc1"):
        np.testing.assert_array_equal(getattr(loaded.friction, field), getattr(truth.friction, field))
    np.testing.assert_array_equal(loaded.armature_kg_m2, truth.armature_kg_m2)
    np.testing.assert_array_equal(loaded.torque_offset_nm, truth.torque_offset_nm)
    assert loaded.payload.mass_kg == truth.payload.mass_kg
    np.testing.assert_array_equal(loaded.payload.inertia_com_kg_m2, truth.payload.inertia_com_kg_m2)
    # the loaded truth gives the same identification parameters, bit for bit
    np.testing.assert_array_equal(loaded.standard_parameters(shipped.robot),
                                  truth.standard_parameters(shipped.robot))


def test_identification_model_values(written):
    """standard = truth.standard_parameters(robot) by name; base = base_parameters(robot).values(π) by name."""
    shipped, _, raw = written
    model = raw["identification_model"]
    assert model["friction"] == ["FV", "FC", "FO", "IA"]
    pi = shipped.truth.standard_parameters(shipped.robot)
    assert list(model["standard"]) == parameter_names(shipped.robot)
    np.testing.assert_array_equal(np.array(list(model["standard"].values())), pi)
    base = base_parameters(shipped.robot)
    assert tuple(model["base"]) == base.names
    np.testing.assert_allclose(np.array(list(model["base"].values())), base.values(pi), rtol=1e-14, atol=1e-15)


def test_file_states_joints_links_sensors_and_source(written):
    shipped, _, raw = written
    assert raw["format"] == FORMAT and raw["source"] == "a test"
    assert [j["joint"] for j in raw["joints"]] == list(shipped.robot.joint_names)
    assert [entry["link"] for entry in raw["links"]] == list(shipped.robot.link_names)
    assert raw["perturbation"]["seed"] == 0 and raw["perturbation"]["payload_mass_kg"] == 1.0
    assert raw["sensors"]["torque_noise_nm"] == list(SENSORS.torque_noise_nm)
    assert raw["sensors"]["torque_filter_time_constant_s"] == 0.002 and raw["sensors"]["seed"] == 7
    assert raw["joints"][2]["fs_nm"] == float(shipped.truth.friction.fs[2])


def test_truth_needs_the_truth_friction_terms(arm):
    iiwa = arm("iiwa14")
    with pytest.raises(ValueError, match="friction terms"):
        truth_dict(iiwa.config.load_model(("FV", "FC")), iiwa.truth, "x", SensorOptions())


def test_not_a_truth_file_is_refused(tmp_path):
    path = tmp_path / "other.yaml"
    path.write_text(yaml.safe_dump({"format": FORMAT + 1, "links": []}))
    with pytest.raises(ValueError, match="not a truth file of format 1"):
        load_truth(path)


def test_each_joints_friction_law_survives_the_file(arm, tmp_path):
    shipped = arm("panda")
    truth = perturbed_dynamics(shipped.robot, shipped.config.limits.torque_nm,
                               Perturbation(seed=2, friction_laws=("stribeck", "sigmoid", "tanh")))
    loaded = load_truth(write_truth(tmp_path / "truth.yaml", shipped.robot, truth, "a test", SENSORS))
    assert tuple(loaded.friction.laws()) == tuple(truth.friction.laws())
    dq = np.linspace(-1.0, 1.0, 201)[:, None] * np.ones(len(truth.friction.fc))
    np.testing.assert_allclose(loaded.friction.torque_nm(dq), truth.friction.torque_nm(dq), rtol=1e-12, atol=1e-15)
