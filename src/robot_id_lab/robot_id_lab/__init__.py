"""The lab: what tests, benchmarks and the demos use to put robot_id through its paces, and no part of the product
(no run-time command imports it):

- testbed.py, slow_subscriber.py: the simulated robot free running on the wall clock in a process of its own, with
  optional load, as a real robot's driver runs beside the identification;
- synthetic.py: motions and the torque a robot of known parameters publishes over them, as plain arrays;
- written_model.py: identified.urdf and identified.yaml loaded as a user loads them (pinocchio and the friction
  laws as the file states them), never by the tool's own account;
- truth_check.py: the written model checked against the simulator's truth on a motion it was not identified on.

It depends on robot_id_model, robot_id_contract, robot_id_sim and (for a followed motion's braking tail)
robot_id_excitation, never on the estimator, the recorder or bringup: the estimator's tests use it.
"""
