"""The simulated robot node: a MuJoCo arm that speaks the real stack's topics from its robot config.

Subscribes to the config's joint trajectory topic (trajectory_msgs/JointTrajectory, refused and followed as
joint_trajectory_controller does, configured by `controller_file` or as robot_id requires it:
joint_trajectory_controller.py); publishes sensor_msgs/JointState on the config's joint states topic at
`state_rate_hz` (0: the config's; effort = the joint torque the drives apply, link side, gravity included, through the
configured sensor effects) and the simulated URDF on the config's robot_description topic (std_msgs/String, transient
local) with a ros2_control hardware element saying, as lbr_fri_ros2_stack's does, how the torque is filtered
(`measured_torque_tau`) and that the positions are measured (`open_loop` false). Its `clock` parameter chooses how time
runs:

- sim (the default): sim time starts at 0 and runs at `real_time_factor` × the wall clock, published on `/clock`
  (rosgraph_msgs/Clock) for nodes with use_sim_time; the nodes named in `lockstep_subscribers` acknowledge on
  robot_id/sim_ack (sensor_msgs/TimeReference: source = their name, time_ref = the last joint state stamp they
  received) and the simulation never runs more than `lockstep_window_s` ahead of the slowest, so nothing is lost
  however slow they are (in lockstep the clock starts once the joint states have as many subscribers as lockstep
  names). When the recorder reports the recording finished (robot_id/recording_status, robot_id_msgs/RecordingStatus)
  the run is over: the simulation holds where it is, says so once and waits for nobody.
- wall: free running as a real robot's driver (lbr_fri_ros2_stack, franka_ros2): real time from the start, each
  joint state published when it is due on the system clock and stamped with that time (ROS time without
  use_sim_time), trajectory header stamps read on the same clock (zero: on arrival); no /clock, no lockstep, no
  waiting for anyone, and after the recording it goes on holding its last command. When the machine falls behind it
  keeps its own time, catches up and counts how late the samples went out (wall_clock.py; the status line every
  5 s). real_time_factor must stay 1 and lockstep_subscribers empty.
"""

from __future__ import annotations

import gc
import sys
import threading
import time

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, TimeReference
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from robot_id_contract.node_process import NodeProcess, run_node
from robot_id_contract.parameters import declare_parameters
from robot_id_contract.stamps import stamp_s
from robot_id_contract.taken_messages import TakenByTheNode, take_waiting
from robot_id_contract.topics import LATCHED, RECORDING_STATUS, SIM_ACK
from robot_id_model.realtime import set_realtime_priority
from robot_id_model.robot_config import RobotConfig, load_robot_config
from robot_id_model.robot_model import ModelError, load_robot_model
from robot_id_msgs.msg import RecordingStatus
from robot_id_sim.joint_trajectory_controller import ControllerParameters, controller_node_name
from robot_id_sim.mujoco_plant import PlantError
from robot_id_sim.node_parameters import CLOCKS, TRUE_DYNAMICS, parameters
from robot_id_sim.outgoing_cdr import JointStateCdr, clock_cdr
from robot_id_sim.pacing import Pacer
from robot_id_sim.seeded_load import seeded_load
from robot_id_sim.sensors import Measurement, SensorOptions
from robot_id_sim.simulated_robot import SimSettings, SimulatedRobot
from robot_id_sim.trajectory_cdr import trajectory_command_from_cdr
from robot_id_sim.true_dynamics import (
    TRUTH_FRICTION,
    Perturbation,
    perturbed_dynamics,
    urdf_dynamics,
    with_payload,
)
from robot_id_sim.true_friction import FRICTION_LAWS
from robot_id_sim.truth_file import write_truth
from robot_id_sim.wall_clock import WallClockLoop

TICK_S = 0.005
"""Wall-clock period of the simulation loop."""
TICK_BUDGET_S = 0.02
"""Longest a tick simulates before it lets acknowledgements and commands in."""
STATUS_PERIOD_S = 5.0

STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
"""As deep as the recorder's subscription: a reliable subscriber that falls behind by a tick's burst after a lag (up to
pacing.MAX_LAG_S of samples, 200 at 1 kHz) still gets every sample from the publisher's history."""


