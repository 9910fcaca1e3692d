"""The runner's own view of a run over DDS: recording progress, the identification result, the excitation node's
states; in replay mode the request that starts the identification, in hardware mode the parameter that confirms the
motion."""

from __future__ import annotations

import time

import rclpy
from rcl_interfaces.srv import SetParameters
from rclpy.node import Node
from rclpy.parameter import Parameter

from robot_id_bringup.graph import EXCITATION_NAME, Run
from robot_id_bringup.runner import console
from robot_id_contract.topics import EXCITATION_STATUS, IDENTIFICATION_RESULT, IDENTIFY_BAG_SERVICE, RECORDING_STATUS
from robot_id_msgs.msg import ExcitationStatus, IdentificationResult, RecordingStatus
from robot_id_msgs.srv import IdentifyBag

CONFIRM_TIMEOUT_S = 10.0
"""How long the excitation node's parameter service may take to answer (or to appear) when confirm is set."""


class RunMonitor:
    """Prints progress once per period and keeps the identification result when it comes."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = Node("robot_id_runner", namespace=run.namespace_path, context=self.context)
        self.excitation_node = run.node_path(EXCITATION_NAME)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.result: IdentificationResult | None = None
        self.status: RecordingStatus | None = None
        self.started = time.monotonic()
        self._periods = -1
        self._periods_announced_at: float | None = None
        for topic, msg_type, callback in ((RECORDING_STATUS, RecordingStatus, self._on_status),
                                          (IDENTIFICATION_RESULT, IdentificationResult, self._on_result),
                                          (EXCITATION_STATUS, ExcitationStatus, self._on_excitation)):
            self.node.create_subscription(msg_type, topic.name, callback, topic.qos)
        self.excitation_stopped: str | None = None
        """Why the excitation node stopped the arm before its last period (it holds, refused or was aborted)."""
        self.estimator = self.node.create_client(IdentifyBag, IDENTIFY_BAG_SERVICE)  # its service: it is up
        self._request = None
        self.failure: str | None = None
        """Why the estimator refused the replay request (it then publishes no result)."""
        self._excitation_updates: list[ExcitationStatus] = []
        self.parameters = (self.node.create_client(SetParameters, f"{self.excitation_node}/set_parameters")
                           if run.mode == "hardware" else None)
        self._confirm_asked_at: float | None = None
        self._confirm_future = None
        self._confirm_reply: str | None = None

    def spin_once(self, timeout_s: float) -> None:
        if self.run.mode == "replay" and self._request is None and self.estimator.service_is_ready():
            self._request = self.estimator.call_async(
                IdentifyBag.Request(bag_path=self.run.bag, output_dir=self.run.results_path))
            console(f"robot_id: asked the estimator to identify {self.run.bag}")
        if self._confirm_asked_at is not None and self._confirm_future is None and self.parameters.service_is_ready():
            confirm = Parameter("confirm", Parameter.Type.BOOL, True).to_parameter_msg()
            self._confirm_future = self.parameters.call_async(SetParameters.Request(parameters=[confirm]))
        self.executor.spin_once(timeout_sec=timeout_s)
        if self._request is not None and self._request.done() and self.failure is None:
            response = self._request.result()
            if response is not None and not response.success and self.result is None:
                self.failure = response.message
        self._check_confirm_reply()

    def set_confirm(self) -> None:
        """Set the excitation node's parameter confirm to true (through its parameter service, once it is there);
        the outcome comes from confirm_reply()."""
        self._confirm_asked_at = time.monotonic()
        self._confirm_future = None

    def confirm_reply(self) -> str | None:
        """Once, after set_confirm: '' when confirm was set, else why not; None until then."""
        reply, self._confirm_reply = self._confirm_reply, None
        return reply

    def _check_confirm_reply(self) -> None:
        if self._confirm_asked_at is None:
            return
        if self._confirm_future is not None and self._confirm_future.done():
            response = self._confirm_future.result()
            result = response.results[0] if response is not None and response.results else None
            self._confirm_reply = "" if result is not None and result.successful else (
                f"the node refused it ({result.reason})" if result is not None else "the service gave no answer")
        elif time.monotonic() - self._confirm_asked_at > CONFIRM_TIMEOUT_S:
            where = "answered" if self._confirm_future is not None else "appeared"
            self._confirm_reply = (f"{self.excitation_node}/set_parameters has not {where} within "
                                   f"{CONFIRM_TIMEOUT_S:g} s")
        else:
            return
        self._confirm_asked_at = self._confirm_future = None

    def joint_states_came(self) -> bool:
        """The recorder has counted a joint state of the robot."""
        return self.status is not None and self.status.samples_recorded > 0

    def graph_up(self) -> bool:
        """Every node of the graph has started: the estimator offers its service (a run that only records has none)."""
        return self.run.records_only or self.estimator.service_is_ready()

    def take_excitation_updates(self) -> list[ExcitationStatus]:
        """The excitation node's states received since the last call, oldest first."""
        updates, self._excitation_updates = self._excitation_updates, []
        return updates

    def _on_status(self, msg: RecordingStatus) -> None:
        self.status = msg
        now = time.monotonic()
        if msg.periods_expected > 0 and self._periods_announced_at is None:
            self._periods_announced_at = now  # the excitation's description is in: the periods start about now
        if msg.periods_recorded == self._periods and not msg.finished:
            return
        self._periods = msg.periods_recorded
        elapsed = now - self.started
        left = ""
        done, planned = msg.periods_recorded, msg.periods_expected
        if 0 < done < planned and self._periods_announced_at is not None:
            left = f", about {(now - self._periods_announced_at) / done * (planned - done):.0f} s left"
        if msg.periods_expected == 0 and not msg.finished:
            console(f"robot_id: recording: {msg.samples_recorded} joint states, waiting for the first period "
                    f"({elapsed:.0f} s)")
            return
        state = ("recorded" if self.run.records_only else "recorded, identifying") if msg.finished else "recording"
        console(f"robot_id: {state}: {msg.periods_recorded}/{msg.periods_expected} periods, "
                f"{msg.samples_recorded} joint states, {msg.samples_missing} missing, {msg.periods_flagged} periods "
                f"flagged ({elapsed:.0f} s{left})")

    def _on_excitation(self, msg: ExcitationStatus) -> None:
        self._excitation_updates.append(msg)
        if msg.stopped and self.excitation_stopped is None:  # the run cannot record what it was started for
            self.excitation_stopped = (f"{msg.state} ({msg.reason}) after {msg.periods_started} of {msg.num_periods} "
                                       "periods started")

    def _on_result(self, msg: IdentificationResult) -> None:
        self.result = msg
        verdict = "identified" if msg.success else "identification FAILED its check"
        written = f"results in {msg.output_dir}" if msg.output_dir else "nothing written"
        console(f"robot_id: {verdict}: {msg.message}; {written} ({time.monotonic() - self.started:.0f} s)")

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
