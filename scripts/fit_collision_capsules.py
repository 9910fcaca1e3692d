#!/usr/bin/env python3
"""Fit the collision capsules of the shipped robots to the vendors' collision meshes (a maintainer's tool).

    python scripts/fit_collision_capsules.py [iiwa7 iiwa14 panda panda_hand fr3 fr3_hand]

Reads the meshes in src/robot_id_description/meshes (see SOURCE.md there), fits at most two capsules per link
that hold every triangle (robot_id_model.capsule_fit), and writes src/robot_id_description/robots/<robot>/collision.yaml
with the capsules, the vendor geometry they enclose and how far they reach beyond it. The Franka Hand's geometry is
hand.stl and the finger boxes of franka_description (end_effectors/common/franka_hand.xacro), both fingers at
every opening from closed to 0.04 m. The FR3's links 5 and 7 are written as an allowed pair (ALLOWED_PAIRS): its
joint 6 range brings them from 22.4 mm apart to overlapping on the vendor's meshes.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import yaml

from robot_id_model.capsule_fit import fit_capsules, reach_beyond_mesh_m, read_mesh
from robot_id_model.collision_geometry import box_corners

DESCRIPTION = pathlib.Path(__file__).resolve().parents[1] / "src" / "robot_id_description"
IIWA_OFFSETS_Z = {"iiwa14": (0.0, -0.1475, -0.36, -0.588, -0.78, -0.9875, -1.18, -1.271),
                  "iiwa7": (0.0, -0.1475, -0.34, -0.5475, -0.74, -0.9475, -1.14, -1.231)}
"""collision origins of lbr_description's iiwa links (x, y below), from its <robot>_description.xacro"""
IIWA_OFFSETS_XY = {"iiwa14": ((0, 0), (0, 0), (0, 0.01), (0, 0), (0, -0.0105), (0, 0), (0, 0.0707), (0, 0)),
                   "iiwa7": ((0, 0), (0, 0), (0, 0.0105), (0, 0), (0, -0.0105), (0, 0), (0, 0.0707), (0, 0))}
FINGER_BOXES = (  # franka_hand.xacro: (centre, size, roll) of each finger's collision boxes in the finger frame
    ((0.0, 18.5e-3, 11e-3), (22e-3, 15e-3, 20e-3), 0.0),
    ((0.0, 6.8e-3, 2.2e-3), (22e-3, 8.8e-3, 3.8e-3), 0.0),
    ((0.0, 15.9e-3, 28.35e-3), (17.5e-3, 7e-3, 23.5e-3), np.pi / 6),
    ((0.0, 7.58e-3, 45.25e-3), (17.5e-3, 15.2e-3, 18.5e-3), 0.0),
)
FINGER_Z_M = 0.0584
ALLOWED_PAIRS = {"fr3": [["fr3_link5", "fr3_link7"]], "fr3_hand": [["fr3_link5", "fr3_link7"]]}
"""pairs built closer than any clearance (collision_geometry.ALLOWED_CLEARANCE_M)"""
FINGER_OPENING_M = (0.0, 0.04)


