"""Command line: identify parameters from recordings, and validate an identification on other recordings.

    python -m robot_id_estimator identify --urdf ROBOT.urdf --data FILE [--data FILE ...] --out DIR [--config YAML]
    python -m robot_id_estimator identify --robot iiwa14 --data run.csv --period 20 --out DIR
    python -m robot_id_estimator validate --result DIR/identification.json --data FILE --out DIR2
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

from robot_id_estimator.pipeline import identify, validate
from robot_id_estimator.recording import load_recording
from robot_id_estimator.report import write_identification_report, write_validation_report
from robot_id_estimator.results import RobotSetup, read_identification, write_identification, write_validation
from robot_id_estimator.settings import METHODS, EstimatorConfig, load_estimator_config, replace_config
from robot_id_estimator.urdf_export import write_identified_model
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import load_robot_model


def _progress(start: float):
    def say(text: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f} s] {text}", file=sys.stderr, flush=True)

    return say


def _names(values: list[str] | None) -> list[str] | None:
    """Joint names given space- or comma-separated."""
    if not values:
        return None
    return [name for value in values for name in value.split(",") if name]


def _setup(args: argparse.Namespace) -> RobotSetup:
    if args.robot:
        setup = RobotSetup.from_config(load_robot_config(args.robot))
        if args.joints:
            raise ValueError("--joints goes with --urdf; a robot config lists its joints")
        return setup
    joints = _names(args.joints)
    robot = load_robot_model(args.urdf, joints)
    gravity = tuple(float(g) for g in args.gravity.split(","))
    if len(gravity) != 3:
        raise ValueError(f"--gravity needs three comma-separated numbers, got '{args.gravity}'")
    return RobotSetup(pathlib.Path(args.urdf).stem, str(pathlib.Path(args.urdf).resolve()), robot.joint_names,
                      gravity, args.torque_filter_time_constant)


def _config(args: argparse.Namespace, base: EstimatorConfig | None = None) -> EstimatorConfig:
    config = load_estimator_config(args.config) if args.config else (base or EstimatorConfig())
    friction = getattr(args, "friction", None)
    return replace_config(
        config,
        method=getattr(args, "method", None),
        friction=tuple(t for t in friction.split(",") if t) if friction else None,
    )


def _identify(args: argparse.Namespace, say) -> None:
    setup = _setup(args)
    config = _config(args)
    recordings = []
    for path in args.data:
        say(f"loading {path}")
        recordings.append(load_recording(path, setup.joint_names, args.period))
    sweeps = []
    for path in args.friction_sweep or []:
        say(f"loading friction sweep {path}")
        sweeps.append(load_recording(path, setup.joint_names))
    result = identify(recordings, setup, config, sweeps, progress=say)
    out = pathlib.Path(args.out)
    write_identification(result, out / "identification.json")
    report = write_identification_report(result, out, progress=say)
    m = result.metrics
    print(f"{setup.name}: {int(np.isfinite(result.base.values).sum())} of {len(result.base.names)} base "
          f"parameters, {len(result.essential.names)} essential; cond(Yb) = {m.condition_number:.4g}")
    for reason in result.unidentified.values():
        print(f"  not identified: {reason}")
    for s in result.parameter_sets:
        print(f"residual RMS [Nm] {s + ':':<10} " + " ".join(f"{x:.3g}" for x in m.residual_rms_nm[s]))
    written = [out / "identification.json", report]
    if result.physical is not None:
        p = result.physical
        print(f"physical parameters ({p.method}, {p.wall_time_s:.3g} s): residual {p.residual_increase_percent:+.3g} % "
              f"over the unconstrained {p.target} fit; "
              + ("all constraints met" if not p.violations else f"violations: {'; '.join(p.violations)}"))
        written += list(write_identified_model(result, out))
    print("wrote " + ", ".join(str(path) for path in written))


def _validate(args: argparse.Namespace, say) -> None:
    result = read_identification(args.result)
    config = _config(args, result.config)
    recordings = []
    for path in args.data:
        say(f"loading {path}")
        recordings.append(load_recording(path, result.setup.joint_names, args.period))
    validation = validate(result, recordings, config, progress=say)
    out = pathlib.Path(args.out)
    write_validation(validation, out / "validation.json")
    report = write_validation_report(validation, out, progress=say)
    for s, rms in validation.rms_nm.items():
        print(f"RMS [Nm] {s:<10} " + " ".join(f"{x:.3g}" for x in rms) + f"   total {validation.total_rms_nm[s]:.3g}")
    print(f"wrote {out / 'validation.json'} and {report}")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m robot_id_estimator", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    ident = sub.add_parser("identify", help="estimate base and essential parameters and friction")
    source = ident.add_mutually_exclusive_group(required=True)
    source.add_argument("--urdf", help="URDF of the arm")
    source.add_argument("--robot", help="robot config: a name such as iiwa14 or a YAML path (URDF, joints, "
                                        "gravity and torque filter)")
    ident.add_argument("--joints", nargs="+", help="arm joints base to tip, with --urdf (default: all movable)")
    ident.add_argument("--gravity", default="0,0,-9.81", help="gravity in the base frame [m/s²], with --urdf")
    ident.add_argument("--torque-filter-time-constant", type=float, default=0.0, metavar="SECONDS",
                       help="first-order filter the robot applied to the torques, with --urdf (LBR: 0.016)")
    ident.add_argument("--data", action="extend", nargs="+", required=True, metavar="FILE",
                       help="CSV file or rosbag2 bag; repeat for several")
    ident.add_argument("--out", required=True, metavar="DIR", help="output directory")
    ident.add_argument("--config", metavar="YAML", help="estimator config (see config/estimator.yaml)")
    ident.add_argument("--period", type=float, metavar="SECONDS", help="the data are periodic with this period")
    ident.add_argument("--friction-sweep", action="extend", nargs="+", metavar="FILE",
                       help="recordings of forward/backward joint sweeps for the Stribeck friction model")
    ident.add_argument("--method", choices=METHODS, help="override the config's estimator")
    ident.add_argument("--friction", help="override the config's friction terms, e.g. FV,FC,FO")

    val = sub.add_parser("validate", help="predict torques of other recordings with an identification")
    val.add_argument("--result", required=True, metavar="JSON", help="identification.json of `identify`")
    val.add_argument("--data", action="extend", nargs="+", required=True, metavar="FILE")
    val.add_argument("--out", required=True, metavar="DIR")
    val.add_argument("--config", metavar="YAML", help="estimator config (default: the identification's)")
    val.add_argument("--period", type=float, metavar="SECONDS", help="the data are periodic with this period")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    say = _progress(time.perf_counter())
    try:
        if args.command == "identify":
            _identify(args, say)
        else:
            _validate(args, say)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
