"""Where the mesh files a URDF names are on this machine, found as ROS finds them."""

from __future__ import annotations

import os
import pathlib
from urllib.parse import unquote, urlparse


def package_directories(package: str, urdf_dir: str | pathlib.Path) -> list[pathlib.Path]:
    """Candidate folders of a ROS package: the ament index of a sourced ROS 2, ROS_PACKAGE_PATH, and the URDF's
    folder and its parents (a package checked out or copied with its URDF)."""
    found = []
    try:
        from ament_index_python.packages import get_package_share_directory

        found.append(pathlib.Path(get_package_share_directory(package)))
    except (ImportError, LookupError, OSError, ValueError):  # no ROS 2 sourced, or not a package of it
        pass
    for entry in filter(None, os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep)):
        base = pathlib.Path(entry)
        found += [base] if base.name == package else [base / package]
    for folder in [pathlib.Path(urdf_dir).resolve(), *pathlib.Path(urdf_dir).resolve().parents]:
        found += [folder] if folder.name == package else [folder / package]
    return [folder for folder in found if folder.is_dir()]


SEARCHED = "a sourced ROS 2's ament index, ROS_PACKAGE_PATH and the URDF's folders"
"""Where package:// paths are looked up, for messages."""


def mesh_file(filename: str, urdf_dir: str | pathlib.Path) -> pathlib.Path | None:
    """The file a URDF's mesh filename names (package://, file:// or a path, relative ones from `urdf_dir`), or
    None when it is on this machine nowhere."""
    uri = urlparse(filename)
    if uri.scheme == "package":
        for folder in package_directories(uri.netloc, urdf_dir):
            candidate = folder / unquote(uri.path).lstrip("/")
            if candidate.is_file():
                return candidate
        return None
    path = pathlib.Path(unquote(uri.path) if uri.scheme == "file" else filename)
    path = path if path.is_absolute() else pathlib.Path(urdf_dir) / path
    return path if path.is_file() else None
