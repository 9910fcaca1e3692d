"""Command line: design, check and sweep.

    python -m robot_id_excitation design --robot iiwa14 --harmonics 5 --base-frequency 0.05 --out DIR
    python -m robot_id_excitation design --urdf ARM.urdf [--joints J1 J2 ...] --acceleration-limit 10 \\
        --flange-speed 1.0 --floor-z 0.05 --out DIR
    python -m robot_id_excitation check DIR/excitation.yaml [--robot iiwa14 | --urdf ARM.urdf ...] [--out DIR]
    python -m robot_id_excitation check iiwa14          # a shipped trajectory: plot in excitation_check/iiwa14.png
    python -m robot_id_excitation sweep --robot panda --joints fer_joint1 --velocities 0.02,0.05,0.1,0.2 --out DIR
    python -m robot_id_excitation sweep --robot iiwa14 --joints all --simultaneous --velocities 0.005:1.17:12 --out DIR

`--robot` is a shipped robot's name, a robot folder or a robot config YAML; `--urdf` takes the position, velocity
and torque limits from a URDF's <limit> tags and the rest from the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pathlib
import sys

import numpy as np

from robot_id_cli.command_line import HelpFormatter, check_writable_directory, joint_names, robot_source_problems
from robot_id_excitation.check import check_trajectory, closest_approach_line, trajectory_criteria
from robot_id_excitation.constraints import DESIGN_CLEARANCE_MARGIN_M, DesignLimits, design_limits
from robot_id_excitation.criteria import CRITERIA
from robot_id_excitation.design import DesignError, DesignInterrupted, DesignResult, design_excitation
from robot_id_excitation.design_problem import DesignOptions
from robot_id_excitation.excitation_guard import allowance_refusal
from robot_id_excitation.fourier import KINDS, FourierTrajectory
from robot_id_excitation.plot import plot_trajectory  # light: matplotlib is imported when a figure is drawn
from robot_id_excitation.regressor_sensitivity import payload_columns
from robot_id_excitation.sweeps import FrictionSweep
from robot_id_excitation.trajectory_file import (
    load_trajectory,
    recorded_allowed_pairs,
    recorded_friction,
    save_trajectory,
)
from robot_id_excitation.urdf_config import DEFAULT_CLEARANCE_M, urdf_robot_config
from robot_id_model.collision_geometry import ALLOWED_CLEARANCE_M, pair_lists
from robot_id_model.exit_codes import add_exit_codes
from robot_id_model.robot_config import RobotConfig, load_robot_config
from robot_id_model.robot_model import DEFAULT_FRICTION, ModelError, RobotModel

BAD_INPUT = 2
INFEASIBLE = 3
TIME_LIMIT = 4
INTERRUPTED = 130
OPTION_NAMES = {
    "kind": "--kind", "criterion": "--criterion", "harmonics": "--harmonics", "base_frequency_hz": "--base-frequency",
    "samples": "--samples", "constraint_samples": "--samples", "starts": "--starts", "seed": "--seed",
    "max_iterations": "--max-iterations", "noise_std_nm": "--noise-std", "time_limit_s": "--time-limit",
    "pose_rad": "--pose", "still_joints": "--still",
}
"""DesignOptions fields as the command line spells them."""
LIMIT_RULES = (
    ("--position-margin", lambda v: v >= 0, ">= 0 rad"),
    ("--velocity-scale", lambda v: 0 < v <= 1, "in (0, 1]"),
    ("--acceleration-scale", lambda v: 0 < v <= 1, "in (0, 1]"),
    ("--torque-scale", lambda v: 0 < v <= 1, "in (0, 1]"),
    ("--flange-speed", lambda v: math.isfinite(v) and v > 0, "> 0 m/s and finite"),
    ("--floor-z", math.isfinite, "finite (m)"),
    ("--clearance-margin", lambda v: math.isfinite(v) and v >= 0, ">= 0 m and finite"),
)


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(",") if v.strip())


def _joint_indices(text: str | None, names: tuple[str, ...]) -> tuple[int, ...]:
    """Indices of comma-separated joint names; ValueError naming an unknown one."""
    wanted = _terms(text or "")
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise ValueError(f"--still: no joint named {unknown}; the joints are {', '.join(names)}")
    return tuple(names.index(name) for name in wanted)


def _terms(text: str) -> tuple[str, ...]:
    return tuple(t for t in text.split(",") if t)


def _add_robot_options(parser: argparse.ArgumentParser, required: bool, robot_help: str) -> None:
    source = parser.add_mutually_exclusive_group(required=required)
    source.add_argument("--robot", help=robot_help)
    source.add_argument("--urdf", help="URDF of a serial arm; position, velocity and torque limits from its <limit> "
                                       "tags (needs --acceleration-limit, --flange-speed, --floor-z)"
                                       + ("" if required else "; default: the trajectory's robot config"))
    group = parser.add_argument_group("with --urdf")
    group.add_argument("--joints", nargs="+", help="arm joints base to tip, space- or comma-separated "
                                                   "(default: the URDF's arm, for check the trajectory's)")
    group.add_argument("--acceleration-limit", help="acceleration limit [rad/s²], one value or comma-separated per "
                                                    "joint (required with --urdf)")
    group.add_argument("--flange-frame", help="frame whose speed is limited (default: the last joint's link)")
    group.add_argument("--clearance", type=float, default=None,
                       help="least distance between non-adjacent links and to the floor, by the URDF's <collision> "
                            "geometry [m] (default 0.02)")
    group.add_argument("--allow-pair", action="append", metavar="LINK,LINK",
                       help=f"two links (or a link and floor) allowed closer than the clearance (a pair built closer), "
                            f"never under {1000 * ALLOWED_CLEARANCE_M:g} mm; written into a design's trajectory, whose "
                            "check applies it (default: none; for check the trajectory's); repeat for more")


def _add_limit_options(parser: argparse.ArgumentParser, margin_default: float, clearance_default: float) -> None:
    group = parser.add_argument_group("limits (from the robot config, then tightened)")
    group.add_argument("--position-margin", type=float, default=margin_default,
                       help="margin inside each position limit [rad]")
    group.add_argument("--velocity-scale", type=float, default=1.0, help="fraction of the velocity limits")
    group.add_argument("--acceleration-scale", type=float, default=1.0, help="fraction of the acceleration limits")
    group.add_argument("--torque-scale", type=float, default=1.0, help="fraction of the torque limits")
    group.add_argument("--flange-speed", type=float, default=None,
                       help="speed limit of the flange [m/s] (default: the config's; required with --urdf)")
    group.add_argument("--floor-z", type=float, default=None, help="lowest height of link origins and flange [m] "
                                                                   "(default: the config's; required with --urdf)")
    group.add_argument("--clearance-margin", type=float, default=clearance_default,
                       help="added to the config's collision clearance between links and to the environment [m]")


def _check_limit_options(args: argparse.Namespace) -> None:
    """One line for the first limit option out of its range."""
    for option, ok, need in LIMIT_RULES:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None and not ok(value):
            raise ValueError(f"{option} must be {need}, got {value}")


def _robot_config(args: argparse.Namespace, fallback_robot: str = "", joints: tuple[str, ...] | None = None,
                  carried_pairs: frozenset[frozenset[str]] = frozenset()) -> RobotConfig:
    """The robot config of --robot (default `fallback_robot`), or one made from --urdf and its options, allowing
    the pairs of --allow-pair, else `carried_pairs` (those a checked trajectory was designed allowing)."""
    urdf_only = {"--joints": args.joints, "--acceleration-limit": args.acceleration_limit,
                 "--flange-frame": args.flange_frame, "--clearance": args.clearance, "--allow-pair": args.allow_pair}
    if not args.urdf:
        given = [option for option, value in urdf_only.items() if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} with --urdf; a robot config "
                             "states them")
        return load_robot_config(args.robot or fallback_robot)
    missing = [f"{option} ({unit})" for option, value, unit in (
        ("--acceleration-limit", args.acceleration_limit, "rad/s²"), ("--flange-speed", args.flange_speed, "m/s"),
        ("--floor-z", args.floor_z, "m")) if value is None]
    if missing:
        raise ValueError(f"--urdf needs {', '.join(missing)}: a URDF does not state them")
    acceleration = _floats(args.acceleration_limit)
    if not acceleration or not all(math.isfinite(a) and a > 0 for a in acceleration):
        raise ValueError(f"--acceleration-limit must be positive (rad/s²), got {args.acceleration_limit}")
    if args.clearance is not None and not (math.isfinite(args.clearance) and args.clearance >= 0):
        raise ValueError(f"--clearance must be >= 0 m and finite, got {args.clearance}")
    pairs = tuple(tuple(p.replace(" ", "").split(",")) for p in args.allow_pair or ())
    if any(len(pair) != 2 or "" in pair for pair in pairs):
        raise ValueError(f"--allow-pair takes two names, LINK,LINK; got {args.allow_pair}")
    pairs = pairs if args.allow_pair else tuple(tuple(pair) for pair in pair_lists(carried_pairs))
    return urdf_robot_config(args.urdf, joint_names(args.joints) or joints, acceleration, args.flange_speed,
                             args.floor_z, args.flange_frame,
                             DEFAULT_CLEARANCE_M if args.clearance is None else args.clearance, pairs)


def _limits(config: RobotConfig, args: argparse.Namespace) -> DesignLimits:
    return design_limits(config, args.position_margin, args.velocity_scale, args.acceleration_scale,
                         args.torque_scale, args.flange_speed, args.floor_z, args.clearance_margin)


def _design_options(args: argparse.Namespace) -> DesignOptions:
    """The design options of the command line, validated (one line naming the first bad option)."""
    options = DesignOptions(
        kind=args.kind, harmonics=args.harmonics, base_frequency_hz=args.base_frequency, criterion=args.criterion,
        samples=args.samples, constraint_samples=2 * args.samples, starts=args.starts, seed=args.seed,
        noise_std_nm=_floats(args.noise_std) if args.noise_std else None, time_limit_s=args.time_limit,
        max_iterations=args.max_iterations, pose_rad=_floats(args.pose) if args.pose else None,
    )
    options.validate(OPTION_NAMES)
    return options


def _write_design(result: DesignResult, config: RobotConfig, robot: RobotModel, limits: DesignLimits,
                  out: pathlib.Path, payload: str | None = None) -> list[str]:
    """excitation.yaml (with what it was designed for), excitation.png and design.json; the summary lines."""
    options, values = result.options, result.criteria.as_dict()
    design = {"criterion": options.criterion, "samples": options.samples, "starts": options.starts,
              "seed": options.seed, "limits": limits.as_dict()}
    if result.stopped:
        design["stopped"] = result.stopped
    note = (f"cond of a load's ten parameters on {payload} (a payload excitation) over one period" if payload
            else "cond of the plain stacked base regressor over one period")
    block = {"criteria": values | {"friction": list(result.friction), "note": note}, "design": design}
    path = save_trajectory(result.trajectory, out / "excitation.yaml", block)
    title = (f"{config.robot}: {options.kind}, L = {options.harmonics}, f_f = {options.base_frequency_hz} Hz, "
             f"cond {values['condition_number']:.1f}, log det {values['log_det']:.1f}")
    png = plot_trajectory(result.trajectory, out / "excitation.png", limits, design_limits(config), title,
                          robot=robot)
    summary = {"trajectory": str(path), "plot": str(png), "wall_time_s": result.wall_time_s, **values,
               "friction": list(result.friction), "criterion": options.criterion, "stopped": result.stopped}
    if limits.collision is not None:
        summary |= {"allowed_pairs": pair_lists(limits.collision.allowed_pairs),
                    "allowed_clearance_m": limits.collision.allowed_clearance_m}
    (out / "design.json").write_text(json.dumps(summary, indent=2) + "\n")
    return [f"{config.robot}: cond(Yb) = {values['condition_number']:.2f}, log det = {values['log_det']:.2f} "
            f"({values['n_base']} base parameters, friction {list(result.friction)}), {result.wall_time_s:.0f} s",
            *result.report.lines(), closest_approach_line(result.report, limits),
            f"wrote {path}, {png}, {out / 'design.json'}"]


def _design(args: argparse.Namespace) -> int:
    options = _design_options(args)
    _check_limit_options(args)
    config = _robot_config(args)
    if options.noise_std_nm is not None and len(options.noise_std_nm) != len(config.joint_names):
        raise ValueError(f"--noise-std needs one value per joint ({len(config.joint_names)}: "
                         f"{', '.join(config.joint_names)}), got {len(options.noise_std_nm)}")
    options = dataclasses.replace(options, still_joints=_joint_indices(args.still, config.joint_names))
    out = check_writable_directory(args.out)  # after the input checks: a refused run leaves no directory
    robot = config.load_model(_terms(args.friction))
    columns = payload_columns(robot, args.payload) if args.payload else None
    limits = _limits(config, args)
    if limits.collision is None:
        print(closest_approach_line(None, limits), file=sys.stderr)
    try:
        result = design_excitation(robot, limits, options, config.robot, columns)
    except DesignError as err:
        print(f"error: {err}", file=sys.stderr)
        return INFEASIBLE
    except DesignInterrupted as stop:
        if stop.result is None:
            print("interrupted before any feasible design was found: nothing written", file=sys.stderr)
            return INTERRUPTED
        print("\n".join(_write_design(stop.result, config, robot, limits, out, args.payload)))
        print("interrupted: wrote the best feasible design found so far", file=sys.stderr)
        return INTERRUPTED
    print("\n".join(_write_design(result, config, robot, limits, out, args.payload)))
    if result.stopped:
        print(f"time limit of {options.time_limit_s:g} s reached: wrote the best feasible design found so far",
              file=sys.stderr)
        return TIME_LIMIT
    return 0


def _check(args: argparse.Namespace) -> int:
    _check_limit_options(args)
    if args.samples is not None and args.samples < 1:
        raise ValueError(f"--samples must be >= 1, got {args.samples}")
    trajectory = load_trajectory(args.trajectory)
    carried = recorded_allowed_pairs(args.trajectory)
    config = _robot_config(args, trajectory.robot, tuple(trajectory.joint_names), carried)
    if refusal := allowance_refusal(carried, config.collision):
        raise ValueError(f"{args.trajectory}: {refusal}")
    png = check_writable_directory(args.out) / f"{pathlib.Path(args.trajectory).stem}.png"
    friction = _terms(args.friction) if args.friction else recorded_friction(args.trajectory) or DEFAULT_FRICTION
    robot = config.load_model(friction)
    limits = _limits(config, args)
    report = check_trajectory(robot, limits, trajectory, args.samples)
    print(f"{args.trajectory}: {trajectory.kind}, {trajectory.n_joints} joints, period {trajectory.period_s:.4g} s")
    print("\n".join(report.lines()))
    print(closest_approach_line(report, limits))
    if isinstance(trajectory, FourierTrajectory):
        values = trajectory_criteria(robot, trajectory)
        print(f"cond(Yb) = {values.condition_number:.2f}, log det = {values.log_det:.2f}, Hadamard = "
              f"{values.hadamard:.2f} ({values.n_base} base parameters, friction {list(robot.friction)})")
    plot_trajectory(trajectory, png, limits, design_limits(config), samples=report.n_samples, robot=robot)
    print(f"wrote {png}")
    return 0 if report.feasible else INFEASIBLE


def _sweep_velocities(text: str) -> tuple[float, ...]:
    """Comma-separated speeds, or MIN:MAX:N for N speeds spaced geometrically from MIN to MAX."""
    if ":" not in text:
        return _floats(text)
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"--velocities {text!r}: expected comma-separated speeds or MIN:MAX:N")
    return tuple(np.geomspace(float(parts[0]), float(parts[1]), int(parts[2])).tolist())


def _sweep_hold(text: str | None, config: RobotConfig, limits: DesignLimits) -> np.ndarray:
    """Comma-separated pose, or a trajectory (file or shipped name) whose start pose to hold; default mid-range."""
    if text is None:
        return 0.5 * (limits.position_lower_rad + limits.position_upper_rad)
    try:
        return np.array(_floats(text))
    except ValueError:
        trajectory = load_trajectory(text)
    if tuple(trajectory.joint_names) != tuple(config.joint_names):
        raise ValueError(f"hold trajectory {text!r} is not for {config.robot}'s joints")
    return trajectory.rest_pose_rad


def _sweep(args: argparse.Namespace) -> int:
    _check_limit_options(args)
    config = load_robot_config(args.robot)
    robot = config.load_model(())
    limits = _limits(config, args)
    joints = joint_names(args.joints)
    joints = config.joint_names if joints == ("all",) else joints
    sweep = FrictionSweep(
        config.robot, config.joint_names, _sweep_hold(args.hold, config, limits), joints,
        _sweep_velocities(args.velocities), travel_rad=args.travel, pass_time_s=args.pass_time,
        blend_acceleration_rad_s2=args.blend_acceleration, simultaneous=args.simultaneous,
    )
    out = check_writable_directory(args.out)
    report = check_trajectory(robot, limits, sweep)
    order = "together" if sweep.simultaneous else "one at a time"
    print(f"friction sweep of {list(sweep.joints)} ({order}): {len(sweep.velocities_rad_s)} speeds "
          f"{min(sweep.velocities_rad_s):.3g}–{max(sweep.velocities_rad_s):.3g} rad/s, {sweep.period_s:.1f} s")
    print("\n".join(report.lines()))
    if not report.feasible:
        return INFEASIBLE
    path = save_trajectory(sweep, out / "friction_sweep.yaml")
    png = plot_trajectory(sweep, out / "friction_sweep.png", limits, design_limits(config),
                          samples=int(sweep.period_s * 50), robot=robot)
    print(f"wrote {path}, {png}")
    return 0


def _payload_options(design: argparse.ArgumentParser) -> None:
    design.add_argument("--payload", metavar="FRAME", help="design for a load on FRAME (its ten parameters, not the "
                                                           "arm's), e.g. the config's flange (default: none, the arm)")
    design.add_argument("--pose", help="hold every joint's offset at this pose [rad], comma-separated (default: "
                                       "none, the offsets are designed)")
    design.add_argument("--still", help="joints that stay at the pose, comma-separated names (default: none; a "
                                        "payload excitation moves the wrist)")


def parser() -> argparse.ArgumentParser:
    """The command line's parser: design, check and sweep."""
    p = argparse.ArgumentParser(prog="python -m robot_id_excitation", description=__doc__,
                                formatter_class=HelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    design = sub.add_parser("design", help="design an optimal excitation trajectory", formatter_class=HelpFormatter)
    _add_robot_options(design, required=True, robot_help="a shipped robot's name, a robot folder or a config YAML")
    design.add_argument("--kind", choices=KINDS, default="modified_fourier", help="trajectory family")
    design.add_argument("--harmonics", type=int, default=5, help="number of harmonics L per joint")
    design.add_argument("--base-frequency", type=float, default=0.05,
                        help="base frequency f_f [Hz]; the period is its inverse")
    design.add_argument("--criterion", choices=CRITERIA, default="cond", help="criterion to minimise")
    design.add_argument("--friction", default=",".join(DEFAULT_FRICTION),
                        help="friction columns of the regressor, of FV,FC,FO,IA (default %(default)s, as estimated)")
    design.add_argument("--samples", type=int, default=200, help="regressor samples per period")
    design.add_argument("--starts", type=int, default=4, help="random starts of the optimiser")
    design.add_argument("--seed", type=int, default=0, help="seed of the random starts")
    design.add_argument("--max-iterations", type=int, default=600, help="SLSQP iterations per start")
    design.add_argument("--time-limit", type=float, default=None,
                        help="wall time for the whole design [s]; at it, the best feasible design so far is written "
                             "(default: no limit)")
    design.add_argument("--noise-std", default=None,
                        help="torque noise std per joint [Nm], comma-separated, weighting D-opt/Hadamard "
                             "(default: the same on every joint)")
    _payload_options(design)
    design.add_argument("--out", default="excitation", help="output directory")
    _add_limit_options(design, margin_default=0.1, clearance_default=DESIGN_CLEARANCE_MARGIN_M)

    check = sub.add_parser("check", help="check a trajectory file against the limits; criteria and a plot",
                           formatter_class=HelpFormatter)
    check.add_argument("trajectory", help="trajectory file, or the name of a shipped one such as iiwa14")
    _add_robot_options(check, required=False, robot_help="robot config (default: the trajectory's robot)")
    check.add_argument("--friction", default=None, help="friction columns of the regressor (default: those the "
                                                         "trajectory was designed for, else the estimator's)")
    check.add_argument("--samples", type=int, default=None,
                       help="samples of the check grid over one period (default: one every 5 ms)")
    check.add_argument("--out", default="excitation_check",
                       help="output directory of the plot, <trajectory name>.png")
    _add_limit_options(check, margin_default=0.0, clearance_default=0.0)

    sweep = sub.add_parser("sweep", help="constant-velocity friction sweeps (Luo et al. 2024)",
                           formatter_class=HelpFormatter)
    sweep.add_argument("--robot", required=True, help="a shipped robot's name, a robot folder or a config YAML")
    sweep.add_argument("--joints", nargs="+", required=True,
                       help="joints to sweep, space- or comma-separated, or all")
    sweep.add_argument("--simultaneous", action="store_true",
                       help="sweep the joints together on one schedule (default: one at a time)")
    sweep.add_argument("--velocities", required=True,
                       help="joint speeds [rad/s], comma-separated, or MIN:MAX:N for N geometrically spaced speeds")
    sweep.add_argument("--hold", default=None, help="hold pose [rad], comma-separated, or a trajectory whose start "
                                                    "pose to hold (default: mid-range)")
    sweep.add_argument("--travel", type=float, default=0.6, help="constant-speed travel per pass [rad]")
    sweep.add_argument("--pass-time", type=float, default=8.0, help="longest constant-speed pass [s]")
    sweep.add_argument("--blend-acceleration", type=float, default=1.0, help="acceleration of the blends [rad/s²]")
    sweep.add_argument("--out", default="friction_sweep", help="output directory")
    _add_limit_options(sweep, margin_default=0.1, clearance_default=DESIGN_CLEARANCE_MARGIN_M)
    return add_exit_codes(p)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        problems = robot_source_problems(args.robot, getattr(args, "urdf", None))
        if problems:
            raise ValueError("; ".join(problems))
        return {"design": _design, "check": _check, "sweep": _sweep}[args.command](args)
    except (ModelError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
