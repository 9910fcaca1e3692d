"""The one description of the identification graph, in plain Python data: which nodes, their executables, names
and parameters, for each mode. launch/identify.launch.py and the runner (runner.py) are both built from it.

- sim: the simulated robot (robot_id_sim, in lockstep with the recorder and the excitation node: as fast as both
  keep up), the excitation node, the recorder and the estimator, all on the simulator's clock. In lockstep the
  excitation node's steps are never far apart on that clock, so it runs with the same safety settings as on
  hardware. The simulated arm starts at rest at its motion's start pose: a simulated approach shows nothing that
  the excitation node's tests and hardware mode do not, and would cost a run seconds of lockstep;
- hardware: the same without the simulator, against a running lbr_bringup / franka_bringup (the excitation node
  waits for its parameter confirm to be true before anything moves: the runner asks on the terminal and sets it);
- replay: the estimator alone, asked to identify an existing bag (results in <output_dir>/<bag name>_identification,
  as a recording run's are in <output_dir>/bag_identification).

A payload run (`payload`) runs the payload excitation shipped for the robot (e.g. `panda_payload`) and the estimator
identifies the load on the flange, against the identified arm (`payload_arm`), against the bags of the same
excitation without the load (`payload_baselines`, recorded by a run with `record_only`) or against the URDF. In sim
mode `sim_load_seed` puts a seeded load on the simulated flange.

A run whose trajectory is a friction sweep (robot_id_excitation.sweeps, e.g. the shipped `iiwa14_friction_sweep`)
only records: its bag is given to a later run's estimator (`friction_sweeps`), which fits the Stribeck friction of
Luo et al. 2024 to it and identifies the rigid-body parameters from the torque without that friction.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
from dataclasses import dataclass, field
from functools import cached_property

MODES = ("sim", "hardware", "replay")
NAMESPACE = re.compile(r"/?([A-Za-z_][A-Za-z0-9_]*)(/[A-Za-z_][A-Za-z0-9_]*)*/?")
DEFAULT_PERIODS = 5
SWEEP_PERIODS = 1  # a friction sweep already runs every speed forward and backward
RECORDER_NAME = "recorder"
EXCITATION_NAME = "excitation"
EXCITATION_PRIORITY = 20
"""hardware: SCHED_FIFO priority of the excitation node's threads (below the robot drivers' control loops: lbr's
rt_prio 80, ros2_control's 50), so that a loaded machine does not starve the thread that watches the arm."""
RECORDER_PRIORITY = EXCITATION_PRIORITY - 1
"""hardware: the recorder's, so that a loaded machine does not make it miss joint states (at 1 kHz beside a busy
process per core it missed 28 % of them at normal scheduling); below the thread that watches the arm."""


