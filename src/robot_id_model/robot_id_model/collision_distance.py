"""Distances between an arm's capsules, and from them to the environment, over many samples at once.

A capsule pair's distance is the distance between their segments less both radii (negative: they overlap); a link
pair's is the least of its capsule pairs'. The derivative with respect to q follows from the witness points w1, w2
(the closest points of the segments) and the joint Jacobians: ∂d/∂q = nᵀ(∂w1/∂q − ∂w2/∂q), n = (w1 − w2)/‖w1 − w2‖,
with ∂w/∂q = J_v − [w − o]× J_ω for a point w on the body of a joint at o (the closest points' own motion along the
segments does not change the distance to first order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.collision_geometry import FLOOR, BoundGeometry, CollisionGeometry
from robot_id_model.collision_hulls import hull_shapes, refine_with_hulls

BOX_SEARCH_STEPS = 48
"""Golden-section steps of the closest point of a segment to a box (the interval shrinks to 1e-10 of the segment)."""


@dataclass(frozen=True)
class Distances:
    """Distances of every checked group over K samples."""

    names: tuple[tuple[str, str], ...]
    """(link, link), (link, FLOOR) or (link, box name) of each group"""
    distance_m: np.ndarray
    """(K, G)"""
    d_q: np.ndarray | None = None
    """(K, G, n) derivative of each distance with respect to the joint positions, when asked for"""


def _closest_segment_points(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Parameters s, t in [0, 1] of the closest points of segments p1–q1 and p2–q2 (arrays (..., 3))."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e = np.einsum("...i,...i", d1, d1), np.einsum("...i,...i", d2, d2)
    b, c, f = np.einsum("...i,...i", d1, d2), np.einsum("...i,...i", d1, r), np.einsum("...i,...i", d2, r)
    tiny = 1e-18
    denominator = a * e - b * b
    s = np.where(denominator > tiny, np.clip((b * f - c * e) / np.maximum(denominator, tiny), 0.0, 1.0), 0.0)
    t = np.where(e > tiny, (b * s + f) / np.maximum(e, tiny), 0.0)
    s = np.where(t < 0.0, np.where(a > tiny, np.clip(-c / np.maximum(a, tiny), 0.0, 1.0), 0.0), s)
    s = np.where(t > 1.0, np.where(a > tiny, np.clip((b - c) / np.maximum(a, tiny), 0.0, 1.0), 0.0), s)
    return s, np.clip(t, 0.0, 1.0)


def _point_velocity_jacobian(jacobian: np.ndarray, offset_m: np.ndarray) -> np.ndarray:
    """∂w/∂q (..., 3, n) of a point w = o + offset on a body with joint Jacobian (..., 6, n) at o (world axes)."""
    jv, jw = jacobian[..., :3, :], jacobian[..., 3:, :]
    return jv + np.cross(jw, offset_m[..., :, None], axis=-2)


def _box_signed_distance(points: np.ndarray, centre_m: np.ndarray, half_m: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Signed distance (..., ) of points from an axis-aligned box (negative inside) and its gradient, the unit
    normal: away from the nearest point outside, along the nearest face's normal inside."""
    offset = points - centre_m
    beyond = np.abs(offset) - half_m
    outside = np.linalg.norm(np.maximum(beyond, 0.0), axis=-1)
    inside = np.minimum(beyond.max(axis=-1), 0.0)
    away = np.sign(offset) * np.maximum(beyond, 0.0)
    face = np.sign(offset) * (np.arange(3) == np.argmax(beyond, axis=-1)[..., None])
    normal = np.where((outside > 0)[..., None], away / np.maximum(outside, 1e-300)[..., None], face)
    return outside + inside, normal


