"""Exact distances between the convex hulls of the links' vendor geometry, where the capsules come close.

The capsules (collision_distance) hold a link's meshes but overstate them by up to several centimetres; where a pair
of capsules keeps less than the clearance plus REFINE_BAND_M, coal's GJK/EPA computes the signed distance between
the links' convex hulls (for Franka's convex collision meshes: the meshes themselves), with its witness points for
the derivative. Both the capsules' and the hulls' distance are never larger than the meshes', so the larger of the
two is kept.
"""

from __future__ import annotations

import math

import numpy as np

from robot_id_model.collision_geometry import FLOOR, BoundGeometry, CollisionGeometry

REFINE_BAND_M = 0.03
"""Where capsules come closer than the clearance plus this, the convex hulls decide the distance."""
_SHAPES: dict[int, tuple[BoundGeometry, dict]] = {}
_REQUEST: list = []
"""one coal.DistanceRequest, made on first use"""


def _convex(vertices_m: np.ndarray) -> object:
    """A coal.Convex of the hull of the points."""
    import coal
    from scipy.spatial import ConvexHull

    hull = ConvexHull(vertices_m)
    points = coal.StdVec_Vec3s()
    for p in vertices_m:
        points.append(np.asarray(p, dtype=float))
    triangles = coal.StdVec_Triangle()
    for a, b, c in hull.simplices:
        triangles.append(coal.Triangle(int(a), int(b), int(c)))
    return coal.Convex(points, triangles)


def hull_shapes(bound: BoundGeometry, geometry: CollisionGeometry) -> dict[str, tuple[int, object, np.ndarray]]:
    """Per link with a hull: its joint, the coal shape and the vertices, both in the joint's frame (cached)."""
    cached = _SHAPES.get(id(bound))
    if cached is not None and cached[0] is bound:
        return cached[1]
    shapes = {}
    for link, vertices in geometry.hulls.items():
        joint, rotation, translation = bound.link_placement[link]
        in_joint = vertices @ rotation.T + translation
        shapes[link] = (joint, _convex(in_joint), in_joint)
    if len(_SHAPES) > 16:
        _SHAPES.clear()
    _SHAPES[id(bound)] = (bound, shapes)
    return shapes


def _coal_distance(shape_1: object, pose_1: tuple, shape_2: object, pose_2: tuple) -> tuple[float, np.ndarray,
                                                                                            np.ndarray]:
    """Signed distance and witness points (world) of two coal shapes at (rotation, translation) poses."""
    import coal

    result = coal.DistanceResult()
    distance = coal.distance(shape_1, coal.Transform3s(*pose_1), shape_2, coal.Transform3s(*pose_2), _REQUEST[0],
                             result)
    return float(distance), result.getNearestPoint1(), result.getNearestPoint2()


def _box_shapes(geometry: CollisionGeometry) -> dict[str, tuple[object, tuple]]:
    import coal

    return {b.name: (coal.Box(*(2 * b.half_size_m)), (np.eye(3), b.centre_m)) for b in geometry.boxes}


def refine_with_hulls(bound: BoundGeometry, geometry: CollisionGeometry, names: list[tuple[str, str]],
                      groups: dict[str, np.ndarray], rotation: np.ndarray, origin_m: np.ndarray) -> None:
    """Replace, in `groups` (collision_distance._Groups.stacked), every distance closer than the clearance plus
    REFINE_BAND_M by the hulls' where theirs is larger, with their witness points and normal."""
    import coal

    if not _REQUEST:
        _REQUEST.append(coal.DistanceRequest())
    shapes = hull_shapes(bound, geometry)
    boxes = _box_shapes(geometry) if geometry.boxes else {}
    close = groups["distance"] < geometry.clearance_m + REFINE_BAND_M
    for k, g in zip(*np.nonzero(close), strict=True):
        first, second = names[g]
        if first not in shapes or (second not in shapes and second != FLOOR and second not in boxes):
            continue
        joint, shape, vertices = shapes[first]
        pose = (rotation[k, joint], origin_m[k, joint])
        if second == FLOOR:
            heights = origin_m[k, joint, 2] + vertices @ rotation[k, joint, 2]
            lowest = int(np.argmin(heights))
            distance = float(heights[lowest]) - geometry.floor_z_m
            w_first = pose[1] + pose[0] @ vertices[lowest]
            w_second = w_first - np.array([0.0, 0.0, distance])
        elif second in boxes:
            distance, w_first, w_second = _coal_distance(shape, pose, *boxes[second])
        else:
            joint_2, shape_2, _ = shapes[second]
            distance, w_first, w_second = _coal_distance(shape, pose, shape_2,
                                                         (rotation[k, joint_2], origin_m[k, joint_2]))
        if distance <= groups["distance"][k, g]:
            continue
        direction = w_first - w_second
        length = math.sqrt(float(direction @ direction))
        if length > 1e-9:
            groups["normal"][k, g] = np.sign(distance) * direction / length if distance else direction / length
        groups["distance"][k, g], groups["w_first"][k, g], groups["w_second"][k, g] = distance, w_first, w_second
