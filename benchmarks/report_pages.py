"""The report pages a user opens, as a user gets them, in a real headless Chromium: the offline demo's
identification.html and validation.html, and the real Panda log's identification.html (Gaz et al. 2019's log in
../shared/datasets/panda_gaz2019, skipped when absent), each made by the command line a user types. Per page: the
console errors and exceptions (goal: none), the requests beyond the file and its inline images (goal: none: the page
is self-contained), the images and how many decoded, the size, whether the verdict (the command's exit code) comes
before the held-out or unseen-motion table, and a screenshot (in --out).

Run: `make bench` or `source env.sh && python benchmarks/report_pages.py [--out DIR]` (about 1.5 minutes). Prints a
table and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src" / "robot_id_estimator" / "test"))  # the report tests' browser driver

from headless_browser import chromium, open_page  # noqa: E402

PANDA_LOG = ROOT.parent / "shared" / "datasets" / "panda_gaz2019" / "panda_traj1_robot_log.csv"
PANDA_COMMAND = ["identify", "--robot", "panda", "--data", str(PANDA_LOG),
                 "--columns", "t=t_s,q=q{i}_rad,dq=dq{i}_rad_s,tau=tau{i}_Nm"]


def _made(out: pathlib.Path) -> dict[str, tuple[pathlib.Path, int]]:
    """Every page to open: name -> (the file, the exit code of the command that wrote it)."""
    demo = subprocess.run([sys.executable, "-m", "robot_id_bringup.offline_demo", "--robot", "iiwa14", "--out",
                           str(out / "demo")], capture_output=True, text=True)
    pages = {name: (next((out / "demo").rglob(f"{name}.html"), out / "demo" / f"{name}.html"), demo.returncode)
             for name in ("identification", "validation")}
    if PANDA_LOG.is_file():
        panda = subprocess.run([sys.executable, "-m", "robot_id_estimator", *PANDA_COMMAND, "--out",
                                str(out / "panda")], capture_output=True, text=True)
        pages["panda log"] = (out / "panda" / "identification.html", panda.returncode)
    return pages


def _measured(name: str, page: pathlib.Path, exit_code: int, out: pathlib.Path) -> dict:
    if not page.is_file():
        return {"written": False, "exit_code": exit_code}
    stem = name.replace(" ", "_")
    load = open_page(page, out / f"{stem}.png", out / f"chromium_{stem}")  # a profile of its own per page
    html = page.read_text()
    table = next((html.index(f'id="{t}"') for t in ("held-out", "unseen") if f'id="{t}"' in html), -1)
    return {"written": True, "exit_code": exit_code, "size_mb": round(page.stat().st_size / 1e6, 2),
            "console_errors": len(load.errors), "errors": list(load.errors[:3]),
            "other_requests": sum(1 for url in load.requests[1:] if not url.startswith("data:")),
            "images": len(load.images),
            "images_decoded": sum(1 for width, height in load.images if width > 0 and height > 0),
            "verdict_first": f"Exit {exit_code}:" in load.text and 0 <= html.find('id="verdict"') < table}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="keep the pages and screenshots here (default: a temporary directory)")
    args = parser.parse_args()
    if chromium() is None:
        print(json.dumps({"skipped": "no chromium (scripts/setup_workspace.sh installs it)"}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        results = {name: _measured(name, page, code, out) for name, (page, code) in _made(out).items()}
        print(f"{'page':16s} {'exit':>4s} {'MB':>5s} {'errors':>6s} {'requests':>8s} {'images':>9s} verdict first")
        for name, r in results.items():
            if r["written"]:
                print(f"{name:16s} {r['exit_code']:4d} {r['size_mb']:5.2f} {r['console_errors']:6d} "
                      f"{r['other_requests']:8d} {r['images_decoded']:4d}/{r['images']:<4d} {r['verdict_first']}")
            else:
                print(f"{name:16s} {r['exit_code']:4d} not written")
        clean = all(r["written"] and not r["console_errors"] and not r["other_requests"] and r["verdict_first"]
                    and r["images_decoded"] == r["images"] for r in results.values())
        print(json.dumps({"pages": results, "all_clean": clean, "panda_log": PANDA_LOG.is_file()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