def _box_distance(points_a: np.ndarray, points_b: np.ndarray, centre_m: np.ndarray, half_m: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The point w (..., 3) of each segment a–b deepest in or closest to an axis-aligned box, its signed distance and
    the normal there. A point's signed distance from a convex set is convex along a segment: a golden-section search
    finds its least value."""
    lo, hi = np.zeros(points_a.shape[:-1]), np.ones(points_a.shape[:-1])
    ratio = (np.sqrt(5.0) - 1.0) / 2.0

    def signed(t: np.ndarray) -> np.ndarray:
        return _box_signed_distance(points_a + t[..., None] * (points_b - points_a), centre_m, half_m)[0]

    for _ in range(BOX_SEARCH_STEPS):
        left, right = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        closer = signed(left) <= signed(right)
        hi, lo = np.where(closer, right, hi), np.where(closer, lo, left)
    w = points_a + 0.5 * (lo + hi)[..., None] * (points_b - points_a)
    distance, normal = _box_signed_distance(w, centre_m, half_m)
    return w, distance, normal


def _group_minimum(distance: np.ndarray, group: np.ndarray, count: int) -> np.ndarray:
    """Per sample, the index (into the last axis of `distance`) of the least distance of each group."""
    out = np.empty((distance.shape[0], count), dtype=int)
    for g in range(count):
        members = np.flatnonzero(group == g)
        out[:, g] = members[np.argmin(distance[:, members], axis=1)]
    return out


def _normal(difference: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Unit vectors along `difference`, or along `fallback` where the difference vanishes (touching segments)."""
    length = np.linalg.norm(difference, axis=-1, keepdims=True)
    safe = np.where(length > 1e-12, difference, fallback)
    return safe / np.maximum(np.linalg.norm(safe, axis=-1, keepdims=True), 1e-300)


def _pair_distances(bound: BoundGeometry, ends: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    """Distances, witness points and normals of every capsule pair (K, P)."""
    a_w, b_w = ends
    i, j = bound.pairs[:, 0], bound.pairs[:, 1]
    s, t = _closest_segment_points(a_w[:, i], b_w[:, i], a_w[:, j], b_w[:, j])
    w1 = a_w[:, i] + s[..., None] * (b_w[:, i] - a_w[:, i])
    w2 = a_w[:, j] + t[..., None] * (b_w[:, j] - a_w[:, j])
    fallback = 0.5 * (a_w[:, i] + b_w[:, i] - a_w[:, j] - b_w[:, j]) + np.array([0.0, 0.0, 1e-9])
    normal = _normal(w1 - w2, fallback)
    distance = np.linalg.norm(w1 - w2, axis=-1) - bound.radius_m[i] - bound.radius_m[j]
    # witness points on the capsules' surfaces, so that a hull's witness points can replace them
    return {"distance": distance, "w1": w1 - bound.radius_m[i][:, None] * normal,
            "w2": w2 + bound.radius_m[j][:, None] * normal, "normal": normal}


def _environment(bound: BoundGeometry, geometry: CollisionGeometry, ends: tuple[np.ndarray, np.ndarray]
                 ) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Per environment object: its name, and per sample and environment capsule the distance, witness point on the
    capsule and outward normal (from the object to the capsule)."""
    a_w, b_w = (x[:, bound.environment] for x in ends)
    radius = bound.radius_m[bound.environment][:, None]
    lower = a_w[..., 2] <= b_w[..., 2]
    w = np.where(lower[..., None], a_w, b_w)
    up = np.broadcast_to(np.array([0.0, 0.0, 1.0]), w.shape)
    out = [(FLOOR, w[..., 2] - geometry.floor_z_m - radius[:, 0], w - radius * up, up)]
    for box in geometry.boxes:
        w, signed, normal = _box_distance(a_w, b_w, box.centre_m, box.half_size_m)
        out.append((box.name, signed - radius[:, 0], w - radius * normal, normal))
    return out


@dataclass
class _Groups:
    """Per sample and group: distance, witness points on the first and second body, the normal from the second to
    the first, and the joints the first and second bodies move with (-1: the environment)."""

    names: list[tuple[str, str]]
    distance: list[np.ndarray]
    w_first: list[np.ndarray]
    w_second: list[np.ndarray]
    normal: list[np.ndarray]
    joint_first: list[np.ndarray]
    joint_second: list[np.ndarray]

    def add(self, names: list, distance: np.ndarray, w_first: np.ndarray, w_second: np.ndarray, normal: np.ndarray,
            joint_first: np.ndarray, joint_second: np.ndarray) -> None:
        self.names += names
        for column, value in (("distance", distance), ("w_first", w_first), ("w_second", w_second),
                              ("normal", normal), ("joint_first", joint_first), ("joint_second", joint_second)):
            getattr(self, column).append(value)

    def stacked(self) -> dict[str, np.ndarray]:
        return {key: np.concatenate(getattr(self, key), axis=1) for key in
                ("distance", "w_first", "w_second", "normal", "joint_first", "joint_second")}


def _capsule_groups(bound: BoundGeometry, geometry: CollisionGeometry, ends: tuple[np.ndarray, np.ndarray]
                    ) -> _Groups:
    """The least capsule distance of every checked link pair and of every link to each environment object."""
    k_samples = ends[0].shape[0]
    rows = np.arange(k_samples)[:, None]
    out = _Groups([], [], [], [], [], [], [])
    if len(bound.groups):
        pair = _pair_distances(bound, ends)
        chosen = _group_minimum(pair["distance"], bound.pair_group, len(bound.groups))
        out.add(list(bound.groups), pair["distance"][rows, chosen], pair["w1"][rows, chosen],
                pair["w2"][rows, chosen], pair["normal"][rows, chosen], bound.joint[bound.pairs[chosen, 0]],
                bound.joint[bound.pairs[chosen, 1]])
    if not len(bound.environment):
        return out
    links = [geometry.capsules[c].link for c in bound.environment]
    link_names = tuple(dict.fromkeys(links))
    group_of = np.array([link_names.index(name) for name in links], dtype=int)
    for obstacle, distance, w, normal in _environment(bound, geometry, ends):
        kept = [g for g, link in enumerate(link_names) if not (obstacle == FLOOR and link in bound.level_links)]
        chosen = _group_minimum(distance, group_of, len(link_names))[:, kept]
        surface = w[rows, chosen]
        out.add([(link_names[g], obstacle) for g in kept], distance[rows, chosen], surface,
                surface - distance[rows, chosen][..., None] * normal[rows, chosen], normal[rows, chosen],
                bound.joint[bound.environment[chosen]], np.full(chosen.shape, -1))
    return out


def capsule_distances(
    geometry: CollisionGeometry,
    bound: BoundGeometry,
    rotation: np.ndarray,
    origin_m: np.ndarray,
    jacobian: np.ndarray | None = None,
) -> Distances:
    """Distances of every checked link pair and of every link to each environment object: the capsules' where they
    keep the clearance by more than collision_hulls.REFINE_BAND_M, else the larger of theirs and the convex
    hulls' (by coal): both are never larger than the distance between the vendor's meshes.

    rotation (K, J, 3, 3) and origin_m (K, J, 3) are the placements of the model's J joints (0: the base) per
    sample; jacobian (K, J, 6, n), the joint Jacobians in world axes at the joint origins, gives d_q as well.
    """
    joint = bound.joint
    hull_shapes(bound, geometry)  # built once, at the first evaluation (a node's check before the arm moves)

    def world(points: np.ndarray) -> np.ndarray:
        return origin_m[:, joint] + np.einsum("kcij,cj->kci", rotation[:, joint], points)

    groups = _capsule_groups(bound, geometry, (world(bound.a_m), world(bound.b_m)))
    if not groups.names:
        n = 0 if jacobian is None else jacobian.shape[-1]
        return Distances((), np.zeros((rotation.shape[0], 0)), None if jacobian is None else
                         np.zeros((rotation.shape[0], 0, n)))
    g = groups.stacked()
    refine_with_hulls(bound, geometry, groups.names, g, rotation, origin_m)
    d_q = None
    if jacobian is not None:
        samples = np.arange(rotation.shape[0])[:, None]

        def moved(w: np.ndarray, joints: np.ndarray) -> np.ndarray:
            safe = np.maximum(joints, 0)
            dw = _point_velocity_jacobian(jacobian[samples, safe], w - origin_m[samples, safe])
            return np.where((joints >= 0)[..., None, None], dw, 0.0)

        dw = moved(g["w_first"], g["joint_first"]) - moved(g["w_second"], g["joint_second"])
        d_q = np.einsum("kgi,kgin->kgn", g["normal"], dw)
    return Distances(tuple(groups.names), g["distance"], d_q)


def joint_placements(robot: object, q_rad: np.ndarray, jacobians: bool = False
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Rotation (K, J, 3, 3), origin (K, J, 3) and, if asked, the world-axes Jacobian (K, J, 6, n) of every joint
    of a RobotModel at the samples q (K, n)."""
    import pinocchio as pin

    model = robot.model
    data = model.createData()
    q = np.atleast_2d(np.asarray(q_rad, dtype=float))
    k_samples, n_joints = len(q), model.njoints
    rotation = np.empty((k_samples, n_joints, 3, 3))
    origin = np.empty((k_samples, n_joints, 3))
    jacobian = np.zeros((k_samples, n_joints, 6, model.nv)) if jacobians else None
    for k in range(k_samples):
        configuration = robot.configuration(q[k])
        if jacobians:
            pin.computeJointJacobians(model, data, configuration)
        else:
            pin.forwardKinematics(model, data, configuration)
        for j in range(n_joints):
            rotation[k, j], origin[k, j] = data.oMi[j].rotation, data.oMi[j].translation
            if jacobians and j > 0:
                jacobian[k, j] = pin.getJointJacobian(model, data, j, pin.LOCAL_WORLD_ALIGNED)
    return rotation, origin, jacobian


def arm_distances(robot: object, geometry: CollisionGeometry, bound: BoundGeometry, q_rad: np.ndarray,
                  partials: bool = False) -> Distances:
    """capsule_distances at the joint positions q (K, n) of a RobotModel."""
    return capsule_distances(geometry, bound, *joint_placements(robot, q_rad, partials))
