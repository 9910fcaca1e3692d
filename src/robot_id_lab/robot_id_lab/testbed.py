"""A hardware-like test bed: the simulated robot free running on the wall clock (`clock: wall`) in a process of its
own, as a real iiwa or Panda driver runs beside the identification, with optional load: a busy process per core
(pure CPU spinning) and a slow subscriber to the joint states (slow_subscriber.py). For tests and benchmarks:

    with hardware_standin(robot="iiwa14", rate_hz=100, domain_id=d, truth_file=path, busy=True,
                          slow_subscriber=True) as standin:
        subprocess.run(["robot_id", "identify", "--mode", "hardware", "--yes", ...], env=standin.env)

It yields once the simulator has written its truth file (it publishes from a few milliseconds later). Every process
it started is ended when the block is left, also on an exception or Ctrl-C: the nodes with SIGINT (SIGKILL after
processes.STOP_TIMEOUT_S), the busy processes with SIGKILL.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import yaml

from robot_id_contract.processes import stop_process

SIM_PACKAGE = "robot_id_sim"
LAB_PACKAGE = "robot_id_lab"
REALTIME_PRIORITY = 50
"""SCHED_FIFO priority of the simulator's threads (its parameter realtime_priority): a real robot's timing does not
suffer from the load on the identification's machine, and without it a busy process per core made the 1 kHz Panda
fall seconds behind here (benchmarks/sim_wall_clock.py). It is ros2_control's controller manager's (50), above the
excitation node and the recorder in hardware mode (robot_id_bringup.graph), as a robot driver's control loop is: at 10,
below them, the stand-in fell 106-200 ms behind while they ran, and the excitation node rightly held the arm on its
stale states. Where the system refuses, the simulator warns and runs without."""
SLOW_WORK_S = 0.005
"""Wall time the slow subscriber spends on each joint state: it keeps up with 200 per second."""
START_TIMEOUT_S = 60.0
BUSY_LOOP = "while True: pass"


class StandinError(RuntimeError):
    """Why the hardware stand-in could not start, in one line."""


@dataclass(frozen=True)
class Standin:
    """What hardware_standin started: `env` is the environment for processes that are to talk to the simulator
    (its ROS_DOMAIN_ID, localhost discovery)."""

    sim: subprocess.Popen
    processes: tuple[subprocess.Popen, ...]   # every process started, the simulator first
    env: dict[str, str]

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def end_load(self) -> None:
        """End the busy processes now; the simulator and the rest run on."""
        for process in self.processes:
            if process.args[-1] == BUSY_LOOP:
                kill(process)


def executable(package: str, name: str) -> pathlib.Path:
    """The installed node lib/<package>/<name>, found as robot_id_bringup's runner finds nodes (ament_index)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        path = pathlib.Path(get_package_prefix(package)) / "lib" / package / name
    except PackageNotFoundError:
        raise StandinError(f"{package} is not installed: build the workspace (make setup) and source it") from None
    if not path.is_file():
        raise StandinError(f"{path} does not exist: rebuild the workspace (make setup)")
    return path


def node_command(package: str, name: str, parameters: dict[str, object]) -> list[str]:
    """The installed node `name` of `package` with its parameters (values in YAML, as rcl parses `-p name:=value`)."""
    command = [str(executable(package, name)), "--ros-args"]
    for key, value in parameters.items():
        text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()
        command += ["-p", f"{key}:={text}"]
    return command


def ros_environment(domain_id: int) -> dict[str, str]:
    """This environment with the domain, localhost discovery unless chosen otherwise, and unbuffered output."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), PYTHONUNBUFFERED="1")
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    return env


def end(process: subprocess.Popen) -> int:
    """Stop a node as Ctrl-C would (SIGINT), SIGKILL it after processes.STOP_TIMEOUT_S; its exit code."""
    return stop_process(process, signal.SIGINT)


def kill(process: subprocess.Popen) -> int:
    """SIGKILL; the exit code."""
    process.kill()
    return process.wait()


def wait_for_file(path: pathlib.Path, process: subprocess.Popen, timeout_s: float = START_TIMEOUT_S) -> None:
    """Until `path` exists; StandinError if `process` ends or the time runs out first."""
    end_s = time.monotonic() + timeout_s
    while not path.exists():
        if process.poll() is not None:
            raise StandinError(f"the simulator ended with exit code {process.returncode} before it wrote {path}")
        if time.monotonic() > end_s:
            raise StandinError(f"the simulator did not write {path} within {timeout_s:g} s")
        time.sleep(0.05)


@contextmanager
def hardware_standin(robot: str, rate_hz: float, domain_id: int, truth_file: str | os.PathLike,
                     start_position_rad: Sequence[float] = (), busy: bool = False, slow_subscriber: bool = False,
                     work_s: float = SLOW_WORK_S, realtime_priority: int = REALTIME_PRIORITY,
                     log_file: str | os.PathLike | None = None,
                     sim_parameters: dict[str, object] | None = None) -> Iterator[Standin]:
    """The simulated `robot` on the wall clock, publishing joint states at rate_hz, writing its truth to
    truth_file, in ROS domain `domain_id`, its threads at `realtime_priority` (0: normal scheduling); busy: one
    CPU-spinning process per core; slow_subscriber: a subscriber taking work_s per joint state. The nodes' output
    goes to log_file (appended), or where this process's goes; sim_parameters: more of the simulator's parameters
    (e.g. static_over_coulomb, or controller_file: the robot stack's controller parameter file, whose joint
    trajectory controller's rules then refuse and splice the commands instead of the set-up robot_id requires)."""
    env = ros_environment(domain_id)
    truth = pathlib.Path(truth_file)
    truth.unlink(missing_ok=True)  # its appearance says the simulator is up
    parameters = {"robot": robot, "clock": "wall", "state_rate_hz": float(rate_hz), "truth_file": str(truth),
                  "realtime_priority": realtime_priority} | (sim_parameters or {})
    if len(start_position_rad):
        parameters["start_position_rad"] = [float(q) for q in start_position_rad]
    with ExitStack() as stack:
        output = stack.enter_context(open(log_file, "a")) if log_file is not None else None
        started: list[subprocess.Popen] = []

        def start(command: list[str], stop) -> subprocess.Popen:
            process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                       stderr=subprocess.STDOUT if output else None, start_new_session=True)
            stack.callback(stop, process)  # ended in reverse order of start, also on an exception
            started.append(process)
            return process

        sim = start(node_command(SIM_PACKAGE, "sim_node", parameters), end)
        wait_for_file(truth, sim)
        if slow_subscriber:
            start(node_command(LAB_PACKAGE, "slow_subscriber", {"robot": robot, "work_s": float(work_s)}), end)
        for _ in range(len(os.sched_getaffinity(0)) if busy else 0):
            start([sys.executable, "-c", BUSY_LOOP], kill)
        yield Standin(sim, tuple(started), env)
