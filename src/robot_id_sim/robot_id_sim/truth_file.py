"""The truth file: what the simulated robot really is, for tests and the demo to compare identification against.

YAML with the physical parameters per link (payload included in the last one, and listed on its own; a load on the
flange, seeded_load, likewise in its link and listed as `load` in the flange frame), the
friction per joint (its law, true_friction, and the coefficients of Luo et al. 2024, eq. 7, it uses), armature and
sensor offset per joint, the sensor settings, and the standard
and base parameters of the identification model with friction terms FV, FC, FO, IA (Xu et al. 2020, eqs. 3, 6).
"""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import yaml

from robot_id_model.base_parameters import base_parameters
from robot_id_model.parameters import parameter_names
from robot_id_model.physical import LinkInertial
from robot_id_model.robot_model import RobotModel
from robot_id_sim.sensors import SensorOptions
from robot_id_sim.true_dynamics import TRUTH_FRICTION, TrueDynamics
from robot_id_sim.true_friction import JointFriction

FORMAT = 1
FRICTION_FIELDS = ("fv1", "fv2", "fv3", "fs", "fs1", "fc", "fc1")
FRICTION_UNITS = {"fv1": "fv1_nm_s_rad", "fv2": "fv2_nm_s2_rad2", "fv3": "fv3_nm_s3_rad3", "fs": "fs_nm",
                  "fs1": "fs1_rad_s", "fc": "fc_nm", "fc1": "fc1_rad_s"}


def _link(link: LinkInertial) -> dict:
    return {"mass_kg": float(link.mass_kg), "com_m": [float(x) for x in link.com_m],
            "inertia_com_kg_m2": np.asarray(link.inertia_com_kg_m2, dtype=float).tolist()}


def truth_dict(robot: RobotModel, truth: TrueDynamics, source: str, sensors: SensorOptions) -> dict:
    """The truth file's content; `robot` must carry the TRUTH_FRICTION terms."""
    if robot.friction != TRUTH_FRICTION:
        raise ValueError(f"the truth is stated with friction terms {TRUTH_FRICTION}, not {robot.friction}")
    pi = truth.standard_parameters(robot)
    base = base_parameters(robot)
    joints = []
    for j, name in enumerate(robot.joint_names):
        entry = {"joint": name}
        entry["friction_law"] = str(truth.friction.laws()[j])
        entry.update({FRICTION_UNITS[f]: float(getattr(truth.friction, f)[j]) for f in FRICTION_FIELDS})
        if truth.friction.shift_rad_s is not None:
            entry["shift_rad_s"] = float(truth.friction.shift_rad_s[j])
        if truth.friction.presliding_rad is not None:
            entry["presliding_rad"] = float(truth.friction.presliding_rad[j])
        entry["armature_kg_m2"] = float(truth.armature_kg_m2[j])
        entry["torque_offset_nm"] = float(truth.torque_offset_nm[j])
        joints.append(entry)
    return {
        "format": FORMAT,
        "source": source,
        "perturbation": None if truth.perturbation is None else dataclasses.asdict(truth.perturbation),
        "links": [{"link": name, **_link(link)} for name, link in zip(robot.link_names, truth.links, strict=True)],
        "payload": None if truth.payload is None else _link(truth.payload),
        "load": None if truth.load is None else _link(truth.load),
        "joints": joints,
        "sensors": {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(sensors).items()},
        "identification_model": {
            "friction": list(TRUTH_FRICTION),
            "standard": dict(zip(parameter_names(robot), map(float, pi), strict=True)),
            "base": dict(zip(base.names, map(float, base.values(pi)), strict=True)),
        },
    }


def write_truth(path: str | pathlib.Path, robot: RobotModel, truth: TrueDynamics, source: str,
                sensors: SensorOptions) -> pathlib.Path:
    """Write the truth file (parent directories created)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(truth_dict(robot, truth, source, sensors), sort_keys=False))
    return path


def load_truth(path: str | pathlib.Path) -> TrueDynamics:
    """The TrueDynamics of a truth file (links with the payload included)."""
    raw = yaml.safe_load(pathlib.Path(path).read_text())
    if raw.get("format") != FORMAT:
        raise ValueError(f"{path}: not a truth file of format {FORMAT}")
    links = [_inertial(e) for e in raw["links"]]
    column = {f: np.array([j[FRICTION_UNITS[f]] for j in raw["joints"]]) for f in FRICTION_FIELDS}
    payload, load = raw["payload"], raw.get("load")
    friction = JointFriction(**column, law=tuple(j.get("friction_law", "stribeck") for j in raw["joints"]),
                             shift_rad_s=np.array([j.get("shift_rad_s", 0.0) for j in raw["joints"]]),
                             presliding_rad=np.array([j.get("presliding_rad", 0.0) for j in raw["joints"]]))
    return TrueDynamics(
        links, friction, np.array([j["armature_kg_m2"] for j in raw["joints"]]),
        np.array([j["torque_offset_nm"] for j in raw["joints"]]),
        None if payload is None else _inertial(payload), load=None if load is None else _inertial(load))


def _inertial(entry: dict) -> LinkInertial:
    return LinkInertial(entry["mass_kg"], np.array(entry["com_m"]), np.array(entry["inertia_com_kg_m2"]))
