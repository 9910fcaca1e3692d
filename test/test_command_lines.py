"""Every command line of the suite: each option has a default or is required, names its unit, is spelled the same
in every tool; an unwritable output is refused before any work; `--help` and a missing input file answer without
importing the heavy libraries (the property that makes them answer in well under a second)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from robot_id_bringup import base_parameter_table, demo, offline_demo
from robot_id_bringup import runner as bringup_runner
from robot_id_bringup.__main__ import main as bringup_main
from robot_id_estimator import __main__ as estimator_cli
from robot_id_excitation import __main__ as excitation_cli
from robot_id_recorder import __main__ as recorder_cli

PARSERS = {
    "robot_id_excitation": excitation_cli.parser,
    "robot_id_recorder": recorder_cli.parser,
    "robot_id_estimator": estimator_cli.parser,
    "robot_id identify": bringup_runner.identify_parser,
    "robot_id base-parameters": base_parameter_table.parser,
    "robot_id_bringup.demo": demo.parser,
    "robot_id_bringup.offline_demo": offline_demo.parser,
}
UNITS = {
    "--base-frequency": "Hz", "--time-limit": "s", "--noise-std": "Nm", "--acceleration-limit": "rad/s²",
    "--position-margin": "rad", "--flange-speed": "m/s", "--floor-z": "m", "--velocities": "rad/s", "--hold": "rad",
    "--travel": "rad", "--pass-time": "s", "--blend-acceleration": "rad/s²", "--period": "s", "--start": "s",
    "--end": "s", "--gravity": "m/s²", "--torque-filter-time-constant": "s", "--timeout": "s", "--clearance": "m",
    "--robot-timeout": "s", "--clearance-margin": "m", "--reach": "m", "--pose": "rad", "--mass-range": "kg",
}
"""Options that carry a physical quantity, and the unit their help must name in brackets."""
FRACTIONS = {"--velocity-scale", "--acceleration-scale", "--torque-scale"}
"""Dimensionless options: their help says what they are a fraction of."""
HEAVY = ("pinocchio", "scipy", "cvxpy", "matplotlib", "mujoco", "rosbags")


def _options(name: str, parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    """(command, parser, action) of every argument of `parser` and its subcommands, help excluded."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                found += _options(f"{name} {command}", sub)
        elif not isinstance(action, argparse._HelpAction):
            found.append((name, parser, action))
    return found


ALL = [option for name, make in PARSERS.items() for option in _options(name, make())]


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The option's help as --help prints it (default appended, %(default)s expanded), on one line."""
    return " ".join(parser._get_formatter()._expand_help(action).split())


def _required_group(parser: argparse.ArgumentParser, action: argparse.Action) -> bool:
    return any(action in group._group_actions and group.required for group in parser._mutually_exclusive_groups)


def test_every_option_has_a_default_or_is_required():
    loose = [f"{name} {action.option_strings}" for name, parser, action in ALL
             if action.option_strings and not action.required and not _required_group(parser, action)
             and not isinstance(action, argparse._StoreTrueAction)
             and not any(word in _help(parser, action) for word in ("default", "required with"))]
    assert not loose, f"options whose --help states neither a default nor when they are required: {loose}"


def test_every_quantity_names_its_unit():
    seen = set()
    for name, parser, action in ALL:
        for option in action.option_strings:
            text = _help(parser, action)
            if option in UNITS:
                seen.add(option)
                assert f"[{UNITS[option]}]" in text, f"{name} {option}: help names no [{UNITS[option]}]: {text}"
            elif option in FRACTIONS:
                assert text.startswith("fraction of"), f"{name} {option}: {text}"
            else:
                assert action.type is not float, f"{name} {option} takes a number: add its unit to UNITS"
    assert seen == set(UNITS), f"UNITS lists options no command has: {set(UNITS) - seen}"


def test_the_same_thing_has_the_same_option_name_everywhere():
    spellings = {option for _, _, action in ALL for option in action.option_strings}
    assert not spellings & {"--output-dir", "--output", "--outdir", "--robot-config"}
    for name, parser, action in ALL:
        text = _help(parser, action)
        if "--config" in action.option_strings:
            assert text.startswith("estimator config"), f"{name}: --config must be the estimator config: {text}"
        if text.startswith("robot config") or "installed robot" in text or "installed one" in text:
            assert action.option_strings == ["--robot"], f"{name} {action.option_strings} names a robot: use --robot"
        if "output directory" in text or "results directory" in text:
            assert action.option_strings == ["--out"], f"{name} {action.option_strings}: use --out"


