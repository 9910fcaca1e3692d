"""Whether retrieved link parameters are plausible bodies, as a result (physical.plausibility makes it): per link
mass, CoM and principal moments against the URDF and the bounds, the active constraints, the arm's mass against its
datasheet."""

from __future__ import annotations

from dataclasses import dataclass

SIZE = "(link size)"
"""The end of every size bound's label."""

ACTIVE_WARNING = "physical parameters on a bound (the data pushed against it)"

ACTIVE_KINDS = (
    (" at its lower bound ", "at their lower bounds (eq. 16)", lambda label: label.split(" = ")[0]),
    (" at its upper bound ", "at their upper bounds (eq. 16)", lambda label: label.split(" = ")[0]),
    ("| ≤ ", "off-diagonal inertias at their ratio to the diagonal (eq. 18)", lambda label: label.split("|")[1]),
    ("(eq. 18)", "diagonal inertias at their triangle or ratio bound (eq. 18)",
     lambda label: label.split(" (eq. 18)")[0]),
    (": relative margin ", "links at the relative margin bound",
     lambda label: label.split(":")[0].removeprefix("link ")),
    (SIZE, "links at their size bound (physical.size_bounds)",
     lambda label: label.split(":")[0].removeprefix("link ")),
)
"""Kinds of active constraint grouped into one line each: what their labels contain, how the line reads, the name
of each (physical.constraints.ConstraintSet.active); any other active constraint gets a line of its own."""


def grouped_active(active: tuple[str, ...]) -> list[str]:
    """One line per kind of active constraint (ACTIVE_KINDS) with the count and names, then the others."""
    lines, rest = [], list(active)
    for marker, words, name in ACTIVE_KINDS:
        members = [label for label in rest if marker in label]
        if members:
            lines.append(f"{len(members)} {words}: {', '.join(name(label) for label in members)}")
            rest = [label for label in rest if label not in members]
    return lines + rest


@dataclass(frozen=True)
class LinkPlausibility:
    """One link body as identified (with the known parts it carries) beside the URDF's and the bounds."""

    link_name: str
    mass_kg: float
    urdf_mass_kg: float
    mass_bounds_kg: tuple[float, float]
    com_m: tuple[float, ...]
    urdf_com_m: tuple[float, ...]
    com_bounds_m: tuple[tuple[float, ...], tuple[float, ...]]
    principal_moments_kg_m2: tuple[float, ...]
    """Eigenvalues of the inertia about the CoM, ascending."""
    urdf_principal_moments_kg_m2: tuple[float, ...]
    inertia_diag_upper_kg_m2: float
    relative_margin: float
    """λ_min(Σ_C)/tr(Σ_C) of the link's own body (robot_id_model.physical.relative_margin)."""
    spread: float | None = None
    """How spread the link's own body is against its uniform collision hull (physical.size_bounds)."""
    size_bound: float | None = None
    """The least spread the retrieval allowed; None (and no spread): the link has no size bound."""


@dataclass(frozen=True)
class Plausibility:
    links: tuple[LinkPlausibility, ...]
    total_mass_kg: float
    urdf_total_mass_kg: float
    total_mass_bounds_kg: tuple[float, float]
    margin: float
    active: tuple[str, ...]
    """Constraints the solution lies on (within ACTIVE_FRACTION)."""
    datasheet_mass_kg: float | None = None
    arm_mass_kg: float | None = None
    """The identified mass as a datasheet counts it: moving links without the known parts they carry (a gripper),
    plus the URDF's links that do not move (the base). None without a datasheet figure."""

    def warnings(self) -> list[str]:
        """One line per kind of active constraint, with their count and names: the data pushed the solution against
        them (the report lists each)."""
        return [f"{ACTIVE_WARNING}: {line}" for line in grouped_active(self.active)]
