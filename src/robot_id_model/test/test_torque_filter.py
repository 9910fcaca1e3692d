"""The robot's first-order measured-torque filter against the continuous filter's own responses."""

import numpy as np

from robot_id_model.torque_filter import first_order_lowpass


def test_first_order_lowpass_is_the_continuous_filter_sampled():
    """A ramp (linear between samples) comes out exactly as the continuous filter's response, slope·(t − τ(1 −
    e^(−t/τ))), at 100 Hz as at 1 kHz; a 2 Hz sine at 100 Hz as its steady state, amplitude 1/√(1 + (ωτ)²) and
    delay atan(ωτ)/ω (≈ τ), within the curvature between samples; a constant stays; each trailing column alone."""
    tau = 0.016
    for dt in (0.01, 0.001):
        t = np.arange(200) * dt
        ramp = np.zeros((200, 2, 3)) + (30.0 * t)[:, None, None]
        ramp[:, 1, 2] *= -4.0
        y = first_order_lowpass(ramp, dt, tau)
        np.testing.assert_allclose(y[:, 0, 0], 30.0 * (t - tau * (1.0 - np.exp(-t / tau))), rtol=0, atol=1e-12)
        np.testing.assert_allclose(y[:, 1, 2], -4.0 * y[:, 0, 0], atol=1e-12)
    t = np.arange(300) * 0.01
    omega = 2.0 * np.pi * 2.0
    sine = first_order_lowpass(np.sin(omega * t), 0.01, tau)
    steady = np.sin(omega * t - np.arctan(omega * tau)) / np.hypot(1.0, omega * tau)
    np.testing.assert_allclose(sine[150:], steady[150:], atol=2e-3)
    np.testing.assert_allclose(first_order_lowpass(np.full((50, 1), 3.0), 0.01, tau), 3.0, atol=1e-12)
    np.testing.assert_array_equal(first_order_lowpass(ramp, 0.01, 0.0), ramp)
