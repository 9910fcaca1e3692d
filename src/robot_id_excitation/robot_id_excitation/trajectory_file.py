"""Trajectory files: YAML (or JSON by suffix) with a `kind` of fourier, modified_fourier or friction_sweep.

Each robot folder ships its trajectories (robot_id_description/robots/<robot>/trajectories/<motion>.yaml); a name
without a file suffix loads one of those from the installed workspace: `iiwa14` its excitation, `iiwa14_<motion>` the
others (`iiwa14_friction_sweep`, `iiwa14_payload`); a robot folder's path loads its excitation.
"""

from __future__ import annotations

import json
import pathlib

import yaml

from robot_id_excitation.fourier import KINDS, FourierTrajectory
from robot_id_excitation.sweeps import KIND as SWEEP_KIND
from robot_id_excitation.sweeps import FrictionSweep
from robot_id_model.robot_config import ROBOT_FILE, robot_folder, robot_names
from robot_id_model.robot_model import ModelError

Trajectory = FourierTrajectory | FrictionSweep
SUFFIXES = (".yaml", ".yml", ".json")
TRAJECTORIES = "trajectories"
"""A robot folder's trajectories: excitation.yaml, friction_sweep.yaml, payload.yaml (and validation motions)."""
EXCITATION = "excitation"


def trajectory_from_dict(data: dict) -> Trajectory:
    kind = data.get("kind")
    if kind in KINDS:
        return FourierTrajectory.from_dict(data)
    if kind == SWEEP_KIND:
        return FrictionSweep.from_dict(data)
    raise ValueError(f"unknown trajectory kind {kind!r}; expected one of {[*KINDS, SWEEP_KIND]}")


def save_trajectory(trajectory: Trajectory, path: str | pathlib.Path, extra: dict | None = None) -> pathlib.Path:
    """Write the trajectory (and an optional informative block such as the design criteria)."""
    path = pathlib.Path(path)
    data = trajectory.to_dict() | (extra or {})
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=2) + "\n")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120))
    return path


def shipped_trajectories() -> dict[str, pathlib.Path]:
    """Every trajectory the installed robot folders ship, by name: `<robot>` its excitation, `<robot>_<motion>` the
    others."""
    try:
        robots = {robot: robot_folder(robot) / TRAJECTORIES for robot in robot_names()}
    except ModelError as err:
        raise FileNotFoundError(f"trajectory names need the installed robot folders ({err}); pass a file path") from err
    return {robot if path.stem == EXCITATION else f"{robot}_{path.stem}": path
            for robot, folder in robots.items() for path in sorted(folder.glob("*.yaml"))}


def shipped_trajectory(name: str) -> pathlib.Path:
    """Path of the trajectory shipped as `name` (`iiwa14`, `iiwa14_friction_sweep`), or of the excitation of the robot
    folder `name`."""
    folder = pathlib.Path(name)
    if (folder / ROBOT_FILE).is_file():
        return folder / TRAJECTORIES / f"{EXCITATION}.yaml"
    shipped = shipped_trajectories()
    if name not in shipped:
        raise FileNotFoundError(f"no shipped trajectory '{name}'; shipped: {sorted(shipped)}")
    return shipped[name]


def robot_trajectory(robot: str, motion: str = EXCITATION) -> str:
    """A robot's trajectory `motion` (excitation, friction_sweep, payload) as load_trajectory takes it: the file in
    its trajectories/ for a robot folder, `<robot>` or `<robot>_<motion>` for a shipped robot's name."""
    folder = pathlib.Path(robot)
    if (folder / ROBOT_FILE).is_file():
        return str(folder / TRAJECTORIES / f"{motion}.yaml")
    return robot if motion == EXCITATION else f"{robot}_{motion}"


def _read(name_or_path: str | pathlib.Path) -> tuple[pathlib.Path, dict]:
    """The path and the mapping of a trajectory file, or of the one shipped for a robot name."""
    path = pathlib.Path(name_or_path)
    if path.suffix not in SUFFIXES:
        path = shipped_trajectory(str(name_or_path))
    if not path.is_file():
        raise FileNotFoundError(f"trajectory file not found: {path}")
    text = path.read_text()
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'} ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a trajectory (expected a mapping)")
    return path, data


def load_trajectory(name_or_path: str | pathlib.Path) -> Trajectory:
    """Load a trajectory file, or by robot name one shipped with the package."""
    path, data = _read(name_or_path)
    try:
        return trajectory_from_dict(data)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def recorded_friction(name_or_path: str | pathlib.Path) -> tuple[str, ...] | None:
    """The friction terms a designed trajectory was designed for (its `criteria: friction:`), None if unrecorded."""
    terms = (_read(name_or_path)[1].get("criteria") or {}).get("friction")
    return None if terms is None else tuple(terms)


def recorded_allowed_pairs(name_or_path: str | pathlib.Path) -> frozenset[frozenset[str]]:
    """The pairs a designed trajectory was designed allowing closer than the clearance (its `design: limits:
    collision: allowed_pairs`); none for a file that records none."""
    path, data = _read(name_or_path)
    collision = (((data.get("design") or {}).get("limits") or {}).get("collision") or {})
    pairs = collision.get("allowed_pairs") or []
    if not (isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 and all(isinstance(n, str) for n in p)
                                            for p in pairs)):
        raise ValueError(f"{path}: design: limits: collision: allowed_pairs must be pairs of names, got {pairs!r}")
    return frozenset(frozenset(pair) for pair in pairs)