@dataclass(frozen=True)
class NodeSpec:
    package: str
    executable: str
    name: str
    parameters: dict[str, object] = field(default_factory=dict)
    namespace: str = ""
    remappings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Run:
    """What the user asked for (launch arguments, runner options)."""

    robot: str = "iiwa14"
    mode: str = "sim"
    output_dir: str = "results/run"
    periods: int = 0          # 0: DEFAULT_PERIODS of an excitation, SWEEP_PERIODS of a friction sweep
    trajectory: str = ""      # a trajectory file or shipped name, or empty for the excitation shipped for the robot
    bag: str = ""             # replay: the bag to identify
    friction_sweeps: tuple[str, ...] = ()  # bags of friction sweeps for the estimator's Stribeck fit
    confirm: bool = False     # hardware: the excitation node may move at once (the runner asks instead)
    namespace: str = ""       # the graph's namespace: one arm's graph each, several in one ROS domain
    sim_friction_laws: tuple[str, ...] = ()  # sim: the laws the true joints' friction is drawn from (empty: stribeck)
    payload: bool = False     # run the payload excitation and identify the load on the flange, not the arm
    payload_arm: str = ""     # payload: identification.json of the arm without the load (empty: the URDF's arm)
    payload_baselines: tuple[str, ...] = ()  # payload: bags of the payload excitation without the load
    record_only: bool = False  # record the trajectory and identify nothing (e.g. a payload run's baseline)
    sim_load_seed: int = -1   # sim: the simulator carries the load of this seed on its flange (-1: none)

    def problems(self) -> list[str]:
        """What is wrong with the request, one line each."""
        problems = []
        if self.mode not in MODES:
            problems.append(f"mode must be one of {', '.join(MODES)}, not '{self.mode}'")
        if self.mode == "replay" and not self.bag:
            problems.append("mode replay needs a bag to identify (--bag DIR, or bag:=DIR with ros2 launch)")
        if self.mode != "replay" and self.periods < 0:
            problems.append(f"periods must be at least 1 (0: the trajectory's default), not {self.periods}")
        if self.mode == "replay" and self.trajectory:
            problems.append("mode replay identifies a bag; it runs no trajectory")
        if self.mode == "replay" and self.periods:
            problems.append("mode replay identifies a bag; it runs no periods")
        if self.mode != "replay" and self.bag:
            problems.append(f"mode {self.mode} records its own bag (into the output directory); a bag to identify "
                            "is for mode replay")
        if self.namespace and not NAMESPACE.fullmatch(self.namespace):
            problems.append(f"namespace '{self.namespace}' is no ROS namespace: names of letters, digits and "
                            "underscores, not starting with a digit, separated by /")
        if self.mode != "hardware" and self.confirm:
            problems.append(f"confirm lets the arm move in mode hardware; mode {self.mode} moves no robot")
        if self.mode == "hardware" and (reason := self._offline_only()):
            problems.append(f"mode hardware: {reason}")
        return problems + self._payload_problems()

    def _offline_only(self) -> str | None:
        """Why no ROS 2 stack drives this robot (its config's offline_only), None when one does or it has no
        config to read (the robot's own problem is named where it is loaded)."""
        from robot_id_model.robot_config import load_robot_config
        from robot_id_model.robot_model import ModelError

        try:
            return load_robot_config(self.robot).offline_only
        except (ModelError, OSError, ValueError):
            return None

    def _payload_problems(self) -> list[str]:
        problems = []
        if (self.payload_arm or self.payload_baselines) and not self.payload:
            problems.append("an arm (--arm) and baseline bags (--baseline) are for a payload run (--payload)")
        if self.payload_arm and self.payload_baselines:
            problems.append("a payload is identified against the identified arm (--arm) or baseline recordings "
                            "without the load (--baseline), not both")
        if self.record_only and self.mode == "replay":
            problems.append("mode replay identifies a bag; it records nothing (--record-only)")
        if self.record_only and (self.payload_arm or self.payload_baselines or self.friction_sweeps):
            problems.append("a run that only records identifies nothing: give --arm, --baseline and "
                            "--friction-sweep to the run that identifies")
        if self.payload and self.payload_baselines and 0 < self.periods < 2:
            problems.append("a loaded run compared with a baseline needs 2 or more periods (--periods): its first "
                            "can be a transient while the robot's position loop settles on the load")
        if self.payload and self.friction_sweeps:
            problems.append("--friction-sweep is for an arm's identification, not a payload's")
        if self.sim_load_seed < -1:
            problems.append(f"a simulated load's seed (--sim-load) is 0 or more (-1: none), not {self.sim_load_seed}")
        if self.sim_load_seed >= 0 and self.mode != "sim":
            problems.append(f"a simulated load (--sim-load) is for mode sim, not {self.mode}")
        return problems

    @cached_property
    def records_sweep(self) -> bool:
        """The trajectory is a friction sweep: the run records it and identifies nothing. (A trajectory that does
        not load is the excitation node's to refuse, with its reason.)"""
        if self.mode == "replay" or not self.trajectory:
            return False
        from robot_id_excitation.sweeps import KIND
        from robot_id_excitation.trajectory_file import load_trajectory

        try:
            return load_trajectory(self.trajectory).kind == KIND
        except (OSError, ValueError):
            return False

    @property
    def records_only(self) -> bool:
        """The run records its trajectory and identifies nothing (a friction sweep, or asked to)."""
        return self.record_only or self.records_sweep

    @property
    def trajectory_name(self) -> str:
        """The trajectory to run: the one given, else the robot's payload excitation or its excitation (a shipped
        robot's, or its folder's)."""
        from robot_id_excitation.trajectory_file import robot_trajectory

        return self.trajectory or robot_trajectory(self.robot, "payload" if self.payload else "excitation")

    @cached_property
    def start_pose_rad(self) -> list[float]:
        """Where the run's motion starts at rest, in the trajectory's joint order (the robot's); empty when the
        trajectory does not load (the excitation node refuses it, saying why)."""
        from robot_id_excitation.trajectory_file import load_trajectory

        try:
            return [float(q) for q in load_trajectory(self.trajectory_name).rest_pose_rad]
        except (OSError, ValueError):
            return []

    @property
    def excitation_periods(self) -> int:
        return self.periods or (SWEEP_PERIODS if self.records_sweep else DEFAULT_PERIODS)

    @property
    def bag_path(self) -> str:
        return self.bag if self.mode == "replay" else str(pathlib.Path(self.output_dir) / "bag")

    @property
    def results_path(self) -> str:
        """Where the estimator writes identification.json, the report and identified.urdf (payload.yaml ... of a
        payload run): <bag name>_identification (_payload) in the output directory, beside the bag of a recording
        run."""
        kind = "payload" if self.payload else "identification"
        return str(pathlib.Path(self.output_dir) / f"{pathlib.Path(self.bag_path).name}_{kind}")

    @property
    def namespace_path(self) -> str:
        """The namespace as an absolute name ("/" for none)."""
        return "/" + self.namespace.strip("/")

    def node_path(self, name: str) -> str:
        """A node's full name in the graph's namespace, e.g. /left/excitation."""
        return f"{self.namespace_path.rstrip('/')}/{name}"

    @property
    def truth_path(self) -> str:
        return str(pathlib.Path(self.output_dir) / "truth.yaml")


