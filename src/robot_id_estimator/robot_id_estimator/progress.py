"""Progress lines of a long computation: a callback the command line prints and the node logs (None: quiet)."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None] | None


def say(progress: Progress, text: str) -> None:
    if progress is not None:
        progress(text)
