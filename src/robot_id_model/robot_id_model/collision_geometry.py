"""The collision geometry of an arm and its surroundings, as the suite checks distances with it.

Every link carries capsules in its URDF frame (fitted to the vendor's collision meshes by
scripts/fit_collision_capsules.py) and the convex hull of those meshes: the capsules screen every pair quickly and
the hull (exact for a convex mesh, such as Franka's) decides where they come close; the environment is the floor plane
z = floor_z_m of the base frame and optional axis-aligned boxes (fixtures, walls) given in the robot config. Checked:
every pair of links that no joint connects directly (a link and its parent link in the URDF are adjacent; two links
fixed to each other never move apart), and every link but the base against the environment. A pair the geometry file
(`allowed_pairs`) or `--allow-pair` on the command line allows closer than the clearance, because the arm is built
closer (the FR3's links 5 and 7: at most 22.5 mm apart on the vendor's meshes), still keeps ALLOWED_CLEARANCE_M:
allowed closer is never allowed to touch.

A geometry file (robot_id_description/collision/<robot>.yaml) holds per link the capsules and what they were fitted
to (`meshes`, `boxes`: the vendor's geometry, which tests compare against).
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

import numpy as np

from robot_id_model.capsule_fit import Capsule, hull_of, mesh_vertices
from robot_id_model.config_values import ABOVE_ZERO, ConfigSection, read_yaml_mapping
from robot_id_model.robot_model import ModelError, RobotModel

FLOOR = "floor"
ALLOWED_CLEARANCE_M = 0.005
"""The least distance a pair allowed closer than the clearance keeps (or the clearance, if that is less). A fixed
distance, not the pair's distance as built less a margin: a pair built closer than the clearance is close over a
range of poses (the FR3's links 5 and 7: from 22.5 mm apart to overlapping as its joint 6 turns; the UR5e's base and
upper arm: 17.4 mm to overlapping), so its "built" distance is no one number. 5 mm keeps a gap on the vendor's
collision meshes, which already enclose the parts, for what the model does not know (tracking error, a link's
deflection under load); a design adds its clearance margin to it as to the clearance (10 mm by default), which still
leaves every allowed pair of the corpus room to move (docs/safety.md)."""


@dataclass(frozen=True)
class Box:
    """An axis-aligned box of the environment in the base frame."""

    name: str
    centre_m: np.ndarray
    half_size_m: np.ndarray


@dataclass(frozen=True)
class CollisionGeometry:
    """Capsules per link, the environment and the clearance every checked pair must keep (clearance_of)."""

    capsules: tuple[Capsule, ...]
    clearance_m: float
    floor_z_m: float
    boxes: tuple[Box, ...] = ()
    allowed_pairs: frozenset[frozenset[str]] = frozenset()
    """pairs of links (or a link and FLOOR or a box name) that may come closer than the clearance, down to
    allowed_clearance_m"""
    source: str = ""
    """where the capsules come from, for messages"""
    reference: dict = field(default_factory=dict)
    """per link, the vendor geometry the capsules were fitted to (`meshes`, `boxes`) and the fit's figures"""
    hulls: dict = field(default_factory=dict)
    """per link, the vertices (V, 3) of the convex hull of its vendor geometry in the link frame (link_hulls)"""
    allowed_clearance_m: float = ALLOWED_CLEARANCE_M
    """the least distance an allowed pair keeps"""

    def clearance_of(self, first: str, second: str) -> float:
        """The least distance the pair must keep: the clearance, or for an allowed pair the smaller of it and
        allowed_clearance_m."""
        if frozenset((first, second)) in self.allowed_pairs:
            return min(self.clearance_m, self.allowed_clearance_m)
        return self.clearance_m

    @property
    def links(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.link for c in self.capsules))

    def link_hulls(self) -> dict:
        """`hulls`; for a geometry file, computed from its meshes on first use (a config loads without them)."""
        if not self.hulls and self.reference:
            folder = pathlib.Path(self.source).parent
            self.hulls.update({link: hull_vertices(entry, folder) for link, entry in self.reference.items()
                               if entry.get("meshes") or entry.get("boxes")})
        return self.hulls


def _vector(value: object, what: str) -> np.ndarray:
    """Three finite numbers (not booleans, not strings); ModelError naming `what` otherwise."""
    numbers = isinstance(value, list | tuple) and len(value) == 3 and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    out = np.asarray(value, dtype=float) if numbers else np.full(3, np.nan)
    if not np.isfinite(out).all():
        raise ModelError(f"{what} must be three finite numbers, got {value!r}")
    return out


