"""Collision geometry from a URDF's own <collision> elements, for an arm without a robot config.

Boxes, cylinders, spheres and meshes (any format coal reads, found by mesh_files.mesh_file) become, per link, one
capsule that holds them and the convex hull of their points, as robot_id_description's capsules hold the vendors'
meshes. Round shapes are replaced by circumscribed polygons, so neither the capsule nor the hull is smaller than
the shape.
"""

from __future__ import annotations

import pathlib
import xml.etree.ElementTree as ET

import numpy as np

from robot_id_model.capsule_fit import enclosing_capsule, hull_of, mesh_vertices
from robot_id_model.collision_geometry import FLOOR, CollisionGeometry
from robot_id_model.mesh_files import SEARCHED, mesh_file
from robot_id_model.robot_config import description_directory
from robot_id_model.robot_model import ModelError

ROUND_SIDES = 24
"""Sides of the polygon that stands for a circle (circumscribed: its sides touch the circle)."""


def _rotation(rpy: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw: R = Rz(yaw)·Ry(pitch)·Rx(roll)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _numbers(text: str | None, count: int, default: float = 0.0) -> np.ndarray:
    values = [float(v) for v in (text or "").split()] or [default] * count
    if len(values) != count or not np.isfinite(values).all():
        raise ValueError(f"expected {count} finite numbers, got {text!r}")
    return np.array(values)


def _size(shape: ET.Element, key: str, least: float = 0.0) -> float:
    """A positive (or, with least < 0, non-negative) finite dimension of a shape."""
    value = float(shape.get(key, "nan"))
    if not (np.isfinite(value) and (value > 0 or (least < 0 and value >= 0))):
        raise ValueError(f"<{shape.tag}> needs a {'non-negative' if least < 0 else 'positive'} {key}, "
                         f"got {shape.get(key)!r}")
    return value


def resolve_mesh(filename: str, urdf_path: pathlib.Path) -> pathlib.Path:
    """The file a URDF mesh names (mesh_files.mesh_file); FileNotFoundError (naming it) if there is none here."""
    path = mesh_file(filename, urdf_path.parent)
    if path is None:
        vendors = description_directory() / "meshes"
        raise FileNotFoundError(f"collision mesh '{filename}' not found (looked in {SEARCHED}); the collision "
                                "meshes of lbr_description, franka_description and ur_description are in "
                                f"robot_id_description: ROS_PACKAGE_PATH={vendors}")
    return path


def _shape_points(geometry: ET.Element, urdf_path: pathlib.Path) -> np.ndarray:
    """Points whose convex hull holds the shape, in the collision element's frame."""
    shape = next(iter(geometry), None)
    if shape is None:
        raise ValueError("an empty <geometry>")
    circle = np.array([[np.cos(a), np.sin(a)] for a in np.arange(ROUND_SIDES) * 2 * np.pi / ROUND_SIDES])
    circle /= np.cos(np.pi / ROUND_SIDES)
    if shape.tag == "box":
        half = 0.5 * _numbers(shape.get("size"), 3)
        if np.any(half <= 0):
            raise ValueError(f"<box> needs a positive size, got {shape.get('size')!r}")
        return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    if shape.tag in ("cylinder", "capsule", "sphere"):
        radius = _size(shape, "radius")
        half = 0.0 if shape.tag == "sphere" else 0.5 * _size(shape, "length", least=-1.0)
        reach = half + (radius if shape.tag != "cylinder" else 0.0)  # a round end within its circumscribed cylinder
        return np.concatenate([np.column_stack([radius * circle, np.full(ROUND_SIDES, z)]) for z in (-reach, reach)])
    if shape.tag == "mesh":
        scale = _numbers(shape.get("scale"), 3, 1.0)
        return mesh_vertices(resolve_mesh(shape.get("filename", ""), urdf_path), scale)
    raise ValueError(f"collision shape <{shape.tag}> is not supported")


def urdf_collision_geometry(urdf_path: str | pathlib.Path, clearance_m: float, floor_z_m: float,
                            allowed_pairs: tuple[tuple[str, str], ...] = ()) -> CollisionGeometry | None:
    """The collision geometry of every link as the URDF describes it; None if it describes none. `allowed_pairs`
    (links, or a link and "floor") may come closer than the clearance, down to ALLOWED_CLEARANCE_M. ModelError
    (one line, naming the link) for a shape that cannot be read or a pair that names a link without geometry."""
    path = pathlib.Path(urdf_path)
    root = ET.parse(path).getroot()
    capsules, hulls = [], {}
    for link in root.iter("link"):
        name = link.get("name")
        points = []
        for element in link.findall("collision"):
            origin = element.find("origin")
            xyz = _numbers(origin.get("xyz") if origin is not None else None, 3)
            rpy = _numbers(origin.get("rpy") if origin is not None else None, 3)
            try:
                points.append(_shape_points(element.find("geometry"), path) @ _rotation(rpy).T + xyz)
            except (FileNotFoundError, ValueError, TypeError) as err:
                raise ModelError(f"{path}: link '{name}': {err}") from None
        if points:
            hulls[name] = hull_of(np.concatenate(points))
            capsules.append(enclosing_capsule(name, hulls[name]))
    if not capsules:
        return None
    unknown = sorted({name for pair in allowed_pairs for name in pair} - set(hulls) - {FLOOR})
    if unknown:
        raise ModelError(f"{path}: allowed pairs name {unknown}, which have no <collision> geometry "
                         f"(links with some: {sorted(hulls)})")
    return CollisionGeometry(tuple(capsules), clearance_m, floor_z_m, source=f"{path} (<collision> elements)",
                             allowed_pairs=frozenset(frozenset(pair) for pair in allowed_pairs), hulls=hulls)
