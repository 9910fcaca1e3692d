"""Hardware mode's confirmation in the runner: the plan is shown one part a line, only `yes` typed after it lets the
arm move, --yes confirms at once, and with no terminal the runner says how to confirm and waits; the parameter is
set through the excitation node's parameter service (here a stand-in node that declares `confirm` and publishes the
status the excitation node publishes while it waits)."""

from __future__ import annotations

import os
import pty
import sys
import time

import pytest
import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.executors import SingleThreadedExecutor

from robot_id_bringup.confirmation import ASK, NOTHING, REFUSE, SET, WAITING, Confirmation, TerminalLine, plan_lines
from robot_id_bringup.graph import EXCITATION_NAME, Run
from robot_id_bringup.run_monitor import RunMonitor
from robot_id_contract.topics import EXCITATION_STATUS
from robot_id_msgs.msg import ExcitationStatus

PLAN = ("start pose [0.00, 0.52, 0.00, -1.20, 0.00, 0.70, 0.00] rad; largest distance 0.420 rad on A4; approach 4.2 s "
        "at up to 0.2 rad/s; then 5 periods of 20 s (100 s), up to 50 % of the velocity limits; closest approach 26 mm")


def _confirmation(**kwargs) -> tuple[Confirmation, list[str]]:
    said: list[str] = []
    return Confirmation(said.append, "/excitation", "42", **kwargs), said


def test_the_plan_is_shown_one_part_a_line_and_only_yes_lets_the_arm_move():
    confirmation, said = _confirmation(terminal=True)
    assert confirmation.on_status("waiting_for_joint_states", "") == NOTHING and not said
    assert confirmation.on_status(WAITING, PLAN) == ASK and confirmation.asking
    assert said[1:6] == [f"robot_id:   {part}" for part in plan_lines(PLAN)]
    assert "largest distance 0.420 rad on A4" in said[2] and said[-1].startswith("robot_id: type yes and Enter")
    assert confirmation.on_status(WAITING, PLAN) == NOTHING  # the same wait is not asked about twice
    assert confirmation.on_answer(" yes ") == SET and not confirmation.refusal
    assert confirmation.on_set_reply("") == NOTHING and said[-1].endswith("is true: the arm starts to move")


@pytest.mark.parametrize("answer", ["no", "", "y", "YES please"])
def test_any_other_answer_stops_the_run_unconfirmed(answer):
    confirmation, _ = _confirmation(terminal=True)
    confirmation.on_status(WAITING, PLAN)
    assert confirmation.on_answer(answer) == REFUSE
    assert confirmation.refusal == f"not confirmed (answered {answer.strip()!r}, not 'yes')"
    assert confirmation.on_answer("yes") == NOTHING  # too late: the run is over


def test_yes_on_the_command_line_confirms_at_once_and_still_shows_the_plan():
    confirmation, said = _confirmation(assume_yes=True, terminal=True)
    assert confirmation.on_status(WAITING, PLAN) == SET and not confirmation.asking
    assert [line for line in said if line.startswith("robot_id:   ")] == [f"robot_id:   {p}" for p in plan_lines(PLAN)]
    assert confirmation.on_set_reply("the node refused it (read-only)") == REFUSE
    assert confirmation.refusal == "could not set the parameter confirm of /excitation: the node refused it (read-only)"


def test_without_a_terminal_the_runner_says_how_to_confirm_and_waits_for_someone_to():
    confirmation, said = _confirmation()
    assert confirmation.on_status(WAITING, PLAN) == NOTHING and not confirmation.asking
    assert "rerun with --yes" in said[-1] and "ROS_DOMAIN_ID=42 ros2 param set /excitation confirm true" in said[-1]
    assert confirmation.on_status("approaching", "") == NOTHING  # set from elsewhere: the run goes on
    assert not confirmation.refusal and "no longer waits" in said[-1]


def test_the_answer_is_read_from_the_terminal_without_blocking_and_typing_ahead_does_not_count():
    leader, follower = os.openpty()
    try:
        terminal = TerminalLine(follower)
        os.write(leader, b"yes\n")  # typed before the plan was shown
        time.sleep(0.1)
        terminal.discard()
        assert terminal.poll() is None
        os.write(leader, b"ye")
        started = time.monotonic()
        assert terminal.poll() is None and time.monotonic() - started < 0.05
        os.write(leader, b"s\n")
        time.sleep(0.1)
        assert terminal.poll() == "yes"
    finally:
        os.close(leader)
        os.close(follower)


