"""Output files that are whole or absent: each is written under a temporary name and renamed into place, so an
interrupt (Ctrl-C, a crash) never leaves a half-written result that looks complete."""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Iterator


@contextlib.contextmanager
def atomic_path(path: str | pathlib.Path) -> Iterator[pathlib.Path]:
    """A temporary path beside `path` to write to; renamed to `path` when the block ends without an error,
    removed otherwise."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.partial{path.suffix}")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_text(path: str | pathlib.Path, text: str) -> pathlib.Path:
    """Write `text` to `path` atomically."""
    with atomic_path(path) as temporary:
        temporary.write_text(text)
    return pathlib.Path(path)

