"""Stribeck friction (Luo et al. 2024, eq. 7) from forward/backward sweeps (eq. 15), alone and in the pipeline."""

import dataclasses
from types import SimpleNamespace
from xml.etree import ElementTree

import numpy as np
import pytest
import yaml
from estimator_synthetic import (
    STRIBECK_TRUE,
    SWEEP_POSE_RAD,
    WITHOUT_PHYSICAL,
    iiwa14_setup,
    rigid_body_torque,
    simulated_recording,
    sweep_motion,
    sweep_recording,
)

from robot_id_estimator.friction.stribeck_fit import MIN_LEVELS, fit_stribeck, implausibility, mirrored_friction
from robot_id_estimator.friction.sweeps import extrapolation_notes, friction_sweeps
from robot_id_estimator.output.urdf_export import write_identified_model
from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.recording import DataError
from robot_id_estimator.settings import ProcessingConfig
from robot_id_estimator.stribeck_law import stribeck_torque
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model import regressor
from robot_id_model.torque_filter import first_order_lowpass

SPEEDS = np.array([0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.3, 0.6, 1.0, 1.5])
"""Sweep speeds [rad/s], as Luo et al. 2024 from very slow to beyond the excitation's fastest joint speed."""


@pytest.fixture(scope="module")
def arm():
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    return setup, robot, urdf_with_friction(robot)


def test_stribeck_torque_is_eq_7():
    fv1, fv2, fv3, fs, fs1, fc, fc1 = STRIBECK_TRUE
    v = 0.03
    expected = fv1 * v + fv2 * v**2 + fv3 * v**3 + fs * np.exp(-((v / fs1) ** 2)) + fc * (1 - np.exp(-((v / fc1) ** 2)))
    assert stribeck_torque(np.array([v]), STRIBECK_TRUE)[0] == pytest.approx(expected, rel=1e-12)
    assert stribeck_torque(np.array([-v]), STRIBECK_TRUE)[0] == pytest.approx(-expected, rel=1e-12)
    assert stribeck_torque(np.array([0.0]), STRIBECK_TRUE)[0] == 0.0
    per_joint = np.tile(STRIBECK_TRUE, (2, 1))
    per_joint[1, [0, 1, 2, 3, 5]] *= 2.0  # the torque coefficients, not the velocity scales fs1, fc1
    np.testing.assert_allclose(stribeck_torque(np.full((3, 2), v), per_joint), [[expected, 2 * expected]] * 3)


def test_mirrored_passes_cancel_gravity_and_inertia_exactly(arm):
    _setup, robot, pi = arm
    for joint in (1, 3):  # joint 2 carries about 50 Nm of gravity here
        _t, q, dq, ddq = sweep_motion(joint, SPEEDS)
        tau = rigid_body_torque(robot, pi, q, dq, ddq) + stribeck_torque(dq, np.tile(STRIBECK_TRUE, (7, 1)))
        assert np.ptp(tau[:, joint]) > 1.0
        speed, friction = mirrored_friction(q[:, joint], dq[:, joint], tau[:, joint])
        assert len(speed) > 3000 and set(np.round(speed, 6)) == set(SPEEDS)
        np.testing.assert_allclose(friction, stribeck_torque(speed, STRIBECK_TRUE), atol=1e-9)
        fit = fit_stribeck(speed, friction)
        np.testing.assert_allclose(fit.coefficients, STRIBECK_TRUE, rtol=1e-6)


