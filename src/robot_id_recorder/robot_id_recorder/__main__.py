"""Command line: what a bag holds, period by period, and the repair of a bag whose recorder was killed.

    python -m robot_id_recorder info BAG
    python -m robot_id_recorder repair BAG
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import TYPE_CHECKING

import numpy as np

from robot_id_cli.command_line import HelpFormatter, check_writable_directory
from robot_id_contract.period_index import MAX_MISSING_FRACTION
from robot_id_model.exit_codes import add_exit_codes

if TYPE_CHECKING:
    from robot_id_recorder.bag_tools import BagIndex


def _quality_lines(index: BagIndex) -> list[str]:
    """Rate, jitter and gaps of the whole recording, then one line per period."""
    t = np.sort(index.stamps_ns) * 1e-9
    dt = np.diff(t)
    nominal = 1.0 / index.rate_hz
    lines = [f"joint states on {index.topic}: {len(t)} messages over {t[-1] - t[0]:.3f} s, "
             f"rate {index.rate_hz:.1f} Hz, jitter (std of the sample time) {1e6 * float(np.std(dt)):.1f} µs, "
             f"{int(np.count_nonzero(dt > 1.5 * nominal))} gaps, {int(np.count_nonzero(dt == 0))} duplicate stamps",
             f"periods ({index.source} index; flagged: more than {100 * MAX_MISSING_FRACTION:g} % missing or a gap "
             f"longer than {index.max_gap_s:.4g} s):",
             f"{'period':>6} {'start [s]':>12} {'end [s]':>12} {'samples':>8} {'expected':>8} {'missing':>8} "
             f"{'gaps':>5} {'longest [s]':>11} {'jitter [ms]':>11} {'dup':>4}  flag"]
    for e in index.entries:
        jitter = "-" if e.jitter_s is None else f"{1e3 * e.jitter_s:.3f}"
        lines.append(f"{e.index:>6} {e.start_s:>12.3f} {e.end_s:>12.3f} {e.samples:>8} {e.expected:>8} "
                     f"{e.missing:>8} {e.gaps:>5} {e.longest_gap_s:>11.4f} {jitter:>11} {e.duplicate_stamps:>4}  "
                     + ("; ".join(e.reasons) if e.flagged else "ok"))
    if not index.entries:
        lines.append("  none: the bag holds no period markers")
    return lines


def parser() -> argparse.ArgumentParser:
    """The command line's parser: info and repair."""
    p = argparse.ArgumentParser(prog="python -m robot_id_recorder", description=__doc__.splitlines()[0],
                                formatter_class=HelpFormatter)
    commands = p.add_subparsers(dest="command", required=True)
    info = commands.add_parser("info", help="period table and data quality of a bag", formatter_class=HelpFormatter)
    info.add_argument("bag", type=pathlib.Path, help="bag directory")
    fix = commands.add_parser("repair", help="make a bag readable whose recorder was killed (keeps <bag>.damaged)",
                              formatter_class=HelpFormatter)
    fix.add_argument("bag", type=pathlib.Path, help="bag directory")
    return add_exit_codes(p)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.bag.is_dir():
        print(f"error: {args.bag}: no such bag directory", file=sys.stderr)
        return 2
    try:
        if args.command == "repair":  # the repaired bag is written beside the damaged one, which is renamed
            check_writable_directory(args.bag.resolve().parent, "repair: the bag's directory")
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    from robot_id_recorder.bag_tools import BagError, bag_index, repair  # rosbags: imported once the input is checked

    try:
        if args.command == "repair":
            print(repair(args.bag))
            return 0
        index = bag_index(args.bag)
    except BagError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("\n".join(_quality_lines(index)))
    return 3 if any(e.flagged for e in index.entries) else 0


if __name__ == "__main__":
    sys.exit(main())
