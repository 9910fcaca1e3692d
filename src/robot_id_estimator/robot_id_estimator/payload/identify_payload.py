"""The payload use case for the command line (and the graph): identify the load on a frame of the arm from
recordings with it, against the arm's model or a baseline without it, check it on held-out time blocks, and write
it in every format robots take (payload.exports).

The arm's model: an identification of it (its best set), an identification of baseline recordings of the same
excitation without the load, or the URDF's rigid bodies (the arm's model error then goes into the load).

Out (in the output directory): payload.html (the report, output.report), payload.yaml (the load with its
uncertainty in its frame, the checks; KUKA's load data, Franka's setLoad values and service call in the robot's load
frame, payload.load_frame), payload.urdf (a fixed link holding the load on its frame) and arm_with_payload.urdf /
arm_with_payload.xml (the arm's URDF, identified or nominal, with the load attached; MJCF where MuJoCo takes it);
after a failed check the URDFs as *.rejected.urdf and no MJCF.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Sequence

import numpy as np
import yaml

from robot_id_estimator.output.mjcf_export import MujocoExportError, write_mjcf
from robot_id_estimator.output.urdf_export import identified_urdf_text
from robot_id_estimator.output.written_check import check_payload_files
from robot_id_estimator.payload.baseline import baseline_residual
from robot_id_estimator.payload.estimate import DRAWS, NAMES, PayloadBounds, PayloadEstimate, estimate_payload
from robot_id_estimator.payload.exports import (
    franka_service_call,
    franka_set_load,
    kuka_load_data,
    load_alone,
    with_load,
)
from robot_id_estimator.payload.load_frame import SET_LOAD_WHEN, ExportedLoad, exported_load
from robot_id_estimator.payload.principal_axes import AXIS_SIGMAS, axes_warning, kuka_meaning
from robot_id_estimator.payload.report import write_payload_report
from robot_id_estimator.payload.result import PayloadResult
from robot_id_estimator.payload.samples import (
    ArmModel,
    identified_arm,
    payload_samples,
    urdf_arm,
)
from robot_id_estimator.pipeline import identify
from robot_id_estimator.processing.input_checks import with_stack_torque_filter
from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.samples import ProcessedData
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.results import Identification
from robot_id_estimator.results.files import write_text
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_model.parameters import nominal_mass_kg
from robot_id_model.physical import LinkInertial, link_from_standard, link_standard_parameters

EXPLAINED_FRACTION = 0.5
"""The check: on held-out time blocks the load's model must leave less than this fraction of the load's torque on
every joint (RMS), unless what it leaves is small ...: a model that explains less has not found the load (a wrong
arm model, another frame, no load; summed over the joints, a load on link 6 passed though joint 7's error was its
whole load torque). The least-squares load must also be a rigid body (estimate.NOT_A_BODY_SIGMAS)."""
SMALL_SHARE = 0.025
"""... or below this share of the largest joint's load torque (the simulated iiwa14's 0.5 kg load, 2 cm off the A7
axis, left 0.025 of A7's 0.044 Nm against the identified arm, where A4 carried 4.3 Nm: mass and CoM right) ..."""
NOISE_FLOOR = 3.0
"""... or within this many standard deviations of a sample's noise (a joint the load hardly loads), or within the arm
model's own error on that joint (an identified arm's held-out error)."""


LOAD_ACCURACY = (2.0, 5.0)
"""Mass [%] and CoM [mm] a load is used at (the accuracy a payload needs): an arm model whose error could move the
load further is said (the simulated iiwa7's 0.5 kg load against its identified arm: bounds 6.1 % and 31 mm,
errors 2.6 %, 3.2 mm)."""


URDF_ARM_WARNING = ("the load is identified against the URDF's arm, whose model error goes into it (a tool the URDF "
                    "does not hold adds its whole mass; on the simulated Panda, perturbed 10 % from its URDF, a 1.5 kg "
                    "load's CoM came out 29 mm off, against 0.1 mm by the baseline method): give --arm or --baseline")


