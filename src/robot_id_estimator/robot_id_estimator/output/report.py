"""Report directories: torque plots per joint, RSD bar chart, parameter tables (CSV) and a Markdown summary.

Figures are drawn with matplotlib's object API on the Agg canvas (no display, no pyplot state); matplotlib is
imported when a figure is drawn, not when this module is. Each parameter set has one line style (STYLES), chosen
so that curves that coincide all stay visible: the base parameters' wide translucent band under the essential
ones' dashes and the physical ones' dots. Legends sit below the axes, outside the data.
"""

from __future__ import annotations

import csv
import pathlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from robot_id_estimator.friction.coulomb_law_choice import SMOOTH_GAIN
from robot_id_estimator.output.figures import legend_below, new_figure, save_png
from robot_id_estimator.output.files import atomic_path, write_text
from robot_id_estimator.output.friction_figure import plot_friction
from robot_id_estimator.output.urdf_export import model_friction
from robot_id_estimator.physical.determination import HELD
from robot_id_estimator.physical.plausibility import plausibility_lines
from robot_id_estimator.processing.regression_data import N_FOLDS
from robot_id_estimator.results import Friction, Identification, Physical, Traces
from robot_id_estimator.validation.results import Validation
from robot_id_estimator.validation.set_checks import RULE
from robot_id_model.physical import inertia_six

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_PLOT_POINTS = 20_000
"""Longer traces are thinned to about this many points per line (every k-th sample)."""

STYLES = {
    "measured": dict(color="black", ls="-", lw=0.9, zorder=2),
    "urdf": dict(color="tab:gray", ls="-.", lw=1.0, zorder=1),
    "base": dict(color="tab:blue", ls="-", lw=3.5, alpha=0.4, zorder=3),
    "essential": dict(color="tab:red", ls="--", lw=1.2, zorder=4),
    "physical": dict(color="tab:green", ls=":", lw=1.6, zorder=5),
}
"""Line style of the measured torque and of each parameter set's prediction ('urdf': the nominal URDF model)."""
OTHER_COLOUR = "tab:gray"
"""Bars of base parameters that are not essential."""


def _label(parameter_set: str) -> str:
    return "nominal URDF model" if parameter_set == "urdf" else f"{parameter_set} parameters"


def _fmt(x: float, digits: int = 4) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.{digits}g}"


