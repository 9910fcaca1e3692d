"""The Coulomb column's law per joint: the shape of a joint's Coulomb friction in speed (or along its path), times
its Coulomb parameter FC. Each family is one class in one module of this folder (law.CoulombLaw: its shape
parameters, signal, formula, the candidates the estimator's choice tries and its dictionary in files), registered
by name in FAMILIES, which the estimator's choice, settings and command line, the exports (identified.yaml,
identified.urdf's comment), the report and the ROS messages read:

- sign: sign(dq), the classical law (Xu et al. 2020), the default;
- tanh: tanh(dq/v_s), smooth through rest;
- sigmoid: Gaz et al. 2019's off-centre sigmoid, tanh((dq + δ)/v_s) − tanh(δ/v_s);
- presliding: Dahl's state over a travel x_c after each reversal, a state of the path;
- stribeck: sign(dq)·(1 + r·exp(−(dq/v_s)²)), Luo et al. 2024, eq. (7) with one velocity.

Adding a family: a module here with a CoulombLaw dataclass decorated with @register (every module of this folder
is imported with the package), and its tests. The simulator's true friction (robot_id_sim.true_friction) is
written apart on purpose: a truth sharing this code could not show its bias.
"""

from __future__ import annotations

import importlib
import pkgutil

from robot_id_model.coulomb_laws.law import FAMILIES, CoulombLaw, ShapeParameter, coulomb_signals, register
from robot_id_model.coulomb_laws.sign import SIGN, SignLaw

SHIPPED = ("sign", "tanh", "sigmoid", "presliding", "stribeck")
"""The families shipped, registered in this order, the order the estimator's choice has always tried them in: the
last digits of its held-out errors depend on the candidates' order (one least-squares solve for them all). Any other
module of this folder is imported after them."""

for _module in (*SHIPPED, *sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in SHIPPED)):
    importlib.import_module(f"{__name__}.{_module}")



def candidate_laws() -> tuple[CoulombLaw, ...]:
    """The laws a choice among the families tries: the sign law first, then every registered family's candidates
    (CoulombLaw.candidates)."""
    return (SIGN, *(law for family in FAMILIES.values() for law in family.candidates() if law != SIGN))


__all__ = ["FAMILIES", "SIGN", "CoulombLaw", "ShapeParameter", "SignLaw", "candidate_laws", "coulomb_signals",
           "register"]