def identify_payload_and_write(recordings: Sequence[Recording], setup: RobotSetup, out_dir: pathlib.Path,
                               config: EstimatorConfig, arm: Identification | None = None,
                               baseline: Sequence[Recording] = (), frame: str | None = None,
                               mass_range_kg: tuple[float, float] | None = None, reach_m: float = 0.3
                               ) -> PayloadResult:
    """The load on `frame` (default: the robot config's flange), against the identified `arm`, an arm identified
    from `baseline` recordings without the load, or the URDF's arm; written to out_dir (module docstring)."""
    if arm is not None and baseline:
        raise ValueError("give the arm's identification or baseline recordings, not both")
    problem = "" if arm is None else other_robot(arm, setup.name, setup.joint_names)
    if problem:
        raise ValueError(f"the arm's identification {problem}")
    setup, stack_notes = with_stack_torque_filter([*recordings, *baseline], setup)
    model = (identified_arm(arm, "the identified arm") if arm is not None else
             baseline_arm(baseline, setup, config) if baseline else urdf_arm(setup))
    frame = frame or setup.flange_frame or model.robot.link_names[-1]
    samples = payload_samples(model, frame, recordings, config.processing, setup.torque_filter_time_constant_s)
    bounds = PayloadBounds(mass_range_kg or (0.0, setup.rated_payload_kg or nominal_mass_kg(model.robot)), reach_m)
    estimate = estimate_payload(samples, bounds)
    failures = check_failures(estimate, samples.noise_std_nm, samples.arm_error_rms_nm, setup.joint_names)
    exported, no_export = exported_load(model.robot, estimate, frame, setup.load_frame or setup.flange_frame or frame)
    written = write_text(out_dir / "payload.yaml", yaml.safe_dump(
        _payload_yaml(frame, model.description, estimate, bounds, failures, exported, no_export), sort_keys=False))
    arm_urdf = _arm_urdf(arm, setup)
    paths, notes, warnings = _write_models(out_dir, setup, arm_urdf, estimate.inertial, frame, not failures)
    file_check = check_payload_files(arm_urdf, paths[1], paths[0], paths[2] if len(paths) > 2 else None,
                                     link_standard_parameters(estimate.inertial), frame, setup.joint_names,
                                     setup.gravity_m_s2)
    warnings = [*stack_notes] + ([] if arm is not None or baseline else [URDF_ARM_WARNING]) + warnings
    warnings.extend(_bound_warnings(estimate, bounds))
    warnings.extend([no_export] if no_export else [])
    result = PayloadResult(frame, model.description, estimate, failures, (written, *paths),
                           (*samples.notes, *notes), tuple(warnings), file_check, exported)
    report = write_payload_report(result, setup, [r.source for r in recordings],
                                  [("mass range [kg]", f"{bounds.mass_kg[0]:g} to {bounds.mass_kg[1]:g}"),
                                   ("reach [m]", f"{bounds.reach_m:g}")], out_dir)
    return dataclasses.replace(result, paths=(*result.paths, report))


