"""The estimator node: identifies a recorded bag when the recorder reports a finished run, or on request.

Subscribes /robot_id/recording_status (robot_id_msgs/RecordingStatus; a run is identified once, when
`finished` is true), serves /robot_id/identify_bag (robot_id_msgs/IdentifyBag), and publishes every result on
/robot_id/identification_result (robot_id_msgs/IdentificationResult, transient local) and, when physical
parameters were retrieved and passed their check on held-out data, the identified URDF on
robot_description_identified (std_msgs/String, transient local). A failed identification is answered (service)
or published (result topic) with success false and the reason; so is one whose data the diagnosis finds a mistake
in (a torque sign, an encoder, a zero, the torque filter, too little data: the message names it, nothing is
published as the identified description); the node keeps serving. It writes the same
files as `python -m robot_id_estimator identify`: identification.json, the report, identified.urdf and
identified.yaml. Bags of friction sweeps in the parameter friction_sweep_bags are read with every identification,
like `identify --friction-sweep`: the Stribeck friction fitted to them (Luo et al. 2024) is taken out of the torque.

With the parameter payload true it identifies the load on the flange instead (`python -m robot_id_estimator
payload`): against the arm of payload_arm (an identification.json), of payload_baseline_bags (the same excitation
without the load) or the URDF's; the result message carries the load in `payload`, robot_description_identified the
arm with the load attached (arm_with_payload.urdf) when the load's model passed its check on held-out data.
"""

from __future__ import annotations

import pathlib
import sys
import threading

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import String

from robot_id_contract.node_process import NodeProcess, run_node
from robot_id_contract.parameters import declare_parameters, descriptor
from robot_id_contract.topics import (
    IDENTIFICATION_RESULT,
    IDENTIFIED_DESCRIPTION,
    IDENTIFY_BAG_SERVICE,
    RECORDING_STATUS,
)
from robot_id_estimator.identify_and_write import identify_and_write
from robot_id_estimator.messages import payload_message, result_message
from robot_id_estimator.payload.identify_payload import identify_payload_and_write
from robot_id_estimator.physical.problem import RetrievalError
from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_estimator.results import read_identification
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig, load_estimator_config
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import load_robot_model
from robot_id_msgs.msg import IdentificationResult, RecordingStatus
from robot_id_msgs.srv import IdentifyBag


