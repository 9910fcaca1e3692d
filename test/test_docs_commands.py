"""Every shell command in a fenced block of README.md and docs/*.md is real: robot_id's command lines parse with
their own argument parsers (without running), `make` targets exist, `ros2 launch robot_id_bringup` names a launch
file and arguments it declares, a node's `-p name:=value` names a parameter its package declares, a benchmark or
script exists and takes the flags given, and any other program is on PATH. A command that cannot be checked here
(a robot stack, a ROS 2 installation, Docker) carries a mark on its line: `# needs a robot`, `# needs ROS 2` or
`# needs Docker`. A renamed flag, sub-command, target or launch argument fails the test with the page and line."""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import io
import pathlib
import re
import shlex
import shutil
from collections.abc import Callable

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKS = ("needs a robot", "needs ROS 2", "needs Docker")
SHELL_BLOCKS = {"bash", "sh", "shell", "console"}
COMMAND_START = re.compile(r"^(python -m robot_id|python (benchmarks|scripts)/|robot_id |make |ros2 |\S+_node )")
"""In a fenced block without a language (mostly output), the lines that are commands all the same."""
SHELL_BUILTINS = {"export", "source", "cd", "set", "unset", "echo"}

CLI_PARSERS = {
    "robot_id_excitation": ("robot_id_excitation.__main__", "parser"),
    "robot_id_estimator": ("robot_id_estimator.__main__", "parser"),
    "robot_id_recorder": ("robot_id_recorder.__main__", "parser"),
    "robot_id_bringup.demo": ("robot_id_bringup.demo", "parser"),
    "robot_id_bringup.offline_demo": ("robot_id_bringup.offline_demo", "parser"),
}
"""Command (console script or `python -m` module) -> the module and function that build its argparse parser."""
NODE_PACKAGES = {"excitation_node": "robot_id_excitation", "estimator_node": "robot_id_estimator",
                 "recorder_node": "robot_id_recorder", "sim_node": "robot_id_sim"}
LAUNCH_FILES = ROOT / "src" / "robot_id_bringup" / "launch"


def fenced_commands(page: pathlib.Path) -> list[tuple[int, str]]:
    """(line number, command) of every shell command in the page's fenced blocks, continuation lines joined."""
    commands, language, pending, start = [], None, "", 0
    for number, line in enumerate(page.read_text().splitlines(), 1):
        fence = re.match(r"^\s*```(\w*)", line)
        if fence:
            language = None if language is not None else fence.group(1) or ""
            continue
        if language is None or language not in SHELL_BLOCKS | {""}:
            continue
        text = line.strip()
        if not pending:
            start = number
            if not text or text.startswith("#") or (language == "" and not COMMAND_START.match(text)):
                continue
        if text.endswith("\\"):
            pending += text[:-1].rstrip() + " "
            continue
        commands.append((start, pending + text))
        pending = ""
    return commands


def simple_commands(line: str) -> list[list[str]]:
    """The line's commands (split at &&, ||, ; and |), each as words, leading VAR=value assignments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="&|;")
    lexer.whitespace_split, lexer.commenters = True, "#"
    commands, words = [], []
    for token in lexer:
        if token in {"&&", "||", ";", "|", "&"}:
            commands.append(words)
            words = []
        else:
            words.append(token)
    commands.append(words)
    for words in commands:
        while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
            words.pop(0)
    return [words for words in commands if words]


def problem(words: list[str]) -> str | None:
    """Why the command is not real, or None when it is."""
    name, args = pathlib.PurePath(words[0]).name, words[1:]
    if name in {"python", "python3"} and args[:1] == ["-m"]:
        name, args = args[1], args[2:]
        if name == "pytest":
            return None
        if name == "robot_id_bringup":
            name = "robot_id"
    elif name in {"python", "python3"}:
        return script_problem(args)
    if name == "ros2":
        return ros2_problem(args)
    if name == "docker":
        return "a docker command: mark it (# needs Docker)"
    if name == "robot_id":
        if args[:1] == ["base-parameters"]:
            table = functools.partial(_parser, "robot_id_bringup.base_parameter_table", "parser")
            return parse_problem(table, args[1:])
        return (f"robot_id has no command {args[:1]}" if args[:1] != ["identify"] else
                parse_problem(functools.partial(_parser, "robot_id_bringup.runner", "identify_parser"), args[1:]))
    if name in CLI_PARSERS:
        return parse_problem(functools.partial(_parser, *CLI_PARSERS[name]), args)
    if name in NODE_PACKAGES:
        return node_problem(NODE_PACKAGES[name], args)
    if name == "make":
        return None if set(args) <= make_targets() else f"no make target {sorted(set(args) - make_targets())}"
    if words[0].startswith((".", "/")) or "/" in words[0]:
        return None if (ROOT / words[0]).exists() else f"no such file {words[0]}"
    return None if name in SHELL_BUILTINS or shutil.which(name) else f"{name} is not on PATH: mark it"


@functools.cache
def _parser(module: str, function: str):
    return getattr(importlib.import_module(module), function)()


def parse_problem(parser: Callable, args: list[str]) -> str | None:
    """None when the command's own parser accepts the arguments (nothing is run), else its error line."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            parser().parse_args(args)
    except SystemExit as stop:
        if stop.code:
            return stderr.getvalue().strip().splitlines()[-1]
    return None