def _write_models(out_dir: pathlib.Path, setup: RobotSetup, arm_urdf: str, load: LinkInertial, frame: str,
                  passed: bool) -> tuple[list[pathlib.Path], tuple[str, ...], list[str]]:
    """payload.urdf (the load as a fixed link on `frame`, an empty root link there, so that it loads alone) and the
    arm's URDF and MJCF with the load attached; after a failed check the URDFs as *.rejected.urdf and no MJCF (a
    load that failed is not handed on as a model), the other verdict's files of an earlier run removed. Returns the
    paths written, notes and warnings."""
    tag = "" if passed else ".rejected"
    for name in ("payload.urdf", "arm_with_payload.urdf", "arm_with_payload.xml"):
        (out_dir / (name.replace(".", ".rejected.", 1) if passed else name)).unlink(missing_ok=True)
    attached = with_load(arm_urdf, load, frame)
    paths = [write_text(out_dir / f"payload{tag}.urdf", load_alone(load, frame)),
             write_text(out_dir / f"arm_with_payload{tag}.urdf", attached)]
    if not passed:
        return paths, (), []
    try:
        mjcf, notes = write_mjcf(attached, pathlib.Path(setup.urdf_path).parent, out_dir / "arm_with_payload.xml",
                                  setup.gravity_m_s2)
    except MujocoExportError as err:
        shipped = "" if arm_urdf != setup.urdf_text else (
            " (in the robot's URDF as shipped; the identified arm of an identification whose physical set passed is "
            "consistent: --arm)")
        return paths, (), [f"arm_with_payload.xml not written: {err}{shipped}"]
    return [*paths, mjcf], notes, []


def check_failures(estimate: PayloadEstimate, noise_std_nm: np.ndarray | None, arm_error_rms_nm: np.ndarray | None,
                   joint_names: Sequence[str]) -> tuple[str, ...]:
    """Per joint whose held-out error is at least EXPLAINED_FRACTION of its load torque and above its floor
    (NOISE_FLOOR standard deviations of the noise, or the arm model's error there): what it left unexplained; a load
    whose torque is within the noise floor on every joint is not found either."""
    noise = np.zeros(len(joint_names)) if noise_std_nm is None else NOISE_FLOOR * noise_std_nm
    load_nm, error_nm = estimate.load_torque_rms_nm, estimate.held_out_rms_nm
    floor = np.maximum(noise, SMALL_SHARE * load_nm.max())
    floor = floor if arm_error_rms_nm is None else np.maximum(floor, arm_error_rms_nm)
    if not np.any(load_nm > noise):
        return ("no joint carries a load torque above the noise",)
    rows = zip(joint_names, error_nm, load_nm, floor, strict=True)
    failures = [f"{name}: {error:.3g} of its {load:.3g} Nm load torque unexplained"
                for name, error, load, least in rows if load > 0.0 and error >= EXPLAINED_FRACTION * load
                and error > least]
    if estimate.not_a_body and estimate.arm_error is None:  # within an arm model's known error: a warning
        failures.append(f"the least-squares load is no rigid body: {_no_body(estimate)} (a baseline recorded with "
                        "something on the flange? a wrong arm model?)")
    return tuple(failures)


def _no_body(estimate: PayloadEstimate) -> str:
    """How the least-squares load's moments break the triangle inequality, in words."""
    moments = np.linalg.eigvalsh(link_from_standard(estimate.least_squares).inertia_com_kg_m2)
    return (f"its principal moments about the CoM {', '.join(f'{m:.3g}' for m in moments)} kg m² break the triangle "
            f"inequality by {-estimate.body_margin_sigmas:.0f} standard deviations")


def other_robot(arm: Identification, robot: str, joint_names: Sequence[str]) -> str:
    """Why `arm` is not an identification of `robot` with `joint_names` ('' when it is)."""
    if tuple(arm.setup.joint_names) == tuple(joint_names):
        return ""
    return (f"is of {arm.setup.name} (joints {', '.join(arm.setup.joint_names)}), not of {robot} "
            f"({', '.join(joint_names)}): give an identification of this robot")


