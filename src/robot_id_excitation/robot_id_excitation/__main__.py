"""Command line: design, check and sweep.

    python -m robot_id_excitation design --robot iiwa14 --harmonics 5 --base-frequency 0.05 --out DIR
    python -m robot_id_excitation check DIR/excitation.yaml [--robot iiwa14]
    python -m robot_id_excitation sweep --robot panda --joints fer_joint1 --velocities 0.02,0.05,0.1,0.2 --out DIR
    python -m robot_id_excitation sweep --robot iiwa14 --joints all --simultaneous --velocities 0.005:1.17:12 --out DIR

`--robot` is a robot config YAML or the name of an installed one. Exit status: 0 feasible, 3 infeasible,
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

from robot_id_excitation.check import check_trajectory, trajectory_criteria
from robot_id_excitation.constraints import DesignLimits, design_limits
from robot_id_excitation.criteria import CRITERIA
from robot_id_excitation.design import DesignError, design_excitation
from robot_id_excitation.design_problem import DesignOptions
from robot_id_excitation.fourier import KINDS, FourierTrajectory
from robot_id_excitation.plot import plot_trajectory
from robot_id_excitation.sweeps import FrictionSweep
from robot_id_excitation.trajectory_file import load_trajectory, save_trajectory
from robot_id_model.robot_config import RobotConfig, load_robot_config
from robot_id_model.robot_model import ModelError

INFEASIBLE = 3
BAD_INPUT = 2


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(",") if v.strip())


def _add_limit_options(parser: argparse.ArgumentParser, margin_default: float) -> None:
    group = parser.add_argument_group("limits (from the robot config, then tightened)")
    group.add_argument("--position-margin", type=float, default=margin_default, help="rad inside each position limit")
    group.add_argument("--velocity-scale", type=float, default=1.0, help="fraction of the velocity limits")
    group.add_argument("--acceleration-scale", type=float, default=1.0, help="fraction of the acceleration limits")
    group.add_argument("--torque-scale", type=float, default=1.0, help="fraction of the torque limits")
    group.add_argument("--flange-speed", type=float, default=None, help="m/s (default: the config's)")
    group.add_argument("--floor-z", type=float, default=None, help="m, lowest height of link origins and flange")


def _limits(config: RobotConfig, args: argparse.Namespace) -> DesignLimits:
    return design_limits(config, args.position_margin, args.velocity_scale, args.acceleration_scale,
                         args.torque_scale, args.flange_speed, args.floor_z)


def _design_block(values: dict, friction: tuple[str, ...], options: DesignOptions, limits: DesignLimits) -> dict:
    """What the file was designed for (informative; loading ignores it)."""
    return {
        "criteria": values | {"friction": list(friction),
                              "note": "cond of the plain stacked base regressor over one period"},
        "design": {"criterion": options.criterion, "samples": options.samples, "starts": options.starts,
                   "seed": options.seed, "limits": limits.as_dict()},
    }


def _design(args: argparse.Namespace) -> int:
    config = load_robot_config(args.robot)
    robot = config.load_model(tuple(t for t in args.friction.split(",") if t))
    limits = _limits(config, args)
    options = DesignOptions(
        kind=args.kind, harmonics=args.harmonics, base_frequency_hz=args.base_frequency, criterion=args.criterion,
        samples=args.samples, constraint_samples=2 * args.samples, starts=args.starts, seed=args.seed,
        noise_std_nm=_floats(args.noise_std) if args.noise_std else None, time_limit_s=args.time_limit,
        max_iterations=args.max_iterations,
    )
    try:
        result = design_excitation(robot, limits, options, config.robot)
    except DesignError as err:
        print(f"error: {err}", file=sys.stderr)
        return INFEASIBLE
    out = pathlib.Path(args.out)
    values = result.criteria.as_dict()
    path = save_trajectory(result.trajectory, out / "excitation.yaml",
                           _design_block(values, robot.friction, options, limits))
    hard = design_limits(config)
    title = (f"{config.robot}: {options.kind}, L = {options.harmonics}, f_f = {options.base_frequency_hz} Hz, "
             f"cond {values['condition_number']:.1f}, log det {values['log_det']:.1f}")
    png = plot_trajectory(result.trajectory, out / "excitation.png", limits, hard, title)
    summary = {"trajectory": str(path), "plot": str(png), "wall_time_s": result.wall_time_s, **values,
               "friction": list(robot.friction), "criterion": options.criterion}
    (out / "design.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{config.robot}: cond(Yb) = {values['condition_number']:.2f}, log det = {values['log_det']:.2f} "
          f"({values['n_base']} base parameters, friction {list(robot.friction)}), {result.wall_time_s:.0f} s")
    print("\n".join(result.report.lines()))
    print(f"wrote {path}, {png}, {out / 'design.json'}")
    return 0


def _check(args: argparse.Namespace) -> int:
    trajectory = load_trajectory(args.trajectory)
    config = load_robot_config(args.robot or trajectory.robot)
    robot = config.load_model(tuple(t for t in args.friction.split(",") if t))
    limits = _limits(config, args)
    report = check_trajectory(robot, limits, trajectory, args.samples)
    print(f"{args.trajectory}: {trajectory.kind}, {trajectory.n_joints} joints, period {trajectory.period_s:.4g} s")
    print("\n".join(report.lines()))
    if isinstance(trajectory, FourierTrajectory):
        values = trajectory_criteria(robot, trajectory)
        print(f"cond(Yb) = {values.condition_number:.2f}, log det = {values.log_det:.2f}, Hadamard = "
              f"{values.hadamard:.2f} ({values.n_base} base parameters, friction {list(robot.friction)})")
    png = args.plot or pathlib.Path(args.trajectory).with_suffix(".png")
    plot_trajectory(trajectory, png, limits, design_limits(config))
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
    config = load_robot_config(args.robot)
    robot = config.load_model(())
    limits = _limits(config, args)
    joints = config.joint_names if args.joints == "all" else tuple(args.joints.split(","))
    sweep = FrictionSweep(
        config.robot, config.joint_names, _sweep_hold(args.hold, config, limits), joints,
        _sweep_velocities(args.velocities), travel_rad=args.travel, pass_time_s=args.pass_time,
        blend_acceleration_rad_s2=args.blend_acceleration, simultaneous=args.simultaneous,
    )
    report = check_trajectory(robot, limits, sweep)
    order = "together" if sweep.simultaneous else "one at a time"
    print(f"friction sweep of {list(sweep.joints)} ({order}): {len(sweep.velocities_rad_s)} speeds "
          f"{min(sweep.velocities_rad_s):.3g}–{max(sweep.velocities_rad_s):.3g} rad/s, {sweep.period_s:.1f} s")
    print("\n".join(report.lines()))
    if not report.feasible:
        return INFEASIBLE
    out = pathlib.Path(args.out)
    path = save_trajectory(sweep, out / "friction_sweep.yaml")
    png = plot_trajectory(sweep, out / "friction_sweep.png", limits, design_limits(config),
                          samples=int(sweep.period_s * 50))
    print(f"wrote {path}, {png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_id_excitation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    design = sub.add_parser("design", help="design an optimal excitation trajectory")
    design.add_argument("--robot", required=True, help="robot config YAML or installed robot name")
    design.add_argument("--kind", choices=KINDS, default="modified_fourier")
    design.add_argument("--harmonics", type=int, default=5)
    design.add_argument("--base-frequency", type=float, default=0.05, help="Hz; the period is its inverse")
    design.add_argument("--criterion", choices=CRITERIA, default="cond")
    design.add_argument("--friction", default="FV,FC", help="friction columns of the regressor (FV,FC,FO,IA)")
    design.add_argument("--samples", type=int, default=200, help="regressor samples per period")
    design.add_argument("--starts", type=int, default=4)
    design.add_argument("--seed", type=int, default=0)
    design.add_argument("--max-iterations", type=int, default=600, help="SLSQP iterations per start")
    design.add_argument("--time-limit", type=float, default=None, help="s of wall time for all starts")
    design.add_argument("--noise-std", default=None, help="per-joint torque noise std (Nm) for D-opt/Hadamard")
    design.add_argument("--out", default="excitation", help="output directory")
    _add_limit_options(design, margin_default=0.1)

    check = sub.add_parser("check", help="check a trajectory file against the limits; criteria and a plot")
    check.add_argument("trajectory")
    check.add_argument("--robot", default=None, help="robot config (default: the trajectory's robot)")
    check.add_argument("--friction", default="FV,FC")
    check.add_argument("--samples", type=int, default=None, help="grid size (default: 200 Hz)")
    check.add_argument("--plot", default=None, help="PNG path (default: next to the trajectory)")
    _add_limit_options(check, margin_default=0.0)

    sweep = sub.add_parser("sweep", help="constant-velocity friction sweeps (Luo et al. 2024)")
    sweep.add_argument("--robot", required=True)
    sweep.add_argument("--joints", required=True, help="comma-separated joints, or all")
    sweep.add_argument("--simultaneous", action="store_true",
                       help="sweep the joints together on one schedule (default: one at a time)")
    sweep.add_argument("--velocities", required=True,
                       help="comma-separated speeds in rad/s, or MIN:MAX:N for N geometrically spaced speeds")
    sweep.add_argument("--hold", default=None,
                       help="comma-separated hold pose, or a trajectory whose start pose to hold (default: mid-range)")
    sweep.add_argument("--travel", type=float, default=0.6, help="rad of constant-speed travel per pass")
    sweep.add_argument("--pass-time", type=float, default=8.0, help="s, longest constant-speed pass")
    sweep.add_argument("--blend-acceleration", type=float, default=1.0, help="rad/s² of the blends")
    sweep.add_argument("--out", default="friction_sweep", help="output directory")
    _add_limit_options(sweep, margin_default=0.1)

    args = parser.parse_args(argv)
    try:
        return {"design": _design, "check": _check, "sweep": _sweep}[args.command](args)
    except (ModelError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
