"""Rewrite the build-machine include paths baked into the ROS 2 wheels' CMake files.

The PyPI ROS 2 wheels export `/opt/python/cp311-cp311/...` include directories; CMake then fails to
find Python.h and numpy headers. Point them at this interpreter's. Idempotent.
"""

import pathlib
import sys
import sysconfig

import numpy

BUILD_MACHINE_PATHS = {
    "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include": numpy.get_include(),
    "/opt/python/cp311-cp311/include/python3.11": sysconfig.get_paths()["include"],
}


def main(prefix: str) -> int:
    changed = 0
    for path in pathlib.Path(prefix, "share").rglob("*.cmake"):
        text = path.read_text(errors="surrogateescape")
        new = text
        for old, here in BUILD_MACHINE_PATHS.items():
            new = new.replace(old, here)
        if new != text:
            path.write_text(new, errors="surrogateescape")
            changed += 1
    print(f"cmake paths: {changed} file(s) rewritten under {prefix}/share")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
