"""Collision distances against coal's own primitives (an independent implementation), their derivatives by finite
differences, and the capsule fit against the points it must hold."""

from __future__ import annotations

import coal
import numpy as np
import pytest
from conftest import random_arm_urdf

from robot_id_model.capsule_fit import Capsule, fit_capsules, segment_distance_m
from robot_id_model.collision_distance import arm_distances
from robot_id_model.collision_geometry import FLOOR, Box, CollisionGeometry, bind
from robot_id_model.robot_model import load_robot_model


def _geometry(robot, rng: np.random.Generator, hulls: bool) -> CollisionGeometry:
    """One random capsule per link, the floor at z = -0.3, one box; with `hulls`, a random box hull per link."""
    links = ("link0", *robot.link_names)
    capsules = tuple(Capsule(link, rng.uniform(-0.05, 0.05, 3), rng.uniform(-0.05, 0.05, 3) + np.array([0, 0, 0.1]),
                             float(rng.uniform(0.02, 0.05))) for link in links)
    hull = {}
    if hulls:
        for link in links:
            corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
            hull[link] = corners * rng.uniform(0.02, 0.06, 3) + np.array([0, 0, 0.05])
    box = Box("fixture", np.array([0.4, 0.0, 0.0]), np.array([0.1, 0.2, 0.15]))
    return CollisionGeometry(capsules, 0.05, -0.3, (box,), hulls=hull)


def _coal_pose(robot, q: np.ndarray, link: str) -> coal.Transform3s:
    import pinocchio as pin

    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    placement = data.oMf[robot.model.getFrameId(link)]
    return coal.Transform3s(placement.rotation, placement.translation)


def _coal_capsule_distance(robot, q: np.ndarray, first: Capsule, second: Capsule | Box) -> float:
    """Distance of two capsules (or a capsule and a box) by coal, each capsule as a coal.Capsule about its axis."""
    def shape(c: Capsule) -> tuple[object, coal.Transform3s]:
        axis = c.b_m - c.a_m
        length = float(np.linalg.norm(axis))
        z = axis / length if length > 1e-12 else np.array([0.0, 0.0, 1.0])
        x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
        x /= np.linalg.norm(x)
        local = coal.Transform3s(np.column_stack([x, np.cross(z, x), z]), 0.5 * (c.a_m + c.b_m))
        return coal.Capsule(c.radius_m, length), _coal_pose(robot, q, c.link) * local

    shape_1, pose_1 = shape(first)
    if isinstance(second, Box):
        shape_2, pose_2 = coal.Box(*(2 * second.half_size_m)), coal.Transform3s(np.eye(3), second.centre_m)
    else:
        shape_2, pose_2 = shape(second)
    return coal.distance(shape_1, pose_1, shape_2, pose_2, coal.DistanceRequest(), coal.DistanceResult())


def test_capsule_distances_agree_with_coal() -> None:
    """Every link pair's and link–environment distance equals coal's between the same capsules, to 1e-6 m."""
    robot = load_robot_model(random_arm_urdf(6, seed=4))
    rng = np.random.default_rng(1)
    geometry = _geometry(robot, rng, hulls=False)
    bound = bind(geometry, robot)
    q = rng.uniform(-2.0, 2.0, (25, robot.n_joints))
    distances = arm_distances(robot, geometry, bound, q)
    by_link = {c.link: c for c in geometry.capsules}
    assert len(distances.names) > 10
    for g, (first, second) in enumerate(distances.names):
        for k in range(len(q)):
            if second == FLOOR:
                pose = _coal_pose(robot, q[k], first)
                c = by_link[first]
                ends = [pose.getRotation() @ p + pose.getTranslation() for p in (c.a_m, c.b_m)]
                expected = min(e[2] for e in ends) - c.radius_m - geometry.floor_z_m
            else:
                other = geometry.boxes[0] if second == "fixture" else by_link[second]
                expected = _coal_capsule_distance(robot, q[k], by_link[first], other)
            if expected > 0:  # coal's capsule distance is unsigned only where they do not overlap
                assert distances.distance_m[k, g] == pytest.approx(expected, abs=1e-6), (first, second, k)


