"""The figures the check and sweep commands write: what they show, read from the matplotlib Figure itself."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from robot_id_excitation.__main__ import main
from robot_id_excitation.check import check_trajectory
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.trajectory_file import load_trajectory


@pytest.fixture
def saved_figures(monkeypatch):
    """Every Figure the command saves, in order (they are still written)."""
    figures = []
    savefig = Figure.savefig

    def record(fig, *args, **kwargs):
        figures.append(fig)
        return savefig(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    return figures


def _axes_titled(fig, start: str):
    found = [ax for ax in fig.axes if ax.get_title().startswith(start)]
    assert len(found) == 1, f"no single axes titled {start!r} in {[ax.get_title() for ax in fig.axes]}"
    return found[0]


def _line(ax, label: str):
    found = [line for line in ax.get_lines() if line.get_label() == label]
    assert len(found) == 1, f"no single line labelled {label!r} in {[line.get_label() for line in ax.get_lines()]}"
    return found[0]


def test_check_plot_shows_flange_speed_floor_and_closest_approach_with_their_limits(tmp_path, saved_figures,
                                                                                    panda_config, panda):
    """The shipped Panda excitation comes within 5 % of the flange speed limit and within 6 mm of the clearance
    between links 5 and 7: the plot shows each curve as the check evaluates it, with the design and the robot's
    limits at their values."""
    png = tmp_path / "panda.png"
    assert main(["check", "panda", "--flange-speed", "0.99", "--floor-z", "0.03", "--out", str(tmp_path)]) == 0
    assert png.stat().st_size > 10_000
    (fig,) = saved_figures
    limits = design_limits(panda_config, flange_speed_m_s=0.99, floor_z_m=0.03)
    report = check_trajectory(panda, limits, load_trajectory("panda"))
    worst_speed = next(c for c in report.checks if c.constraint == "flange_speed").value
    lowest = min((c for c in report.checks if c.constraint == "floor"), key=lambda c: c.value)

    speed = _axes_titled(fig, "flange speed")
    assert _line(speed, "design limit 0.99 m/s").get_ydata()[0] == 0.99
    assert _line(speed, "robot limit 1 m/s").get_ydata()[0] == panda_config.limits.flange_speed_m_s == 1.0
    assert np.max(_line(speed, "‖v‖ of fer_link8").get_ydata()) == pytest.approx(worst_speed, rel=1e-3)

    floor = _axes_titled(fig, "height above the base")
    assert _line(floor, "design floor z = 0.03 m").get_ydata()[0] == 0.03
    assert _line(floor, "robot floor z = 0.05 m").get_ydata()[0] == panda_config.floor_z_m == 0.05
    (height,) = [line for line in floor.get_lines() if line.get_label().startswith("lowest point")]
    assert lowest.where in height.get_label()
    assert np.min(height.get_ydata()) == pytest.approx(lowest.value, abs=1e-3)
    assert np.all(_line(floor, "flange fer_link8").get_ydata() >= height.get_ydata())

    closest = report.closest("collision")
    distance = _axes_titled(fig, "closest approach")
    assert _line(distance, "robot clearance 0.01 m").get_ydata()[0] == panda_config.collision.clearance_m == 0.01
    (least,) = [line for line in distance.get_lines() if line.get_label().startswith("least")]
    assert closest.where in least.get_label()
    assert np.min(least.get_ydata()) == pytest.approx(closest.value, abs=1e-3)


def test_sweep_plot_shows_only_the_swept_joints(tmp_path, saved_figures, capsys):
    """Sweeping the shoulder (fer_joint2) 0.6 rad from the excitation's start pose takes link 6 into the floor: refused
    with the pair; the wrist's sweep is plotted."""
    code = main(["sweep", "--robot", "panda", "--joints", "fer_joint2,fer_joint7", "--velocities", "0.05,0.3",
                 "--hold", "panda", "--out", str(tmp_path)])
    assert code == 3 and "collision     fer_link6–floor" in capsys.readouterr().out and not saved_figures
    code = main(["sweep", "--robot", "panda", "--joints", "fer_joint1,fer_joint7", "--velocities", "0.05,0.3",
                 "--hold", "panda", "--out", str(tmp_path)])
    assert code == 0
    (fig,) = saved_figures
    joint_axes = [ax for ax in fig.axes if ax.get_ylabel()]
    assert [ax.get_ylabel() for ax in joint_axes] == ["fer_joint1", "fer_joint7"]
    assert len(fig.axes) == 2 * 3 + 3  # q, dq, ddq of each swept joint; flange speed, floor, closest approach
