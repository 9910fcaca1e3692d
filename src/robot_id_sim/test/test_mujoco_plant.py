"""MuJoCo's arm is the true robot: its equations of motion equal pinocchio's regressor times the true π, with the
friction split as the plant says. MuJoCo and pinocchio are independent engines, so this checks the link
inertials, armature, friction, gravity and the fixed non-arm joints all at once."""

import dataclasses
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from robot_id_model.parameters import friction_columns
from robot_id_model.regressor import regressor
from robot_id_sim.mujoco_plant import MujocoPlant, PlantError, mujoco_urdf
from robot_id_sim.true_dynamics import Perturbation, perturbed_dynamics

TIMESTEP_S = 1.0 / 2000.0
STEPS = 1000
"""0.5 s of sim time: long enough for the joints to stick at rest (~7 % of the samples have |dq| < 1e-3 rad/s),
break away and reach 2-4 rad/s (every friction regime), short enough that the check takes ~0.2 s per robot."""


def plant_of(shipped) -> MujocoPlant:
    cfg = shipped.config
    return MujocoPlant(shipped.urdf_text, cfg.joint_names, cfg.gravity_m_s2, shipped.truth, TIMESTEP_S)


def drive(shipped, plant: MujocoPlant, seed: int = 1) -> dict[str, np.ndarray]:
    """Step the plant with the nominal gravity torque plus slow sines and white noise (a few % of the torque
    limits), recording the state before each step, the acceleration and friction loss after it."""
    cfg, robot = shipped.config, shipped.robot
    lower, upper = cfg.limits.position_lower_rad, cfg.limits.position_upper_rad
    plant.reset(0.5 * (lower + upper) + 0.3)
    rng = np.random.default_rng(seed)
    data = robot.model.createData()
    tau_max = cfg.limits.torque_nm
    log = {key: [] for key in ("q", "dq", "ddq", "tau", "loss")}
    for k in range(STEPS):
        q, dq = plant.q_rad, plant.dq_rad_s
        gravity = pin.computeGeneralizedGravity(robot.model, data, robot.configuration(q))
        t = k * TIMESTEP_S
        tau = (gravity + 0.03 * tau_max * np.sin(2 * np.pi * t * np.arange(1.0, 8.0))
               + 0.01 * tau_max * rng.normal(size=7))
        plant.step(tau)
        for key, value in zip(log, (q, dq, plant.ddq_rad_s2, tau, plant.friction_loss_nm()), strict=True):
            log[key].append(value)
    return {key: np.array(value) for key, value in log.items()}


def test_equations_of_motion_are_the_true_model(each_arm):
    """τ_applied = Y(q, dq, ddq)·π_true (FC and FO zeroed: Coulomb friction and the sensor offset are not forces on
    the arm) + MuJoCo's friction loss + the explicit continuous friction, at every step.

    Tolerance: at ≥ 99 % of the steps 1e-9 Nm (measured ~1e-12: the two engines agree to rounding). At a few
    steps MuJoCo's constraint solver stops before convergence while a joint sticks in static friction; there its
    acceleration and friction-loss force disagree by up to ~6e-4 Nm (measured on iiwa7 with another torque
    sequence; this one gives 1e-13 everywhere), so every step gets 2e-3 Nm.
    """
    robot, truth = each_arm.robot, each_arm.truth
    log = drive(each_arm, plant_of(each_arm))
    pi = truth.standard_parameters(robot)
    columns = friction_columns(robot)
    pi[columns[:, 1]] = 0.0
    pi[columns[:, 2]] = 0.0
    predicted = (regressor(robot, log["q"], log["dq"], log["ddq"]) @ pi + log["loss"]
                 + truth.friction.continuous_torque_nm(log["dq"]))
    error = np.abs(predicted - log["tau"]).max(axis=1)
    assert np.mean(error < 1e-9) >= 0.99
    assert error.max() < 2e-3
    # the run did exercise the dynamics: fast motion somewhere, and sticking (|dq| tiny) somewhere
    assert np.abs(log["dq"]).max() > 0.5 and np.any(np.abs(log["dq"]) < 1e-3)
    # the friction loss is the static level: never more than fs (MuJoCo clamps it there)
    assert np.all(np.abs(log["loss"]) <= truth.friction.fs * (1 + 1e-9))