def identify_graph(run: Run) -> list[NodeSpec]:
    """The nodes of an identification run, in start order."""
    problems = run.problems()
    if problems:
        raise ValueError("; ".join(problems))
    sim_time = run.mode == "sim"
    estimator = NodeSpec("robot_id_estimator", "estimator_node", "estimator",  # results beside the bag
                         {"robot": run.robot, "use_sim_time": sim_time}
                         | ({"friction_sweep_bags": list(run.friction_sweeps)} if run.friction_sweeps else {})
                         | (_payload_parameters(run) if run.payload else {}))
    if run.mode == "replay":
        return [_in_namespace(estimator, run)]
    nodes = []
    if run.mode == "sim":
        nodes.append(NodeSpec("robot_id_sim", "sim_node", "robot_id_sim", {
            "robot": run.robot, "real_time_factor": 0.0, "lockstep_subscribers": [RECORDER_NAME, EXCITATION_NAME],
            "truth_file": run.truth_path}
            | ({"start_position_rad": run.start_pose_rad} if run.start_pose_rad else {})
            | ({"friction_laws": list(run.sim_friction_laws)} if run.sim_friction_laws else {})
            | ({"load_seed": run.sim_load_seed} if run.sim_load_seed >= 0 else {})))
    nodes.append(NodeSpec("robot_id_recorder", "recorder_node", RECORDER_NAME, {
        "robot": run.robot, "bag_path": run.bag_path, "ack_name": RECORDER_NAME if sim_time else "",
        "use_sim_time": sim_time} | ({"realtime_priority": RECORDER_PRIORITY} if run.mode == "hardware" else {})))
    nodes.append(NodeSpec("robot_id_excitation", "excitation_node", EXCITATION_NAME, {
        "robot": run.robot, "trajectory_file": run.trajectory_name, "num_periods": run.excitation_periods,
        "mode": run.mode, "use_sim_time": sim_time, "ack_name": EXCITATION_NAME if sim_time else ""}
        | ({"confirm": run.confirm, "realtime_priority": EXCITATION_PRIORITY} if run.mode == "hardware" else {})))
    if not run.records_only:
        nodes.append(estimator)
    return [_in_namespace(spec, run) for spec in nodes]


def _payload_parameters(run: Run) -> dict[str, object]:
    """The estimator's parameters of a payload run."""
    return ({"payload": True} | ({"payload_arm": run.payload_arm} if run.payload_arm else {})
            | ({"payload_baseline_bags": list(run.payload_baselines)} if run.payload_baselines else {}))


def _in_namespace(spec: NodeSpec, run: Run) -> NodeSpec:
    """The node in the run's namespace; on sim time with its own clock there (/clock is global: two simulators in
    one domain would each drive the other's graph)."""
    if not run.namespace:
        return spec
    clock = (("/clock", f"{run.namespace_path}/clock"),) if run.mode == "sim" else ()
    return dataclasses.replace(spec, namespace=run.namespace_path, remappings=clock)