def torque_figure(traces: Traces, j: int, title: str) -> Figure:
    """Joint j's measured and predicted torque over time (every parameter set and the URDF model in traces),
    and the prediction errors below."""
    step = max(1, len(traces.t_s) // MAX_PLOT_POINTS)
    t, measured = traces.t_s[::step], traces.measured_nm[::step, j]
    fig = new_figure((10, 6))
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    top.plot(t, measured, **STYLES["measured"], label="measured")
    for s, tau in traces.predicted_nm.items():
        top.plot(t, tau[::step, j], **STYLES[s], label=f"predicted: {_label(s)}")
        bottom.plot(t, measured - tau[::step, j], **STYLES[s])
    top.set_ylabel("torque [Nm]")
    top.grid(alpha=0.3)
    fig.suptitle(title)
    legend_below(fig, *top.get_legend_handles_labels())
    bottom.set_ylabel("measured − predicted [Nm]")
    bottom.set_xlabel("time [s]")
    bottom.grid(alpha=0.3)
    return fig


def plot_torques(traces: Traces, joint_names: tuple[str, ...], out_dir: pathlib.Path, title: str) -> list[str]:
    """One PNG per joint (torque_figure)."""
    return [save_png(torque_figure(traces, j, f"{title}: {name}"), out_dir / f"torque_{name}.png")
            for j, name in enumerate(joint_names)]


def plot_rsd(result: Identification, path: pathlib.Path) -> str:
    """Bar chart of the base parameters' RSD (log scale), essential ones in red, the RSD threshold dashed."""
    rsd = result.base.rsd_percent
    essential = set(result.essential.names)
    shown = np.where(np.isfinite(rsd), np.maximum(rsd, 1e-3), np.nan)
    fig = new_figure((max(8.0, 0.18 * len(rsd)), 4.5))
    ax = fig.subplots()
    colours = [STYLES["essential"]["color"] if name in essential else OTHER_COLOUR for name in result.base.names]
    ax.bar(np.arange(len(rsd)), shown, color=colours)
    ax.set_yscale("log")
    ax.axhline(result.config.essential_rsd_threshold_percent, color="k", ls="--", lw=0.8,
               label=f"{result.config.essential_rsd_threshold_percent:g} % threshold")
    ax.set_xticks(np.arange(len(rsd)), result.base.names, rotation=90, fontsize=6)
    ax.set_ylabel("RSD [%] (Xu et al. 2020, eq. 7)")
    ax.set_title("Base parameters: red = essential, grey = eliminated or not identified")
    ax.legend(fontsize=8)
    return save_png(fig, path)


def observer_figure(traces: Traces, validation: Validation) -> Figure:
    """Momentum-observer residual per joint and parameter set, with the essential parameters' collision
    thresholds; the legend below the axes."""
    n = len(validation.joint_names)
    step = max(1, len(traces.t_s) // MAX_PLOT_POINTS)
    fig = new_figure((10, 1.6 * n + 1.5))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for j, ax in enumerate(axes):
        for s, r in traces.observer_nm.items():
            ax.plot(traces.t_s[::step], r[::step, j], **STYLES[s], label=_label(s))
        threshold = validation.collision_threshold_nm["essential"][j]
        ax.axhline(threshold, color="k", ls=(0, (5, 5)), lw=0.7, label="collision threshold (essential)")
        ax.axhline(-threshold, color="k", ls=(0, (5, 5)), lw=0.7)
        ax.set_ylabel(f"r {validation.joint_names[j]}\n[Nm]", fontsize=8)
    fig.suptitle(f"Momentum-observer residual (K_O = {validation.observer_gain_1_s:g} 1/s)")
    legend_below(fig, *axes[0].get_legend_handles_labels())
    axes[-1].set_xlabel("time [s]")
    return fig


def plot_observer(traces: Traces, validation: Validation, path: pathlib.Path) -> str:
    """observer_figure as a PNG."""
    return save_png(observer_figure(traces, validation), path)


def plot_rms_bars(validation: Validation, path: pathlib.Path) -> str:
    """Bars per joint: each set's RMS error as a percentage of the joint's torque RMS, side by side."""
    v, sets = validation, list(validation.rms_nm)
    x, width = np.arange(len(v.joint_names)), 0.8 / len(sets)
    fig = new_figure((max(8.0, 1.3 * len(v.joint_names)), 4.5))
    ax = fig.subplots()
    for k, s in enumerate(sets):
        ax.bar(x + (k - 0.5 * (len(sets) - 1)) * width, v.rms_percent_of_torque[s], width, label=s,
               color=STYLES[s]["color"])
    ax.set_yscale("log")
    ax.set_xticks(x, v.joint_names)
    ax.set_ylabel("RMS error [% of torque RMS]")
    ax.set_title("Torque prediction error on the validation data")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return save_png(fig, path)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def write_parameter_csv(result: Identification, out_dir: pathlib.Path) -> list[str]:
    """parameters_base.csv (name, value, RSD, essential, expression) and parameters_essential.csv."""
    essential = dict(zip(result.essential.names, result.essential.values, strict=True))
    with atomic_path(out_dir / "parameters_base.csv") as temporary, temporary.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["name", "value", "rsd_percent", "essential", "expression"])
        for name, value, rsd, expr in zip(result.base.names, result.base.values, result.base.rsd_percent,
                                          result.base_expressions, strict=True):
            writer.writerow([name, _fmt(value, 8), _fmt(rsd, 6), name in essential, expr])
    with atomic_path(out_dir / "parameters_essential.csv") as temporary, temporary.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["name", "value", "rsd_percent"])
        for name, value, rsd in zip(result.essential.names, result.essential.values, result.essential.rsd_percent,
                                    strict=True):
            writer.writerow([name, _fmt(value, 8), _fmt(rsd, 6)])
    return ["parameters_base.csv", "parameters_essential.csv"]


