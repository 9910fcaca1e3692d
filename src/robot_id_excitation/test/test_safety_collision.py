"""Guarantee 5 (docs/safety.md) as properties, against the vendors' collision meshes read by coal: the suite never
states a distance larger than the meshes' (poses near the arm's own geometry and the floor), and every trajectory it
accepts keeps the clearance on the meshes over its whole period."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st
from safety_harness import SAFETY, SAFETY_EXAMPLES, setup, trajectories
from vendor_meshes import mesh_distances

from robot_id_excitation.check import time_grid
from robot_id_excitation.constraints import constraint_groups
from robot_id_excitation.excitation_guard import trajectory_refusal

ROBOT = "panda"
"""Franka's collision meshes are small and convex: coal reads them in a few microseconds per pair."""
NEAR = {5: (-0.0175, 0.6), 3: (-3.0718, -2.6), 1: (1.2, 1.7628)}
"""Joint ranges that fold the wrist onto link 5, the elbow onto itself, or lean the arm towards the floor."""
COLLISION = settings(SAFETY, max_examples=max(20, SAFETY_EXAMPLES // 5))
"""A fifth of the other properties' examples: every example computes the distances of 27 mesh pairs per pose."""


@lru_cache
def _pairs() -> tuple[tuple[str, str], ...]:
    s = setup(ROBOT)
    zeros = np.zeros((1, 7))
    return tuple(tuple(g.where.split("–")) for g in constraint_groups(s.robot, s.limits, zeros, zeros, zeros)
                 if g.constraint == "collision")


@st.composite
def poses_near_the_geometry(draw) -> np.ndarray:
    s = setup(ROBOT)
    lower, upper = s.limits.position_lower_rad, s.limits.position_upper_rad
    q = np.array([draw(st.floats(lo, hi)) for lo, hi in zip(lower, upper, strict=True)])
    for joint in draw(st.sets(st.sampled_from(sorted(NEAR)), min_size=1)):
        q[joint] = draw(st.floats(*NEAR[joint]))
    return q


@COLLISION
@given(poses_near_the_geometry())
def test_the_suite_never_states_a_distance_larger_than_the_vendor_meshes(q):
    s = setup(ROBOT)
    zeros = np.zeros((1, 7))
    stated = {g.where: float(g.quantity[0]) for g in constraint_groups(s.robot, s.limits, q[None], zeros, zeros)
              if g.constraint == "collision"}
    meshes = mesh_distances(s.robot, s.limits.collision, list(_pairs()), q[None])[0]
    for (first, second), on_meshes in zip(_pairs(), meshes, strict=True):
        assert stated[f"{first}–{second}"] <= on_meshes + 1e-6, (first, second, q)
    event("within the clearance on the meshes" if meshes.min() < s.limits.collision.clearance_m else "clear")


@COLLISION
@given(trajectories(ROBOT, kinds=("feasible", "marginal", "infeasible")), st.sampled_from(sorted(NEAR)),
       st.floats(0.0, 1.0))
def test_an_accepted_trajectory_keeps_the_clearance_on_the_vendor_meshes(case, joint, where):
    """A pool trajectory moved towards the arm's own geometry (one joint's offset into its NEAR range) is either
    refused or keeps the clearance on the meshes at every 20th of its check grid."""
    kind, trajectory = case
    s = setup(ROBOT)
    offsets = trajectory.offsets_rad.copy()
    low, high = NEAR[joint]
    offsets[joint] = low + where * (high - low)
    moved = replace(trajectory, offsets_rad=offsets)
    if trajectory_refusal(moved, s.robot, s.limits, ROBOT):
        event(f"{kind}: refused")
        return
    q = moved.evaluate(time_grid(moved.period_s, 40))[0]
    meshes = mesh_distances(s.robot, s.limits.collision, list(_pairs()), q)
    assert meshes.min() >= s.limits.collision.clearance_m
    event(f"{kind}: accepted")
