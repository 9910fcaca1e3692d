"""Pacing: sim time allowed by the real-time factor and by lockstep acknowledgements (wall times are given, so
these tests are exact and do not sleep)."""

import pytest

from robot_id_sim.pacing import MAX_LAG_S, Pacer


def test_real_time_factor_scales_wall_time_since_start():
    pacer = Pacer(2.0)
    pacer.start(wall_s=100.0, sim_s=5.0)
    assert pacer.allowed_s(100.0, 5.0) == 5.0
    assert pacer.allowed_s(100.05, 5.0) == pytest.approx(5.1, abs=1e-12)
    # keeping up: the sim is where it may be, a tick later it may go 2 × 0.08 s further
    assert pacer.allowed_s(100.13, 5.1) == pytest.approx(5.26, abs=1e-12)
    assert pacer.lags == 0


def test_slower_than_real_time():
    pacer = Pacer(0.5)
    pacer.start(wall_s=0.0, sim_s=0.0)
    assert pacer.allowed_s(0.3, 0.1) == pytest.approx(0.15, abs=1e-12)


def test_a_lag_beyond_max_lag_re_anchors_without_a_burst():
    """Behind by more than MAX_LAG_S: at most MAX_LAG_S ahead of where the sim is, counted; afterwards the pace
    is measured from the new anchor, so a machine slower than the factor asked for runs as fast as it can."""
    pacer = Pacer(1.0)
    pacer.start(wall_s=0.0, sim_s=0.0)
    assert pacer.allowed_s(0.1, 0.0) == pytest.approx(0.1)          # 0.1 s behind: within MAX_LAG_S, catch up
    assert pacer.lags == 0
    assert pacer.allowed_s(1.0, 0.2) == pytest.approx(0.2 + MAX_LAG_S)   # 0.8 s behind: no burst
    assert pacer.lags == 1
    assert pacer.allowed_s(1.05, 0.3) == pytest.approx(0.2 + MAX_LAG_S + 0.05, abs=1e-12)
    assert pacer.allowed_s(1.05 + MAX_LAG_S + 0.3, 0.4) == pytest.approx(0.4 + MAX_LAG_S)  # behind again
    assert pacer.lags == 2
    # exactly MAX_LAG_S behind is not a lag yet
    fresh = Pacer(1.0)
    fresh.start(0.0, 0.0)
    assert fresh.allowed_s(MAX_LAG_S, 0.0) == MAX_LAG_S and fresh.lags == 0


def test_lockstep_allows_the_slowest_acknowledged_stamp_plus_the_window():
    pacer = Pacer(0.0, ("recorder", "estimator"), window_s=0.05)
    pacer.start(wall_s=10.0, sim_s=1.0)
    # before any acknowledgement: the start plus the window
    assert pacer.allowed_s(99.0, 1.0) == pytest.approx(1.05)
    assert pacer.waiting_for(1.05) == ["estimator", "recorder"]
    pacer.acknowledge("recorder", 1.5)
    assert pacer.allowed_s(99.0, 1.05) == pytest.approx(1.05)        # estimator has not acknowledged
    pacer.acknowledge("estimator", 1.2)
    assert pacer.allowed_s(99.0, 1.05) == pytest.approx(1.25)
    assert pacer.waiting_for(1.25) == ["estimator"]
    assert pacer.waiting_for(1.24) == []
    pacer.acknowledge("estimator", 1.1)                               # an older stamp does not go back
    assert pacer.allowed_s(99.0, 1.25) == pytest.approx(1.25)
    pacer.acknowledge("estimator", 2.0)
    assert pacer.allowed_s(99.0, 1.25) == pytest.approx(1.55)        # now the recorder is the slowest
    assert pacer.waiting_for(1.55) == ["recorder"]


def test_acknowledgements_from_undeclared_subscribers_are_ignored():
    pacer = Pacer(0.0, ("recorder",), window_s=0.1)
    pacer.start(wall_s=0.0, sim_s=0.0)
    pacer.acknowledge("somebody_else", 50.0)
    assert pacer.allowed_s(1.0, 0.0) == pytest.approx(0.1)
    assert pacer.waiting_for(0.1) == ["recorder"]
    assert "somebody_else" not in pacer.acknowledged_s


def test_lockstep_and_real_time_factor_take_the_tighter_limit():
    pacer = Pacer(1.0, ("recorder",), window_s=0.05)
    pacer.start(wall_s=0.0, sim_s=0.0)
    pacer.acknowledge("recorder", 10.0)
    assert pacer.allowed_s(0.1, 0.0) == pytest.approx(0.1)           # the wall clock limits
    pacer2 = Pacer(1.0, ("recorder",), window_s=0.05)
    pacer2.start(wall_s=0.0, sim_s=0.0)
    pacer2.acknowledge("recorder", 0.01)
    assert pacer2.allowed_s(0.1, 0.0) == pytest.approx(0.06)         # the subscriber limits


def test_without_a_wall_clock_pace_the_limit_is_lockstep_only():
    pacer = Pacer(0.0, ("recorder",), window_s=0.05)
    pacer.start(wall_s=0.0, sim_s=0.0)
    pacer.acknowledge("recorder", 1000.0)
    assert pacer.allowed_s(0.0, 0.0) == pytest.approx(1000.05)
    assert pacer.allowed_s(1e6, 0.0) == pytest.approx(1000.05) and pacer.lags == 0


@pytest.mark.parametrize(("args", "message"), [
    ((0.0,), "real_time_factor must be positive, or 0 \\(no wall-clock pace\\) with lockstep subscribers"),
    ((-1.0, ("recorder",)), "real_time_factor must be positive"),
    ((float("nan"),), "real_time_factor must be positive"),
    ((1.0, (), 0.0), "the lockstep window must be positive"),
    ((0.0, ("recorder",), -0.1), "the lockstep window must be positive"),
])
def test_bad_settings_are_value_errors(args, message):
    with pytest.raises(ValueError, match=message):
        Pacer(*args)


def test_once_finished_the_simulation_stays_where_it_is_and_waits_for_nobody():
    pacer = Pacer(1.0, ["recorder"], window_s=0.05)
    pacer.start(wall_s=0.0, sim_s=0.0)
    pacer.acknowledge("recorder", 1.0)
    assert pacer.allowed_s(2.0, 1.0) == pytest.approx(1.05) and pacer.waiting_for(1.05) == ["recorder"]
    pacer.finish()
    assert pacer.allowed_s(3.0, 1.05) == 1.05 and pacer.waiting_for(1.05) == []