def _checks_section(result: Identification) -> list[str]:
    """Each parameter set's check on held-out data with its errors there and on the data it was fitted to, the best
    set, and the warnings."""
    held_out, sets = result.held_out, result.parameter_sets
    lines = ["## Checks", ""]
    if result.mistake:
        lines += [f"**Verdict: a mistake in the data.** {result.mistake}. The model does not hold: written only as "
                  "identified.rejected.urdf; correct the data and identify again.", ""]
    lines += [f"Held out: {held_out.source}. Rule: {RULE}.", ""]
    for name, check in result.checks.items():
        lines.append(f"- {name}: " + ("passed" if check.passed else "**FAILED**: " + "; ".join(check.failures)))
    lines += ["", f"Best on held-out data: **{result.best_set}** parameters.", "",
              *_table(["joint"] + [f"{s} {kind} [Nm]" for s in sets for kind in ("training", "held out")],
                      [[name] + [_fmt(x) for s in sets for x in (result.metrics.residual_rms_nm[s][j],
                                                                    held_out.rms_nm(s)[j])]
                       for j, name in enumerate(result.setup.joint_names)]
                      + [["sum"] + [_fmt(x) for s in sets for x in (sum(result.metrics.residual_rms_nm[s]),
                                                                     held_out.total_rms_nm(s))]])]
    if result.warnings:
        lines += ["", "Warnings:", ""] + [f"- **{w}**" for w in result.warnings]
    return [*lines, ""]


def _friction_section(result: Identification) -> list[str]:
    """Estimated linear friction (base parameters, RSD) beside the physical model's, which identified.urdf
    holds (urdf_export.model_friction, the one source of both)."""
    f, rsd = result.friction, dict(zip(result.base.names, result.base.rsd_percent, strict=True))
    model = model_friction(result) if result.physical is not None else None
    terms = [t for t in ("FV", "FC", "FO") if t in result.friction_terms]
    estimates = {"FV": f.viscous_nm_s_rad, "FC": f.coulomb_nm, "FO": f.offset_nm}
    header = ["joint"] + [f"{t} estimated (RSD %)" for t in terms]
    header += [f"{t} in the physical model" for t in terms] if model is not None else []
    header += ["Coulomb law"]
    rows = []
    for j, name in enumerate(f.joint_names):
        row = [name] + [f"{_fmt(estimates[t][j])} ({_fmt(rsd.get(f'{t}{j + 1}', np.nan), 3)})" for t in terms]
        if model is not None:
            row += [f"{_fmt(model[name][t][0])} ({model[name][t][1]})" for t in terms]
        row.append(f.laws()[j].formula())
        rows.append(row)
    choice = f.law_choice.describe(f.joint_names) if f.law_choice is not None else []
    return ["## Friction", "", "FV viscous [Nm s/rad], FC Coulomb [Nm], FO offset [Nm]; the physical model's values "
            "are those of identified.urdf and identified.yaml.", "", *_table(header, rows), "",
            *([f"Each joint's Coulomb law, chosen by how well it predicts held-out data ({N_FOLDS}-fold "
               f"cross-validation over time blocks; another law than sign(dq) only when at least "
               f"{100 * SMOOTH_GAIN:g} % better):", "",
               *(f"- {line}" for line in choice)] if choice else [])]


def _stribeck_section(f: Friction) -> list[str]:
    """The Stribeck fits of friction sweeps, if any."""
    if f.stribeck is None:
        return []
    return ["", "Stribeck friction (Luo et al. 2024, eq. 7), fitted to the sweeps:", "", *_table(
        ["joint", "fv1", "fv2", "fv3", "fs", "fs1", "fc", "fc1", "fit RMS [Nm]"],
        [[name, *(_fmt(c) for c in f.stribeck[j]), _fmt(f.stribeck_rms_nm[j])]
         for j, name in enumerate(f.joint_names)])]