def test_hull_distances_agree_with_coal_and_are_never_below_the_capsules() -> None:
    """Where the hulls decide, the distance is coal's between the hulls; it is never below the capsules'."""
    robot = load_robot_model(random_arm_urdf(6, seed=5))
    rng = np.random.default_rng(2)
    geometry = _geometry(robot, rng, hulls=True)
    bound = bind(geometry, robot)
    q = rng.uniform(-2.0, 2.0, (40, robot.n_joints))
    with_hulls = arm_distances(robot, geometry, bound, q).distance_m
    capsules_only = CollisionGeometry(geometry.capsules, geometry.clearance_m, geometry.floor_z_m, geometry.boxes)
    plain = arm_distances(robot, capsules_only, bind(capsules_only, robot), q).distance_m
    assert np.all(with_hulls >= plain - 1e-12)
    assert np.any(with_hulls > plain + 1e-3)  # the hulls decided somewhere


@pytest.mark.parametrize("hulls", [False, True])
def test_distance_derivatives_match_finite_differences(hulls: bool) -> None:
    robot = load_robot_model(random_arm_urdf(6, seed=6))
    rng = np.random.default_rng(3)
    geometry = _geometry(robot, rng, hulls=hulls)
    bound = bind(geometry, robot)
    q = rng.uniform(-2.0, 2.0, (30, robot.n_joints))
    d = arm_distances(robot, geometry, bound, q, partials=True)
    step = 1e-7
    for j in range(robot.n_joints):
        shifted = q.copy()
        shifted[:, j] += step
        numeric = (arm_distances(robot, geometry, bound, shifted).distance_m - d.distance_m) / step
        smooth = np.abs(numeric - d.d_q[:, :, j]) < 1e-3  # a switch of the closest pair is a kink: rare
        assert smooth.mean() > 0.97, j


def test_fitted_capsules_hold_every_triangle() -> None:
    """The capsules of an L-shaped mesh hold all its corners, and two fit it tighter than one would."""
    rng = np.random.default_rng(4)
    bar = rng.uniform([-0.02, -0.02, 0.0], [0.02, 0.02, 0.3], (300, 3))
    foot = rng.uniform([0.0, -0.02, 0.0], [0.25, 0.02, 0.04], (300, 3))
    triangles = np.concatenate([bar, foot]).reshape(-1, 3, 3)
    capsules = fit_capsules("l_shape", triangles, max_capsules=2, tries=2)
    corners = triangles.reshape(-1, 3)
    inside = np.min([segment_distance_m(corners, c.a_m, c.b_m) - c.radius_m for c in capsules], axis=0)
    assert inside.max() <= 1e-9
    assert len(capsules) == 2


