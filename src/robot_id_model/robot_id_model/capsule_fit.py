"""Capsules that enclose a triangle mesh: what the suite checks distances with instead of the mesh itself.

A capsule (segment a–b, radius r) is convex, so it holds a triangle when it holds the triangle's three corners. A mesh
is split into at most a few parts (k-means of the triangles' centroids), every triangle whole in one part, and each part
gets the capsule of least volume that holds all corners of its triangles. The capsules together then hold the whole
surface, so a distance between capsules is never larger than the distance between the meshes they enclose.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np

SUBDIVISION_M = 0.02
"""Triangles are split down to this edge length before they are clustered."""
SPLIT_GAIN = 0.8
"""A further split is kept only if it brings the total volume below this fraction of the fewer capsules' volume."""


@dataclass(frozen=True)
class Capsule:
    """A segment a–b with a radius, in the frame of the link it belongs to."""

    link: str
    a_m: np.ndarray
    b_m: np.ndarray
    radius_m: float

    @property
    def volume_m3(self) -> float:
        length = float(np.linalg.norm(self.b_m - self.a_m))
        return float(np.pi * self.radius_m**2 * length + 4.0 / 3.0 * np.pi * self.radius_m**3)

    def as_dict(self) -> dict:
        return {"a_m": [round(float(v), 6) for v in self.a_m], "b_m": [round(float(v), 6) for v in self.b_m],
                "radius_m": round(float(self.radius_m), 6)}


def _load_mesh(path: str | pathlib.Path, scale: np.ndarray | float) -> object:
    """A coal BVH model of a mesh file (STL, DAE, OBJ, ... as coal's assimp loader reads them), scaled."""
    import coal

    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"mesh file not found: {path}")
    try:
        mesh = coal.MeshLoader().load(str(path), np.broadcast_to(np.asarray(scale, dtype=float), (3,)).copy())
    except Exception as err:  # coal reports an unreadable file as a bare exception with a C++ backtrace
        raise ValueError(f"{path}: not a mesh coal can read ({str(err).strip().splitlines()[-1]})") from None
    if mesh.num_tris == 0:
        raise ValueError(f"{path}: a mesh without triangles")
    return mesh