def test_levenberg_marquardt_recovers_the_friction_curve_from_noisy_filtered_sweeps(arm):
    _setup, robot, pi = arm
    coefficients, rms, notes, ranges = friction_sweeps(
        [sweep_recording(robot, pi, joint, SPEEDS, tau_noise_nm=0.02, seed=joint) for joint in (1, 6)],
        robot.joint_names, ProcessingConfig(),
    )
    speeds = np.geomspace(SPEEDS[0], SPEEDS[-1], 200)
    curve = stribeck_torque(speeds, STRIBECK_TRUE)
    for joint in (1, 6):
        _fv1, _fv2, _fv3, fs, fs1, fc, fc1 = coefficients[joint]
        assert fs == pytest.approx(STRIBECK_TRUE[3], rel=0.02)
        assert fs1 == pytest.approx(STRIBECK_TRUE[4], rel=0.05)
        assert fc == pytest.approx(STRIBECK_TRUE[5], rel=0.1)
        assert fc1 == pytest.approx(STRIBECK_TRUE[6], rel=0.05)
        assert np.max(np.abs(stribeck_torque(speeds, coefficients[joint]) - curve)) < 0.015 * curve.max()
        assert rms[joint] < 0.01
        assert ranges[joint, 0] < 0.006 and ranges[joint, 1] > 1.4
    assert np.isnan(coefficients[[0, 2, 3, 4, 5]]).all()
    assert "friction sweep: lbr_A1 has no forward/backward passes at a constant speed: linear friction" in notes
    assert any(note.startswith("friction sweep: lbr_A2 Stribeck fit on") and "at 10 speeds" in note
               and "fc1 apart from fs1" in note for note in notes)


@pytest.mark.parametrize(("seed", "periods", "most"), [(1, 1, 0), (6, 2, 1)])
def test_an_excitation_given_as_a_friction_sweep_is_refused_naming_it(arm, seed, periods, most):
    """A Fourier excitation is no sweep, and every joint keeping linear friction without a word would hide the
    mistake: in seed 1's no joint moves forward and backward at a constant speed; in seed 6's, three joints' velocity
    peaks pair up by chance, at one speed each (taken before, with notes only); a sweep runs MIN_LEVELS speeds or
    more, what the Stribeck fit needs."""
    setup, robot, pi = arm
    excitation = simulated_recording(robot, setup, pi, periods, seed=seed)
    assert MIN_LEVELS == 5
    with pytest.raises(DataError) as refused:
        friction_sweeps([excitation], robot.joint_names, ProcessingConfig())
    assert str(refused.value) == (
        f"sim{seed}: no joint moves forward and backward at 5 or more constant speeds (the most: {most}), "
        "as the Stribeck fit needs: not a friction sweep (an excitation recording given as a friction sweep?), "
        "or one of too few speeds")


def _trapezoids(segments: list[tuple[float, float]], rate_hz: float = 100.0, accel_rad_s2: float = 2.0):
    """One joint's motion through rest-to-rest trapezoids (velocity [rad/s], cruise [s]; velocity 0: a pause),
    from q = 0: (q, dq, ddq)."""
    dt = 1.0 / rate_hz
    parts = []
    for v, cruise_s in segments:
        n_acc = max(1, round(abs(v) / accel_rad_s2 / dt)) if v else 0
        a = v / (n_acc * dt) if v else 0.0
        parts += [np.full(n_acc, a), np.zeros(round(cruise_s / dt)), np.full(n_acc, -a)]
    ddq = np.concatenate([*parts, [0.0]])
    dq = np.concatenate([[0.0], np.cumsum(ddq[:-1]) * dt])
    q = np.concatenate([[0.0], np.cumsum(0.5 * (dq[1:] + dq[:-1])) * dt])
    return q, dq, ddq


def _mirrored_levels(segments: list[tuple[float, float]]) -> tuple[set[float], float]:
    """The speeds mirrored_friction pairs in a motion of `segments` with gravity, inertia and Stribeck friction,
    and the largest error of its friction points."""
    q, dq, ddq = _trapezoids(segments)
    tau = 8.0 * np.sin(q + 0.3) + 0.5 * ddq + stribeck_torque(dq, STRIBECK_TRUE)
    speed, friction = mirrored_friction(q, dq, tau)
    return set(np.round(speed, 6)), float(np.max(np.abs(friction - stribeck_torque(speed, STRIBECK_TRUE))))


