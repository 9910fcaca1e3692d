"""Command line: identify parameters from recordings, and validate an identification on other recordings.

    python -m robot_id_estimator identify --urdf ROBOT.urdf --data FILE [--data FILE ...] --out DIR [--config YAML]
    python -m robot_id_estimator identify --robot iiwa14 --data run.csv --period 20 --out DIR
    python -m robot_id_estimator validate --result DIR/identification.json --data FILE --out DIR2
    python -m robot_id_estimator payload --robot panda --data loaded.mcap [--arm DIR/identification.json |
        --baseline unloaded.mcap] --out DIR3
"""
# The input files and --out are checked before the estimation modules (scipy, pinocchio, cvxpy, matplotlib) are
# imported: --help and a mistyped path answer at once.

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
import time
from typing import TYPE_CHECKING

import numpy as np

from robot_id_cli.command_line import (
    HelpFormatter,
    check_writable_directory,
    joint_names,
    missing_files,
    robot_source_problems,
    say,
)
from robot_id_estimator.exit_codes import EXIT_CHECK_FAILED, EXIT_DATA_MISTAKE, EXIT_FILES_DIFFER
from robot_id_estimator.physical.problem import RetrievalError
from robot_id_estimator.recordings.csv_columns import parse_column_map
from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.results.set_checks import RULE
from robot_id_estimator.settings import (
    METHODS,
    EstimatorConfig,
    coulomb_law_settings,
    load_estimator_config,
    replace_config,
)
from robot_id_model.coulomb_laws import FAMILIES
from robot_id_model.exit_codes import add_exit_codes
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import DEFAULT_FRICTION, STANDARD_GRAVITY_M_S2, load_robot_model

if TYPE_CHECKING:
    from robot_id_estimator.robot_setup import RobotSetup

DEFAULT_GRAVITY = ",".join(f"{g:g}" for g in STANDARD_GRAVITY_M_S2)


def _progress(start: float):
    def timed(text: str) -> None:
        say(f"[{time.perf_counter() - start:6.1f} s] {text}")

    return timed


def _check_inputs(args: argparse.Namespace) -> None:
    """Every input file exists, before anything is loaded."""
    paths = [("--data", path) for path in args.data] + [("--friction-sweep", path) for path in
                                                        getattr(args, "friction_sweep", None) or []]
    paths += [("--validation-data", path) for path in getattr(args, "validation_data", None) or []]
    paths += [("--baseline", path) for path in getattr(args, "baseline", None) or []]
    paths += [(option, getattr(args, option[2:], None)) for option in ("--result", "--config", "--arm")]
    missing = robot_source_problems(getattr(args, "robot", None), getattr(args, "urdf", None)) + missing_files(paths)
    if missing:
        raise FileNotFoundError("; ".join(missing))


def _setup(args: argparse.Namespace) -> RobotSetup:
    from robot_id_estimator.robot_setup import RobotSetup

    if args.robot:
        given = [option for option, value in (("--joints", args.joints), ("--gravity", args.gravity),
                                               ("--torque-filter-time-constant", args.torque_filter_time_constant))
                 if value is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} {'goes' if len(given) == 1 else 'go'} with --urdf; a robot config "
                             "states them")
        return RobotSetup.from_config(load_robot_config(args.robot))
    robot = load_robot_model(args.urdf, joint_names(args.joints))
    text = args.gravity or DEFAULT_GRAVITY
    try:
        gravity = tuple(float(g) for g in text.split(","))
    except ValueError:
        raise ValueError(f"--gravity needs three comma-separated numbers in m/s², got '{text}'") from None
    if len(gravity) != 3:
        raise ValueError(f"--gravity needs three comma-separated numbers in m/s², got '{text}'")
    return RobotSetup(pathlib.Path(args.urdf).stem, str(pathlib.Path(args.urdf).resolve()), robot.joint_names,
                      gravity, args.torque_filter_time_constant or 0.0)


