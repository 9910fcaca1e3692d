"""Every command's --help lists the exit codes it can return, each with what it means (issue 43: finding them took a
new user four minutes). The codes expected here are written out from what each command's main() returns, apart
from the table (robot_id_model.exit_codes) the help is printed from."""

from __future__ import annotations

import argparse
import contextlib
import io
import re

from robot_id_bringup import base_parameter_table, demo, offline_demo
from robot_id_bringup import runner as bringup_runner
from robot_id_bringup.__main__ import main as bringup_main
from robot_id_estimator import __main__ as estimator_cli
from robot_id_excitation import __main__ as excitation_cli
from robot_id_recorder import __main__ as recorder_cli

RUN = {0, 1, 2, 3, 130, 143}  # run_graph: 1 a run that failed, 3 a result not accepted, 128 + signal
EXPECTED = {
    "python -m robot_id_estimator identify": {0, 2, 3, 4, 5, 130},
    "python -m robot_id_estimator validate": {0, 2, 130},
    "python -m robot_id_estimator payload": {0, 2, 3, 5, 130},
    "python -m robot_id_excitation design": {0, 2, 3, 4, 130},
    "python -m robot_id_excitation check": {0, 2, 3},
    "python -m robot_id_excitation sweep": {0, 2, 3},
    "python -m robot_id_recorder info": {0, 2, 3},
    "python -m robot_id_recorder repair": {0, 2},
    "robot_id base-parameters": {0, 2},
    "robot_id identify": RUN,
    "python -m robot_id_bringup.demo": RUN,
    "python -m robot_id_bringup.offline_demo": {0, 1, 2},
}
PARSERS = (base_parameter_table.parser, excitation_cli.parser, recorder_cli.parser, estimator_cli.parser,
           bringup_runner.identify_parser, demo.parser, offline_demo.parser)


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command a user runs: the sub-commands' where there are any."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {parser.prog: parser}
    return {prog: p for sub in subs[0].choices.values() for prog, p in _commands(sub).items()}


def listed_codes(help_text: str, heading: str = "exit codes:") -> dict[int, str]:
    """Code -> meaning of the block under `heading` in a --help text (a code at the line's start, its meaning
    running on over the indented lines that follow)."""
    block = help_text.split(heading, 1)[1].split("\nexit codes", 1)[0]
    return {int(code): " ".join(meaning.split()) for code, meaning in
            re.findall(r"^  (\d+) +(.+?)(?=^  \d|\Z)", block, flags=re.MULTILINE | re.DOTALL)}


def test_every_command_help_lists_the_codes_it_returns_each_with_a_meaning():
    found = {prog: listed_codes(p.format_help()) for make in PARSERS for prog, p in _commands(make()).items()}
    assert set(found) == set(EXPECTED)
    for prog, codes in found.items():
        assert set(codes) == EXPECTED[prog], prog
        assert all(len(meaning) > 3 for meaning in codes.values()), prog


def test_a_command_with_sub_commands_lists_each_one_s_codes_in_its_own_help():
    text = estimator_cli.parser().format_help()
    assert set(listed_codes(text, "exit codes of identify:")) == EXPECTED["python -m robot_id_estimator identify"]
    assert set(listed_codes(text, "exit codes of payload:")) == EXPECTED["python -m robot_id_estimator payload"]
    assert "4 a mistake in the data: the model is rejected: the diagnosis named" in " ".join(
        f"{code} {meaning}" for code, meaning in listed_codes(text, "exit codes of identify:").items())


def test_robot_id_help_lists_the_runner_s_codes():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert bringup_main(["--help"]) == 0
    assert set(listed_codes(out.getvalue(), "exit codes of identify:")) == RUN