def ros2_problem(args: list[str]) -> str | None:
    """`ros2 launch robot_id_bringup FILE name:=value` (the file and its declared arguments) and `ros2 run` of our
    packages are checked; any other ros2 command needs a ROS 2 installation and must be marked."""
    if args[:2] == ["launch", "robot_id_bringup"]:
        launch = LAUNCH_FILES / args[2]
        if not launch.is_file():
            return f"no launch file {args[2]} in robot_id_bringup"
        unknown = [a for a in args[3:] if a.split(":=")[0] not in launch_arguments(launch)]
        return f"launch arguments not declared by {args[2]}: {unknown}" if unknown else None
    if args[:1] == ["run"] and args[1:2] and args[1].startswith("robot_id_"):
        return problem(args[2:])
    return "a ros2 command: mark it (# needs ROS 2, or # needs a robot)"


@functools.cache
def launch_arguments(launch: pathlib.Path) -> frozenset[str]:
    """The keys of the launch file's ARGUMENTS table (read, not imported: launch is not installed here)."""
    for node in ast.parse(launch.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ARGUMENTS" for t in node.targets):
            return frozenset(key.value for key in node.value.keys)
    raise AssertionError(f"{launch.name} has no ARGUMENTS table")


def node_problem(package: str, args: list[str]) -> str | None:
    """A node's `--ros-args -p name:=value`: each name declared as a parameter somewhere in its package."""
    names = [args[i + 1].split(":=")[0] for i, a in enumerate(args[:-1]) if a == "-p"]
    missing = [n for n in names if f'"{n}"' not in package_source(package)]
    return f"{package} declares no parameter {missing}" if missing else None


@functools.cache
def package_source(package: str) -> str:
    return "\n".join(p.read_text() for p in (ROOT / "src" / package / package).rglob("*.py"))


def script_problem(args: list[str]) -> str | None:
    """`python benchmarks/x.py --flag ...`: the script exists and spells every flag given."""
    script = ROOT / args[0]
    if not script.is_file():
        return f"no such script {args[0]}"
    missing = [a.split("=")[0] for a in args[1:] if a.startswith("--") and f'"{a.split("=")[0]}"' not in
               script.read_text()]
    return f"{args[0]} takes no {missing}" if missing else None


@functools.cache
def make_targets() -> frozenset[str]:
    return frozenset(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))


def test_the_reading_of_a_page(tmp_path):
    """Commands are read from shell blocks and, in blocks without a language, only lines that are commands;
    continuations are joined, comments and output are not commands."""
    page = tmp_path / "page.md"
    page.write_text("```bash\n# a comment\nmake demo   # set up\npython -m robot_id_estimator identify \\\n"
                    "    --robot iiwa14\n```\n```\nrobot_id: identified: 48 essential\nmake test\n```\n"
                    "```yaml\nmake: not a command\n```\n")
    assert fenced_commands(page) == [(3, "make demo   # set up"),
                                     (4, "python -m robot_id_estimator identify --robot iiwa14"), (9, "make test")]
    assert simple_commands("ROS_DOMAIN_ID=3 ros2 param set /x confirm true && cd / # ok") == [
        ["ros2", "param", "set", "/x", "confirm", "true"], ["cd", "/"]]


def test_a_renamed_flag_target_or_launch_argument_is_found():
    """The check fails what is not real, each in the way a user would meet it."""
    assert problem(["python", "-m", "robot_id_estimator", "identify", "--robot", "iiwa14", "--dta", "x.csv",
                    "--out", "id/"]) is not None
    assert problem(["robot_id", "identify", "--mode", "simulation"]) is not None
    assert problem(["robot_id", "identifi"]) is not None
    assert problem(["make", "demo-online"]) is not None
    assert problem(["ros2", "launch", "robot_id_bringup", "identify.launch.py", "robots:=iiwa14"]) is not None
    assert problem(["sim_node", "--ros-args", "-p", "truth_files:=t.yaml"]) is not None
    assert problem(["ros2", "launch", "lbr_bringup", "hardware.launch.py"]) is not None
    assert problem(["python", "-m", "robot_id_excitation", "check", "iiwa14", "--out", "plots/"]) is None
    assert problem(["ros2", "launch", "robot_id_bringup", "identify.launch.py", "robot:=iiwa14"]) is None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_of_the_page_is_real_or_marked(page):
    wrong = []
    for number, line in fenced_commands(page):
        if any(mark in line for mark in MARKS):
            continue
        for words in simple_commands(line):
            why = problem(words)
            if why is not None:
                wrong.append(f"{page.name}:{number}: {line}\n    {why}")
    assert not wrong, "\n".join(wrong)