def _physical_section(result: Identification) -> list[str]:
    """The retrieved physical parameters: method, residual, constraints, notes and the link table."""
    if result.physical is None:
        return []
    p = result.physical
    return [
        "## Physical parameters", "",
        f"- method {p.method} on the {p.target} parameters' columns, {p.wall_time_s:.3g} s; residual of eq. (15) "
        f"{_fmt(p.residual_norm_nm)} Nm, {p.residual_increase_percent:+.3g} % over the unconstrained fit",
        "- constraints: " + ("all met" if not p.violations else "; ".join(p.violations)),
        *[f"- {note}" for note in p.notes],
        "- bodies as the regressor sees them: an arm link together with the fixed links it carries (a "
        "gripper); identified.urdf writes the arm link's own part",
        ("- model: [identified.urdf](identified.urdf), friction and uncertainties: "
         "[identified.yaml](identified.yaml)" if result.model_holds else
         "- model: REJECTED (see Checks), written as [identified.rejected.urdf](identified.rejected.urdf) "
         "for inspection only"),
        "",
        *_table(["link", "mass [kg]", "CoM [m]", "Ixx Ixy Ixz Iyy Iyz Izz about the CoM [kg m²]"],
                [[name, _fmt(link.mass_kg), " ".join(_fmt(c) for c in link.com_m),
                  " ".join(_fmt(x) for x in inertia_six(link.inertia_com_kg_m2))]
                 for name, link in zip(p.link_names, p.links, strict=True)]),
        "",
        *(plausibility_lines(p.plausibility) if p.plausibility is not None else []),
    ]


def _determination_section(physical: Physical) -> list[str]:
    """Per standard parameter of the physical model: its value and whether the data determined it."""
    return ["", "## What the data determine", "",
            "determined: fixed by the data alone; combined: the data fix only combinations with other parameters "
            "(the regulariser towards the URDF picks the split); held: no data term (friction held at zero, "
            "inertials pulled to the URDF value).", "",
            *_table(["parameter", "value", "determination", "held at"],
                    [[name, _fmt(value, 6), status, _fmt(held, 6) if status == HELD else ""]
                     for name, value, status, held in zip(physical.standard_names, physical.standard_values,
                                                          physical.status, physical.held_values, strict=True)])]


