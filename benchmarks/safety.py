"""The safety properties (docs/safety.md) with more generated cases than CI runs.

Runs the property-based tests of the excitation node's state machine (`src/robot_id_excitation/test/
test_safety_*.py`) with ROBOT_ID_SAFETY_EXAMPLES examples per property (CI: 200), and reads from Hypothesis'
statistics how many cases of each property passed, failed or were invalid (filtered out by an assumption), and
how long each took. Every property must pass on every case.

Run: `source env.sh && python benchmarks/safety.py [--examples 5000]` (5000: about 10 min on this machine).
Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ROOT / "src" / "robot_id_excitation" / "test"
STATISTICS = re.compile(r"^(?P<test>\S+::\S+):\n(?P<body>(?:  .*\n|\n)+?)(?=\S|\Z)", re.MULTILINE)
GENERATED = re.compile(r"- (\d+) passing, (\d+) failing, and (\d+) invalid test cases")
PHASE_TIME = re.compile(r"- during generate phase \(([\d.]+) seconds\)")


def properties(output: str) -> dict[str, dict]:
    """Per property test: cases passing, failing and invalid in the generate phase, and its time [s]."""
    found = {}
    for match in STATISTICS.finditer(output):
        body = match["body"]
        generated, seconds = GENERATED.search(body), PHASE_TIME.search(body)
        if generated is None:
            continue
        passing, failing, invalid = map(int, generated.groups())
        name = match["test"].split("::")[-1]
        found[name] = {"passing": passing, "failing": failing, "invalid": invalid,
                       "seconds": float(seconds[1]) if seconds else None}
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000, help="examples per property (default: 5000)")
    args = parser.parse_args()
    env = dict(os.environ, ROBOT_ID_SAFETY_EXAMPLES=str(args.examples))
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout=0",
                             "--hypothesis-show-statistics", *sorted(str(p) for p in TESTS.glob("test_safety_*.py"))],
                            cwd=TESTS, env=env, capture_output=True, text=True, check=False)
    wall_s = time.monotonic() - started
    found = properties(result.stdout)
    print(f"safety properties, {args.examples} examples each ({wall_s:.0f} s)")
    print(f"   {'property':<88} {'passing':>8} {'failing':>8} {'invalid':>8} {'time [s]':>9}")
    for name, figures in found.items():
        seconds = f"{figures['seconds']:.0f}" if figures["seconds"] is not None else "-"
        print(f"   {name:<88} {figures['passing']:>8} {figures['failing']:>8} {figures['invalid']:>8} {seconds:>9}")
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr[-500:]
    print(f"   pytest: {summary}")
    print(json.dumps({"examples": args.examples, "wall_s": round(wall_s, 1), "passed": result.returncode == 0,
                      "properties": found}))
    return 0 if result.returncode == 0 and found else 1


if __name__ == "__main__":
    sys.exit(main())
