"""The graph's topics and its service: names relative to the nodes' namespace (a namespace holds one arm's graph:
the runner's `--namespace`, the launch file's `namespace`), message types, and the QoS that publisher and
subscribers both use. Latched topics are transient local on both sides, so a node that starts late (an estimator
after the recording, the runner after a result) still gets the last message.

The robot's own topics (joint states, trajectory commands) are the robot stack's and come from the robot configs.
"""

from __future__ import annotations

from dataclasses import dataclass

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""The last message for whoever subscribes, also later: statuses, results, descriptions."""
STREAM = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
"""Every message to those subscribed now: period markers."""
ACKS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
"""Lockstep acknowledgements, one per joint state at up to 1 kHz."""


@dataclass(frozen=True)
class Topic:
    """One topic of the graph: relative name, message type (package/msg/Type) and its QoS on both sides."""

    name: str
    type_name: str
    qos: QoSProfile


RECORDING_STATUS = Topic("robot_id/recording_status", "robot_id_msgs/msg/RecordingStatus", LATCHED)
EXCITATION_STATUS = Topic("robot_id/excitation_status", "robot_id_msgs/msg/ExcitationStatus", LATCHED)
EXCITATION_TRAJECTORY = Topic("robot_id/excitation_trajectory", "robot_id_msgs/msg/ExcitationTrajectory", LATCHED)
PERIOD_MARKER = Topic("robot_id/period_marker", "robot_id_msgs/msg/PeriodMarker", STREAM)
IDENTIFICATION_RESULT = Topic("robot_id/identification_result", "robot_id_msgs/msg/IdentificationResult", LATCHED)
IDENTIFIED_DESCRIPTION = Topic("robot_description_identified", "std_msgs/msg/String", LATCHED)
SIM_ACK = Topic("robot_id/sim_ack", "sensor_msgs/msg/TimeReference", ACKS)
GRAPH_TOPICS = (RECORDING_STATUS, EXCITATION_STATUS, EXCITATION_TRAJECTORY, PERIOD_MARKER, IDENTIFICATION_RESULT,
                IDENTIFIED_DESCRIPTION, SIM_ACK)

IDENTIFY_BAG_SERVICE = "robot_id/identify_bag"
"""robot_id_msgs/srv/IdentifyBag of the estimator."""
