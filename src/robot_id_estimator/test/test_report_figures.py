"""The report's torque and observer figures: every curve visible, the nominal URDF model drawn, legends off the
data, a long trace's peaks kept; read from the matplotlib Figure itself (Agg)."""

import itertools

import numpy as np
import pytest
from estimator_synthetic import iiwa14_setup, simulated_recording
from matplotlib.backends.backend_agg import FigureCanvasAgg

from robot_id_estimator.output.figures import envelope
from robot_id_estimator.output.report_figures import observer_figure, torque_figure
from robot_id_estimator.pipeline import identify
from robot_id_estimator.validate import validate
from robot_id_model.parameters import nominal_parameters

PREDICTIONS = {s: f"predicted: {s} parameters" for s in ("base", "essential", "physical")}


@pytest.fixture(scope="module")
def nominal_arm():
    """Noise-free runs of the iiwa14 exactly as its URDF describes it (inertials and <dynamics> friction):
    every parameter set and the URDF model predict the same torque, the case where curves hide one another."""
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    pi = nominal_parameters(robot)
    result = identify([simulated_recording(robot, setup, pi, 2, tau_noise_nm=0.0, q_noise_rad=0.0)], setup)
    validation = validate(result, [simulated_recording(robot, setup, pi, 1, seed=7, tau_noise_nm=0.0,
                                                       q_noise_rad=0.0)])
    return result, validation


def _lines(ax) -> dict:
    return {line.get_label(): line for line in ax.get_lines()}


def test_identification_torque_plot_draws_the_urdf_model_and_keeps_base_and_essential_visible(nominal_arm):
    result, _ = nominal_arm
    traces = result.traces
    for j in range(len(result.setup.joint_names)):
        top = torque_figure(traces, j, "identification data").axes[0]
        lines = _lines(top)
        measured = lines["measured"].get_ydata()
        assert set(lines) == {"measured", "predicted: nominal URDF model", *PREDICTIONS.values()}
        # the URDF model generated these data: its curve is the measured torque
        urdf = lines["predicted: nominal URDF model"].get_ydata()
        assert np.max(np.abs(urdf - measured)) < 1e-3 * np.sqrt(np.mean(measured**2))
        base, essential = lines[PREDICTIONS["base"]], lines[PREDICTIONS["essential"]]
        assert np.allclose(base.get_ydata(), essential.get_ydata(), atol=1e-2 * np.abs(measured).max())
        # coincident curves stay visible: the essential dashes on top of a wider, translucent base band
        assert base.get_linestyle() != essential.get_linestyle()
        assert essential.get_zorder() > base.get_zorder()
        assert base.get_linewidth() >= 2 * essential.get_linewidth()
        assert base.get_alpha() < 1.0
        predicted = [line for label, line in lines.items() if label.startswith("predicted")]
        assert len({line.get_linestyle() for line in predicted}) == len(predicted) == 4


def _display_points(line, step_px: float = 1.0) -> np.ndarray:
    """Points along a line in display pixels, its segments sampled every `step_px` (an axhline has two
    points), clipped to its axes."""
    xy = line.get_transform().transform(line.get_xydata())
    pieces = [xy[:1]]
    for a, b in itertools.pairwise(xy):
        count = max(1, int(np.ceil(np.hypot(*(b - a)) / step_px)))
        pieces.append(a + np.linspace(0.0, 1.0, count + 1)[1:, None] * (b - a))
    points = np.concatenate(pieces)
    box = line.axes.get_window_extent()
    inside = ((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1) & (points[:, 1] >= box.y0)
              & (points[:, 1] <= box.y1))
    return points[inside]


def test_observer_legend_covers_no_data(nominal_arm):
    _, validation = nominal_arm
    fig = observer_figure(validation.traces, validation)
    FigureCanvasAgg(fig).draw()
    (legend,) = fig.legends
    box = legend.get_window_extent()
    assert {t.get_text() for t in legend.get_texts()} == {
        "base parameters", "essential parameters", "physical parameters", "nominal URDF model",
        "collision threshold (essential)"}
    assert len(fig.axes) == len(validation.joint_names)
    for ax in fig.axes:
        for line in ax.get_lines():
            points = _display_points(line)
            covered = ((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1) & (points[:, 1] >= box.y0)
                       & (points[:, 1] <= box.y1))
            assert len(points) and not covered.any(), (ax.get_ylabel(), line.get_label())


def test_a_long_trace_is_drawn_through_every_stretchs_lowest_and_highest_sample():
    """A one-sample spike in 100 000 noisy samples (every k-th-sample thinning would drop it) is drawn, in time
    order, with at most two points per stretch; a short trace is drawn as it is."""
    rng = np.random.default_rng(3)
    t_s, y = np.linspace(0.0, 100.0, 100_000), rng.normal(size=100_000)
    y[54_321] = 25.0
    t_drawn, y_drawn = envelope(t_s, y, bins=1000)
    assert len(t_drawn) <= 2000 and np.all(np.diff(t_drawn) > 0)
    assert y_drawn.max() == 25.0 and t_drawn[y_drawn.argmax()] == t_s[54_321] and y_drawn.min() == y.min()
    for start in range(0, 100_000, 100):  # every stretch's extremes are among the drawn points
        assert {y[start:start + 100].max(), y[start:start + 100].min()} <= set(y_drawn)
    assert np.array_equal(envelope(t_s[:2000], y[:2000], bins=1000)[1], y[:2000])
