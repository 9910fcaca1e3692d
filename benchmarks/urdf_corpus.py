"""URDFs as their packages ship them: does every one identify, export and check out, with no --allow-* flag?

The corpus is a folder of URDFs expanded from the vendors' description packages (lbr_description iiwa7/iiwa14,
franka_description FER and FR3 with and without the hand, a UR5e, Kinova's Gen3 + Robotiq 2F-85 and Gen3 lite; see
the folder's SOURCE.md), not in this repository: `--corpus DIR`, default ../shared/datasets/urdf_corpus. Per URDF:

1. the arm the model takes from it (robot_id_model.load_robot_model without joints: the arm chain, fingers locked);
2. a short excitation design on it (`robot_id_excitation design --urdf`, 2 harmonics of 0.2 Hz; its collision
   geometry is the URDF's own, so meshes must be found: ROS_PACKAGE_PATH or a sourced ROS 2), or the refusal;
3. synthetic data of a different robot (every link 10 % heavier, a tool on the last link, drive friction: the
   offline demo's truth), 2 periods of 10 s at 200 Hz with 0.05 Nm noise, identified by the DEFAULT estimator
   (`robot_id_estimator identify --urdf`), and the model files written;
4. the independent check: identified.urdf alone, loaded by pinocchio (not the tool's model code), its friction from
   identified.yaml, predicts the torque of a held-out motion; error per joint in % of the true torque's RMS;
5. identified.xml loaded by MuJoCo and simulated 2 s under gravity (energy never grows, no NaN), or the reason.

Run from the repository root:  source env.sh && python benchmarks/urdf_corpus.py [--corpus DIR]
Ends with one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import mujoco
import numpy as np
import pinocchio as pin
import yaml

from robot_id_estimator.recording import save_csv
from robot_id_estimator.synthetic import heavier_links_with_tool, random_motion, random_recording
from robot_id_model import base_parameters, load_robot_model, regressor

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "datasets" / "urdf_corpus"
DESIGN = ["--acceleration-limit", "10", "--flange-speed", "1.0", "--floor-z", "0.05", "--harmonics", "2",
          "--base-frequency", "0.2", "--samples", "40", "--starts", "1", "--max-iterations", "100"]
FRICTION = ("FV", "FC", "FO")


def design(urdf: pathlib.Path, joints: tuple[str, ...], out: pathlib.Path, allowed: tuple[str, ...] = ()) -> str:
    """The design's condition number, or the last line of its refusal. A pair closer than the clearance at the start
    (built that way: a UR5e's wrist) is allowed, up to three, as docs/excitation_cli.md tells a user to, and said."""
    pairs = [arg for pair in allowed for arg in ("--allow-pair", pair)]
    result = subprocess.run([sys.executable, "-m", "robot_id_excitation", "design", "--urdf", str(urdf),
                             "--joints", ",".join(joints), *DESIGN, *pairs, "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    found = re.search(r"cond\S*\s*=\s*([\d.e+]+)", result.stdout)
    if result.returncode == 0 and found:
        return f"cond {float(found.group(1)):.3g}" + (f" (allowing {', '.join(allowed)})" if allowed else "")
    built_close = re.search(r"collision\s+(\S+)–(\S+) distance .* at t = 0\.000 s", result.stdout + result.stderr)
    if built_close and len(allowed) < 3:
        return design(urdf, joints, out, (*allowed, f"{built_close.group(1)},{built_close.group(2)}"))
    return (result.stderr.strip().splitlines() or result.stdout.strip().splitlines() or ["exit"])[-1].strip()[:160]


def configuration(model: pin.Model, q_rad: np.ndarray) -> np.ndarray:
    """pinocchio's configuration vector of joint angles (continuous joints as cos, sin)."""
    config = pin.neutral(model)
    for j in range(1, model.njoints):
        i, nq = model.joints[j].idx_q, model.joints[j].nq
        config[i:i + nq] = [np.cos(q_rad[j - 1]), np.sin(q_rad[j - 1])] if nq == 2 else [q_rad[j - 1]]
    return config


def independent_check(out: pathlib.Path, joints: tuple[str, ...], truth_pi: np.ndarray, truth_robot) -> list[float]:
    """Per joint, the torque error [% of RMS] of identified.urdf (pinocchio) + identified.yaml's friction against
    the truth on a held-out motion."""
    full = pin.buildModelFromUrdf(str(out / "identified.urdf"))
    locked = [full.getJointId(full.names[j]) for j in range(1, full.njoints) if full.names[j] not in joints]
    model = pin.buildReducedModel(full, locked, pin.neutral(full)) if locked else full
    data = model.createData()
    t_s = np.arange(0.0, 10.0, 0.01)
    q, dq, ddq = random_motion(truth_robot, 10.0, 5, t_s, 7)
    friction = yaml.safe_load((out / "identified.yaml").read_text())["friction"]
    f = np.array([[friction[n].get(k) or 0.0 for k in ("viscous_nm_s_rad", "coulomb_nm", "offset_nm")]
                  for n in joints])
    predicted = np.array([pin.rnea(model, data, configuration(model, q[k]), dq[k], ddq[k]) for k in range(len(t_s))])
    predicted += f[:, 0] * dq + f[:, 1] * np.sign(dq) + f[:, 2]
    truth = regressor(truth_robot, q, dq, ddq) @ truth_pi
    return list(100.0 * np.sqrt(np.mean((predicted - truth) ** 2, axis=0) / np.mean(truth**2, axis=0)))


def mujoco_run(mjcf: pathlib.Path) -> str:
    """'ok' when the MJCF loads and 2 s under gravity keep the energy from growing; else the reason."""
    if not mjcf.is_file():
        return "not written"
    model = mujoco.MjModel.from_xml_path(str(mjcf))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    start_j = data.energy.sum()
    for _ in range(round(2.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    if not np.all(np.isfinite(data.qpos)):
        return "NaN in 2 s"
    return "ok" if data.energy.sum() <= start_j + 1e-6 * max(1.0, abs(start_j)) else "energy grew"


def one_urdf(urdf: pathlib.Path, work: pathlib.Path) -> dict:
    """Every figure of one URDF (the module docstring's steps 1-5)."""
    robot = load_robot_model(urdf, friction=FRICTION)
    row = {"urdf": urdf.name, "joints": len(robot.joint_names), "locked": len(robot.locked),
           "base_parameters": base_parameters(robot).n_base, "design": design(urdf, robot.joint_names, work / "design")}
    truth = heavier_links_with_tool(robot)
    recording = random_recording(robot, truth, 2, seed=0, period_s=10.0, rate_hz=200.0, tau_noise_nm=0.05,
                                 noise_seed=1, source=urdf.stem)
    csv = save_csv(recording, work / "data.csv")
    started = time.perf_counter()
    identified = subprocess.run([sys.executable, "-m", "robot_id_estimator", "identify", "--urdf", str(urdf),
                                 "--data", str(csv), "--out", str(work / "out")], capture_output=True, text=True,
                                timeout=900)
    row["identify_exit"], row["identify_s"] = identified.returncode, round(time.perf_counter() - started, 1)
    row["notes"] = [line[len("note: "):] for line in identified.stdout.splitlines() if line.startswith("note: ")]
    if not (work / "out" / "identified.urdf").is_file():
        row["error"] = (identified.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return row
    row["held_out_error_percent"] = [round(x, 2) for x in independent_check(work / "out", robot.joint_names, truth,
                                                                            robot)]
    row["mujoco"] = mujoco_run(work / "out" / "identified.xml")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=pathlib.Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    urdfs = sorted(args.corpus.glob("*.urdf"))
    if not urdfs:
        sys.exit(f"error: no URDF in {args.corpus} (the corpus lives outside the repository: --corpus DIR)")
    rows = []
    for urdf in urdfs:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(one_urdf(urdf, pathlib.Path(tmp)))
        r = rows[-1]
        worst = max(r["held_out_error_percent"]) if "held_out_error_percent" in r else None
        print(f"{r['urdf']:18s} {r['joints']} joints ({r['locked']} locked), {r['base_parameters']} base; design: "
              f"{r['design']}; identify exit {r['identify_exit']} ({r['identify_s']} s); held-out error of "
              f"identified.urdf ≤ {worst} %; MuJoCo: {r.get('mujoco', r.get('error'))}", flush=True)
    print(json.dumps({"benchmark": "urdf_corpus", "corpus": str(args.corpus), "rows": rows}))


if __name__ == "__main__":
    main()
