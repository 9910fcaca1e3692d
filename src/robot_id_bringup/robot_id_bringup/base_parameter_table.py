"""`robot_id base-parameters --robot iiwa14` prints the base-parameter table of a robot (robot_id_model's
base_parameters, named and valued by the URDF)."""

from __future__ import annotations

import argparse
import sys

from robot_id_cli.command_line import HelpFormatter, joint_names, robot_option_help, robot_source_problems
from robot_id_model.base_parameters import base_parameters
from robot_id_model.exit_codes import add_exit_codes
from robot_id_model.parameters import nominal_parameters
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import DEFAULT_FRICTION, ModelError, RobotModel, load_robot_model


def _robot(args: argparse.Namespace) -> RobotModel:
    friction = tuple(t for t in args.friction.split(",") if t)
    if args.robot:
        if args.joints:
            raise ModelError("--joints goes with --urdf; a robot config states them")
        return load_robot_config(args.robot).load_model(friction)
    return load_robot_model(args.urdf, joint_names(args.joints), friction=friction)


def print_base_table(robot: RobotModel) -> None:
    """Base parameters of `robot`: name, value from its URDF, and definition in standard parameters."""
    base = base_parameters(robot)
    values = base.values(nominal_parameters(robot))
    print(f"{robot.model.name}: {robot.n_joints} joints, friction terms {list(robot.friction)}")
    print(f"{robot.n_params} standard parameters -> {base.n_base} base parameters")
    print(f"{'#':>3}  {'name':<7} {'URDF value':>12}  definition")
    for i, (name, value, expr) in enumerate(zip(base.names, values, base.expressions, strict=True), 1):
        print(f"{i:>3}  {name:<7} {value:>12.6g}  {expr}")


def parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    p = argparse.ArgumentParser(prog="robot_id base-parameters", description=__doc__, formatter_class=HelpFormatter)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--robot", help=robot_option_help())
    source.add_argument("--urdf", help="URDF file of the arm")
    p.add_argument("--joints", nargs="+", help="arm joints base to tip, space- or comma-separated, with --urdf "
                                               "(default: the URDF's arm, up to the first branching)")
    p.add_argument("--friction", default=",".join(DEFAULT_FRICTION),
                   help="comma-separated friction terms, of FV,FC,FO,IA")
    return add_exit_codes(p)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    problems = robot_source_problems(args.robot, args.urdf)
    if problems:
        print(f"error: {'; '.join(problems)}", file=sys.stderr)
        return 2
    try:
        print_base_table(_robot(args))
    except ModelError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