def _box_triangles(centre: np.ndarray, size: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """The 12 triangles of a box."""
    corners = box_corners(centre, size, rotation)
    faces = ((0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6), (0, 2, 6),
             (0, 6, 4), (1, 5, 7), (1, 7, 3))
    return corners[np.array(faces)]


def _rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def finger_boxes() -> list[dict]:
    """The finger boxes in the hand frame, both fingers, closed and fully open."""
    out = []
    for side, flip in (("left", np.eye(3)), ("right", np.diag([-1.0, -1.0, 1.0]))):
        for opening in FINGER_OPENING_M:
            for centre, size, roll in FINGER_BOXES:
                local = np.array(centre) + np.array([0.0, opening, 0.0])
                rotation = flip @ _rot_x(roll if side == "left" else -roll)
                out.append({"finger": side, "opening_m": opening,
                            "centre_m": [round(float(v), 6) for v in flip @ local + [0, 0, FINGER_Z_M]],
                            "size_m": list(size), "rotation": np.round(rotation, 9).tolist()})
    return out


def link_parts(robot: str) -> dict[str, dict]:
    """Per link, its meshes (file relative to the robot's folder, origin) and boxes."""
    if robot.startswith("iiwa"):
        folder = f"../../meshes/lbr_description/meshes/{robot}/collision"
        return {f"lbr_link_{i}": {"meshes": [{"file": f"{folder}/link_{i}.stl",
                                              "origin_xyz_m": [*IIWA_OFFSETS_XY[robot][i], IIWA_OFFSETS_Z[robot][i]]}]}
                for i in range(8)}
    arm = "fr3" if robot.startswith("fr3") else "fer"
    folder = f"../../meshes/franka_description/meshes/robot_arms/{arm}/collision"
    parts = {f"{arm}_link{i}": {"meshes": [{"file": f"{folder}/link{i}.stl", "origin_xyz_m": [0.0, 0.0, 0.0]}]}
             for i in range(8)}
    if robot.endswith("_hand"):
        hand = (f"{folder}/hand.stl" if arm == "fer"
                else "../../meshes/franka_description/meshes/robot_ee/franka_hand_white/collision/hand.stl")
        parts[f"{arm}_hand"] = {"meshes": [{"file": hand, "origin_xyz_m": [0.0, 0.0, 0.0]}], "boxes": finger_boxes()}
    return parts


def triangles(parts: dict, folder: pathlib.Path) -> np.ndarray:
    out = [read_mesh(folder / m["file"]) + np.asarray(m["origin_xyz_m"]) for m in parts.get("meshes", ())]
    out += [_box_triangles(np.asarray(b["centre_m"]), np.asarray(b["size_m"]), np.asarray(b["rotation"]))
            for b in parts.get("boxes", ())]
    return np.concatenate(out)


def fit(robot: str) -> pathlib.Path:
    folder = DESCRIPTION / "robots" / robot
    links = {}
    for link, parts in link_parts(robot).items():
        mesh = triangles(parts, folder)
        capsules = fit_capsules(link, mesh, max_capsules=2, tries=2)
        reach_mm = 1000 * reach_beyond_mesh_m(capsules, mesh)
        links[link] = {**parts, "reach_beyond_mesh_mm": round(reach_mm, 1),
                       "capsules": [c.as_dict() for c in capsules]}
        print(f"{robot} {link}: {len(capsules)} capsule(s), reach beyond the mesh up to {reach_mm:.1f} mm",
              flush=True)
    source = ("franka_description (Apache-2.0): meshes/robot_arms/fer/collision" if robot.startswith("panda")
              else "franka_description (Apache-2.0): meshes/robot_arms/fr3/collision" if robot.startswith("fr3")
              else f"lbr_fri_ros2_stack lbr_description (Apache-2.0): meshes/{robot}/collision")
    head = (f"# Collision capsules of the {robot}, fitted by scripts/fit_collision_capsules.py to the vendor's\n"
            f"# collision geometry ({source}; the meshes and their licence are in ../../meshes).\n"
            "# The capsules of a link hold every triangle of its meshes and boxes, so a distance between capsules\n"
            "# is never larger than between the vendor's geometry. reach_beyond_mesh_mm: how far they reach beyond\n"
            "# its convex hull (largest over 400 sampled surface points per capsule). Frames: the URDF link frames.\n")
    path = folder / "collision.yaml"
    allowed = {"allowed_pairs": ALLOWED_PAIRS[robot]} if robot in ALLOWED_PAIRS else {}
    path.write_text(head + yaml.safe_dump({"robot": robot, **allowed, "links": links}, sort_keys=False,
                                          default_flow_style=None, width=120))
    return path


if __name__ == "__main__":
    for name in sys.argv[1:] or ("panda", "panda_hand", "fr3", "fr3_hand", "iiwa14", "iiwa7"):
        print(f"wrote {fit(name)}")