CREEP = [(0.0, 0.3), (0.002, 0.3), (-0.0015, 0.2), (0.0, 0.3)]
"""A joint settling after a stop: it creeps on at 0.002 rad/s, then back at 0.0015 rad/s."""


def test_creep_between_a_pass_and_its_reverse_does_not_break_the_pairing():
    """As the simulated iiwa14 after each stop: every speed is still paired forward with backward."""
    speeds = [0.01, 0.03, 0.1, 0.3]
    segments = []
    for v in speeds:
        cruise_s = min(0.6 / v, 8.0)
        segments += [(-0.2, 0.3), (0.0, 0.3), (v, cruise_s), *CREEP, (-v, cruise_s), *CREEP]
    levels, error = _mirrored_levels(segments)
    assert levels == set(speeds)
    assert error < 1e-4  # the backward samples interpolated by position: gravity to second order in v·dt


def test_a_fast_move_before_slow_passes_is_not_paired_past_them():
    """A reposition at the speed of a later pass (opposite direction) is no pass: the slow passes between them,
    which travel further than creep, are not skipped as creep."""
    segments = [(-0.3, 0.3), (0.0, 0.3), (0.01, 8.0), *CREEP, (-0.01, 8.0), *CREEP, (0.3, 2.0), *CREEP, (-0.3, 2.0)]
    levels, error = _mirrored_levels(segments)
    assert levels == {0.01, 0.3}
    assert error < 1e-4


def test_a_simultaneous_sweep_cancels_the_rigid_body_torque_of_every_joint(arm):
    """All joints on one forward/backward schedule, by the same offsets: at one joint's mirrored position every
    joint is at the same position with opposite velocity, so gravity, Coriolis and centrifugal torques cancel."""
    _setup, robot, pi = arm
    _t, q1, dq1, ddq1 = sweep_motion(0, SPEEDS)
    offset, dq, ddq = q1[:, :1] - SWEEP_POSE_RAD[0], np.tile(dq1[:, :1], 7), np.tile(ddq1[:, :1], 7)
    q = SWEEP_POSE_RAD + offset
    per_joint = np.tile(STRIBECK_TRUE, (7, 1))
    per_joint[:, [0, 1, 2, 3, 5]] *= np.linspace(1.0, 2.0, 7)[:, None]  # a friction curve of each joint's own
    rigid = rigid_body_torque(robot, pi, q, dq, ddq)
    assert np.all(np.ptp(rigid[:, :4], axis=0) > 10.0)  # what cancels is large
    tau = rigid + stribeck_torque(dq, per_joint)
    for j in range(7):
        speed, friction = mirrored_friction(q[:, j], dq[:, j], tau[:, j])
        assert set(np.round(speed, 6)) == set(SPEEDS)
        np.testing.assert_allclose(friction, stribeck_torque(speed, per_joint[j]), atol=1e-9)


def _points(coefficients: np.ndarray, speeds: np.ndarray, noise_nm: float, seed: int = 0):
    """200 friction points at each sweep speed, ±1 % of it, with Gaussian noise."""
    rng = np.random.default_rng(seed)
    speed = np.repeat(speeds, 200) * rng.uniform(0.99, 1.01, 200 * len(speeds))
    return speed, stribeck_torque(speed, coefficients) + noise_nm * rng.normal(size=speed.shape)