def mesh_vertices(path: str | pathlib.Path, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """Vertices (V, 3) of a mesh file, scaled."""
    return np.asarray(_load_mesh(path, scale).vertices(), dtype=float)


def read_mesh(path: str | pathlib.Path, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """Triangles (T, 3, 3) of a mesh file, scaled."""
    mesh = _load_mesh(path, scale)
    vertices = np.asarray(mesh.vertices(), dtype=float)
    triangles = np.array([[mesh.tri_indices(i)[j] for j in range(3)] for i in range(mesh.num_tris)], dtype=int)
    return vertices[triangles]


def segment_distance_m(points: np.ndarray, a_m: np.ndarray, b_m: np.ndarray) -> np.ndarray:
    """Distance of each point (N, 3) from the segment a–b."""
    ab = b_m - a_m
    length_sq = float(ab @ ab)
    t = np.zeros(len(points)) if length_sq == 0.0 else np.clip((points - a_m) @ ab / length_sq, 0.0, 1.0)
    return np.linalg.norm(points - (a_m + t[:, None] * ab), axis=1)


def _least_volume_capsule(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The capsule of (nearly) least volume holding every point: from a start along each principal axis,
    Nelder–Mead over both end points with the radius the largest distance of a point from the segment."""
    import scipy.optimize  # here, not at the top: loading a config needs no scipy

    centre = points.mean(axis=0)
    axes = np.linalg.svd(points - centre, full_matrices=False)[2]

    def volume(x: np.ndarray) -> float:
        a, b = x[:3], x[3:]
        r = float(segment_distance_m(points, a, b).max())
        return np.pi * r**2 * float(np.linalg.norm(b - a)) + 4.0 / 3.0 * np.pi * r**3

    best = None
    for axis in axes:
        along = (points - centre) @ axis
        radial = float(np.linalg.norm(points - centre - along[:, None] * axis, axis=1).max())
        inset = min(radial, 0.5 * (along.max() - along.min()))
        x0 = np.r_[centre + (along.min() + inset) * axis, centre + (along.max() - inset) * axis]
        res = scipy.optimize.minimize(volume, x0, method="Nelder-Mead",
                                      options={"xatol": 1e-5, "fatol": 1e-10, "maxiter": 3000, "adaptive": True})
        if best is None or res.fun < best.fun:
            best = res
    a, b = best.x[:3], best.x[3:]
    return a, b, float(segment_distance_m(points, a, b).max())


def _clusters(centroids: np.ndarray, parts: int, rng: np.random.Generator, rounds: int = 30) -> np.ndarray:
    """k-means labels of the triangles' centroids (Lloyd's algorithm from a k-means++ start)."""
    centres = [centroids[rng.integers(len(centroids))]]
    for _ in range(1, parts):
        d2 = np.min([np.sum((centroids - c) ** 2, axis=1) for c in centres], axis=0)
        centres.append(centroids[rng.choice(len(centroids), p=d2 / d2.sum())])
    centres = np.array(centres)
    for _ in range(rounds):
        labels = np.argmin(((centroids[:, None] - centres[None]) ** 2).sum(axis=2), axis=1)
        centres = np.array([centroids[labels == k].mean(axis=0) if np.any(labels == k) else centres[k]
                            for k in range(parts)])
    return labels


def subdivided(triangles_m: np.ndarray, max_edge_m: float) -> np.ndarray:
    """The same surface in triangles no edge of which is longer than max_edge_m (each split in four at its edges'
    midpoints), so that a part of a coarse mesh can be held without the long triangles that cross it."""
    out = np.asarray(triangles_m, dtype=float)
    while True:
        edges = np.linalg.norm(out - np.roll(out, 1, axis=1), axis=2).max(axis=1)
        long = edges > max_edge_m
        if not long.any():
            return out
        t = out[long]
        m01, m12, m20 = (t[:, 0] + t[:, 1]) / 2, (t[:, 1] + t[:, 2]) / 2, (t[:, 2] + t[:, 0]) / 2
        split = np.concatenate([np.stack(c, axis=1) for c in ((t[:, 0], m01, m20), (m01, t[:, 1], m12),
                                                              (m20, m12, t[:, 2]), (m01, m12, m20))])
        out = np.concatenate([out[~long], split])


def _partitions(centroids: np.ndarray, parts: int, rng: np.random.Generator, tries: int) -> list[np.ndarray]:
    """Candidate labels of the triangles into `parts` parts: k-means from `tries` seeds, and for two parts also cuts
    by planes across the principal axis at three quantiles."""
    if parts == 1:
        return [np.zeros(len(centroids), dtype=int)]
    out = [_clusters(centroids, parts, rng) for _ in range(tries)]
    if parts == 2:
        centre = centroids.mean(axis=0)
        along = (centroids - centre) @ np.linalg.svd(centroids - centre, full_matrices=False)[2][0]
        out += [(along > np.quantile(along, cut)).astype(int) for cut in (0.35, 0.5, 0.65)]
    return out


def hull_of(points: np.ndarray) -> np.ndarray:
    """The vertices of the convex hull of the points; of a flat or degenerate set, those of the points slightly
    jiggled (qhull's QJ), whose hull still holds every point."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return points[ConvexHull(points).vertices]
    except QhullError:
        return points[ConvexHull(points, qhull_options="QJ").vertices]


def _part_capsules(link: str, triangles_m: np.ndarray, labels: np.ndarray) -> tuple[Capsule, ...]:
    """The least-volume capsule of each part's corners (only its convex hull's vertices matter)."""
    return tuple(Capsule(link, *_least_volume_capsule(hull_of(np.unique(triangles_m[labels == k].reshape(-1, 3),
                                                                        axis=0))))
                 for k in np.unique(labels))


def fit_capsules(link: str, triangles_m: np.ndarray, max_capsules: int = 4, tries: int = 3) -> tuple[Capsule, ...]:
    """At most `max_capsules` capsules holding every triangle: for each count, the best of several partitions of
    the (subdivided) triangles, each triangle whole in one part; a count is kept only when it saves enough volume
    over the fewer capsules (SPLIT_GAIN)."""
    rng = np.random.default_rng(0)
    triangles_m = subdivided(triangles_m, SUBDIVISION_M)
    centroids = triangles_m.mean(axis=1)
    best: tuple[Capsule, ...] = ()
    for parts in range(1, max_capsules + 1):
        candidates = [_part_capsules(link, triangles_m, labels)
                      for labels in _partitions(centroids, parts, rng, tries)]
        capsules = min(candidates, key=lambda cs: sum(c.volume_m3 for c in cs))
        if not best or sum(c.volume_m3 for c in capsules) < SPLIT_GAIN * sum(c.volume_m3 for c in best):
            best = capsules
    return best


def enclosing_capsule(link: str, corners_m: np.ndarray) -> Capsule:
    """One capsule holding every point (the corners of a box or a cylinder's rims, say)."""
    a, b, r = _least_volume_capsule(np.asarray(corners_m, dtype=float))
    return Capsule(link, a, b, r)


def reach_beyond_mesh_m(capsules: tuple[Capsule, ...], triangles_m: np.ndarray, samples: int = 400) -> float:
    """How far the capsules reach beyond the mesh: the largest distance of a point on a capsule's outer surface
    (sampled) from the mesh's convex hull (0 inside it). An upper bound on how much they overstate the mesh."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(triangles_m.reshape(-1, 3))
    rng = np.random.default_rng(0)
    worst = 0.0
    for c in capsules:
        direction = rng.normal(size=(samples, 3))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        t = rng.uniform(size=samples)[:, None]
        points = c.a_m + t * (c.b_m - c.a_m) + c.radius_m * direction
        beyond = points @ hull.equations[:, :3].T + hull.equations[:, 3]
        # the largest plane distance is the exact distance where the nearest hull point is on a face, less at an edge
        worst = max(worst, float(np.clip(beyond.max(axis=1), 0.0, None).max()))
    return worst