def test_a_urdf_s_own_collision_elements_become_capsules_and_hulls(tmp_path) -> None:
    """Primitives and a mesh named relative to the URDF: each link's capsule and hull hold its shapes' points; a
    mesh that is not there is one line naming the link and the file."""
    from robot_id_model.robot_model import ModelError
    from robot_id_model.urdf_collision import urdf_collision_geometry

    mesh = tmp_path / "meshes" / "block.stl"
    mesh.parent.mkdir()
    corners = np.array([[x, y, z] for x in (0, 0.1) for y in (0, 0.04) for z in (0, 0.2)], dtype=np.float32)
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6), (0, 2, 6),
             (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    records = np.zeros(12, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]))
    records["v"] = corners[np.array(faces)]
    mesh.write_bytes(b"\0" * 80 + np.uint32(12).tobytes() + records.tobytes())
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(random_arm_urdf(3, seed=7).replace(
        '<link name="link1">', '<link name="link1"><collision><origin xyz="0 0 0.1" rpy="0 1.5707963 0"/>'
        '<geometry><cylinder radius="0.05" length="0.3"/></geometry></collision>').replace(
        '<link name="link3">', '<link name="link3"><collision><geometry><mesh filename="meshes/block.stl" '
        'scale="1 1 1"/></geometry></collision><collision><origin xyz="0 0 0.3"/><geometry><sphere radius="0.04"/>'
        '</geometry></collision>'))
    geometry = urdf_collision_geometry(urdf, 0.02, 0.0)
    assert {c.link for c in geometry.capsules} == {"link1", "link3"}
    cylinder_rim = np.array([[0.15 * s, 0.05 * np.cos(a), 0.1 + 0.05 * np.sin(a)] for s in (-1, 1)
                             for a in np.linspace(0, 2 * np.pi, 50)])  # its axis along x, turned from z
    ball = np.array([0.0, 0.0, 0.3]) + 0.04 * np.array([[0, 0, 1], [0, 0, -1], [1, 0, 0], [0, -1, 0]])
    for link, points in (("link1", cylinder_rim), ("link3", np.concatenate([corners, ball]))):
        capsule = next(c for c in geometry.capsules if c.link == link)
        assert np.all(segment_distance_m(points, capsule.a_m, capsule.b_m) <= capsule.radius_m + 1e-6), link
        hull = geometry.hulls[link]
        assert np.all(points.min(axis=0) >= hull.min(axis=0) - 1e-6) and np.all(
            points.max(axis=0) <= hull.max(axis=0) + 1e-6), link
    mesh.unlink()
    with pytest.raises(ModelError, match=r"link 'link3': collision mesh 'meshes/block\.stl' not found"):
        urdf_collision_geometry(urdf, 0.02, 0.0)


def test_a_capsule_inside_a_box_is_as_deep_as_its_deepest_point_plus_its_radius() -> None:
    """The signed distance into a box: the segment's deepest point (by dense sampling) less the radius; and a box
    whose name is taken, or that is rotated, is refused in one line."""
    from robot_id_model.collision_distance import joint_placements
    from robot_id_model.collision_geometry import environment_boxes
    from robot_id_model.robot_model import ModelError

    robot = load_robot_model(random_arm_urdf(6, seed=8))
    capsule = Capsule("link3", np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.1, 0.2]), 0.03)
    rotation, origin, _ = joint_placements(robot, np.zeros((1, robot.n_joints)))
    joint = robot.model.frames[robot.model.getFrameId("link3")].parentJoint
    placement = robot.model.frames[robot.model.getFrameId("link3")].placement
    ends = [rotation[0, joint] @ (placement.rotation @ p + placement.translation) + origin[0, joint]
            for p in (capsule.a_m, capsule.b_m)]
    centre, half = 0.5 * (ends[0] + ends[1]) + np.array([0.05, 0.0, 0.0]), np.array([0.3, 0.25, 0.2])
    geometry = CollisionGeometry((capsule,), 0.0, -10.0, (Box("block", centre, half),))
    distances = arm_distances(robot, geometry, bind(geometry, robot), np.zeros((1, robot.n_joints)))
    samples = ends[0] + np.linspace(0.0, 1.0, 20001)[:, None] * (ends[1] - ends[0])
    deepest = np.max(np.abs(samples - centre) - half, axis=1).min()
    assert deepest < 0
    assert distances.distance_m[0, distances.names.index(("link3", "block"))] == pytest.approx(deepest - 0.03,
                                                                                               abs=1e-6)
    for boxes, message in (([{"name": "floor", "centre_m": [0, 0, 0], "size_m": [1, 1, 1]}], "names the floor"),
                           ([{"name": "a", "centre_m": [0, 0, 0], "size_m": [1, 1, 1], "rpy": [0, 0, 1]}],
                            r"\['rpy'\] not understood"),
                           ([{"name": "a", "centre_m": [0, 0, 0], "size_m": [True, 1, 1]}], "three finite numbers")):
        with pytest.raises(ModelError, match=message):
            environment_boxes(boxes, "cell.yaml")
    named_like_a_link = CollisionGeometry((capsule,), 0.0, -10.0, (Box("link2", centre, half),))
    with pytest.raises(ModelError, match="names of the robot's frames"):
        bind(named_like_a_link, robot)