def _with_hardware(urdf_text: str, torque_filter_s: float) -> str:
    """The URDF with the simulated hardware's ros2_control element, its parameters named as lbr_fri_ros2_stack's."""
    hardware = (f'  <ros2_control name="robot_id_sim" type="system">\n    <hardware>\n'
                f'      <plugin>robot_id_sim/SimulatedRobot</plugin>\n'
                f'      <param name="measured_torque_tau">{torque_filter_s!r}</param>\n'
                f'      <param name="open_loop">false</param>\n    </hardware>\n  </ros2_control>\n')
    end = urdf_text.rindex("</robot>")
    return urdf_text[:end] + hardware + urdf_text[end:]


class SimNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("robot_id_sim", **kwargs)
        self.wall_loop: WallClockLoop | None = None  # before anything that can fail: rclpy destroys the node then
        p = declare_parameters(self, parameters())
        problem = _parameter_problem(p)
        if problem:
            raise ValueError(problem)
        config = load_robot_config(p["robot"])
        rate_hz = p["state_rate_hz"] or config.state_rate_hz
        source = self._build_robot(p, config, rate_hz)
        self.joint_names = list(config.joint_names)
        self.published = self.dropped = self.refused = 0
        self.lock = threading.Lock()  # the robot, between the wall clock's thread and the executor's callbacks
        self.clock_pub = None
        self.failure: BaseException | None = None

        self.state_pub = self.create_publisher(JointState, config.joint_states_topic, STATE_QOS)
        self.state_cdr = JointStateCdr(self.joint_names)  # published as bytes: outgoing_cdr.py says why
        self.description_pub = self.create_publisher(String, config.robot_description_topic, LATCHED)
        self.description_pub.publish(String(data=_with_hardware(self.urdf_text,
                                                                self.robot.sensors.options.torque_filter_time_constant_s)))
        self.create_subscription(JointTrajectory, config.joint_trajectory_topic, self._on_trajectory, 10,
                                 raw=True)  # read by trajectory_cdr: see there why
        self.state_topic = self.state_pub.topic_name  # remapped, if it is
        self.status_wall_s = self.start_wall_s = time.monotonic()
        pace = self._run_on_wall_clock(p) if p["clock"] == "wall" else self._run_on_sim_time(p, rate_hz)
        self.get_logger().info(
            f"{config.robot}: {source}; joint states on {config.joint_states_topic} at {rate_hz:g} Hz, "
            f"trajectories on {config.joint_trajectory_topic}, {pace}")

    def _build_robot(self, p: dict, config: RobotConfig, rate_hz: float) -> str:
        """The simulated robot of the parameters (self.robot, self.urdf_text), its truth file written; where its
        true dynamics come from."""
        urdf_path = config.urdf_path if not p["urdf"] else p["urdf"]
        self.urdf_text = open(urdf_path).read()
        nominal = config.load_model()
        truth_model = load_robot_model(self.urdf_text, config.joint_names, config.gravity_m_s2, TRUTH_FRICTION)
        if p["true_dynamics"] == "perturbed":
            perturbation = Perturbation(seed=p["seed"], static_over_coulomb=p["static_over_coulomb"],
                                        friction_laws=tuple(p["friction_laws"]))
            truth = perturbed_dynamics(truth_model, config.limits.torque_nm, perturbation)
            source = f"{urdf_path} perturbed with seed {p['seed']}"
        else:
            truth = urdf_dynamics(truth_model)
            source = f"{urdf_path} as it is"
        if p["load_seed"] >= 0:
            load = seeded_load(p["load_seed"], config.rated_payload_kg or 0.0)
            truth = with_payload(truth, truth_model, load, config.flange_frame)
            source += f", carrying the load of seed {p['load_seed']} ({load.mass_kg:.3g} kg) on {config.flange_frame}"
        filter_s = p["torque_filter_time_constant_s"]
        sensors = SensorOptions(
            torque_noise_nm=tuple(p["torque_noise_nm"]), encoder_noise_rad=p["encoder_noise_rad"],
            encoder_resolution_rad=p["encoder_resolution_rad"],
            torque_filter_time_constant_s=config.torque_filter_time_constant_s if filter_s < 0.0 else filter_s,
            drop_probability=p["drop_probability"], seed=p["seed"])
        limits = config.limits
        q0 = np.array(p["start_position_rad"]) if p["start_position_rad"] else 0.5 * (
            limits.position_lower_rad + limits.position_upper_rad)
        settings = SimSettings(rate_hz, p["physics_rate_hz"], p["tracking_bandwidth_hz"])
        controller = ControllerParameters.from_yaml(p["controller_file"], controller_node_name(
            config.joint_trajectory_topic)) if p["controller_file"] else ControllerParameters.as_required(
            config.joint_names)
        self.robot = SimulatedRobot(config, nominal, self.urdf_text, truth, settings, sensors, q0, controller)
        if p["truth_file"]:
            path = write_truth(p["truth_file"], truth_model, truth, source, sensors)
            self.get_logger().info(f"true parameters written to {path}")
        return source

    def _run_on_sim_time(self, p: dict, rate_hz: float) -> str:
        """clock sim: /clock, the pacer, lockstep acknowledgements, the recording's end, the tick; how it is paced."""
        self.pacer = Pacer(p["real_time_factor"], p["lockstep_subscribers"], p["lockstep_window_s"])
        self.clock_every = max(round(rate_hz / p["clock_rate_hz"]), 1)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        self.ack_sub = self.create_subscription(TimeReference, SIM_ACK.name, self._on_ack, SIM_ACK.qos,
                                                callback_group=TakenByTheNode())  # taken by the tick, in batches
        self.create_subscription(RecordingStatus, RECORDING_STATUS.name, self._on_recording_status,
                                 RECORDING_STATUS.qos)
        self.lockstep_subscribers = list(p["lockstep_subscribers"])
        self.started = False
        self.create_timer(TICK_S, self._tick)
        return f"real-time factor {p['real_time_factor']:g}" + (
            f", lockstep with {p['lockstep_subscribers']}" if p["lockstep_subscribers"] else "")

    def _run_on_wall_clock(self, p: dict) -> str:
        """clock wall: a thread publishes each sample when it is due on the system clock, from now on (with this
        thread at the realtime priority, if any, which it inherits); how it is paced."""
        priority = p["realtime_priority"]
        refused = set_realtime_priority(priority)
        if refused:
            self.get_logger().warning(f"realtime_priority: {refused}")
        self.wall_loop = WallClockLoop(self.robot.dt_s, self._advance, self._publish, self._on_wall_clock_error)
        self.late_reported = 0
        self.create_timer(STATUS_PERIOD_S, self._wall_status)
        # A command of 2001 points every 2 s, with a busy process per core, delayed the joint states at 1 kHz by up
        # to 149 ms read by rclpy, 79 ms read by trajectory_cdr, 51 ms with what is loaded kept out of collections (a
        # full one walks it all), 22 ms with the publishing thread waiting at most 0.2 ms (not 5) for the
        # interpreter lock while a command is read (test_testbed).
        gc.freeze()
        sys.setswitchinterval(2e-4)
        self.wall_loop.start()
        return "free running on the system clock" + (
            f", SCHED_FIFO priority {priority}" if priority and not refused else "")

    @property
    def epoch_ns(self) -> int:
        """System time [ns] of the robot's time 0: its start on the wall clock; 0 on sim time."""
        return self.wall_loop.start_ns if self.wall_loop is not None else 0

    def _on_trajectory(self, data: bytes) -> None:
        try:
            command = trajectory_command_from_cdr(data, self.epoch_ns)
        except ValueError as err:
            self.refused += 1
            self.get_logger().error(f"trajectory refused: {err}")
            return
        with self.lock:
            reason = self.robot.command(command)
        if reason:
            self.refused += 1
            self.get_logger().error(f"trajectory refused: {reason}")

    def _on_ack(self, msg: TimeReference) -> None:
        self.pacer.acknowledge(msg.source, stamp_s(msg.time_ref))

    def _take_acks(self) -> int:
        """The acknowledgements waiting, to the pacer (not one executor callback each: at x5 real time they come
        500 times a second); how many."""
        taken = 0
        for msg, _info in take_waiting(self.ack_sub):
            self._on_ack(msg)
            taken += 1
        return taken

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
        self._take_acks()
        allowed = self.pacer.allowed_s(began, self.robot.t_s)
        while time.monotonic() - began < TICK_BUDGET_S and self.context.ok():  # a signal shuts it down meanwhile
            if self.robot.t_s + self.robot.dt_s > allowed + 1e-12:
                if not self._take_acks():  # none came meanwhile that could allow more: until the next tick
                    break
                allowed = self.pacer.allowed_s(time.monotonic(), self.robot.t_s)
                continue
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

    def _advance(self) -> Measurement | None:
        """clock wall: the next sample, simulated before it is due (a command arriving now acts from the one after,
        one period later, as a real robot's controller cycle)."""
        with self.lock:
            return self.robot.advance()

    def _on_wall_clock_error(self, err: BaseException) -> None:
        """The wall clock's thread stopped on `err`: after a signal that is the shutdown, otherwise a failure that
        ends the node (main raises it)."""
        if self.context.ok():
            self.failure = err
            self.context.try_shutdown()

    def _publish(self, sample: Measurement | None) -> None:
        """The latest sample (None: dropped by the sensor model), stamped with its time (sim time or system time)."""
        stamp_ns = self.epoch_ns + round(self.robot.t_s * 1e9)
        if self.robot.constraint_failure:
            self.get_logger().error(f"joint trajectory controller: {self.robot.constraint_failure}")
        if self.clock_pub is not None and self.robot.samples % self.clock_every == 0:
            self.clock_pub.publish(clock_cdr(stamp_ns))
        if sample is None:
            self.dropped += 1
            return
        self.state_pub.publish(self.state_cdr.serialize(stamp_ns, sample.q_rad, sample.dq_rad_s, sample.effort_nm))
        self.published += 1

    def _status(self, wall_s: float) -> None:
        factor = self.robot.t_s / max(wall_s - self.start_wall_s, 1e-9)
        waiting = self.pacer.waiting_for(self.robot.t_s)
        self.get_logger().info(
            f"sim time {self.robot.t_s:.3f} s (x{factor:.2f} real time), {self.published} joint states published, "
            f"{self.dropped} dropped by the sensor model, {self.refused} trajectories refused"
            + (f", waiting for {waiting}" if waiting else ""))
        self.status_wall_s = wall_s

    def _wall_status(self) -> None:
        """clock wall: what was published, and how late; a warning when more samples went out late."""
        lateness = self.wall_loop.lateness
        text = (f"{self.robot.t_s:.3f} s on the wall clock, {self.published} joint states published, "
                f"{self.dropped} dropped by the sensor model, {self.refused} trajectories refused; "
                f"{lateness.late} of {lateness.samples} published more than one period late (at most "
                f"{1e3 * lateness.max_s:.1f} ms after they were due)")
        if lateness.late > self.late_reported:  # two calls: rclpy refuses two severities from one call site
            self.get_logger().warning(text)
        else:
            self.get_logger().info(text)
        self.late_reported = lateness.late

    def destroy_node(self) -> None:
        if self.wall_loop is not None:
            self.wall_loop.stop()  # no publishing from its thread into a destroyed node
        super().destroy_node()


