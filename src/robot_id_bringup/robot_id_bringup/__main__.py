"""robot_id: run the identification graph without the ROS 2 command line.

    robot_id identify --robot iiwa14 --mode sim            (also: python -m robot_id_bringup identify ...)
    robot_id identify --robot panda --mode hardware [--yes]
    robot_id identify --robot iiwa14 --mode replay --bag results/run/bag
    robot_id base-parameters --robot iiwa14                (the robot's base-parameter table)
"""

from __future__ import annotations

import os
import signal
import sys

from robot_id_bringup.interrupts import remember_and_raise
from robot_id_model.exit_codes import exit_codes_text

INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """The command line; Ctrl-C at any moment (the runner's own imports included) ends it with 130, no traceback."""
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, remember_and_raise)
    try:
        code = _command(argv)
        sys.stdout.flush()  # here, where a closed output is caught, not at the interpreter's exit
        return code
    except BrokenPipeError:  # the reader of stdout went away (`| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that the flush at exit does not raise
        print("error: the output was closed before its end (broken pipe)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not interrupt the exit
        print("robot_id: interrupted", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(INTERRUPTED)  # at once: after an interrupt during start-up the shutdown was seen to end by SIGINT


def _command(argv: list[str]) -> int:
    """The command argv[0] runs, its exit code."""
    if not argv or argv[0] in ("-h", "--help"):
        print(f"{__doc__.strip()}\n\n{exit_codes_text('robot_id identify', 'exit codes of identify:')}\n"
              f"{exit_codes_text('robot_id base-parameters', 'exit codes of base-parameters:')}")
        return 0 if argv else 2
    if argv[0] == "base-parameters":
        from robot_id_bringup.base_parameter_table import main as base_parameter_table

        return base_parameter_table(argv[1:])
    if argv[0] != "identify":
        print(f"error: unknown command '{argv[0]}'; the commands are: identify, base-parameters (see --help)",
              file=sys.stderr)
        return 2
    from robot_id_bringup.runner import identify  # imported here: a Ctrl-C during the import is caught

    return identify(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
