"""The exit codes of every robot_id command, in one table: each command's `--help` lists its own from it
(`add_exit_codes`), so the help, the README and the code cannot drift apart command by command."""

from __future__ import annotations

import argparse
import textwrap

BAD_INPUT = "bad input or a failure (one line on stderr)"
INTERRUPTED = "interrupted (Ctrl-C)"
IDENTIFY_VERDICTS = {0: "done, the written model holds", 3: "results written, but a check on held-out data failed",
                     4: "a mistake in the data: the model is rejected",
                     5: "the written model files do not reproduce the identified model (a bug in robot_id)"}
"""What an identification's exit code says, as the report's verdict heads it and `--help` begins it."""
RUN_FAILED = ("the run failed, the reason on the last line: a node exited, the estimator refused the bag, the "
              "excitation stopped the arm, the motion was not confirmed, --timeout ran out, no joint state within "
              "--robot-timeout (hardware), or a recording came out incomplete")
RUN_NOT_ACCEPTED = ("identified, but a parameter set failed its check on held-out data or the data hold a mistake: "
                    "the last line names the model file written (identified.urdf or identified.rejected.urdf) or "
                    "that none was")
RUN_EXIT_CODES = {0: "identified and every check passed (or, recording only, the recording is whole); the last line "
                     "names identified.urdf and the set it holds",
                  1: RUN_FAILED, 2: BAD_INPUT, 3: RUN_NOT_ACCEPTED, 130: INTERRUPTED,
                  143: "stopped by SIGTERM (128 + the signal)"}

EXIT_CODES: dict[str, dict[int, str]] = {
    "python -m robot_id_estimator identify": {
        0: IDENTIFY_VERDICTS[0],
        2: BAD_INPUT,
        3: f"{IDENTIFY_VERDICTS[3]} (see the warnings)",
        4: f"{IDENTIFY_VERDICTS[4]}: the diagnosis named a torque sign, an encoder, a zero, a dead sensor or too "
           "little data; identification.json and the report written, the model only as identified.rejected.urdf",
        5: f"{IDENTIFY_VERDICTS[5]}: kept as *.rejected.*",
        130: f"{INTERRUPTED}: no half-written files",
    },
    "python -m robot_id_estimator validate": {0: "done", 2: BAD_INPUT, 130: f"{INTERRUPTED}: no half-written files"},
    "python -m robot_id_estimator payload": {
        0: "done, the load's model passed its check on held-out data",
        2: BAD_INPUT,
        3: "the load's files written but its model failed its check on held-out data (payload.yaml: check)",
        5: "the written payload files do not reproduce the identified load (a bug in robot_id)",
        130: f"{INTERRUPTED}: no half-written files",
    },
    "python -m robot_id_excitation design": {
        0: "a feasible design written", 2: BAD_INPUT,
        3: "no feasible design found, or the best one's cond(Yb) is above 1e4: nothing written",
        4: "stopped at --time-limit: the best feasible design found so far written",
        130: f"{INTERRUPTED}: the best feasible design found so far written",
    },
    "python -m robot_id_excitation check": {0: "the trajectory keeps every limit", 2: BAD_INPUT,
                                            3: "the trajectory breaks a limit (the report names it)"},
    "python -m robot_id_excitation sweep": {0: "the sweep written and it keeps every limit", 2: BAD_INPUT,
                                            3: "the sweep breaks a limit (the report names it)"},
    "python -m robot_id_recorder info": {0: "done", 2: BAD_INPUT, 3: "some periods are flagged (information)"},
    "python -m robot_id_recorder repair": {0: "the bag repaired", 2: BAD_INPUT},
    "robot_id base-parameters": {0: "done", 2: BAD_INPUT},
    "robot_id identify": RUN_EXIT_CODES,
    "python -m robot_id_bringup.demo": RUN_EXIT_CODES,
    "python -m robot_id_bringup.offline_demo": {0: "done", 1: "a step failed (its output says which)",
                                                2: BAD_INPUT},
}
"""Per command as a user types it (its parser's prog), each code it can return and what it means."""


def exit_codes_text(command: str, heading: str = "exit codes:", width: int = 100) -> str:
    """The command's exit codes, one per code under `heading` (wrapped at `width`), as --help prints them."""
    lines = [textwrap.fill(meaning, width, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7)
             for code, meaning in EXIT_CODES[command].items()]
    return "\n".join([heading, *lines])


def add_exit_codes(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Put the exit codes of `parser`'s command, and of each of its sub-commands, in its --help (the epilog; the
    parser's formatter must keep line breaks, as robot_id_cli.command_line.HelpFormatter does); `parser` back."""
    commands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not commands:
        parser.epilog = exit_codes_text(parser.prog)
        return parser
    blocks = []
    for name, sub in commands[0].choices.items():
        add_exit_codes(sub)
        blocks.append(exit_codes_text(sub.prog, f"exit codes of {name}:"))
    parser.epilog = "\n".join(blocks)
    return parser
