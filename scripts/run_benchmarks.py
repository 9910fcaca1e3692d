"""`make bench`: run every benchmark in benchmarks/ (their output as it comes), then one table of what each
printed on its last line (its JSON figures, the top-level numbers and flags)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
HELPERS = {"bench_data.py"}  # shared code, not a benchmark


def _figures(data: dict, width: int = 100) -> str:
    """The top-level numbers, flags and short strings of a benchmark's JSON line, cut to `width` characters."""
    parts = [f"{k}={v}" for k, v in data.items()
             if isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) < 20)]
    text = ", ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


def main() -> int:
    rows = []
    for script in sorted((ROOT / "benchmarks").glob("*.py")):
        if script.name in HELPERS:
            continue
        print(f"== {script.relative_to(ROOT)}", flush=True)
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        last = ""
        for line in process.stdout:
            print(line, end="", flush=True)
            last = line.strip() or last
        code = process.wait()
        try:
            figures = _figures(json.loads(last)) if code == 0 else f"FAILED (exit code {code})"
        except json.JSONDecodeError:
            figures = "no JSON line at the end"
        rows.append((script.name, time.monotonic() - started, figures))
    print(f"\n{'benchmark':<24} {'wall':>7}  figures (the JSON line's top level)")
    for name, seconds, figures in rows:
        print(f"{name:<24} {seconds:>6.0f}s  {figures}")
    return 0 if all(not r[2].startswith(("FAILED", "no JSON")) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
