"""Exact distances between the convex hulls of the links' vendor geometry, where the capsules come close.

The capsules (collision_distance) hold a link's meshes but overstate them by up to several centimetres; where a pair
of capsules keeps less than the clearance plus REFINE_BAND_M, coal's GJK/EPA computes the signed distance between
the links' convex hulls (for Franka's convex collision meshes: the meshes themselves), with its witness points for
the derivative. Both the capsules' and the hulls' distance are never larger than the meshes', so the larger of the
two is kept.
"""

from __future__ import annotations

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
    for link, vertices in geometry.link_hulls().items():
        joint, rotation, translation = bound.link_placement[link]
        in_joint = vertices @ rotation.T + translation
        shapes[link] = (joint, _convex(in_joint), in_joint)
    if len(_SHAPES) > 16:
        _SHAPES.clear()
    _SHAPES[id(bound)] = (bound, shapes)
    return shapes


def _pair_distances(pairs: list[tuple[object, object, int, int]], rotation: np.ndarray, origin_m: np.ndarray,
                    samples: list[int]) -> np.ndarray:
    """(N, 7): signed distance and the two witness points (world) of coal shape pairs (shape, shape, joint, joint,
    the second joint -1 for a fixed obstacle) at the given samples."""
    import coal

    out = np.empty((len(pairs), 7))
    result, identity = coal.DistanceResult(), np.eye(3)
    for i, ((shape_1, shape_2, joint_1, joint_2), k) in enumerate(zip(pairs, samples, strict=True)):
        result.clear()
        pose_2 = (coal.Transform3s(identity, shape_2[1]) if joint_2 < 0
                  else coal.Transform3s(rotation[k, joint_2], origin_m[k, joint_2]))
        out[i, 0] = coal.distance(shape_1, coal.Transform3s(rotation[k, joint_1], origin_m[k, joint_1]),
                                  shape_2[0] if joint_2 < 0 else shape_2, pose_2, _REQUEST[0], result)
        out[i, 1:4], out[i, 4:] = result.getNearestPoint1(), result.getNearestPoint2()
    return out


def _floor_distances(shapes: dict, link: str, rotation: np.ndarray, origin_m: np.ndarray, samples: np.ndarray,
                     floor_z_m: float) -> np.ndarray:
    """(N, 7): height of the lowest hull vertex above the floor, that vertex and its foot on the floor."""
    joint, _, vertices = shapes[link]
    heights = origin_m[samples, joint, 2][:, None] + rotation[samples, joint, 2] @ vertices.T
    lowest = np.argmin(heights, axis=1)
    w = origin_m[samples, joint] + np.einsum("kij,kj->ki", rotation[samples, joint], vertices[lowest])
    distance = heights[np.arange(len(samples)), lowest] - floor_z_m
    return np.column_stack([distance, w, w - distance[:, None] * np.array([0.0, 0.0, 1.0])])


def refine_with_hulls(bound: BoundGeometry, geometry: CollisionGeometry, names: list[tuple[str, str]],
                      groups: dict[str, np.ndarray], rotation: np.ndarray, origin_m: np.ndarray) -> None:
    """Replace, in `groups` (collision_distance._Groups.stacked), every distance closer than the clearance plus
    REFINE_BAND_M by the hulls' where theirs is larger, with their witness points and normal."""
    import coal

    if not _REQUEST:
        _REQUEST.append(coal.DistanceRequest())
    shapes = hull_shapes(bound, geometry)
    boxes = {b.name: (coal.Box(*(2 * b.half_size_m)), b.centre_m) for b in geometry.boxes}
    close = groups["distance"] < geometry.clearance_m + REFINE_BAND_M
    entries, results = [], []
    for g, (first, second) in enumerate(names):
        samples = np.flatnonzero(close[:, g])
        if not len(samples) or first not in shapes or (second not in shapes and second not in boxes
                                                       and second != FLOOR):
            continue
        if second == FLOOR:
            results.append(_floor_distances(shapes, first, rotation, origin_m, samples, geometry.floor_z_m))
        else:
            joint, shape, _ = shapes[first]
            other = (boxes[second], -1) if second in boxes else (shapes[second][1], shapes[second][0])
            results.append(_pair_distances([(shape, other[0], joint, other[1])] * len(samples), rotation, origin_m,
                                           samples.tolist()))
        entries.append(np.column_stack([samples, np.full(len(samples), g)]))
    if not entries:
        return
    where, found = np.concatenate(entries), np.concatenate(results)
    k, g = where[:, 0], where[:, 1]
    better = found[:, 0] > groups["distance"][k, g]
    k, g, found = k[better], g[better], found[better]
    direction = found[:, 1:4] - found[:, 4:]
    length = np.linalg.norm(direction, axis=1, keepdims=True)
    flip = np.where(found[:, :1] < 0, -1.0, 1.0)  # penetrating: the witness points cross
    normal = np.where(length > 1e-9, flip * direction / np.maximum(length, 1e-300), groups["normal"][k, g])
    groups["distance"][k, g], groups["normal"][k, g] = found[:, 0], normal
    groups["w_first"][k, g], groups["w_second"][k, g] = found[:, 1:4], found[:, 4:]
