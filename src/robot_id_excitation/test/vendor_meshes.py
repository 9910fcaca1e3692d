"""The vendors' collision meshes as coal reads them (its own STL loader, BVH distance): a reference that shares
nothing with the suite's capsules and hulls but the file names and collision origins of the geometry file."""

from __future__ import annotations

import pathlib

import coal
import numpy as np
import pinocchio as pin

from robot_id_model.collision_geometry import CollisionGeometry
from robot_id_model.robot_model import RobotModel

HULL_TOLERANCE_M = 1e-6
"""GJK's tolerance on the distance of two convex hulls: on the Panda's and the iiwa7's shipped excitations it came
out up to 5e-7 m above the meshes' own distance."""


def _link_shapes(geometry: CollisionGeometry) -> dict[str, list[tuple[object, coal.Transform3s, object]]]:
    """Per link, its vendor meshes (BVH) and boxes with their placements in the link frame and their convex hulls
    (a box its own)."""
    folder = pathlib.Path(geometry.source).parent
    loader = coal.MeshLoader()
    shapes: dict[str, list] = {}
    for link, entry in geometry.reference.items():
        for mesh in entry.get("meshes", ()):
            bvh = loader.load(str((folder / mesh["file"]).resolve()))
            bvh.buildConvexHull(False, "Qt")
            shapes.setdefault(link, []).append((bvh, coal.Transform3s(np.eye(3), np.array(mesh["origin_xyz_m"])),
                                                bvh.convex))
        for box in entry.get("boxes", ()):
            shape = coal.Box(*box["size_m"])
            shapes.setdefault(link, []).append((shape, coal.Transform3s(
                np.array(box["rotation"], dtype=float), np.array(box["centre_m"], dtype=float)), shape))
    return shapes


def mesh_distances(robot: RobotModel, geometry: CollisionGeometry, pairs: list[tuple[str, str]],
                   q_rad: np.ndarray, exact_below_m: float = np.inf) -> np.ndarray:
    """(K, P) distance between the vendor geometry of each pair of links (a link and "floor": its lowest vertex
    above the floor plane) at the poses q. Two shapes whose convex hulls are `exact_below_m` or more apart count at
    their hulls' distance less HULL_TOLERANCE_M, a lower bound of theirs (a hull holds its mesh) found by GJK instead
    of the meshes' BVHs (test_collision's vendor-mesh checks: 33 -> 6 s CPU): a distance reported at or above
    `exact_below_m` is then at least that, one below it is exact."""
    shapes = _link_shapes(geometry)
    model, data = robot.model, robot.model.createData()
    out = np.full((len(q_rad), len(pairs)), np.inf)
    request = coal.DistanceRequest()

    def distance(s1, t1, s2, t2) -> float:
        return coal.distance(s1, t1, s2, t2, request, coal.DistanceResult())

    for k, q in enumerate(q_rad):
        pin.framesForwardKinematics(model, data, robot.configuration(q))
        poses = {link: data.oMf[model.getFrameId(link)] for link in shapes}
        world = {link: [(s, coal.Transform3s(poses[link].rotation, poses[link].translation) * t, hull)
                        for s, t, hull in shapes[link]] for link in shapes}
        for p, (first, second) in enumerate(pairs):
            if second == "floor":
                out[k, p] = min(_lowest(s, t) for s, t, _ in world[first]) - geometry.floor_z_m
                continue
            for s1, t1, hull1 in world[first]:
                for s2, t2, hull2 in world[second]:
                    bound = (distance(hull1, t1, hull2, t2) - HULL_TOLERANCE_M if np.isfinite(exact_below_m)
                             else -np.inf)
                    out[k, p] = min(out[k, p], bound if bound >= exact_below_m else distance(s1, t1, s2, t2))
    return out


def _lowest(shape: object, pose: coal.Transform3s) -> float:
    """Lowest world z of a mesh's vertices or a box's corners."""
    if isinstance(shape, coal.Box):
        half = shape.halfSide
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    else:
        corners = np.asarray(shape.vertices())
    return float(np.min(corners @ pose.getRotation()[2] + pose.getTranslation()[2]))
