"""The mass distribution of a uniform solid filling a convex hull: its volume, centroid and second moments, the
yardstick for how spread out a link's mass can plausibly be."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HullMoments:
    volume_m3: float
    centroid_m: np.ndarray
    second_moment_per_kg_m2: np.ndarray
    """(3, 3) ∫(r − c)(r − c)ᵀ dV / V: the second moments Σ_C of one kilogram filling the hull uniformly."""


def uniform_hull_moments(points_m: np.ndarray) -> HullMoments:
    """Moments of the uniform solid convex hull of the points, summed over the tetrahedra from an inner point to each
    facet: a tetrahedron of volume V with vertices v_k has ∫r·rᵀ dV = V/20·(Σ v_k·v_kᵀ + s·sᵀ), s = Σ v_k.
    ValueError for a flat or degenerate set of points (no volume)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(points_m)
    except QhullError:
        raise ValueError("the points span no volume") from None
    apex = points_m[hull.vertices].mean(axis=0)
    tetra = np.concatenate([points_m[hull.simplices], np.broadcast_to(apex, (len(hull.simplices), 1, 3))], axis=1)
    tetra = tetra - apex  # moments about the inner point, for accuracy
    volumes = np.abs(np.linalg.det(tetra[:, :3] - tetra[:, 3:])) / 6.0
    volume = float(volumes.sum())
    if volume <= 0.0:
        raise ValueError("the points span no volume")
    sums = tetra.sum(axis=1)
    first = (volumes[:, None] * sums / 4.0).sum(axis=0) / volume
    second = np.einsum("t,tki,tkj->ij", volumes, tetra, tetra) + np.einsum("t,ti,tj->ij", volumes, sums, sums)
    second = second / (20.0 * volume)
    return HullMoments(volume, apex + first, second - np.outer(first, first))
