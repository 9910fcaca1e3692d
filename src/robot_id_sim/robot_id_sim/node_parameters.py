"""The simulated robot node's parameters, with descriptions and ranges (`ros2 param describe`); all read once at
start-up and read-only."""

from __future__ import annotations

from rclpy.parameter import Parameter

from robot_id_contract.parameters import ParameterTable, descriptor
from robot_id_sim.true_friction import FRICTION_LAWS

TRUE_DYNAMICS = ("perturbed", "urdf")
CLOCKS = ("sim", "wall")


def parameters() -> ParameterTable:
    """Name: (default, descriptor); a Parameter.Type default declares a list parameter that is empty unless set."""
    return {**_robot_parameters(), **_running_parameters(), **_sensor_parameters()}


def _running_parameters() -> ParameterTable:
    """How the simulation runs: its rates, its controller, its clock and the subscribers it waits for."""
    return {
        "state_rate_hz": (0.0, descriptor("joint states per second (0: the robot config's)",
                                           floats=(0.0, 10_000.0))),
        "physics_rate_hz": (2000.0, descriptor("MuJoCo steps per second of sim time", floats=(100.0, 100_000.0))),
        "tracking_bandwidth_hz": (15.0, descriptor("bandwidth of the joint tracking controller (Hz)",
                                                    floats=(0.1, 200.0))),
        "start_position_rad": (Parameter.Type.DOUBLE_ARRAY, descriptor(
            "joint positions the arm starts at, at rest (empty: the middle of each joint's range)")),
        "controller_file": ("", descriptor(
            "a controller manager's parameter file (as a lab passes to its robot's stack) whose joint trajectory "
            "controller the simulator stands in for: its rules refuse and splice commands; empty: the controller's "
            "defaults with interpolate_from_desired_state true, as the excitation node requires")),
        "clock": ("sim", descriptor(
            "sim: simulated time from 0 on /clock (for use_sim_time), paced by real_time_factor or in lockstep, "
            "holding once the recording is finished; wall: free running like a real robot's driver, in real time on "
            "the system clock (joint states stamped with it, trajectory stamps read on it, no /clock, waits for "
            "nobody, holds its last command after the recording)", constraints="one of " + ", ".join(CLOCKS))),
        "realtime_priority": (0, descriptor(
            "clock wall: SCHED_FIFO priority of the node's thread and the one that simulates and publishes (0: "
            "normal scheduling), so that load on the machine does not delay the robot, as lbr_fri_ros2_stack's "
            "rt_prio and franka_ros2's realtime_config do; refused by the system, it warns and runs without",
            ints=(0, 99))),
        "real_time_factor": (1.0, descriptor(
            "sim seconds per wall second; 0: as fast as the lockstep subscribers acknowledge (clock wall: 1 only)",
            floats=(0.0, 100.0))),
        "lockstep_subscribers": (Parameter.Type.STRING_ARRAY, descriptor(
            "node names of subscribers that acknowledge joint states on robot_id/sim_ack under that name; the "
            "simulation starts once they subscribe and waits for the slowest")),
        "lockstep_window_s": (0.1, descriptor("how far (sim s) the simulation may run ahead of the slowest "
                                                "acknowledgement", floats=(0.001, 10.0))),
        "clock_rate_hz": (250.0, descriptor("/clock messages per second of sim time", floats=(1.0, 10_000.0))),
    }


def _sensor_parameters() -> ParameterTable:
    """What the simulated sensors add: noise, quantisation, the torque filter, lost messages."""
    return {
        "torque_noise_nm": ([0.1], descriptor(
            "σ of the torque sensor's white noise on every physics step, before the torque filter (Nm): one value, "
            "or one per joint")),
        "encoder_noise_rad": (0.0, descriptor("σ of the position noise (rad)", floats=(0.0, 1.0))),
        "encoder_resolution_rad": (0.0, descriptor("quantisation step of the positions (rad; 0: none)",
                                                    floats=(0.0, 1.0))),
        "torque_filter_time_constant_s": (-1.0, descriptor(
            "first-order low-pass of the published torque (s; 0: off; negative: the robot config's, as the real "
            "stack filters)", floats=(-1.0, 10.0))),
        "drop_probability": (0.0, descriptor("chance that a joint state message is not published",
                                              floats=(0.0, 0.99))),
    }


def _robot_parameters() -> ParameterTable:
    """The robot simulated: its config or URDF, its true dynamics and load, where the truth is written."""
    return {
        "robot": ("iiwa14", descriptor("robot config: a path or an installed name such as iiwa14, fr3")),
        "urdf": ("", descriptor("URDF to simulate instead of the config's, e.g. an identified.urdf")),
        "true_dynamics": ("perturbed", descriptor(
            "perturbed: the URDF changed in a seeded way (payload, links, friction, armature, sensor offset); "
            "urdf: exactly the URDF, its <dynamics> as friction", constraints="one of " + ", ".join(TRUE_DYNAMICS))),
        "seed": (0, descriptor("seed of the perturbation and of the sensor noise", ints=(0, 2**31 - 1))),
        "static_over_coulomb": (1.3, descriptor(
            "perturbed: the true static friction over the Coulomb level (Stribeck rise, Luo et al. 2024 eq. 7); 1: "
            "none, the friction is then viscous plus a Coulomb level reached within 0.05 rad/s", floats=(1.0, 3.0))),
        "friction_laws": (["stribeck"], descriptor(
            "perturbed: each joint's friction law drawn (seeded) from these: stribeck (Luo et al. 2024 eq. 7), "
            "sigmoid (Gaz et al. 2019, smooth and off-centre), tanh (the estimator's smooth law)",
            constraints="each one of " + ", ".join(FRICTION_LAWS))),
        "load_seed": (-1, descriptor(
            "a load on the flange drawn from this seed (0.5-3 kg box, CoM up to 10 cm off the flange axis; "
            "seeded_load), in the truth file as `load`; another seed swaps it; -1: no load", ints=(-1, 2**31 - 1))),
        "truth_file": ("", descriptor("write the true parameters to this YAML file (empty: do not)")),
    }