def write_identification_report(result: Identification, out_dir: str | pathlib.Path,
                                progress: Callable[[str], None] | None = None) -> pathlib.Path:
    """report.md with its figures and tables in `out_dir` (identification.json is written separately)."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    m, joints = result.metrics, result.setup.joint_names
    if progress:
        progress(f"report: figures in {out}")
    torque_files = plot_torques(result.traces, joints, out, "identification data") if result.traces else []
    rsd_file = plot_rsd(result, out / "rsd.png")
    friction_file = plot_friction(result.traces, result.friction, out / "friction.png")
    csv_files = write_parameter_csv(result, out)
    essential = set(result.essential.names)
    lines = [
        f"# Identification of {result.setup.name}",
        "",
        f"- data: {', '.join(m.sources)}; {m.n_samples} processed samples; periods averaged: {list(m.n_periods)}",
        f"- robot: `{result.setup.urdf_path}`, joints {list(joints)}, friction terms {list(result.friction_terms)}",
        f"- estimator: {result.config.method.upper()}; cond(Yb) = {_fmt(m.condition_number)} "
        f"(column-normalised {_fmt(m.condition_number_scaled)})",
        f"- base parameters: {int(np.isfinite(result.base.values).sum())} of {len(result.base.names)} estimated; "
        f"essential: {len(result.essential.names)} (eliminated in order: {', '.join(result.eliminated) or 'none'})",
        "- result: [identification.json](identification.json); tables: "
        + ", ".join(f"[{f}]({f})" for f in csv_files),
        "",
        *_checks_section(result),
    ]
    lines += _physical_section(result)
    if result.unidentified:
        lines += ["## Parameters the data do not identify", ""]
        lines += [f"- {reason}" for reason in result.unidentified.values()] + [""]
    lines += _friction_section(result) + _stribeck_section(result.friction)
    if result.physical is not None:
        lines += _determination_section(result.physical)
    lines += ["", "## Figures", "", f"![RSD of the base parameters]({rsd_file})", ""]
    lines += [f"![friction against speed]({friction_file})", ""] if friction_file else []
    lines += [f"![{name}]({file})" for name, file in zip(joints, torque_files, strict=True)]
    lines += ["", "## Base parameters", "", *_table(
        ["#", "name", "value", "RSD [%]", "essential", "definition"],
        [[str(i + 1), name, _fmt(value, 6), _fmt(rsd, 3), "yes" if name in essential else "", expr]
         for i, (name, value, rsd, expr) in enumerate(zip(result.base.names, result.base.values,
                                                          result.base.rsd_percent, result.base_expressions,
                                                          strict=True))])]
    lines += ["", "## What was done to the data", ""] + [f"- {note}" for note in m.notes]
    lines += ["", "Timings [s]: " + ", ".join(f"{k} {v:.3g}" for k, v in m.timings_s.items()), ""]
    path = out / "report.md"
    write_text(path, "\n".join(lines))
    return path


def write_validation_report(validation: Validation, out_dir: str | pathlib.Path,
                            progress: Callable[[str], None] | None = None) -> pathlib.Path:
    """report.md with torque and observer figures in `out_dir` (validation.json is written separately)."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if progress:
        progress(f"report: figures in {out}")
    v, joints = validation, validation.joint_names
    torque_files = plot_torques(v.traces, joints, out, "validation data") if v.traces else []
    observer_file = plot_observer(v.traces, v, out / "observer.png") if v.traces else None
    bars_file = plot_rms_bars(v, out / "rms.png")
    sets = list(v.rms_nm)
    lines = [
        "# Validation",
        "",
        f"- data: {', '.join(v.sources)}; result: [validation.json](validation.json)",
        f"- motion: {v.motion_comparison}",
        "- RMS of measured − predicted torque for each identified parameter set and the nominal URDF model "
        "('urdf'); measured as recorded (averaged over periods for periodic data); 'filtered' compares with the "
        "low-pass filtered torque",
        *[f"- **warning: {w}**" for w in v.warnings],
        "",
        *_table(
            ["joint", "torque RMS [Nm]"] + [f"RMS {s} [Nm] (% of torque)" for s in sets]
            + [f"filtered {s}" for s in sets] + [f"corr. {s}" for s in sets],
            [[name, _fmt(v.torque_rms_nm[j])]
             + [f"{_fmt(v.rms_nm[s][j])} ({_fmt(v.rms_percent_of_torque[s][j], 3)})" for s in sets]
             + [_fmt(v.rms_filtered_nm[s][j]) for s in sets] + [_fmt(v.correlation[s][j], 5) for s in sets]
             for j, name in enumerate(joints)],
        ),
        "",
        f"![RMS error per joint]({bars_file})",
        "",
        "Total RMS [Nm]: " + ", ".join(f"{s} {_fmt(v.total_rms_nm[s])}" for s in sets),
        "",
        f"## Momentum observer (Xu et al. 2020, IV-F), K_O = {v.observer_gain_1_s:g} 1/s",
        "",
        f"Collision threshold = {v.collision_safety_factor:g} × the largest collision-free |r|.",
        "",
        *_table(["joint"] + [f"max r {s} [Nm]" for s in sets] + [f"threshold {s} [Nm]" for s in sets],
                [[name] + [_fmt(v.observer_max_nm[s][j]) for s in sets]
                 + [_fmt(v.collision_threshold_nm[s][j]) for s in sets] for j, name in enumerate(joints)]),
        "",
    ]
    if observer_file:
        lines += [f"![observer residual]({observer_file})", ""]
    lines += [f"![{name}]({file})" for name, file in zip(joints, torque_files, strict=True)]
    lines += ["", "## What was done to the data", ""] + [f"- {note}" for note in v.notes] + [""]
    path = out / "report.md"
    write_text(path, "\n".join(lines))
    return path