def test_fewer_sweep_speeds_than_the_model_needs_are_refused(arm):
    """Four speeds, as the simulated iiwa14 sweep had: seven (or five) coefficients are not determined by four
    numbers, and LM returned a curve of −48 000 Nm at 0.73 rad/s. A recording in which no joint has five is refused
    whole (it gives no joint a Stribeck curve); within a sweep, such a joint keeps linear friction (fit_stribeck's
    reason in a note)."""
    _setup, robot, pi = arm
    with pytest.raises(DataError, match=r"^sweep2: no joint moves forward and backward at 5 or more constant speeds "
                                        r"\(the most: 4\)"):
        friction_sweeps([sweep_recording(robot, pi, 1, np.array([0.01, 0.03, 0.1, 0.3]), tau_noise_nm=0.1)],
                        robot.joint_names, ProcessingConfig())
    with pytest.raises(ValueError, match=r"^4 sweep speeds \(0.01, 0.02, 0.05, 0.1 rad/s\)"):
        fit_stribeck(*_points(STRIBECK_TRUE, np.array([0.01, 0.02, 0.05, 0.1]), 0.01))
    with pytest.raises(ValueError, match=r"^0 sweep speeds \(none rad/s\)"):
        fit_stribeck(np.zeros(0), np.zeros(0))


def test_the_simplest_model_that_fits_as_well_as_the_richest_is_chosen():
    """The classic curve (fv2 = fv3 = 0, fc1 = fs1, what the simulated robot has) is found as such; a curve with
    fv2, fv3 and two velocity scales gets coefficients that reproduce it; five speeds determine only the simplest."""
    classic = STRIBECK_TRUE * np.array([1, 0, 0, 1, 1, 1, 1])
    classic[6] = classic[4]
    fit = fit_stribeck(*_points(classic, SPEEDS, 0.02))
    assert fit.coefficients[1] == fit.coefficients[2] == 0.0 and fit.coefficients[4] == fit.coefficients[6]
    assert fit.terms.startswith("fv2 = fv3 = 0, fc1 = fs1: as good as with 7 coefficients (F-test p = ")
    np.testing.assert_allclose(fit.coefficients, classic, rtol=0.03)

    curve = stribeck_torque(SPEEDS, STRIBECK_TRUE)
    fit = fit_stribeck(*_points(STRIBECK_TRUE, SPEEDS, 0.02))
    assert fit.n_levels == 10 and fit.coefficients[4] != fit.coefficients[6]
    assert np.max(np.abs(stribeck_torque(SPEEDS, fit.coefficients) - curve)) < 0.01 * curve.max()

    exact = fit_stribeck(*_points(STRIBECK_TRUE, SPEEDS, 0.0))
    assert exact.terms == "fv2, fv3 fitted, fc1 apart from fs1: the richest plausible model the sweep speeds determine"
    np.testing.assert_allclose(exact.coefficients, STRIBECK_TRUE, rtol=1e-6)

    fit = fit_stribeck(*_points(classic, SPEEDS[:5], 0.02))
    assert fit.n_levels == 5 and fit.terms.startswith("fv2 = fv3 = 0, fc1 = fs1: the richest plausible model")


def test_a_richer_curve_that_falls_beyond_the_sweep_gives_way_to_a_plausible_one():
    """Friction that bends down at the top speeds (as on the simulated iiwa14's A1, fitted fv3 = −2): the richest
    model fits it significantly better but falls without bound beyond the sweep; a plausible simpler one is kept
    instead of giving up on the joint."""
    classic = np.array([0.3, 0.0, 0.0, 0.6, 0.05, 0.4, 0.05])
    speed, friction = _points(classic, SPEEDS, 0.002)
    friction -= 0.05 * speed**3
    fit = fit_stribeck(speed, friction)
    assert fit.coefficients[2] >= 0.0 and not fit.terms.startswith("fv2, fv3 fitted, fc1 apart")
    assert np.max(np.abs(stribeck_torque(SPEEDS, fit.coefficients) - stribeck_torque(SPEEDS, classic)
                         + 0.05 * SPEEDS**3)) < 0.1


LEVELS = np.array([0.01, 0.03, 0.1, 0.3])
MEASURED = np.array([5.94, 5.68, 5.11, 6.15])
"""Mean friction at each sweep speed of one joint of the simulated iiwa14 sweep [Nm]."""


