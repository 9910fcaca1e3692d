"""`make setup`'s pip step: install one requirements file, saying what is being installed while pip runs.

    python scripts/pip_install.py REQUIREMENTS LOG

Prints the file and its packages, then what pip is doing: on a terminal one status line rewritten in place
("collecting scipy==1.17.1"), in a log only the lines that install something; then how long it took. pip's whole
output goes to LOG (appended). When pip fails: the last 20 lines of LOG and pip's exit code.
Standard library only: it runs before anything else is installed.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import time

TAIL_LINES = 20
NAMES_SHOWN = 8


def requirements(path: pathlib.Path) -> list[str]:
    """The package names a requirements file asks for (comments, blank lines and pip options left out)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [re.split(r"[<>=!~;\[\s]", line, maxsplit=1)[0] for line in lines if line and not line.startswith("-")]


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


def status(line: str) -> str | None:
    """What a line of pip's output says it is doing, shortened; None for lines that say nothing new."""
    for prefix, verb in (("Collecting ", "collecting"), ("Building wheel for ", "building"),
                         ("Installing collected packages: ", "installing")):
        if line.startswith(prefix):
            what = line[len(prefix):].strip()
            if verb == "installing":
                names = what.split(", ")
                what = f"{len(names)} package{'s' * (len(names) != 1)}: {_names(names)}"
            return f"{verb} {what}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    source, log = pathlib.Path(argv[0]), pathlib.Path(argv[1])
    wanted = requirements(source)
    print(f"[setup] pip install -r {source}: {len(wanted)} package{'s' * (len(wanted) != 1)} "
          f"({_names(wanted)})", flush=True)
    terminal = sys.stdout.isatty()
    started = time.monotonic()
    with log.open("a") as out:
        pip = subprocess.Popen([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                                "--progress-bar", "off", "-r", str(source)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        for line in pip.stdout:
            out.write(line)
            said = status(line)
            if said and terminal:
                print(f"\r\033[K[setup]   {said}"[:200], end="", flush=True)
            elif said and said.startswith("installing"):
                print(f"[setup]   {said}", flush=True)
        code = pip.wait()
    if terminal:
        print("\r\033[K", end="")
    if code != 0:
        tail = log.read_text().splitlines()[-TAIL_LINES:]
        print(f"[setup] pip install -r {source} failed (exit code {code}); the end of {log}:", *tail, sep="\n",
              file=sys.stderr)
        return code
    print(f"[setup]   done in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