class EstimatorNode(Node):
    def __init__(self, **kwargs: object) -> None:
        """`kwargs` go to rclpy's Node (context, parameter_overrides, ...)."""
        super().__init__("estimator", **kwargs)

        p = declare_parameters(self, {
            "robot": ("", descriptor("robot config name (iiwa14) or YAML path; or set urdf")),
            "urdf": ("", descriptor("URDF of the arm, when no robot config is given")),
            "joint_names": ("", descriptor("comma-separated arm joints with urdf (default: all)")),
            "torque_filter_time_constant_s": (0.0, descriptor(
                "with urdf: first-order filter the robot applies to its torques")),
            "config": ("", descriptor("estimator config YAML (default settings when empty)")),
            "output_dir": ("", descriptor("results go to <output_dir>/<bag name>; empty: beside the bag, in <bag "
                                          "name>_identification (_payload with payload)")),
            "period_s": (0.0, descriptor("period of the data when the bag has no trajectory description")),
            "allow_outside_limits": (False, descriptor(
                "identify data with positions outside the URDF's limits (--allow-outside-limits)")),
            "allow_implausible_torque": (False, descriptor(
                "identify torque that fails the plausibility check against the URDF (--allow-implausible-torque)")),
            # typed and unset by default: a default of [] would declare a byte array, which refuses a list of paths
            "friction_sweep_bags": (Parameter.Type.STRING_ARRAY, descriptor(
                "bags of friction sweeps (forward/backward joint passes at constant speeds) recorded by the recorder: "
                "the Stribeck friction fitted to them is taken out of the torque; read at every identification",
                read_only=False)),
            "payload": (False, descriptor(
                "identify the load on the flange (or payload_frame) from the bag, not the arm: payload.yaml, "
                "payload.urdf, arm_with_payload.urdf (python -m robot_id_estimator payload)")),
            "payload_arm": ("", descriptor(
                "payload: identification.json of the arm without the load (its best set); empty: the URDF's arm, "
                "unless payload_baseline_bags")),
            "payload_baseline_bags": (Parameter.Type.STRING_ARRAY, descriptor(
                "payload: bags of the same excitation without the load (the two-recording method: the arm's own "
                "terms cancel)")),
            "payload_frame": ("", descriptor("payload: the frame the load is fixed to (empty: the config's flange)")),
        })
        self.robot, self.urdf, self.joint_names = p["robot"], p["urdf"], p["joint_names"]
        self.torque_filter_time_constant_s = p["torque_filter_time_constant_s"]
        self.config_path, self.output_dir, self.period_s = p["config"], p["output_dir"], p["period_s"]
        self.allow_outside_limits = p["allow_outside_limits"]
        self.allow_implausible_torque = p["allow_implausible_torque"]

        self.payload, self.payload_frame = p["payload"], p["payload_frame"] or None
        self.setup = self._setup()
        self.payload_arm = read_identification(p["payload_arm"]) if p["payload_arm"] else None
        if self.payload_arm is not None and p["payload_baseline_bags"]:
            raise ValueError("payload: give payload_arm or payload_baseline_bags, not both")
        self.config = load_estimator_config(self.config_path) if self.config_path else EstimatorConfig()
        self._lock = threading.Lock()
        self._started: set[str] = set()
        group = ReentrantCallbackGroup()
        self.publisher = self.create_publisher(IdentificationResult, IDENTIFICATION_RESULT.name,
                                               IDENTIFICATION_RESULT.qos)
        self.urdf_publisher = self.create_publisher(String, IDENTIFIED_DESCRIPTION.name, IDENTIFIED_DESCRIPTION.qos)
        # latched: an estimator started after the recording finished still gets its last status
        self.create_subscription(RecordingStatus, RECORDING_STATUS.name, self._on_status, RECORDING_STATUS.qos,
                                 callback_group=group)
        self.create_service(IdentifyBag, IDENTIFY_BAG_SERVICE, self._on_request, callback_group=group)
        self.get_logger().info(f"estimator for {self.setup.name} ({len(self.setup.joint_names)} joints) ready")

    def _setup(self) -> RobotSetup:
        if self.robot:
            return RobotSetup.from_config(load_robot_config(self.robot))
        if not self.urdf:
            raise ValueError("set the parameter 'robot' (config name or YAML) or 'urdf'")
        joints = [j for j in self.joint_names.split(",") if j] or None
        model = load_robot_model(self.urdf, joints)
        return RobotSetup(pathlib.Path(self.urdf).stem, str(pathlib.Path(self.urdf).resolve()), model.joint_names,
                          torque_filter_time_constant_s=self.torque_filter_time_constant_s)

    def _out_dir(self, bag_path: str, requested: str) -> pathlib.Path:
        if requested:
            return pathlib.Path(requested)
        bag = pathlib.Path(bag_path)
        if self.output_dir:
            return pathlib.Path(self.output_dir) / bag.name
        return bag.parent / f"{bag.name}_{'payload' if self.payload else 'identification'}"

    def identify_bag(self, bag_path: str, output_dir: str = "") -> tuple[IdentificationResult, str]:
        """Identify (the arm, or with payload the load), write the results, publish them; returns (result,
        summary)."""
        out = self._out_dir(bag_path, output_dir)
        if self.payload:
            return self._identify_payload(bag_path, out)
        with self._lock:
            self.get_logger().info(f"identifying {bag_path}")
            recording = load_recording(bag_path, self.setup.joint_names, self.period_s or None)
            written = identify_and_write([recording], self.setup, self.config, out, self._friction_sweeps(),
                                         self.get_logger().info, self.allow_outside_limits,
                                         self.allow_implausible_torque)
        result, files = written.result, written.model_files
        msg = result_message(result, str(out))
        if not written.files_hold:
            msg.success = False
            msg.message = ("the written model does not reproduce the identified one: "
                           + "; ".join(written.file_check.failures))
        summary = f"{msg.message}; wrote {out}"
        if result.unidentified:
            summary += f"; not identified: {', '.join(result.unidentified)}"
        description = files.urdf if files is not None and result.model_holds and written.files_hold else None
        self._report(msg, summary, written.notes, written.warnings, description)
        return msg, summary

    def _identify_payload(self, bag_path: str, out: pathlib.Path) -> tuple[IdentificationResult, str]:
        """The load in the bag against the arm (payload_arm, payload_baseline_bags or the URDF's); written to out,
        the arm with the load published as the identified description when its model passed its check."""
        with self._lock:
            self.get_logger().info(f"identifying the payload in {bag_path}")
            recording = load_recording(bag_path, self.setup.joint_names, self.period_s or None)
            baselines = self._bags("payload_baseline_bags", "payload baseline", self.period_s or None)
            written = identify_payload_and_write([recording], self.setup, out, self.config, self.payload_arm,
                                                 baselines, self.payload_frame)
        msg = payload_message(written, self.setup.name, self.setup.joint_names, str(out))
        summary = f"{msg.message}; wrote {out}"
        self._report(msg, summary, written.notes, written.warnings,
                     out / "arm_with_payload.urdf" if written.passed and written.file_check.passed else None)
        return msg, summary

    def _report(self, msg: IdentificationResult, summary: str, notes: tuple[str, ...], warnings: tuple[str, ...],
                description: pathlib.Path | None) -> None:
        """Log the notes, warnings and summary, publish the model file `description` (a URDF) and the result."""
        # everything said before the result goes out: a runner stops the graph once it has the result, and a
        # line logged after that would be lost with the node's context
        for note in notes:
            self.get_logger().info(note)
        for warning in warnings:
            self.get_logger().warning(warning)
        if msg.success:  # one severity per call site: rclpy refuses a call site that changes it
            self.get_logger().info(summary)
        else:
            self.get_logger().error(summary)
        if description is not None:
            self.urdf_publisher.publish(String(data=description.read_text()))
        self._publish(msg)

    def _friction_sweeps(self) -> list[Recording]:
        """The recordings of the bags in friction_sweep_bags, read as the main bag is; DataError naming the bag."""
        return self._bags("friction_sweep_bags", "friction sweep")

    def _bags(self, parameter: str, what: str, period_s: float | None = None) -> list[Recording]:
        """The recordings of the bags in a string-array parameter (`period_s` for bags without a trajectory
        description); DataError naming the bag."""
        recordings = []
        for path in self.get_parameter_or(parameter).value or []:  # unset: None
            self.get_logger().info(f"loading {what} {path}")
            try:
                recordings.append(load_recording(path, self.setup.joint_names, period_s))
            except (DataError, OSError) as err:
                raise DataError(f"{what}: {err}") from None
        return recordings

    def _publish(self, msg: IdentificationResult) -> None:
        msg.header.stamp = self.get_clock().now().to_msg()
        self.publisher.publish(msg)

    def _failure(self, bag_path: str, err: BaseException) -> str:
        """Log a failed identification and say why in one line (an unexpected error is a bug: named as such)."""
        known = isinstance(err, (ValueError, OSError, RetrievalError))
        message = str(err) if known else f"unexpected {type(err).__name__}: {err} (a bug in robot_id)"
        self.get_logger().error(f"identification of {bag_path} failed: {message}")
        return message

    def _on_request(self, request: IdentifyBag.Request, response: IdentifyBag.Response) -> IdentifyBag.Response:
        """Always answers: success only when the identification ran and every parameter set passed its check."""
        try:
            response.result, response.message = self.identify_bag(request.bag_path, request.output_dir)
            response.success = response.result.success
        except Exception as err:  # the service answers every request and the node keeps serving
            response.success, response.message = False, self._failure(request.bag_path, err)
        return response

    def _on_status(self, status: RecordingStatus) -> None:
        if not status.finished or not status.bag_path or status.bag_path in self._started:
            return
        self._started.add(status.bag_path)
        threading.Thread(target=self._identify_finished, args=(status.bag_path,), daemon=True).start()

    def _identify_finished(self, bag_path: str) -> None:
        """A run the recorder finished: identified, and a failure reported on the result topic too."""
        try:
            self.identify_bag(bag_path)
        except Exception as err:  # reported on the result topic; the node keeps running
            message, out = self._failure(bag_path, err), self._out_dir(bag_path, "")
            self._publish(IdentificationResult(robot=self.setup.name, joint_names=list(self.setup.joint_names),
                                               success=False, message=message,
                                               output_dir=str(out) if out.is_dir() else ""))  # "": nothing written


def main(args: list[str] | None = None) -> int:
    # a parameter that names no usable robot or config is refused in one line
    return run_node(EstimatorNode, NodeProcess("estimator_node", executor=MultiThreadedExecutor), args)


if __name__ == "__main__":
    sys.exit(main())