def _bound_warnings(estimate: PayloadEstimate, bounds: PayloadBounds) -> tuple[str, ...]:
    """What the user must know before using the load: a value held at a bound (the data pushed beyond it: a wrong
    arm model, frame or mass range), a least-squares inertia no body has where the arm model's error can do that
    (without a known arm error it fails the check), the principal moments and the principal axes the motion did not
    determine."""
    load, warnings = estimate.inertial, []
    if any(abs(load.mass_kg - m) <= 1e-3 * max(bounds.mass_kg[1], 1e-3) for m in bounds.mass_kg):
        warnings.append(f"the load's mass {load.mass_kg:.4g} kg is at its bound (mass range {bounds.mass_kg[0]:g}-"
                        f"{bounds.mass_kg[1]:g} kg): the data push beyond it; is the arm model, the frame or the "
                        "mass range wrong?")
    if float(np.linalg.norm(load.com_m)) >= 0.999 * bounds.reach_m:
        warnings.append(f"the load's CoM is at its reach bound ({bounds.reach_m:g} m from the frame): the data push "
                        "beyond it; is the arm model, the frame or the mass range wrong?")
    bound = estimate.arm_error
    if bound is not None and (bound.mass_percent > LOAD_ACCURACY[0] or bound.com_mm > LOAD_ACCURACY[1]):
        warnings.append(f"the arm model's error could move the load's mass by up to {bound.mass_percent:.2g} % and its "
                        f"CoM by {bound.com_mm:.2g} mm (a worst case; payload.yaml: arm_error_bounds): for a tighter "
                        "load record the payload excitation without it and give that as --baseline")
    if estimate.not_a_body and estimate.arm_error is not None:
        warnings.append(f"the least-squares load is no rigid body: {_no_body(estimate)}; the arm model's error can do "
                        "that (payload.yaml: arm_error_bounds): the mass and the CoM hold within their bounds there, "
                        "the moments are named undetermined")
    if estimate.undetermined_moments:
        which = ", ".join(str(k + 1) for k in estimate.undetermined_moments)
        warnings.append(f"principal moments {which} (ascending) are not determined by this motion and arm model: the "
                        "exports hold them as fitted (payload.yaml: undetermined_principal_moments); do not rely on "
                        "the load's inertia there")
    if axes_warning(estimate.axes):
        warnings.append(f"{axes_warning(estimate.axes)} (payload.yaml: principal_axes)")
    return tuple(warnings)


def baseline_arm(baseline: Sequence[Recording], setup: RobotSetup, config: EstimatorConfig) -> ArmModel:
    """The arm identified from recordings of the same excitation without the load (base parameters and friction;
    no physical stage), with what it misses on them (payload.baseline): its own terms then cancel from the loaded
    run's torque, whatever the URDF says."""
    result = identify(list(baseline), setup, dataclasses.replace(config, physical=PhysicalConfig(method="none")))
    arm = identified_arm(result, "the arm identified from the baseline recordings")

    def model_torque_nm(data: ProcessedData) -> np.ndarray:
        return torque_side(arm.torque_nm(data), data, config.processing, setup.torque_filter_time_constant_s)

    residual = baseline_residual(baseline, config.processing, model_torque_nm)
    return dataclasses.replace(arm, error_rms_nm=None, baseline=residual)  # fitted to this motion: its error cancels


def _arm_urdf(arm: Identification | None, setup: RobotSetup) -> str:
    """The arm's URDF the load is attached to: the identified one (identified.urdf) where the identification wrote
    it (a physical set that passed its check, no data mistake named), else the URDF's."""
    if arm is None or not arm.model_holds:
        return setup.urdf_text
    return identified_urdf_text(arm)