def test_the_plant_carries_the_true_inertials(arm):
    iiwa = arm("iiwa14")
    plant = plant_of(iiwa)
    model = plant.model
    bodies = model.jnt_bodyid[[model.joint(name).id for name in iiwa.config.joint_names]]
    for body, link in zip(bodies, iiwa.truth.links, strict=True):
        assert model.body_mass[body] == pytest.approx(link.mass_kg, rel=1e-12)
        np.testing.assert_allclose(model.body_ipos[body], link.com_m, atol=1e-12)
        np.testing.assert_allclose(np.sort(model.body_inertia[body]),
                                   np.linalg.eigvalsh(link.inertia_com_kg_m2), rtol=1e-9)
    np.testing.assert_array_equal(model.dof_damping[plant.dof], iiwa.truth.friction.fv1)
    np.testing.assert_array_equal(model.dof_frictionloss[plant.dof], iiwa.truth.friction.fs)
    np.testing.assert_array_equal(model.dof_armature[plant.dof], iiwa.truth.armature_kg_m2)
    assert plant.timestep_s == TIMESTEP_S


def test_reset_puts_the_arm_at_rest(arm):
    iiwa = arm("iiwa14")
    plant = plant_of(iiwa)
    q0 = np.linspace(-1.0, 1.0, 7)
    plant.step(np.full(7, 5.0))
    plant.reset(q0)
    np.testing.assert_array_equal(plant.q_rad, q0)
    assert not plant.dq_rad_s.any() and not plant.ddq_rad_s2.any()


def _movable_fingers(urdf_text: str) -> str:
    """The panda_hand URDF with its two finger joints prismatic (the shipped one has them fixed already)."""
    root = ET.fromstring(urdf_text)
    fingers = [j for j in root.iter("joint") if j.get("name") in ("fer_leftfinger_joint", "fer_rightfinger_joint")]
    assert len(fingers) == 2
    for joint in fingers:
        joint.set("type", "prismatic")
        ET.SubElement(joint, "axis", xyz="0 1 0")
        ET.SubElement(joint, "limit", lower="0", upper="0.04", effort="100", velocity="0.2")
    return ET.tostring(root, encoding="unicode")


def test_joints_outside_the_arm_are_fixed(arm):
    """Finger joints not in joint_names are made fixed: MuJoCo would move 9 joints, the plant moves the 7 arm
    joints; visuals and collisions are dropped."""
    hand = arm("panda_hand")
    cfg = hand.config
    text = _movable_fingers(hand.urdf_text)
    every_joint = (*cfg.joint_names, "fer_leftfinger_joint", "fer_rightfinger_joint")
    assert mujoco.MjModel.from_xml_string(mujoco_urdf(text, every_joint)).nv == 9
    plant = MujocoPlant(text, cfg.joint_names, cfg.gravity_m_s2, hand.truth, TIMESTEP_S)
    assert plant.model.nv == 7 and plant.model.nq == 7
    compiled = ET.fromstring(mujoco_urdf(text, cfg.joint_names))
    types = {joint.get("name"): joint.get("type") for joint in compiled.iter("joint")}
    assert types["fer_leftfinger_joint"] == types["fer_rightfinger_joint"] == "fixed"
    assert all(types[name] == "revolute" for name in cfg.joint_names)
    assert not list(compiled.iter("visual")) and not list(compiled.iter("collision"))


@pytest.mark.parametrize("text", ["<robot name='empty'/>", "<robot name='x'><link name='a'/></robot>",
                                  "<html><body/></html>"])
def test_a_description_that_is_not_the_robot_is_refused(arm, text):
    iiwa = arm("iiwa14")
    cfg = iiwa.config
    with pytest.raises(PlantError, match="MuJoCo"):
        MujocoPlant(text, cfg.joint_names, cfg.gravity_m_s2, iiwa.truth, TIMESTEP_S)