@pytest.mark.parametrize(("coefficients", "reason"), [
    # the fit of that sweep (four speeds, seven coefficients)
    ([-0.40, 61084, -104895, 6.09, 0.027, -3582, 0.26], "reaches 29.5 Nm at 0.296 rad/s, over 2× the largest "
                                                         "measured friction (6.15 Nm)"),
    ([-2.0, 0, 0, 5.9, 0.02, 1.0, 0.2], "is -0.00451 Nm at 0.0452 rad/s: friction must oppose the motion"),
    ([4.0, 0, 0, 0.5, 0.05, 5.8, 0.004], "falls to 0.5 Nm at 3e-07 rad/s, below the 5.94 Nm measured at the slowest "
                                         "sweep speed 0.01 rad/s (− 1.2 Nm)"),
    ([4.0, 0, 0, 12.0, 0.04, 4.9, 0.04], "is 11.6 Nm at 0.01 rad/s, outside the 5.94 and 5.68 Nm measured at 0.01 and "
                                         "0.03 rad/s (± 1.2 Nm)"),
    ([-1.0, 0, 0, 5.9, 0.05, 5.5, 0.05], "falls without bound beyond the top sweep speed (fv1 = -1 < 0)"),
])
def test_an_implausible_friction_curve_is_named_with_the_reason(coefficients, reason):
    assert implausibility(np.array(coefficients, dtype=float), LEVELS, MEASURED, 0.3) == reason


def test_a_plausible_friction_curve_passes():
    truth = np.array([4.64, 0.0, 0.0, 5.94, 0.05, 4.57, 0.05])  # the simulated joint's friction
    assert implausibility(truth, LEVELS, stribeck_torque(LEVELS, truth), 0.3) is None
    assert implausibility(STRIBECK_TRUE, SPEEDS, stribeck_torque(SPEEDS, STRIBECK_TRUE), 1.5) is None


def test_a_sweep_whose_friction_changes_sign_is_refused():
    """A torque bias the mirroring did not cancel (0.7 Nm more on the backward passes): no friction curve."""
    speed, friction = _points(STRIBECK_TRUE, SPEEDS, 0.01)
    with pytest.raises(ValueError, match=r"^the fitted Stribeck curve is -0\.\d+ Nm at .* rad/s: friction must "
                                         "oppose the motion$"):
        fit_stribeck(speed, friction - 0.7)


def test_the_lag_of_the_robots_torque_filter_is_undone(arm):
    """The LBR filters its torques (16 ms): on joint 2, carrying gravity, the lag pairs the passes' torques at
    positions v·τ apart, which looks like viscous friction unless the motion is filtered alike."""
    _setup, robot, pi = arm
    sweep = sweep_recording(robot, pi, 1, SPEEDS)
    sweep = dataclasses.replace(sweep, tau_nm=first_order_lowpass(sweep.tau_nm, 0.01, 0.016))
    curve = stribeck_torque(SPEEDS, STRIBECK_TRUE)
    errors = {}
    for time_constant_s in (0.016, 0.0):
        coefficients = friction_sweeps([sweep], robot.joint_names, ProcessingConfig(), time_constant_s)[0]
        errors[time_constant_s] = (np.inf if np.isnan(coefficients[1]).any() else
                                   np.max(np.abs(stribeck_torque(SPEEDS, coefficients[1]) - curve)) / curve.max())
    assert errors[0.016] < 0.02 < 0.05 < errors[0.0], errors


def test_extrapolation_is_noted_with_the_friction_it_gives():
    stribeck = np.array([STRIBECK_TRUE, np.full(7, np.nan), STRIBECK_TRUE])
    ranges = np.array([[0.01, 0.3], [np.nan, np.nan], [0.01, 1.0]])
    processed = [SimpleNamespace(dq_rad_s=np.array([[0.1, 2.0, 0.5], [-0.73, 0.0, 0.0]]))]
    at_top, at_fastest = stribeck_torque(np.array([0.3, 0.73]), STRIBECK_TRUE)
    assert extrapolation_notes(stribeck, ranges, processed, ["a", "b", "c"]) == [
        f"a reaches 0.73 rad/s, its sweeps only 0.3 rad/s: the Stribeck model is extrapolated there ({at_top:.3g} Nm "
        f"at 0.3 rad/s, {at_fastest:.3g} Nm at 0.73 rad/s)"]