def _parameter_problem(p: dict) -> str:
    """What is wrong with the parameters beyond their declared ranges, in one line ("" if nothing)."""
    if p["true_dynamics"] not in TRUE_DYNAMICS:
        return f"true_dynamics must be one of {TRUE_DYNAMICS}, not '{p['true_dynamics']}'"
    unknown = [law for law in p["friction_laws"] if law not in FRICTION_LAWS]
    if unknown or not p["friction_laws"]:
        return f"friction_laws must be from {FRICTION_LAWS}, not {list(p['friction_laws'])}"
    if p["clock"] not in CLOCKS:
        return f"clock must be one of {CLOCKS}, not '{p['clock']}'"
    if p["clock"] == "wall" and (p["real_time_factor"] != 1.0 or p["lockstep_subscribers"]):
        return ("clock wall runs in real time and waits for nobody: real_time_factor must be 1 and "
                "lockstep_subscribers empty")
    if p["clock"] == "sim" and p["realtime_priority"]:
        return "realtime_priority is for clock wall (on sim time nothing is due at a wall-clock time)"
    return ""


def main(args: list[str] | None = None) -> int:
    process = NodeProcess("sim_node", refused=(ModelError, PlantError, ValueError, OSError),
                          failure=lambda node: node.failure)
    return run_node(SimNode, process, args)