def box_corners(centre_m: np.ndarray, size_m: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """The eight corners (8, 3) of a box of the given size, turned by `rotation` about its centre."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    return np.asarray(centre_m) + (signs * 0.5 * np.asarray(size_m)) @ np.asarray(rotation).T


def hull_vertices(entry: dict, folder: pathlib.Path) -> np.ndarray:
    """Vertices of the convex hull of a link's meshes (with their origins) and boxes, in the link frame."""
    points = [mesh_vertices(folder / m["file"]) + np.asarray(m["origin_xyz_m"], dtype=float)
              for m in entry.get("meshes", ())]
    points += [box_corners(b["centre_m"], b["size_m"], b["rotation"]) for b in entry.get("boxes", ())]
    return hull_of(np.concatenate(points))


def read_capsules(path: pathlib.Path) -> tuple[tuple[Capsule, ...], frozenset[frozenset[str]], dict]:
    """Capsules, allowed pairs and fit reference (the vendor geometry: meshes, boxes) of a geometry file; a missing
    or wrong value is one ModelError naming the file, the key and what it expects (config_values)."""
    raw = ConfigSection(read_yaml_mapping(path, "collision geometry file"), str(path))
    sections = raw.section("links")
    capsules = tuple(
        Capsule(link, c.numbers("a_m", 3, "m", each="x, y, z in the link frame"),
                c.numbers("b_m", 3, "m", each="x, y, z in the link frame"), c.number("radius_m", "m", ABOVE_ZERO))
        for link in sections.values for c in sections.section(link).sections("capsules"))
    pairs = raw.values.get("allowed_pairs") or []
    if not isinstance(pairs, list) or not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
        raise ModelError(f"{path}: allowed_pairs must be a list of pairs of link names, got {pairs!r}")
    allowed = frozenset(frozenset(pair) for pair in pairs)
    links = sections.values
    reference = {link: {k: v for k, v in entry.items() if k != "capsules"} for link, entry in links.items()}
    return capsules, allowed, reference


BOX_KEYS = ("name", "centre_m", "size_m")


def environment_boxes(raw: object, where: str) -> tuple[Box, ...]:
    """Boxes of a robot config's `collision: boxes:` list ({name, centre_m, size_m}, axis-aligned in the base frame);
    ModelError (one line) for a malformed box, a rotation, or a name used twice or for the floor."""
    boxes = []
    for item in raw or ():
        if not isinstance(item, dict) or set(item) != set(BOX_KEYS):
            extra = sorted(set(item) - set(BOX_KEYS)) if isinstance(item, dict) else []
            raise ModelError(f"{where}: a collision box is {{name, centre_m, size_m}} (axis-aligned in the base frame)"
                             + (f"; {extra} not understood" if extra else f", got {item!r}"))
        name = str(item["name"])
        centre, size = (_vector(item[key], f"{where}: box '{name}' {key}") for key in ("centre_m", "size_m"))
        if np.any(size <= 0):
            raise ModelError(f"{where}: box '{name}' needs a positive size_m")
        if name == FLOOR or name in (b.name for b in boxes):
            raise ModelError(f"{where}: box name '{name}' is used twice or names the floor; give each box its own name")
        boxes.append(Box(name, centre, 0.5 * size))
    return tuple(boxes)


@dataclass(frozen=True)
class BoundGeometry:
    """A CollisionGeometry attached to a RobotModel's joints: endpoints in joint frames, and the checked pairs."""

    joint: np.ndarray
    """(C,) the pinocchio joint each capsule moves with (0: the base)"""
    a_m: np.ndarray
    """(C, 3) segment ends in the joint frame, as b_m"""
    b_m: np.ndarray
    radius_m: np.ndarray
    """(C,)"""
    pairs: np.ndarray
    """(P, 2) capsule indices of every checked capsule pair"""
    pair_group: np.ndarray
    """(P,) index of the link pair (in `groups`) each capsule pair belongs to"""
    environment: np.ndarray
    """(E,) capsules checked against the floor and the boxes"""
    groups: tuple[tuple[str, str], ...]
    """the checked link pairs (allowed pairs too: they keep allowed_clearance_m), then (link, FLOOR) and
    (link, box name) groups follow from `environment`"""
    link_placement: dict = field(default_factory=dict)
    """per link, (joint, rotation, translation) of its frame in its joint's frame"""
    level_links: frozenset[str] = frozenset()
    """links whose height never changes (on the first joint, turning about the vertical): not checked against the
    floor, which they are mounted above"""


def _placement(robot: RobotModel, link: str) -> tuple[int, np.ndarray, np.ndarray]:
    """(joint, rotation, translation) of a URDF link's frame in its joint's frame."""
    model = robot.model
    if not model.existFrame(link):
        raise ModelError(f"collision geometry names link '{link}', which is not in the robot model")
    frame = model.frames[model.getFrameId(link)]
    return int(frame.parentJoint), frame.placement.rotation.copy(), frame.placement.translation.copy()


_BOUND: dict[tuple[int, int], tuple[CollisionGeometry, RobotModel, BoundGeometry]] = {}


def bind(geometry: CollisionGeometry, robot: RobotModel) -> BoundGeometry:
    """Attach the capsules to the model's joints; pick the link pairs to check (cached per geometry and model)."""
    key = (id(geometry), id(robot))
    cached = _BOUND.get(key)
    if cached is not None and cached[0] is geometry and cached[1] is robot:
        return cached[2]
    if len(_BOUND) > 32:
        _BOUND.clear()
    bound = _bind(geometry, robot)
    _BOUND[key] = (geometry, robot, bound)
    return bound


def _bind(geometry: CollisionGeometry, robot: RobotModel) -> BoundGeometry:
    joint, a_m, b_m = [], [], []
    placement = {link: _placement(robot, link) for link in {*geometry.links, *geometry.link_hulls()}}
    for c in geometry.capsules:
        j, rotation, translation = placement[c.link]
        joint.append(j)
        a_m.append(rotation @ c.a_m + translation)
        b_m.append(rotation @ c.b_m + translation)
    joint_arr = np.array(joint, dtype=int)
    links = geometry.links
    clash = sorted({b.name for b in geometry.boxes} & {f.name for f in robot.model.frames})
    if clash:
        raise ModelError(f"collision box names {clash} are names of the robot's frames; give the boxes other names")
    link_joint = {c.link: j for c, j in zip(geometry.capsules, joint, strict=True)}
    groups, pairs, pair_group = [], [], []
    for i, first in enumerate(links):
        for second in links[i + 1:]:
            if link_joint[first] == link_joint[second] or _adjacent(robot, first, second):
                continue
            groups.append((first, second))
            for p, c in enumerate(geometry.capsules):
                for q, d in enumerate(geometry.capsules):
                    if c.link == first and d.link == second:
                        pairs.append((p, q))
                        pair_group.append(len(groups) - 1)
    environment = [p for p, c in enumerate(geometry.capsules) if link_joint[c.link] > 0]
    level = frozenset(link for link, j in link_joint.items() if j == 1 and _turns_about_vertical(robot))
    return BoundGeometry(joint_arr, np.array(a_m), np.array(b_m), np.array([c.radius_m for c in geometry.capsules]),
                         np.array(pairs, dtype=int).reshape(-1, 2), np.array(pair_group, dtype=int),
                         np.array(environment, dtype=int), tuple(groups), placement, level)


def _parent_link(robot: RobotModel, link: str) -> str | None:
    """The URDF link that `link` hangs on (through one joint, moving or fixed); None for the root."""
    frames = robot.model.frames
    joint_frame = frames[robot.model.getFrameId(link)].parentFrame
    parent = frames[joint_frame].parentFrame if joint_frame < len(frames) else None
    return None if parent is None or parent == joint_frame else frames[parent].name


def _adjacent(robot: RobotModel, first: str, second: str) -> bool:
    """One joint connects the two links directly (one is the other's parent link in the URDF)."""
    return _parent_link(robot, first) == second or _parent_link(robot, second) == first


def _turns_about_vertical(robot: RobotModel) -> bool:
    """The first joint is revolute about the base's z axis through its origin's vertical line."""
    import pinocchio as pin

    model, data = robot.model, robot.model.createData()
    pin.computeJointJacobians(model, data, pin.neutral(model))
    twist = pin.getJointJacobian(model, data, 1, pin.LOCAL_WORLD_ALIGNED)[:, 0]
    return bool(np.allclose(twist[:2], 0.0, atol=1e-9) and np.allclose(twist[3:5], 0.0, atol=1e-9)
                and abs(twist[5]) > 0 and abs(twist[2]) < 1e-9)


def pair_lists(pairs: frozenset[frozenset[str]]) -> list[list[str]]:
    """Pairs of names as sorted lists, in a stable order (for files and messages)."""
    return sorted(sorted(pair) for pair in pairs)