def test_joint_names_the_urdf_lacks_are_refused(arm):
    iiwa = arm("iiwa14")
    names = (*iiwa.config.joint_names[:6], "no_such_joint")
    with pytest.raises(PlantError, match=r"no joint \['no_such_joint'\]"):
        MujocoPlant(iiwa.urdf_text, names, iiwa.config.gravity_m_s2, iiwa.truth, TIMESTEP_S)


def test_text_that_is_not_xml_is_a_plant_error(arm):
    iiwa = arm("iiwa14")
    with pytest.raises(PlantError):
        MujocoPlant("not a URDF", iiwa.config.joint_names, iiwa.config.gravity_m_s2, iiwa.truth, TIMESTEP_S)


@pytest.mark.parametrize("robot_name", ["iiwa14", "panda"])
def test_smooth_friction_laws_integrate_stably_as_the_true_model(arm, robot_name):
    """Joints whose friction is smooth through rest (Gaz et al.'s sigmoid, tanh) have no friction loss; their law,
    steep at rest (fc/fc1 up to 12 Nm·s/rad on the iiwa14's wrist), is applied linearised with its slope in the
    implicit damping: the equations of motion still hold at every step and the motion stays bounded."""
    shipped = arm(robot_name)
    perturbation = Perturbation(friction_laws=("sigmoid", "tanh"))
    truth = perturbed_dynamics(shipped.robot, shipped.config.limits.torque_nm, perturbation)
    assert set(truth.friction.laws()) == {"sigmoid", "tanh"}
    smooth = dataclasses.replace(shipped, truth=truth)
    log = drive(smooth, plant_of(smooth))
    pi = truth.standard_parameters(shipped.robot)
    columns = friction_columns(shipped.robot)
    pi[columns[:, 1]] = 0.0
    pi[columns[:, 2]] = 0.0
    predicted = (regressor(shipped.robot, log["q"], log["dq"], log["ddq"]) @ pi
                 + truth.friction.continuous_torque_nm(log["dq"]))
    assert np.abs(predicted - log["tau"]).max() < 1e-6
    assert np.all(log["loss"] == 0.0)
    assert np.abs(log["dq"]).max() < 10.0 and np.any(np.abs(log["dq"]) < 1e-2)
    # the law is the one the truth states: sigmoid joints off-centre, tanh joints odd
    zero = truth.friction.torque_nm(np.zeros((1, len(truth.friction.fc))))[0]
    np.testing.assert_allclose(zero, 0.0, atol=1e-12)


def test_presliding_friction_is_a_state_of_the_path(arm):
    """Dahl's presliding (x_c 2 mrad) is carried from step to step: the equations of motion hold with the state
    integrated along the logged positions, not with any law of the speed (near rest it takes both signs)."""
    shipped = arm("iiwa14")
    truth = perturbed_dynamics(shipped.robot, shipped.config.limits.torque_nm,
                               Perturbation(friction_laws=("presliding",)))
    assert set(truth.friction.laws()) == {"presliding"}
    dahl = dataclasses.replace(shipped, truth=truth)
    log = drive(dahl, plant_of(dahl))
    state = truth.friction.presliding_along(log["q"])
    pi = truth.standard_parameters(shipped.robot)
    columns = friction_columns(shipped.robot)
    pi[columns[:, 1]] = 0.0
    pi[columns[:, 2]] = 0.0
    y_pi = regressor(shipped.robot, log["q"], log["dq"], log["ddq"]) @ pi
    assert np.abs(y_pi + truth.friction.continuous_torque_nm(log["dq"], state) - log["tau"]).max() < 1e-6
    assert np.abs(y_pi + truth.friction.continuous_torque_nm(log["dq"]) - log["tau"]).max() > 0.1
    assert np.all(log["loss"] == 0.0) and np.abs(log["dq"]).max() < 10.0
    slow = np.abs(log["dq"]) < 0.05
    assert np.any(slow & (state * np.sign(log["dq"]) < -0.5)), "friction still against the last direction"
