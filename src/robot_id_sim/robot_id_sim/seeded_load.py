"""A load the simulated robot carries on its flange, drawn from a seed so that a run's load is unknown to the
estimator but the same each time, and another seed swaps it: a solid box of random size and orientation, its centre
up to 10 cm off the flange's axis (the loads of the payload end-to-end checks).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from robot_id_model.physical import LinkInertial

MASS_RANGE_KG = (0.5, 3.0)
"""Drawn uniformly, capped at the robot's rated payload."""
OFF_AXIS_M = 0.10
"""The CoM's largest distance from the flange's z axis."""
ALONG_AXIS_M = (0.02, 0.15)
"""The CoM's distance along it, out of the flange."""
SIDE_M = (0.05, 0.20)
"""Each side of the box."""


def seeded_load(seed: int, rated_payload_kg: float = 0.0) -> LinkInertial:
    """The load of `seed` in the flange frame: mass, CoM and inertia about the CoM of a solid box."""
    rng = np.random.default_rng([seed, 29])
    high = min(MASS_RANGE_KG[1], rated_payload_kg) if rated_payload_kg > 0.0 else MASS_RANGE_KG[1]
    mass_kg = float(rng.uniform(MASS_RANGE_KG[0], high))
    radius_m, angle_rad = OFF_AXIS_M * np.sqrt(rng.uniform()), rng.uniform(0.0, 2.0 * np.pi)
    com_m = np.array([radius_m * np.cos(angle_rad), radius_m * np.sin(angle_rad), rng.uniform(*ALONG_AXIS_M)])
    return solid_box(mass_kg, tuple(rng.uniform(*SIDE_M, 3)), com_m, Rotation.random(random_state=rng).as_matrix())


def solid_box(mass_kg: float, size_m: tuple[float, float, float], com_m: np.ndarray,
              rotation: np.ndarray) -> LinkInertial:
    """A solid box of `size_m` centred at `com_m`, its axes turned by `rotation` from the frame's."""
    a, b, c = size_m
    moments = mass_kg / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    return LinkInertial(mass_kg, np.asarray(com_m, dtype=float), rotation @ np.diag(moments) @ rotation.T)
