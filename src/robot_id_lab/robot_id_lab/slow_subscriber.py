"""A slow subscriber, load for the hardware-like test bed (testbed.py): it subscribes to the robot config's joint
states with the QoS the recorder gives them (reliable, depth 1000, raw bytes) and spends `work_s` of wall time
spinning the CPU on each message, so that above 1 / work_s messages per second it falls behind. Every 5 s it logs how
many it received and how far behind it is (system time minus the stamp of the message it handles).
"""

from __future__ import annotations

import sys
import time

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from robot_id_contract.parameters import declare_parameters, descriptor
from robot_id_contract.stamps import header_stamp_ns
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import ModelError

RECORDER_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
"""What the recorder subscribes to a reliable, volatile joint-state topic with."""
STATUS_PERIOD_S = 5.0


class SlowSubscriber(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("slow_subscriber", **kwargs)
        p = declare_parameters(self, {
            "robot": ("iiwa14", descriptor("robot config whose joint states topic is subscribed")),
            "work_s": (0.005, descriptor("wall time spent spinning the CPU per message (s)", floats=(0.0, 1.0)))})
        robot, self.work_s = p["robot"], p["work_s"]
        topic = load_robot_config(robot).joint_states_topic
        self.received = 0
        self.behind_s = 0.0
        self.create_subscription(JointState, topic, self._on_state, RECORDER_QOS, raw=True)
        self.create_timer(STATUS_PERIOD_S, self._status)
        self.get_logger().info(f"subscribed to {topic}, {1e3 * self.work_s:g} ms per message")

    def _on_state(self, raw: bytes) -> None:
        self.received += 1
        self.behind_s = 1e-9 * (time.time_ns() - header_stamp_ns(raw))
        end_s = time.perf_counter() + self.work_s
        while time.perf_counter() < end_s:
            pass

    def _status(self) -> None:
        self.get_logger().info(f"{self.received} joint states received, {1e3 * self.behind_s:.1f} ms behind")


def main(args: list[str] | None = None) -> int:
    try:
        rclpy.init(args=args)
    except Exception as err:  # rcl's own error for arguments it cannot parse
        print(f"error: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    try:
        node = SlowSubscriber()
    except (ModelError, ValueError, OSError) as err:
        rclpy.logging.get_logger("slow_subscriber").fatal(str(err))
        rclpy.try_shutdown()
        return 2
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