OUT_REFUSED = "--out: output directory {blocked}/out is not writable (Not a directory)"


def _not_called(what: str):
    def refuse(*_args, **_kwargs):
        raise AssertionError(f"{what} ran before the output was checked")

    return refuse


@pytest.mark.parametrize(("command", "argv", "target", "expected"), [
    ("excitation design", ["design", "--robot", "iiwa14", "--out", "{blocked}/out"],
     "robot_id_excitation.__main__.design_excitation", OUT_REFUSED),
    ("excitation check", ["check", "iiwa14", "--out", "{blocked}/out"],
     "robot_id_excitation.__main__.check_trajectory", OUT_REFUSED),
    ("excitation sweep", ["sweep", "--robot", "iiwa14", "--joints", "all", "--velocities", "0.1", "--out",
                          "{blocked}/out"],
     "robot_id_excitation.__main__.check_trajectory", OUT_REFUSED),
    ("estimator identify", ["identify", "--robot", "iiwa14", "--data", "{data}", "--out", "{blocked}/out"],
     "robot_id_estimator.pipeline.identify", OUT_REFUSED),
    ("robot_id identify", ["identify", "--mode", "replay", "--bag", "{bag}", "--out", "{blocked}/out"],
     "robot_id_bringup.runner.run_graph", OUT_REFUSED),
    ("offline demo", ["--out", "{blocked}/out"], "robot_id_bringup.offline_demo.run",
     OUT_REFUSED),
])
def test_an_unwritable_output_is_refused_in_one_line_before_any_work(tmp_path, monkeypatch, capsys, command, argv,
                                                                      target, expected):
    blocked = tmp_path / "a_file"  # a file where a directory should be: refused also for root, unlike chmod
    blocked.write_text("")
    (tmp_path / "data").write_text("t\n")
    (tmp_path / "bag").mkdir()  # a closed bag (the runner checks that first)
    (tmp_path / "bag" / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    monkeypatch.setattr(target, _not_called(target))
    main = {"excitation": excitation_cli.main, "estimator": estimator_cli.main, "robot_id": bringup_main,
            "offline": offline_demo.main}[command.split()[0]]
    fill = {"{blocked}": str(blocked), "{data}": str(tmp_path / "data"), "{bag}": str(tmp_path / "bag")}
    for key, value in fill.items():
        argv = [a.replace(key, value) for a in argv]
        expected = expected.replace(key, value)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0] == f"error: {expected}"


NO_ROBOT = ("--robot: no robot config 'nosuch' (shipped: fr3, fr3_hand, iiwa14, iiwa7, panda, panda_hand; "
            "or a robot folder or a YAML path)")
NO_URDF = "--urdf {tmp}/missing.urdf: no such file or directory"


UNKNOWN_SOURCES = [
    ("robot_id", ["base-parameters", "--robot", "nosuch"], NO_ROBOT),
    ("robot_id", ["base-parameters", "--urdf", "{tmp}/missing.urdf"], NO_URDF),
    ("excitation", ["design", "--robot", "nosuch", "--out", "{tmp}/out"], NO_ROBOT),
    ("excitation", ["design", "--urdf", "{tmp}/missing.urdf", "--out", "{tmp}/out"], NO_URDF),
    ("excitation", ["check", "iiwa14", "--robot", "nosuch", "--out", "{tmp}/out"], NO_ROBOT),
    ("excitation", ["check", "iiwa14", "--urdf", "{tmp}/missing.urdf", "--out", "{tmp}/out"], NO_URDF),
    ("excitation", ["sweep", "--robot", "nosuch", "--joints", "all", "--velocities", "0.1", "--out", "{tmp}/out"],
     NO_ROBOT),
    ("estimator", ["identify", "--robot", "nosuch", "--data", "{tmp}/data", "--out", "{tmp}/out"], NO_ROBOT),
    ("estimator", ["identify", "--urdf", "{tmp}/missing.urdf", "--data", "{tmp}/data", "--out", "{tmp}/out"],
     NO_URDF),
    ("robot_id", ["identify", "--robot", "nosuch", "--out", "{tmp}/out"], NO_ROBOT),
    ("robot_id", ["identify", "--robot", "{tmp}/robot.yaml", "--out", "{tmp}/out"],
     "--robot: no robot config file '{tmp}/robot.yaml'"),
    ("demo", ["--robot", "nosuch", "--out", "{tmp}/out"], NO_ROBOT),
    ("offline", ["--robot", "nosuch", "--out", "{tmp}/out"], NO_ROBOT),
]