def _payload_yaml(frame: str, method: str, e: PayloadEstimate, bounds: PayloadBounds, failures: tuple[str, ...],
                  exported: ExportedLoad | None, no_export: str) -> dict:
    load = e.inertial
    moments = np.linalg.eigvalsh(load.inertia_com_kg_m2)
    return {
        "frame": frame,
        "frames": f"mass_kg to principal_axes: the load as identified, in {frame}; kuka_load_data, franka_set_load "
                  "and franka_ros2: in the frame each names, the robot's load frame (the config's load_frame, else "
                  "its flange_frame)",
        "method": method,
        "mass_kg": float(load.mass_kg),
        "com_m": [float(x) for x in load.com_m],
        "inertia_com_kg_m2": [[float(x) for x in row] for row in load.inertia_com_kg_m2],
        "principal_moments_kg_m2": [float(x) for x in moments],
        "principal_moments_rsd_percent": [float(x) for x in e.moments_rsd_percent],
        "undetermined_principal_moments": [int(k) for k in e.undetermined_moments],
        "arm_error_bounds": None if e.arm_error is None else {
            "rule": "the largest change the arm model's held-out error could make (a worst case)",
            "mass_percent": float(e.arm_error.mass_percent), "com_mm": float(e.arm_error.com_mm),
            "principal_moments_percent": [float(x) for x in e.arm_error.moments_percent]},
        "parameters": {name: {"value": float(v), "least_squares": float(ls), "rsd_percent": float(r)}
                       for name, v, ls, r in zip(NAMES, e.values, e.least_squares, e.rsd_percent, strict=True)},
        "held": list(e.held),
        "bounds": {"mass_kg": list(bounds.mass_kg), "reach_m": bounds.reach_m},
        "check": {"passed": not failures, "failed_joints": list(failures),
                  "rule": f"on every joint the held-out error below {EXPLAINED_FRACTION:g} of the load's torque, or "
                          f"within {NOISE_FLOOR:g} standard deviations of the noise, the arm model's error or "
                          f"{100 * SMALL_SHARE:g} % of the largest joint's load torque; a load torque above the noise; "
                          "the least-squares load a rigid body unless the arm model's error can explain it",
                  "held_out_rms_nm": [float(x) for x in e.held_out_rms_nm],
                  "training_rms_nm": [float(x) for x in e.residual_rms_nm],
                  "load_torque_rms_nm": [float(x) for x in e.load_torque_rms_nm]},
        "principal_axes": {
            "axes": [[float(x) for x in axis] for axis in e.axes.rotation.T],
            "determined": list(e.axes.determined),
            "spread_deg": [float(x) for x in e.axes.spread_deg],
            "rotation_spread_deg": float(e.axes.rotation_spread_deg),
            "moment_gaps_sigmas": [float(x) for x in e.axes.gap_sigmas],
            "rule": "each principal axis (ascending moments) as a unit vector in the frame; one is not determined "
                    f"where its moment lies within {AXIS_SIGMAS:g} standard deviations of another's, or within what "
                    "the arm model's error could move the two, or where the least-squares load is no rigid body: "
                    "then only the plane of the two axes is, nothing when all three are that close; the spreads are "
                    f"RMS angles over {DRAWS} draws of the least-squares distribution, each draw's axes matched to "
                    "these (one standard deviation)",
            "use": axes_warning(e.axes) or "the axes are determined: KUKA's A B C as written, within abc_spread_deg; "
                                            "Franka's load_inertia holds the inertia about the CoM as a full matrix"},
        **_robot_exports(exported, no_export, e.undetermined_moments),
    }


def _robot_exports(exported: ExportedLoad | None, no_export: str, undetermined_moments: tuple[int, ...]) -> dict:
    """payload.yaml's KUKA load data, Franka setLoad values and franka_ros2 call, each naming its frame (the robot's
    load frame); all None, and why, where the load is not on that frame's body."""
    if exported is None:
        return {"kuka_load_data": None, "franka_set_load": None, "franka_ros2": None, "no_robot_exports": no_export}
    load, axes = exported.inertial, exported.axes
    return {
        "kuka_load_data": {"frame": exported.frame, **dataclasses.asdict(kuka_load_data(load)),
                           "abc_spread_deg": [float(x) for x in axes.abc_spread_deg],
                           "abc_determined": axes.all_determined, "meaning": kuka_meaning(axes, undetermined_moments)},
        "franka_set_load": {"frame": exported.frame, **franka_set_load(load), "when": SET_LOAD_WHEN},
        "franka_ros2": franka_service_call(load),
    }