def test_stribeck_model_from_sweeps_improves_predictions(arm, tmp_path):
    """Excitation data whose friction is Stribeck: with the sweeps the model predicts the torque of another
    trajectory several times better than with linear viscous + Coulomb friction; the exported URDF and MJCF carry
    the fit's viscous and Coulomb terms (they had zeros: the regression has no such columns then)."""
    setup, robot, pi = arm
    setup = dataclasses.replace(setup, torque_filter_time_constant_s=0.0)
    friction = np.tile(STRIBECK_TRUE, (7, 1))

    def recording(seed: int, n_periods: int, noise: float):
        plain = simulated_recording(robot, setup, pi, n_periods, seed=seed, tau_noise_nm=0.0, q_noise_rad=0.0)
        t = plain.t_s[: round(10.0 * 200.0)]
        q, dq, ddq = random_motion(robot, 10.0, 5, t, seed)
        tau = np.tile(rigid_body_torque(robot, pi, q, dq, ddq) + stribeck_torque(dq, friction), (n_periods, 1))
        tau += noise * np.random.default_rng(seed).normal(size=tau.shape)
        return dataclasses.replace(plain, tau_nm=first_order_lowpass(tau, 0.005, 0.0))

    sweeps = [sweep_recording(robot, pi, joint, SPEEDS, seed=joint) for joint in range(7)]
    ident = recording(0, 6, 0.05)
    linear = identify([ident], setup, WITHOUT_PHYSICAL)  # compared on its base parameters only
    stribeck = identify([ident], setup, sweeps=sweeps)
    assert stribeck.friction.stribeck is not None and not np.isnan(stribeck.friction.stribeck).any()
    assert {"FV1", "FC7"} & set(stribeck.base.names)
    assert np.isnan(stribeck.base.values[stribeck.base.names.index("FV1")])
    assert any("replaced by the Stribeck friction" in note for note in stribeck.metrics.notes)
    check = recording(7, 2, 0.0)
    rms_linear = validate(linear, [check]).rms_nm["base"]
    rms_stribeck = validate(stribeck, [check]).rms_nm["base"]
    assert np.all(rms_stribeck < 0.5 * rms_linear), (rms_stribeck, rms_linear)
    y = regressor(robot, *random_motion(robot, 10.0, 5, np.arange(0, 10, 0.005), 7))
    assert np.all(rms_stribeck < 0.03 * np.sqrt(np.mean((y @ pi) ** 2, axis=0)))

    files = write_identified_model(stribeck, tmp_path)
    urdf, model, mjcf = files.urdf, files.yaml, files.mjcf
    dynamics = [(float(d.get("damping")), float(d.get("friction")))
                for d in ElementTree.parse(urdf).getroot().iter("dynamics")]
    fitted = stribeck.friction.stribeck[:, [0, 5]]  # fv1, fc of eq. (7)
    np.testing.assert_allclose(dynamics, fitted, rtol=1e-12)
    np.testing.assert_allclose(fitted, np.tile(STRIBECK_TRUE[[0, 5]], (7, 1)), rtol=0.15)
    joints = {j.get("name"): j for j in ElementTree.parse(mjcf).getroot().iter("joint")}
    np.testing.assert_allclose([(float(joints[n].get("damping")), float(joints[n].get("frictionloss")))
                                for n in robot.joint_names], fitted, rtol=1e-5)  # MJCF: 6 digits
    friction = yaml.safe_load(model.read_text())["friction"]["lbr_A1"]
    assert friction["viscous_nm_s_rad"] == pytest.approx(fitted[0, 0], rel=1e-12)
    assert friction["determination"]["coulomb_nm"] == "fc of the Stribeck fit"
