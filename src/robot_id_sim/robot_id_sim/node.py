"""The simulated robot node: a MuJoCo arm that speaks the real stack's topics from its robot config.

Subscribes to the config's joint trajectory topic (trajectory_msgs/JointTrajectory, followed as
joint_trajectory_controller does); publishes sensor_msgs/JointState on the config's joint states topic at the
config's state rate (effort = the joint torque the drives apply, link side, gravity included, through the
configured sensor effects), `/clock` (rosgraph_msgs/Clock) for nodes with use_sim_time, and the simulated URDF on
`robot_description` (std_msgs/String, transient local). Sim time starts at 0 and runs at `real_time_factor` × the
wall clock; the nodes named in `lockstep_subscribers` acknowledge on robot_id/sim_ack (sensor_msgs/TimeReference:
source = their name, time_ref = the last joint state stamp they received) and the simulation never runs more than
`lockstep_window_s` ahead of the slowest, so nothing is lost however slow they are (in lockstep the clock starts once
the joint states have as many subscribers as lockstep names). When the recorder reports the recording finished
(robot_id/recording_status, robot_id_msgs/RecordingStatus) the run is over: the simulation holds where it is, says so
once and waits for nobody.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, TimeReference
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import ModelError, load_robot_model
from robot_id_msgs.msg import RecordingStatus
from robot_id_sim.mujoco_plant import PlantError
from robot_id_sim.node_parameters import TRUE_DYNAMICS, declare_parameters
from robot_id_sim.pacing import Pacer
from robot_id_sim.sensors import Measurement, SensorOptions
from robot_id_sim.simulated_robot import SimSettings, SimulatedRobot
from robot_id_sim.trajectory_follower import TrajectoryCommand
from robot_id_sim.true_dynamics import TRUTH_FRICTION, Perturbation, perturbed_dynamics, urdf_dynamics
from robot_id_sim.truth_file import write_truth

ACK_TOPIC = "robot_id/sim_ack"
RECORDING_STATUS_TOPIC = "robot_id/recording_status"
TICK_S = 0.005
"""Wall-clock period of the simulation loop."""
TICK_BUDGET_S = 0.02
"""Longest a tick simulates before it lets acknowledgements and commands in."""
STATUS_PERIOD_S = 5.0

STATE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _stamp(t_s: float) -> Time:
    sec, nanosec = divmod(round(t_s * 1e9), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def trajectory_command(msg: JointTrajectory) -> TrajectoryCommand:
    """A JointTrajectory as plain arrays; ragged velocity or acceleration lists become an unusable shape that the
    follower refuses with its reason."""
    def optional(lists: list) -> np.ndarray | None:
        lengths = {len(x) for x in lists}
        if lengths == {0}:
            return None
        return np.array(lists, dtype=float) if len(lengths) == 1 else np.empty((0, 0))

    points = msg.points
    positions = [list(p.positions) for p in points]
    same = len({len(p) for p in positions}) <= 1
    return TrajectoryCommand(
        stamp_s=msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec,
        joint_names=tuple(msg.joint_names),
        time_from_start_s=np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points]),
        positions_rad=np.array(positions, dtype=float) if same else np.empty((0, 0)),
        velocities_rad_s=optional([list(p.velocities) for p in points]),
        accelerations_rad_s2=optional([list(p.accelerations) for p in points]),
    )


class SimNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("robot_id_sim", **kwargs)
        p = declare_parameters(self)
        if p["true_dynamics"] not in TRUE_DYNAMICS:
            raise ValueError(f"true_dynamics must be one of {TRUE_DYNAMICS}, not '{p['true_dynamics']}'")
        config = load_robot_config(p["robot"])
        urdf_path = config.urdf_path if not p["urdf"] else p["urdf"]
        urdf_text = open(urdf_path).read()
        nominal = config.load_model()
        truth_model = load_robot_model(urdf_text, config.joint_names, config.gravity_m_s2, TRUTH_FRICTION)
        if p["true_dynamics"] == "perturbed":
            truth = perturbed_dynamics(truth_model, config.limits.torque_nm, Perturbation(seed=p["seed"]))
            source = f"{urdf_path} perturbed with seed {p['seed']}"
        else:
            truth = urdf_dynamics(truth_model)
            source = f"{urdf_path} as it is"
        filter_s = p["torque_filter_time_constant_s"]
        sensors = SensorOptions(
            torque_noise_nm=tuple(p["torque_noise_nm"]), encoder_noise_rad=p["encoder_noise_rad"],
            encoder_resolution_rad=p["encoder_resolution_rad"],
            torque_filter_time_constant_s=config.torque_filter_time_constant_s if filter_s < 0.0 else filter_s,
            drop_probability=p["drop_probability"], seed=p["seed"])
        rate_hz = p["state_rate_hz"] or config.state_rate_hz
        limits = config.limits
        q0 = np.array(p["start_position_rad"]) if p["start_position_rad"] else 0.5 * (
            limits.position_lower_rad + limits.position_upper_rad)
        settings = SimSettings(rate_hz, p["physics_rate_hz"], p["tracking_bandwidth_hz"])
        self.robot = SimulatedRobot(config, nominal, urdf_text, truth, settings, sensors, q0)
        if p["truth_file"]:
            path = write_truth(p["truth_file"], truth_model, truth, source, sensors)
            self.get_logger().info(f"true parameters written to {path}")
        self.pacer = Pacer(p["real_time_factor"], p["lockstep_subscribers"], p["lockstep_window_s"])
        self.joint_names = list(config.joint_names)
        self.clock_every = max(round(rate_hz / p["clock_rate_hz"]), 1)
        self.published = self.dropped = self.refused = 0

        self.state_pub = self.create_publisher(JointState, config.joint_states_topic, STATE_QOS)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        self.description_pub = self.create_publisher(String, "robot_description", LATCHED_QOS)
        self.description_pub.publish(String(data=urdf_text))
        self.create_subscription(JointTrajectory, config.joint_trajectory_topic, self._on_trajectory, 10)
        self.create_subscription(TimeReference, ACK_TOPIC, self._on_ack, STATE_QOS)
        self.create_subscription(RecordingStatus, RECORDING_STATUS_TOPIC, self._on_recording_status, LATCHED_QOS)
        self.lockstep_subscribers = list(p["lockstep_subscribers"])
        self.state_topic = self.state_pub.topic_name  # remapped, if it is
        self.started = False
        self.status_wall_s = self.start_wall_s = time.monotonic()
        self.create_timer(TICK_S, self._tick)
        self.get_logger().info(
            f"{config.robot}: {source}; joint states on {config.joint_states_topic} at {rate_hz:g} Hz, "
            f"trajectories on {config.joint_trajectory_topic}, real-time factor {p['real_time_factor']:g}"
            + (f", lockstep with {p['lockstep_subscribers']}" if p["lockstep_subscribers"] else ""))

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        reason = self.robot.command(trajectory_command(msg))
        if reason:
            self.refused += 1
            self.get_logger().error(f"trajectory refused: {reason}")

    def _on_ack(self, msg: TimeReference) -> None:
        self.pacer.acknowledge(msg.source, msg.time_ref.sec + 1e-9 * msg.time_ref.nanosec)

    def _on_recording_status(self, msg: RecordingStatus) -> None:
        if msg.finished and not self.pacer.finished:
            self.pacer.finish()
            self.get_logger().info(f"the recording is finished ({msg.bag_path}): the simulation holds at sim time "
                                   f"{self.robot.t_s:.3f} s")

    def _tick(self) -> None:
        began = time.monotonic()
        if not self.started:
            self._start(began)
            return
        allowed = self.pacer.allowed_s(began, self.robot.t_s)
        while (self.robot.t_s + self.robot.dt_s <= allowed + 1e-12 and time.monotonic() - began < TICK_BUDGET_S
               and self.context.ok()):  # a signal shuts the context down between two samples
            self._publish(self.robot.advance())
        if began - self.status_wall_s >= STATUS_PERIOD_S and not self.pacer.finished:
            self._status(began)

    def _start(self, wall_s: float) -> None:
        """Start the clock; in lockstep only once every lockstep subscriber (by node name) subscribes to the joint
        states and the publisher is matched with all their subscriptions, so that none of the first samples is
        published before they can receive it (the topic keeps no history; other subscribers do not count)."""
        subscribers = self.get_subscriptions_info_by_topic(self.state_topic)
        missing = [n for n in self.lockstep_subscribers if n not in {i.node_name for i in subscribers}]
        if missing or self.state_pub.get_subscription_count() < len(subscribers):
            if wall_s - self.status_wall_s >= STATUS_PERIOD_S:
                self.get_logger().info(f"waiting for the lockstep subscribers {missing or self.lockstep_subscribers} "
                                       f"to subscribe to {self.state_topic}")
                self.status_wall_s = wall_s
            return
        self.pacer.start(wall_s, self.robot.t_s)
        self.started = True
        self.status_wall_s = self.start_wall_s = wall_s

    def _publish(self, sample: Measurement | None) -> None:
        stamp = _stamp(self.robot.t_s)
        if self.robot.samples % self.clock_every == 0:
            self.clock_pub.publish(Clock(clock=stamp))
        if sample is None:
            self.dropped += 1
            return
        msg = JointState(name=self.joint_names, position=sample.q_rad.tolist(), velocity=sample.dq_rad_s.tolist(),
                         effort=sample.effort_nm.tolist())
        msg.header.stamp = stamp
        self.state_pub.publish(msg)
        self.published += 1

    def _status(self, wall_s: float) -> None:
        factor = self.robot.t_s / max(wall_s - self.start_wall_s, 1e-9)
        waiting = self.pacer.waiting_for(self.robot.t_s)
        self.get_logger().info(
            f"sim time {self.robot.t_s:.3f} s (x{factor:.2f} real time), {self.published} joint states published, "
            f"{self.dropped} dropped by the sensor model, {self.refused} trajectories refused"
            + (f", waiting for {waiting}" if waiting else ""))
        self.status_wall_s = wall_s


def main(args: list[str] | None = None) -> int:
    try:
        rclpy.init(args=args)
    except Exception as err:  # rcl's own error for arguments it cannot parse (e.g. `-p name:=`)
        print(f"error: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    try:
        node = SimNode()
    except (ModelError, PlantError, ValueError, OSError) as err:
        rclpy.logging.get_logger("robot_id_sim").fatal(str(err))
        rclpy.try_shutdown()
        return 2
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():  # an error after a signal shut ROS down is the shutdown, not a failure
            raise
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
