"""The recorder node: the robot's joint states, the excitation's description, period markers and status (and
/clock in sim time, and any vendor state topic asked for) into a rosbag2 bag, as raw CDR bytes, period by period.
When the excitation node stops the arm (holding, refused, aborted) no more periods come: the bag is closed then.

Each topic is subscribed once a publisher shows up, with the publishers' QoS (reliable when they all are,
transient local when they all are, 1000 messages deep), so no sample is refused. The joint states wait there and
are taken every 10 ms in one batch (TakenByTheNode), not one executor callback each. The newest joint state of each
batch is acknowledged to the simulated robot (robot_id/sim_ack, as `ack_name`) so that a lockstep simulation waits
for the recorder.
The period index uses the joint states' measured rate and the excitation's harmonics
(recording_session, period_index); a measured rate 10 % off the configured one is logged once as a warning.
Publishes robot_id_msgs/RecordingStatus on robot_id/recording_status (transient local) every second and when
done; after the bag is closed it stays up (idle, so that an estimator started later still sees the finished
status) unless `exit_when_done`. Stops and closes the bag after the last announced period, on ~/stop
(std_srvs/Trigger), and on SIGINT/SIGTERM; the bag is flushed every second, so a hard kill loses at most that much
(`python -m robot_id_recorder repair BAG` then makes it readable).
"""

from __future__ import annotations

import importlib

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rclpy.subscription import Subscription
from sensor_msgs.msg import TimeReference
from std_msgs.msg import String
from std_srvs.srv import Trigger

from robot_id_contract.node_process import NodeProcess, run_node
from robot_id_contract.parameters import declare_parameters
from robot_id_contract.period_index import PeriodMarkerStamp
from robot_id_contract.stamps import header_stamp_ns, time_msg
from robot_id_contract.taken_messages import TakenByTheNode, take_waiting
from robot_id_contract.topics import EXCITATION_STATUS, EXCITATION_TRAJECTORY, PERIOD_MARKER, RECORDING_STATUS, SIM_ACK
from robot_id_model.realtime import keep_threads_realtime
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import ModelError
from robot_id_model.stack_hardware import stack_sensors
from robot_id_msgs.msg import ExcitationStatus, ExcitationTrajectory, PeriodMarker, RecordingStatus
from robot_id_recorder.bag_writer import BagWriter, offered_qos
from robot_id_recorder.message_types import typestore_for
from robot_id_recorder.node_parameters import default_bag_path, parameters
from robot_id_recorder.recording_session import RecordingSession

DEPTH = 1000
TAKE_PERIOD_S = 0.01
"""How often the joint states waiting are taken (in one batch, not one executor callback each: at 1 kHz that
work is most of the recorder's; DEPTH holds a second of them at 1 kHz) and the newest acknowledged: once per batch,
not every 10th message (in lockstep with the simulated Panda, publishing those took 39 % of the recorder's time by
py-spy)."""


def _message_class(msgtype: str) -> type:
    """The Python class of `pkg/msg/Name`; ImportError/AttributeError when the package is not installed."""
    package, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


class RecorderNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("recorder", **kwargs)
        p = declare_parameters(self, parameters())
        config = load_robot_config(p["robot"])
        self.marker_topic = self.resolve_topic_name(PERIOD_MARKER.name)  # resolved once, not per message
        self.trajectory_topic = self.resolve_topic_name(EXCITATION_TRAJECTORY.name)
        self.excitation_status_topic = self.resolve_topic_name(EXCITATION_STATUS.name)
        self.description_topic = config.robot_description_topic  # its ros2_control hardware: the torque filter, loop
        topics = {config.joint_states_topic: "sensor_msgs/msg/JointState",
                  self.description_topic: "std_msgs/msg/String"} | {
            self.resolve_topic_name(t.name): t.type_name for t in (EXCITATION_TRAJECTORY, PERIOD_MARKER,
                                                                   EXCITATION_STATUS)}
        if self.get_parameter("use_sim_time").value:
            topics[self.resolve_topic_name("/clock")] = "rosgraph_msgs/msg/Clock"  # remapped in a namespace
        for entry in p["extra_topics"]:
            topic, _, msgtype = entry.partition(":")
            try:
                _message_class(msgtype)
            except (ImportError, AttributeError, ValueError):
                self.get_logger().warning(f"not recording {topic}: its type {msgtype} is not installed")
                continue
            topics[topic] = msgtype
        self.topics = topics
        self.joint_states_topic = config.joint_states_topic
        bag_path = p["bag_path"] or default_bag_path(config.robot)
        writer = BagWriter(bag_path, typestore_for(set(topics.values())), p["storage"], p["flush_period_s"])
        self.session = RecordingSession(writer, config.joint_states_topic, p["rate_hz"] or config.state_rate_hz,
                                        self.get_logger().warning)
        self.exit_when_done = p["exit_when_done"]
        self.ack_name = p["ack_name"]
        self.subscribed: set[str] = set()
        self._state_sub: Subscription | None = None
        self._taking = False
        self.done = False
        self.ack_pub = self.create_publisher(TimeReference, SIM_ACK.name, SIM_ACK.qos)
        self.status_pub = self.create_publisher(RecordingStatus, RECORDING_STATUS.name, RECORDING_STATUS.qos)
        self.create_service(Trigger, "~/stop", self._on_stop)
        wall = Clock(clock_type=ClockType.STEADY_TIME)  # with use_sim_time, no /clock comes before the first sample
        self.create_timer(0.2, self._subscribe_new, clock=wall)
        self.create_timer(1.0, self._publish_status, clock=wall)
        self.create_timer(TAKE_PERIOD_S, self._take_joint_states, clock=wall)
        self.create_timer(p["flush_period_s"] / 4.0, writer.flush_if_due, clock=wall)  # also when no message comes
        self._subscribe_new()
        keep_threads_realtime(p["realtime_priority"], set(), lambda apply: self.create_timer(1.0, apply, clock=wall),
                              self.get_logger().warning)
        self.get_logger().info(f"recording {sorted(topics)} into {writer.path} ({p['storage']})")

    def _subscribe_new(self) -> None:
        """Subscribe every topic that has a publisher now, with that publisher's QoS."""
        for topic, msgtype in self.topics.items():
            publishers = self.get_publishers_info_by_topic(topic) if topic not in self.subscribed else []
            if not publishers:
                continue
            reliable = all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in publishers)
            latched = all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in publishers)
            qos = QoSProfile(depth=DEPTH,
                             reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
            self.session.writer.add_topic(topic, msgtype, offered_qos(reliable, latched))
            if topic == self.joint_states_topic:
                self._state_sub = self.create_subscription(_message_class(msgtype), topic, self._callback(topic), qos,
                                                           raw=True, callback_group=TakenByTheNode())
            else:
                self.create_subscription(_message_class(msgtype), topic, self._callback(topic), qos, raw=True)
            self.subscribed.add(topic)

    def _take_joint_states(self) -> None:
        """Write the joint states waiting, oldest first (not again from within: the last period's closes the bag);
        acknowledge the newest written, once for the batch."""
        if self._state_sub is None or self._taking:
            return
        self._taking = True
        written = self.session.samples
        try:
            for raw, _info in take_waiting(self._state_sub):
                self._state_sub.callback(raw)
        finally:
            self._taking = False
        if self.ack_name and self.session.samples > written:
            self.ack_pub.publish(TimeReference(time_ref=time_msg(self.session.latest_ns), source=self.ack_name))

    def _callback(self, topic: str):
        def on_message(raw: bytes) -> None:
            if self.done:
                return
            self.session.on_message(topic, self.get_clock().now().nanoseconds, raw)
            if topic == self.joint_states_topic:
                if self.session.finished:
                    self._finish("the last period is recorded")
            elif topic == self.marker_topic:
                marker = deserialize_message(raw, PeriodMarker)
                self.session.on_marker(PeriodMarkerStamp(
                    marker.period_index, header_stamp_ns(raw), marker.period_s, marker.num_periods))
            elif topic == self.trajectory_topic:
                description = deserialize_message(raw, ExcitationTrajectory)
                self.session.on_description(description.period_s, description.harmonics)
            elif topic == self.description_topic and stack_sensors(deserialize_message(raw, String).data).open_loop:
                self.get_logger().error(
                    f"{topic}: the robot's hardware interface runs open loop (open_loop: true): the joint positions it "
                    "publishes are the commands, not measurements, and cannot be identified from; set open_loop: "
                    "false (lbr_fri_ros2_stack: lbr_system_config.yaml) and record again")
            elif topic == self.excitation_status_topic:
                status = deserialize_message(raw, ExcitationStatus)
                if status.stopped:  # no more periods will come: the bag is closed with what was recorded
                    self.get_logger().error(f"the excitation node stopped the arm ({status.state}: {status.reason})")
                    self._finish(f"the excitation stopped ({status.state})")
        return on_message

    def _status(self) -> RecordingStatus:
        s = self.session
        index = s.recorded_index()
        msg = RecordingStatus(bag_path=str(s.writer.path), periods_recorded=s.periods_recorded(),
                              periods_expected=s.periods_expected, samples_recorded=s.samples, finished=self.done,
                              samples_missing=sum(e.missing for e in index),
                              periods_flagged=sum(e.flagged for e in index))
        msg.header.stamp = self.get_clock().now().to_msg()
        return msg

    def _publish_status(self) -> None:
        if not self.done:
            self.status_pub.publish(self._status())

    def _on_stop(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success = not self.done
        response.message = self._finish("stop requested") if not self.done else "already stopped"
        return response

    def _finish(self, reason: str) -> str:
        """Close the bag with every joint state received and say so; ends the node's spin when exit_when_done."""
        self._take_joint_states()
        self.close()
        self.status_pub.publish(self._status())
        text = (f"{reason}: {self.session.samples} joint states, {self.session.periods_recorded()} of "
                f"{self.session.periods_expected} periods in {self.session.writer.path}")
        self.get_logger().info(text)
        return text

    def close(self) -> None:
        """Close the bag with its period index (once)."""
        if not self.done:
            self.done = True
            self.session.close()


def main(args: list[str] | None = None) -> int:
    process = NodeProcess("recorder_node", refused=(ModelError, ValueError, KeyError, OSError),
                          done=lambda node: node.done and node.exit_when_done, close=RecorderNode.close)
    return run_node(RecorderNode, process, args)