def test_the_answer_is_read_only_from_a_terminal_the_runner_has_in_the_foreground():
    """A background job that read or flushed its terminal would be stopped by the shell: it says how to confirm
    instead of asking."""
    pid, leader = pty.fork()
    if pid == 0:  # a session of its own on a new terminal, in its foreground
        sys.stdin = os.fdopen(0, closefd=False)
        foreground = TerminalLine.of_stdin() is not None
        job = os.fork()
        if job == 0:
            os.setpgid(0, 0)  # a background job of that session
            os._exit(0 if TerminalLine.of_stdin() is None else 1)
        background = os.waitstatus_to_exitcode(os.waitpid(job, 0)[1]) == 0
        os._exit(0 if foreground and background else 1)
    try:
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    finally:
        os.close(leader)


class _StandIn:
    """The excitation node as far as the confirmation goes: `confirm` declared, the wait and its plan published
    (latched), "approaching" once confirm is true; `refuse` makes it refuse the parameter with a reason."""

    def __init__(self, refuse: str = "") -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(EXCITATION_NAME, context=self.context)
        self.node.declare_parameter("confirm", False)
        self.node.add_on_set_parameters_callback(lambda _: SetParametersResult(successful=not refuse, reason=refuse))
        self.publisher = self.node.create_publisher(ExcitationStatus, EXCITATION_STATUS.name, EXCITATION_STATUS.qos)
        self.publisher.publish(ExcitationStatus(state=WAITING, reason=PLAN, num_periods=5))
        self.node.add_post_set_parameters_callback(
            lambda _: self.publisher.publish(ExcitationStatus(state="approaching", num_periods=5)))
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    @property
    def confirmed(self) -> bool:
        return self.node.get_parameter("confirm").value

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def stand_in_domain(monkeypatch, domain_id):
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id))


def _run_until(confirmation: Confirmation, monitor: RunMonitor, stand_in: _StandIn, done, terminal=None,
               timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done() and time.monotonic() < deadline:
        confirmation.step(monitor, terminal)
        monitor.spin_once(0.05)
        stand_in.executor.spin_once(timeout_sec=0.05)


@pytest.mark.parametrize("typed", ["yes", "no"])
def test_the_runner_sets_confirm_through_the_parameter_service_once_yes_is_typed(stand_in_domain, typed):
    stand_in = _StandIn()
    monitor = RunMonitor(Run("iiwa14", "hardware", "out"))
    leader, follower = os.openpty()
    confirmation, said = _confirmation(terminal=True)
    try:
        _run_until(confirmation, monitor, stand_in, lambda: confirmation.asking)
        assert confirmation.asking, said
        os.write(leader, f"{typed}\n".encode())
        _run_until(confirmation, monitor, stand_in, lambda: confirmation.phase in ("confirmed", "refused"),
                   TerminalLine(follower))
        if typed == "yes":
            assert stand_in.confirmed and confirmation.phase == "confirmed" and not confirmation.refusal, said
            assert said[-1] == "robot_id: confirm of /excitation is true: the arm starts to move"
        else:
            assert not stand_in.confirmed and confirmation.refusal.startswith("not confirmed")
    finally:
        os.close(leader)
        os.close(follower)
        monitor.close()
        stand_in.close()


def test_a_confirm_the_node_refuses_ends_the_run_with_its_reason(stand_in_domain):
    stand_in = _StandIn(refuse="confirm is read-only here")
    monitor = RunMonitor(Run("iiwa14", "hardware", "out"))
    confirmation, said = _confirmation(assume_yes=True)
    try:
        _run_until(confirmation, monitor, stand_in, lambda: confirmation.phase in ("confirmed", "refused"))
        assert confirmation.refusal == ("could not set the parameter confirm of /excitation: the node refused it "
                                        "(confirm is read-only here)"), said
        assert not stand_in.confirmed
    finally:
        monitor.close()
        stand_in.close()
