"""Start-up time of every command line: `--help`, and the error for a missing input file.

For each command, the wall time of a fresh `python -m <package> ...` process (interpreter start, imports, argument
parsing, the first input check), best of --repeats. Also checks that the missing-file run exits non-zero with one
line on stderr. Goal (issue 10): under 1 s for every command, which needs the heavy libraries (pinocchio, scipy,
cvxpy, matplotlib, mujoco, rosbags) imported only after the arguments and inputs are checked.

Run: `source env.sh && python benchmarks/startup.py [--repeats 3]` (about 30 s). Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

MISSING = "/nonexistent/robot_id"
COMMANDS = {
    "robot_id_bringup base-parameters": ["--urdf", f"{MISSING}/arm.urdf"],
    "robot_id_excitation": ["check", f"{MISSING}/excitation.yaml"],
    "robot_id_recorder": ["info", f"{MISSING}/bag"],
    "robot_id_estimator": ["identify", "--robot", "iiwa14", "--data", f"{MISSING}/run.csv", "--out", "{out}"],
    "robot_id_bringup": ["identify", "--mode", "replay", "--bag", f"{MISSING}/bag"],
}
"""Each command (`python -m` of its first word, then the rest) with arguments whose only fault is a missing input
file ({out}: a writable directory)."""


def best_run(argv: list[str], repeats: int) -> tuple[float, subprocess.CompletedProcess]:
    """The shortest wall time of `repeats` fresh runs of `argv`, and the last run's result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
    return min(times), result


def measure(package: str, missing_args: list[str], repeats: int, out: str) -> dict:
    """`--help` and missing-file times of `python -m package` (with its sub-command, if named), with the
    missing-file run's exit code and line."""
    python = [sys.executable, "-m", *package.split()]
    help_s, help_run = best_run([*python, "--help"], repeats)
    missing_s, missing_run = best_run([*python, *(a.replace("{out}", out) for a in missing_args)], repeats)
    lines = missing_run.stderr.strip().splitlines()
    return {"help_s": round(help_s, 3), "help_exit": help_run.returncode, "missing_file_s": round(missing_s, 3),
            "missing_file_exit": missing_run.returncode, "missing_file_error": lines[-1] if lines else "",
            "one_line": len(lines) == 1}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement, the best counts (default 3)")
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as out:
        for package, missing_args in COMMANDS.items():
            f = figures[package] = measure(package, missing_args, args.repeats, out)
            print(f"{package:<34} --help {f['help_s']:.2f} s (exit {f['help_exit']}), missing file "
                  f"{f['missing_file_s']:.2f} s (exit {f['missing_file_exit']}): {f['missing_file_error']}",
                  flush=True)
    slowest = max(max(f["help_s"], f["missing_file_s"]) for f in figures.values())
    sound = all(f["help_exit"] == 0 and f["missing_file_exit"] != 0 and f["one_line"] for f in figures.values())
    print(f"slowest {slowest:.2f} s; goal < 1 s: {'met' if slowest < 1.0 else 'NOT met'}")
    print(json.dumps({"benchmark": "startup", "slowest_s": slowest, "under_1_s": slowest < 1.0,
                      "clean_errors": sound, "repeats": args.repeats, **figures}))
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
