"""Hardware mode end to end against a robot that does not wait: the simulated arm free running on the wall clock in
a process of its own (robot_id_lab.testbed, stamps and rate of its own, like the lbr and Franka drivers), a busy
process on every core until the recording is complete, and the runner confirming with --yes, as a lab would run it.
The identified model is checked against the simulator's truth on a motion it was not identified on.

The trajectory is an 8 s design (test/data/fr3_8s.yaml, `robot_id_excitation design --base-frequency 0.125
--harmonics 4 --velocity-scale 0.5 --friction FV,FC`), 5 periods, at franka_ros2's 1 kHz with the FR3, the robot it
drives. benchmarks/hardware_mode.py runs the shipped 20 s excitations the same way, per robot and rate: the lbr stack
at its 100 Hz with the 40 ms torque filter a current stack announces (not here: a run takes the machine alone for a
minute; the announcement's reading is tested in the estimator's, the model's and the simulator's tests), FRI's
500 Hz and the FR3 at 1 kHz.
The true friction has no Stribeck rise here (static_over_coulomb 1: eq. 7 with fs = fc is the sign law, applied by
MuJoCo's frictionloss); the benchmark runs the default truth with its Stribeck rise.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from robot_id_bringup.graph import Run
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_lab.testbed import Standin, hardware_standin
from robot_id_lab.truth_check import check_against_truth

DATA = pathlib.Path(__file__).parent / "data"
PERIODS = 5
TIMING = re.compile(r"timing while the arm moved: the longest callback ran (\S+) ms .* the joint states were at most "
                    r"(\S+) ms old")
STATE_TIMEOUT_MS = 200.0
"""The excitation node's state_timeout_s: a joint state older than this at a step holds the arm."""

CASES = [("fr3", 1000.0, 4.0)]
"""robot, joint-state rate of the stand-in, and the largest torque error of the physical set against the true model on
any joint [% of torque RMS]. The FR3 (fr3_8s.yaml, cond 48.2): 1.40 and 1.42 % at most (A5) in two runs on
2026-11-28, the oldest joint state 26 and 43 ms; its bound is the FER's 4 %, as the Coulomb law choice that put the
FER's A1 at 3.75 % can come with any arm: at 1 kHz the Panda's A1 came out 0.45 % with the sign law and 3.75 % in two
of three runs (2026-11-27) where the data chose tanh with v_s 4 mrad/s for it (held-out torque 15 % better than
sign's on the recording). The whole of that 3.7 % lies within 10 mrad/s of rest, where the truth's sign law jumps by
2·fc: the validation motion keeps A1 there for 5 % of its samples (issue 45). The recorder, SCHED_FIFO in hardware
mode, misses under 1 % of the joint states (measured: 1 of 58 697 at 1 kHz; 28 % at normal scheduling)."""
RECORDED = re.compile(r"recorded, identifying: 5/5 periods, (\d+) joint states, (\d+) missing")


@pytest.mark.wall_clock
@pytest.mark.timeout(420)
# one rerun: under this test's busy process per core, the whole node process can stall for about 0.2 s (1 run in 4
# on CI, 2026-11-27: states received 15 ms apart, a step finding the latest 192 ms old); the node then holds the
# arm, as it must, and the run does not finish
@pytest.mark.flaky(reruns=1)
@pytest.mark.parametrize(("robot", "rate_hz", "max_error_percent"), CASES,
                         ids=[f"{r}_{int(h)}hz" for r, h, _ in CASES])
def test_hardware_mode_identifies_a_robot_that_does_not_wait(robot, rate_hz, max_error_percent, tmp_path,
                                                              domain_id):
    run = Run(robot, "hardware", str(tmp_path / "run"), PERIODS, str(DATA / f"{robot}_8s.yaml"))
    truth = tmp_path / "truth.yaml"
    near_start_rad = load_trajectory(run.trajectory).evaluate(np.zeros(1))[0][0] + 0.1  # a short approach
    with hardware_standin(robot, rate_hz, domain_id, truth, near_start_rad, busy=True,
                          log_file=tmp_path / "standin.log",
                          sim_parameters={"static_over_coulomb": 1.0}) as standin:
        returncode, output = _identify_ending_the_load_once_recorded(run, standin)
    (tmp_path / "runner.log").write_text(output)
    log = output[-6000:]
    assert returncode == 0, log
    assert "Traceback" not in output and "waiting_for_confirmation" not in output, log
    callback_ms, age_ms = map(float, TIMING.search(output).groups())
    received, missing = map(int, RECORDED.search(output).groups())
    assert missing < 0.01 * received, log
    print(f"{robot} {rate_hz} Hz: longest callback {callback_ms} ms, oldest joint state {age_ms} ms")
    assert age_ms < STATE_TIMEOUT_MS  # no hold; the callback figure, preemption included, is the benchmark's
    errors = check_against_truth(robot, run.results_path, truth, simulated=False)["true model"].rms_percent_of_torque
    print(f"{robot} {rate_hz} Hz: identified.urdf against the true model {errors['identified'].round(2)} %")
    assert all(errors["identified"] < max_error_percent), errors["identified"]


def _identify_ending_the_load_once_recorded(run: Run, standin: Standin) -> tuple[int, str]:
    """The runner's exit code and output (stderr in it); the busy processes run until the recording is complete,
    not through the identification, which is no real-time work (it took twice as long under the load)."""
    runner = subprocess.Popen(
        [sys.executable, "-m", "robot_id_bringup", "identify", "--robot", run.robot, "--mode", "hardware", "--yes",
         "--trajectory", run.trajectory, "--periods", str(PERIODS), "--out", run.output_dir, "--timeout", "300"],
        env=standin.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in runner.stdout:
            lines.append(line)
            if line.startswith("robot_id: recorded, identifying"):
                standin.end_load()
        return runner.wait(timeout=30), "".join(lines)
    finally:
        if runner.poll() is None:
            runner.kill()