@pytest.mark.parametrize(("command", "argv", "expected"), UNKNOWN_SOURCES,
                         ids=[f"{c} {' '.join(a[:3])}".replace("{tmp}/", "") for c, a, _ in UNKNOWN_SOURCES])
def test_an_unknown_robot_or_urdf_is_one_line_naming_the_option(tmp_path, capsys, command, argv, expected):
    (tmp_path / "data").write_text("t\n")
    main = {"excitation": excitation_cli.main, "estimator": estimator_cli.main,
            "robot_id": bringup_main, "demo": demo.main, "offline": offline_demo.main}[command]
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"error: {expected.replace('{tmp}', str(tmp_path))}\n"
    assert not (tmp_path / "out").exists()


def test_the_demo_refuses_an_unknown_friction_law_before_anything_starts(tmp_path, capsys):
    assert demo.main(["--friction-laws", "stribeck,coulomb", "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("error: --friction-laws takes laws from stribeck, sigmoid, tanh, presliding, not "
                            "'stribeck,coulomb'\n")
    assert captured.out == "" and not (tmp_path / "out").exists()


STARTS = [
    ("robot_id_excitation", ["--help"], 0),
    ("robot_id_excitation", ["design", "--help"], 0),
    ("robot_id_excitation", ["check", "/nonexistent/excitation.yaml"], 2),
    ("robot_id_excitation", ["design", "--urdf", "/nonexistent/arm.urdf"], 2),
    ("robot_id_recorder", ["--help"], 0),
    ("robot_id_recorder", ["info", "/nonexistent/bag"], 2),
    ("robot_id_estimator", ["--help"], 0),
    ("robot_id_estimator", ["identify", "--help"], 0),
    ("robot_id_estimator", ["identify", "--robot", "iiwa14", "--data", "/nonexistent/run.csv", "--out", "{out}"], 2),
    ("robot_id_bringup", ["--help"], 0),
    ("robot_id_bringup", ["identify", "--help"], 0),
    ("robot_id_bringup", ["identify", "--mode", "replay", "--bag", "/nonexistent/bag"], 2),
    ("robot_id_bringup", ["base-parameters", "--help"], 0),
    ("robot_id_bringup", ["base-parameters", "--urdf", "/nonexistent/arm.urdf"], 2),
    ("robot_id_bringup", ["base-parameters", "--robot", "/nonexistent/robot.yaml"], 2),
]
PROBE = f"""
import json, runpy, sys
package = sys.argv[1]
sys.argv = [package, *sys.argv[2:]]
code = None
try:
    runpy.run_module(package, run_name="__main__", alter_sys=True)
except SystemExit as stop:
    code = stop.code
print(json.dumps({{"exit": code, "heavy": sorted(m for m in {HEAVY!r} if m in sys.modules)}}))
"""


@pytest.mark.parametrize(("package", "argv", "code"), STARTS, ids=[f"{p} {' '.join(a[:2])}" for p, a, _ in STARTS])
def test_help_and_a_missing_file_answer_without_the_heavy_libraries(tmp_path, package, argv, code):
    argv = [a.replace("{out}", str(tmp_path / "out")) for a in argv]
    result = subprocess.run([sys.executable, "-c", PROBE, package, *argv], capture_output=True, text=True,
                            timeout=60, check=False)
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["exit"] == code, result.stderr
    assert outcome["heavy"] == [], f"{package} {' '.join(argv)} imported {outcome['heavy']} before answering"
    if code:
        assert len(result.stderr.strip().splitlines()) == 1 and "/nonexistent/" in result.stderr, result.stderr