def _config(args: argparse.Namespace, base: EstimatorConfig | None = None) -> EstimatorConfig:
    config = load_estimator_config(args.config) if args.config else (base or EstimatorConfig())
    friction = getattr(args, "friction", None)
    processing = dataclasses.replace(config.processing, non_periodic=True) if args.non_periodic else None
    return replace_config(
        config,
        method=getattr(args, "method", None),
        friction=tuple(t for t in friction.split(",") if t) if friction else None,
        coulomb_law=getattr(args, "coulomb_law", None),
        processing=processing,
    )


def _load(args: argparse.Namespace, setup: RobotSetup, say) -> tuple[list, list]:
    """The recordings of --data and --validation-data, each file once; a column map's {i} numbers all the URDF's movable
    joints."""
    from robot_id_estimator.processing.input_checks import refuse_the_same_samples_twice

    columns = parse_column_map(args.columns) if args.columns else None
    arm_joints = load_robot_model(setup.urdf_text or setup.urdf_path).joint_names if columns else None
    paths = list(args.data) + list(getattr(args, "validation_data", None) or [])
    recordings = []
    for path in paths:
        say(f"loading {path}")
        recordings.append(load_recording(path, setup.joint_names, args.period, columns=columns, start_s=args.start,
                                         end_s=args.end, unmodelled_motion_ok=args.allow_unmodelled_motion,
                                         arm_joints=arm_joints))
    refuse_the_same_samples_twice(paths, recordings, len(args.data))
    return recordings[:len(args.data)], recordings[len(args.data):]


