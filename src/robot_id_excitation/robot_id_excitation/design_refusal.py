"""Why no design is feasible, for the refusal: the constraints at rest at the least violating of random poses, and
what to do about pairs of links (or a link and the floor) closer than the clearance in every one of them."""

from __future__ import annotations

import numpy as np

from robot_id_excitation.constraints import CheckReport, ConstraintGroup, check_samples, constraint_groups
from robot_id_excitation.design_problem import DesignProblem
from robot_id_model.collision_geometry import ALLOWED_CLEARANCE_M


def static_report(problem: DesignProblem, rng: np.random.Generator, tries: int = 50) -> tuple[CheckReport, list[str]]:
    """Constraints at rest at the least violating of random poses, to explain an infeasible design; and the pairs
    of links closer than the clearance in every one of those poses (built that close: no design can keep it)."""
    lim = problem.limits
    mid = 0.5 * (lim.position_upper_rad + lim.position_lower_rad)
    half = 0.5 * (lim.position_upper_rad - lim.position_lower_rad)
    poses = mid + rng.uniform(-0.5, 0.5, (tries, problem.n)) * half
    zeros = np.zeros_like(poses)
    groups = constraint_groups(problem.robot, lim, poses, zeros, zeros)
    best = int(np.argmin(np.max([g.value for g in groups], axis=0)))
    always_close = [g for g in groups if g.constraint == "collision" and np.all(g.excess > 0)]
    allowed = lim.collision.allowed_pairs if lim.collision is not None else frozenset()
    return check_samples(problem.robot, lim, np.zeros(1), poses[best : best + 1], zeros[:1], zeros[:1]), \
        always_close_hints(always_close, tries, allowed)


def always_close_hints(always_close: list[ConstraintGroup], tries: int,
                       allowed: frozenset[frozenset[str]] = frozenset()) -> list[str]:
    """What to do about pairs closer than the clearance in every pose: a floor above the links or a clearance of
    the arm's size are options typed wrong; a few pairs of links may be built that close; a pair already
    `allowed` closer than its allowed clearance in every pose overlaps as built (its geometry is wrong)."""
    overlapping = [g for g in always_close if frozenset(g.where.split("–")) in allowed]
    always_close = [g for g in always_close if g not in overlapping]
    hints = [f"  {g.where} are allowed closer than the clearance but come within {1e3 * g.bound[0]:.1f} mm (with the "
             f"margin) in all {tries} poses, at most {1e3 * np.max(g.quantity):.1f} mm apart: is their collision "
             "geometry right?" for g in overlapping]
    floor = [g.where.split("–")[0] for g in always_close if g.where.endswith("–floor")]
    pairs = [g for g in always_close if not g.where.endswith("–floor")]
    hints += [f"  {', '.join(floor)} within the clearance of the floor in all {tries} poses: are --floor-z and "
              "--clearance right (metres; the floor in the base frame)?"] if floor else []
    if len(pairs) > 3:
        clearance_mm = 1e3 * pairs[0].bound[0]
        return [*hints, f"  {len(pairs)} pairs of links are closer than the clearance ({clearance_mm:.1f} mm with its "
                        f"margin) in all {tries} poses: is --clearance right (metres)?"]
    return hints + [
        f"  {g.where} are closer than the clearance ({1e3 * g.bound[0]:.1f} mm with its margin) in all {tries} poses, "
        f"at most {1e3 * np.max(g.quantity):.1f} mm apart: if they are built that close, allow the pair "
        f"(--allow-pair {g.where.replace('–', ',')}, or allowed_pairs in the robot's collision file: it still keeps "
        f"{1e3 * ALLOWED_CLEARANCE_M:g} mm) or lower the clearance" for g in pairs]
