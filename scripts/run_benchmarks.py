"""`make bench`: run the benchmarks in benchmarks/ one at a time (their output as it comes), keep each one's last line
of JSON in benchmarks/results/<name>.json with the commit, the machine, the load and the time it was measured and
the command that printed it, then print one table of what each printed (the top-level numbers and flags).

    python scripts/run_benchmarks.py                      every benchmark
    python scripts/run_benchmarks.py sim recorder         these two
    python scripts/run_benchmarks.py payload -- --robot iiwa14   one, with its own options (kept in the record)

A benchmark that fails or prints no JSON leaves its stored record as it was. `make results` renders docs/results.md
and the README's table from the records (scripts/render_results.py; `make bench` runs it after the benchmarks)."""

from __future__ import annotations

import ast
import datetime
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
HELPERS = {"bench_data.py"}  # shared code, not a benchmark


def _figures(data: dict, width: int = 100) -> str:
    """The top-level numbers, flags and short strings of a benchmark's JSON line, cut to `width` characters."""
    parts = [f"{k}={v}" for k, v in data.items()
             if isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) < 20)]
    text = ", ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what platform says."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """What the figures were measured on."""
    return {"cores": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
            "platform": platform.platform()}


def code_state() -> dict:
    """The commit the working tree was at, and whether its src/ or benchmarks/ held changes not yet committed (the
    tree is shared: figures may include someone's work in progress)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    return {"commit": git("rev-parse", "--short", "HEAD"),
            "uncommitted_changes": bool(git("status", "--porcelain", "--", "src", "benchmarks"))}


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (other people's work on the machine is in the figures too)."""
    return [round(x, 2) for x in os.getloadavg()]


SCALAR = r"(?:-?[0-9][0-9.eE+-]*|true|false|null)"


def dumps(record: dict) -> str:
    """A record as indented JSON with each list of numbers or flags on one line (a joint's figures side by side)."""
    text = json.dumps(record, indent=1)
    one_line = rf"\[\s*({SCALAR}(?:,\s*{SCALAR})*)\s*\]"
    return re.sub(one_line, lambda m: f"[{', '.join(x.strip() for x in m[1].split(','))}]", text) + "\n"


def about(script: pathlib.Path) -> str:
    """What a benchmark measures: its docstring's first paragraph, on one line."""
    return (ast.get_docstring(ast.parse(script.read_text())) or "").split("\n\n")[0].replace("\n", " ")


def record(script: pathlib.Path, command: list[str], figures: dict, started: datetime.datetime, wall_s: float,
           load_before: list[float]) -> dict:
    """The stored record of one benchmark run."""
    return {"benchmark": script.stem, "about": about(script), "re_measured": True,
            "measured_at": started.isoformat(timespec="seconds"),
            "command": " ".join(command), "wall_s": round(wall_s, 1), "code": code_state(), "machine": machine(),
            "load_average_1_5_15_min": {"before": load_before, "after": load_average()}, "figures": figures}


def run_one(script: pathlib.Path, extra: list[str]) -> tuple[float, str]:
    """Run one benchmark, its output passed through; store its record; (wall time [s], what to show in the table)."""
    command = ["python", str(script.relative_to(ROOT)), *extra]
    print(f"== {' '.join(command)}", flush=True)
    started, load_before, clock = datetime.datetime.now(datetime.UTC), load_average(), time.monotonic()
    process = subprocess.Popen([sys.executable, str(script), *extra], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    last = ""
    for line in process.stdout:
        print(line, end="", flush=True)
        last = line.strip() or last
    code = process.wait()
    wall_s = time.monotonic() - clock
    if code != 0:
        return wall_s, f"FAILED (exit code {code})"
    try:
        figures = json.loads(last)
    except json.JSONDecodeError:
        return wall_s, "no JSON line at the end"
    RESULTS.mkdir(exist_ok=True)
    stored = record(script, command, figures, started, wall_s, load_before)
    (RESULTS / f"{script.stem}.json").write_text(dumps(stored))
    return wall_s, _figures(figures)


def main(argv: list[str]) -> int:
    names, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    scripts = [s for s in sorted((ROOT / "benchmarks").glob("*.py")) if s.name not in HELPERS]
    known = {s.stem for s in scripts}
    unknown = [n for n in names if n not in known]
    if unknown or (extra and len(names) != 1):
        problem = (f"no benchmark {', '.join(unknown)} (there are: {', '.join(sorted(known))})" if unknown else
                   "options after -- go to one benchmark: name exactly one")
        print(f"error: {problem}", file=sys.stderr)
        return 2
    rows = [(s.name, *run_one(s, extra)) for s in scripts if not names or s.stem in names]
    print(f"\n{'benchmark':<24} {'wall':>7}  figures (the JSON line's top level; kept in benchmarks/results)")
    for name, seconds, figures in rows:
        print(f"{name:<24} {seconds:>6.0f}s  {figures}")
    return 0 if all(not r[2].startswith(("FAILED", "no JSON")) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
