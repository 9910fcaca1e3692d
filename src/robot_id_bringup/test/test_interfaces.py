"""Every robot_id_msgs interface crosses DDS between two nodes unchanged."""

import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile

from robot_id_msgs.msg import (
    ExcitationTrajectory,
    IdentificationResult,
    JointFriction,
    LinkInertial,
    PeriodMarker,
    RecordingStatus,
)
from robot_id_msgs.srv import IdentifyBag


@pytest.fixture
def nodes():
    context = rclpy.Context()
    rclpy.init(context=context)
    sender = rclpy.create_node("sender", context=context)
    receiver = rclpy.create_node("receiver", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(sender)
    executor.add_node(receiver)
    yield sender, receiver, executor
    executor.shutdown()
    sender.destroy_node()
    receiver.destroy_node()
    rclpy.shutdown(context=context)


def _spin_until(executor, done, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while not done() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    assert done(), "nothing arrived within the timeout"


def _excitation():
    msg = ExcitationTrajectory(robot="iiwa14", kind="modified_fourier", period_s=20.0, base_frequency_hz=0.05)
    msg.joint_names = [f"lbr_A{i}" for i in range(1, 8)]
    msg.harmonics = 5
    msg.coefficients_a = [0.1 * i for i in range(35)]
    msg.coefficients_b = [-0.01 * i for i in range(35)]
    msg.offsets_rad = [0.0, 0.5, 0.0, -1.2, 0.0, 0.7, 0.0]
    msg.num_periods = 10
    msg.start_time.sec = 12
    return msg


def _result():
    msg = IdentificationResult(robot="panda", condition_number=88.5)
    msg.joint_names = [f"fer_joint{i}" for i in range(1, 8)]
    msg.base_names = ["ZZ1R", "FV1"]
    msg.base_expressions = ["ZZ1 + YY2", "FV1"]
    msg.base_values = [0.31, 0.05]
    msg.base_rsd_percent = [1.2, 3.4]
    msg.essential_names = ["ZZ1R"]
    msg.essential_values = [0.3]
    msg.essential_rsd_percent = [1.0]
    msg.physical = [LinkInertial(link_name="fer_link1", mass_kg=2.79, com_m=[0.0, -0.02, -0.05],
                                 inertia_kg_m2=[0.0156, 0.0, 0.0, 0.0144, -0.0025, 0.005])]
    msg.friction = [
        JointFriction(joint_name="fer_joint1", viscous_nm_s_rad=0.2, coulomb_nm=0.4, offset_nm=-0.1,
                      stribeck_coefficients=[0.2, 0.01, 0.001, 0.5, 0.02, 0.4, 0.05]),
        JointFriction(joint_name="fer_joint2", viscous_nm_s_rad=0.1, coulomb_nm=0.3, coulomb_law="sigmoid",
                      coulomb_shape_names=["velocity_rad_s", "shift_rad_s"], coulomb_shape_values=[0.05, -0.01]),
    ]
    msg.output_dir = "/tmp/out"
    return msg


@pytest.mark.parametrize(
    "message",
    [
        _excitation(),
        PeriodMarker(period_index=3, num_periods=10, period_s=20.0),
        RecordingStatus(bag_path="/tmp/bag", periods_recorded=4, periods_expected=10, samples_recorded=80_000),
        _result(),
    ],
    ids=lambda m: type(m).__name__,
)
def test_message_round_trip(nodes, message):
    sender, receiver, executor = nodes
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    received = []
    receiver.create_subscription(type(message), "round_trip", received.append, qos)
    sender.create_publisher(type(message), "round_trip", qos).publish(message)
    _spin_until(executor, lambda: received)
    assert received[0] == message


def test_identify_bag_service_round_trip(nodes):
    sender, receiver, executor = nodes

    def identify(request, response):
        response.success = request.bag_path.endswith("run_1")
        response.message = f"identified {request.bag_path} into {request.output_dir}"
        response.result = _result()
        return response

    receiver.create_service(IdentifyBag, "identify_bag", identify)
    client = sender.create_client(IdentifyBag, "identify_bag")
    _spin_until(executor, lambda: client.service_is_ready())
    future = client.call_async(IdentifyBag.Request(bag_path="/bags/run_1", output_dir="/tmp/id"))
    _spin_until(executor, future.done)
    response = future.result()
    assert response.success
    assert response.message == "identified /bags/run_1 into /tmp/id"
    assert response.result == _result()