def _warn(warnings: tuple[str, ...]) -> None:
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _identify(args: argparse.Namespace, say) -> int:
    setup = _setup(args)
    config = _config(args)
    out = check_writable_directory(args.out)
    # the estimation's modules (scipy, pinocchio, cvxpy, matplotlib) once the inputs and --out are checked
    from robot_id_estimator.identify_and_write import identify_and_write
    from robot_id_estimator.physical.determination import HELD

    recordings, validation_recordings = _load(args, setup, say)
    sweeps = []
    for path in args.friction_sweep or []:
        say(f"loading friction sweep {path}")
        sweeps.append(load_recording(path, setup.joint_names))
    written = identify_and_write(recordings, setup, config, out, sweeps, say, args.allow_outside_limits,
                                 args.allow_implausible_torque, validation_recordings)
    result, report = written.result, written.report
    m = result.metrics
    print(f"{setup.name}: {int(np.isfinite(result.base.values).sum())} of {len(result.base.names)} base "
          f"parameters, {len(result.essential.names)} essential; cond(Yb) = {m.condition_number:.4g}")
    for reason in result.unidentified.values():
        print(f"  not identified: {reason}")
    _print_errors(result)
    if result.physical is not None:
        p = result.physical
        print(f"physical parameters ({p.method}, {p.wall_time_s:.3g} s): residual {p.residual_increase_percent:+.3g} % "
              f"over the unconstrained {p.target} fit; "
              + ("all constraints met" if not p.violations else f"violations: {'; '.join(p.violations)}"))
        held = [name for name, status in zip(p.standard_names, p.status, strict=True) if status == HELD]
        print(f"  {len(held)} of {len(p.status)} standard parameters have no data term and "
              "are held (friction at zero, inertials at the URDF values); see the report")
    for note in written.notes:
        print(f"note: {note}")
    print("wrote " + ", ".join(str(path) for path in written.paths))
    _warn(written.warnings)
    if written.exit_code == EXIT_FILES_DIFFER:
        print("error: the written model does not reproduce the identified one, a bug in robot_id (please report it "
              f"with identification.json): {'; '.join(written.file_check.failures)}", file=sys.stderr)
        return EXIT_FILES_DIFFER
    if written.exit_code == EXIT_DATA_MISTAKE:
        where = " (written as identified.rejected.urdf)" if written.model_files else ""
        print(f"error: a mistake in the data, the model rejected{where}: {result.mistake.removeprefix('diagnosis: ')}; "
              f"see {report}", file=sys.stderr)
        return EXIT_DATA_MISTAKE
    if written.exit_code == EXIT_CHECK_FAILED:
        failed = result.failed_sets()
        print(f"error: the {' and '.join(failed)} parameters failed their check on held-out data "
              f"({RULE}); see the warnings above and {report}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    return 0


def _print_errors(result) -> None:
    """Each set's torque error RMS per joint on the data it was fitted to and on held-out data, and the best."""
    held_out = result.held_out
    print(f"torque error RMS [Nm] per joint, fitted (training) and held out ({held_out.source}):")
    for s in result.parameter_sets:
        training, held = result.metrics.residual_rms_nm[s], held_out.rms_nm(s)
        print(f"  {s + ':':<10} training " + " ".join(f"{x:.3g}" for x in training) + f"  (sum {sum(training):.3g})")
        print(f"  {'':<10} held out " + " ".join(f"{x:.3g}" for x in held) + f"  (sum {held.sum():.3g})")
    print(f"best on held-out data: {result.best_set} parameters (sum {held_out.total_rms_nm(result.best_set):.3g} Nm)")


def _validate(args: argparse.Namespace, say) -> int:
    from robot_id_estimator.results import read_identification

    result = read_identification(args.result)
    config = _config(args, result.config)
    out = check_writable_directory(args.out)
    from robot_id_estimator.output.model_files import written_model_beside
    from robot_id_estimator.output.report import write_validation_report
    from robot_id_estimator.results.validation import write_validation
    from robot_id_estimator.validate import validate

    if (out / "identification.json").exists():
        raise ValueError(f"--out {out} holds an identification; write the validation to a directory of its own")
    recordings, _ = _load(args, result.setup, say)
    written = written_model_beside(pathlib.Path(args.result).parent, result.setup) if result.physical else None
    validation = validate(result, recordings, config, progress=say, allow_outside_limits=args.allow_outside_limits,
                          allow_implausible_torque=args.allow_implausible_torque, written=written)
    write_validation(validation, out / "validation.json")
    report = write_validation_report(validation, out, progress=say)
    print(f"motion: {validation.motion_comparison}")
    print(f"{'RMS [Nm] (% of torque RMS)':<28}" + " ".join(f"{name:>16}" for name in validation.joint_names))
    for s, rms in validation.rms_nm.items():
        percent = validation.rms_percent_of_torque[s]
        print(f"{s:<28}" + " ".join(f"{x:>8.3g} ({p:>5.3g})" for x, p in zip(rms, percent, strict=True))
              + f"   total {validation.total_rms_nm[s]:.3g}")
    print(f"wrote {out / 'validation.json'} and {report}")
    _warn(validation.warnings)
    return 0


def _payload(args: argparse.Namespace, say) -> int:
    setup = _setup(args)
    config = _config(args)
    out = check_writable_directory(args.out)
    from robot_id_estimator.payload.identify_payload import identify_payload_and_write
    from robot_id_estimator.payload.principal_axes import axes_summary
    from robot_id_estimator.results import read_identification

    if args.arm and args.baseline:
        raise ValueError("give --arm or --baseline, not both")
    arm = read_identification(args.arm) if args.arm else None
    recordings, _ = _load(args, setup, say)
    baseline = [load_recording(path, setup.joint_names, args.period) for path in args.baseline or []]
    written = identify_payload_and_write(recordings, setup, out, config, arm, baseline, args.frame,
                                         _mass_range(args.mass_range), args.reach)
    e = written.estimate
    load = e.inertial
    print(f"payload on {written.frame} ({written.method}): {load.mass_kg:.4g} kg, CoM "
          + " ".join(f"{1000 * x:.1f}" for x in load.com_m) + " mm, principal moments "
          + " ".join(f"{x:.3g}" for x in np.linalg.eigvalsh(load.inertia_com_kg_m2)) + " kg m²")
    print("  held-out torque error [Nm] " + " ".join(f"{x:.3g}" for x in e.held_out_rms_nm) + " of the load's "
          + " ".join(f"{x:.3g}" for x in e.load_torque_rms_nm))
    if e.arm_error is not None:
        print(f"  the arm model's error could move the mass by up to {e.arm_error.mass_percent:.2g} %, the CoM by "
              f"{e.arm_error.com_mm:.2g} mm, the principal moments by "
              + " ".join(f"{x:.2g}" for x in e.arm_error.moments_percent) + " % (a worst case)")
    for k in e.undetermined_moments:
        bound = "" if e.arm_error is None else f", the arm's error up to {e.arm_error.moments_percent[k]:.0f} %"
        print(f"  principal moment {k + 1} is not determined (RSD {e.moments_rsd_percent[k]:.0f} %{bound})")
    exported = written.exported
    if exported is not None and exported.frame != written.frame:
        print(f"  in {exported.frame}, the robot's load frame (KUKA's load data, Franka's setLoad): CoM "
              + " ".join(f"{1000 * x:.1f}" for x in exported.inertial.com_m) + " mm")
    print(f"  {axes_summary(e.axes if exported is None else exported.axes)}")
    for note in written.notes:
        print(f"note: {note}")
    print("wrote " + ", ".join(str(path) for path in written.paths))
    _warn(written.warnings)
    if not written.file_check.passed:
        print("error: the written payload files do not reproduce the identified load, a bug in robot_id (please "
              f"report it with payload.yaml): {'; '.join(written.file_check.failures)}", file=sys.stderr)
        return EXIT_FILES_DIFFER
    if not written.passed:
        print(f"error: the load's model failed its check on held-out data ({'; '.join(written.failures)}; "
              "payload.yaml: check): is the arm model or the frame right, and is the load on?", file=sys.stderr)
        return EXIT_CHECK_FAILED
    return 0


def _mass_range(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--mass-range needs two comma-separated masses in kg, got '{text}'") from None
    if not 0.0 <= low <= high:
        raise ValueError(f"--mass-range needs 0 <= LO <= HI, got '{text}'")
    return low, high


def _data_options(p: argparse.ArgumentParser) -> None:
    """Options on how to read the data, shared by identify and validate."""
    p.add_argument("--data", action="extend", nargs="+", required=True, metavar="FILE",
                   help="CSV file or rosbag2 bag; repeat for several")
    p.add_argument("--period", type=float, metavar="SECONDS",
                   help="period of periodic data [s] (checked: periods that disagree are not averaged; default: "
                        "a bag's trajectory description, else detected from the data)")
    p.add_argument("--non-periodic", action="store_true",
                   help="process the data as non-periodic even when a period is known or detected")
    p.add_argument("--start", type=float, metavar="SECONDS",
                   help="use the data from this time after the first sample [s] (default: from the first sample)")
    p.add_argument("--end", type=float, metavar="SECONDS",
                   help="use the data up to this time after the first sample [s] (default: to the last sample)")
    p.add_argument("--columns", metavar="MAP", help="CSV columns by their names in the file, e.g. "
                   "'t=t_s,q=q{i}_rad,dq=dq{i}_rad_s,tau=tau{i}_Nm' ({i}: joint number from 1, {joint}: joint name; "
                   "default: t, q_<joint>, dq_<joint>, tau_<joint>)")
    p.add_argument("--allow-unmodelled-motion", action="store_true",
                   help="go on when joints that are not in the model move in the data")
    p.add_argument("--allow-outside-limits", action="store_true",
                   help="go on when positions leave the URDF's joint limits")
    p.add_argument("--allow-implausible-torque", action="store_true",
                   help="go on when the torque does not look like the URDF robot's (scale or sign)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m robot_id_estimator", description=__doc__,
                                formatter_class=HelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    ident = sub.add_parser("identify", help="estimate base and essential parameters and friction",
                           formatter_class=HelpFormatter)
    _robot_options(ident)
    _data_options(ident)
    ident.add_argument("--out", required=True, metavar="DIR", help="output directory")
    ident.add_argument("--config", metavar="YAML", help="estimator config (see config/estimator.yaml; "
                                                        "default: the defaults it shows)")
    ident.add_argument("--friction-sweep", action="extend", nargs="+", metavar="FILE",
                       help="recordings of forward/backward joint sweeps for the Stribeck friction model "
                            "(default: none, linear friction)")
    ident.add_argument("--validation-data", action="extend", nargs="+", metavar="FILE",
                       help="recordings of another motion, not fitted: each joint's Coulomb law, every parameter "
                            "set's check and the best set are decided by how well they predict it (default: 5-fold "
                            "cross-validation over time blocks of --data)")
    ident.add_argument("--method", choices=METHODS, help="override the config's estimator (default: wls)")
    ident.add_argument("--friction", help="override the config's friction terms, comma-separated "
                                          f"(default: {','.join(DEFAULT_FRICTION)})")
    ident.add_argument("--coulomb-law", choices=coulomb_law_settings(),
                       help="override the config's Coulomb law, FC times a shape: auto chooses per joint by held-out "
                            "data among the families (" + "; ".join(f.help_text() for f in FAMILIES.values())
                            + "); a family's name forces it (default: auto)")

    val = sub.add_parser("validate", help="predict torques of other recordings with an identification",
                         formatter_class=HelpFormatter)
    val.add_argument("--result", required=True, metavar="JSON", help="identification.json of `identify`")
    _data_options(val)
    val.add_argument("--out", required=True, metavar="DIR", help="output directory (not the identification's)")
    val.add_argument("--config", metavar="YAML", help="estimator config (default: the identification's)")

    load = sub.add_parser("payload", help="identify a load on the flange (mass, CoM, inertia) and write it for KUKA, "
                                          "Franka, URDF and MJCF", formatter_class=HelpFormatter)
    _robot_options(load)
    _data_options(load)
    load.add_argument("--out", required=True, metavar="DIR", help="output directory")
    load.add_argument("--arm", metavar="JSON", help="identification.json of the arm without the load (default: the "
                                                    "URDF's arm, no friction)")
    load.add_argument("--baseline", action="extend", nargs="+", metavar="FILE",
                      help="recordings of the same excitation without the load: the arm identified from them, its "
                           "own terms cancel (instead of --arm; default: none)")
    load.add_argument("--frame", help="frame the load is fixed to (default: the robot config's flange, else the "
                                      "last arm link)")
    load.add_argument("--mass-range", metavar="LO,HI", help="the load's mass range [kg] (default: 0 to the robot "
                                                            "config's rated payload, else the arm's mass)")
    load.add_argument("--reach", type=float, default=0.3, metavar="METRES",
                      help="the load's CoM lies within this distance of the frame [m] (default: 0.3)")
    load.add_argument("--config", metavar="YAML", help="estimator config, for its processing (default: defaults)")
    return add_exit_codes(p)


def _robot_options(p: argparse.ArgumentParser) -> None:
    """The arm: a robot config, or a URDF with its joints, gravity and torque filter."""
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--urdf", help="URDF of the arm")
    source.add_argument("--robot", help="robot config: a name such as iiwa14, a robot folder or a YAML path (URDF, "
                                        "joints, gravity and torque filter)")
    p.add_argument("--joints", nargs="+", help="arm joints base to tip, space- or comma-separated, with --urdf "
                                               "(default: the URDF's arm, up to the first branching)")
    p.add_argument("--gravity", help=f"gravity in the base frame [m/s²], comma-separated, with --urdf "
                                     f"(default: {DEFAULT_GRAVITY})")
    p.add_argument("--torque-filter-time-constant", type=float, metavar="SECONDS",
                   help="time constant of the first-order filter the robot applied to the torques [s], with "
                        "--urdf (default: 0, none; LBR: 0.016)")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit codes are robot_id_model.exit_codes'."""
    args = parser().parse_args(argv)
    progress = _progress(time.perf_counter())
    try:
        _check_inputs(args)
        return {"identify": _identify, "validate": _validate, "payload": _payload}[args.command](args, progress)
    except KeyboardInterrupt:
        print("error: interrupted; files written so far are complete, the rest were not written", file=sys.stderr)
        return 130
    except (ValueError, OSError, RetrievalError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # a bug must still end in one line and a non-zero exit
        print(f"error: unexpected {type(err).__name__}: {err} (a bug in robot_id: please report it with the "
              "command line)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
