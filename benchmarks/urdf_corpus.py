"""URDFs as their packages ship them: does every one identify, export and check out, with no --allow-* flag?

The corpus is src/robot_id_bringup/test/data/urdf_corpus: URDFs expanded from the vendors' description packages
(lbr_description iiwa7/iiwa14, franka_description FER and FR3 with and without the hand, a UR5e, Kinova's Gen3 +
Robotiq 2F-85 and Gen3 lite; licences and sources in its SOURCE.md), byte for byte; `--corpus DIR` takes another
folder. The vendors' collision meshes shipped in robot_id_description are put first on ROS_PACKAGE_PATH (a user
with the vendors' packages installed has them through the ament index). Per URDF:

1. the arm the model takes from it (robot_id_model.load_robot_model without joints: the arm chain, fingers locked);
2. a short excitation design on it (`robot_id_excitation design --urdf`, 2 harmonics of 0.2 Hz, the URDF's own
   collision geometry) with no --allow-pair, or its refusal; where the refusal names pairs of links built closer
   than the clearance, the design again allowing those pairs, as the refusal tells a user to (an allowed pair still
   keeps 5 mm, 10 mm with the design's margin), with its closest approach over all pairs, allowed ones included;
3. synthetic data of a different robot (every link 10 % heavier, a tool on the last link, drive friction: the
   offline demo's truth) with 0.05 Nm noise, identified by the DEFAULT estimator (`robot_id_estimator identify
   --urdf`), and the model files written;
4. the independent check: identified.urdf alone, loaded by pinocchio (not the tool's model code), with the Coulomb
   law and friction of identified.yaml evaluated as a user would (robot_id_lab.written_model), predicts the torque
   of a held-out motion; error per joint in % of the true torque's RMS;
5. identified.xml loaded by MuJoCo and simulated 2 s under gravity (energy never grows, no NaN), or the reason;
6. `validate`'s error of the physical set beside step 4's independent check on the same samples, on a periodic and a
   non-periodic motion (noise-free: both measure the model's own error; they must agree).

Run from the repository root:  source env.sh && python benchmarks/urdf_corpus.py [--corpus DIR]
Ends with one line of JSON. tests: src/robot_id_bringup/test/test_urdf_corpus.py runs the same steps, shorter.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import mujoco
import numpy as np

from robot_id_estimator.output.model_files import load_written_model
from robot_id_estimator.processing.samples import edge_s
from robot_id_estimator.recordings.recording import Recording, save_csv
from robot_id_estimator.results import read_identification
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import heavier_links_with_tool, random_motion, random_run, sample_times_s
from robot_id_lab.written_model import written_torque_nm
from robot_id_model import RobotModel, base_parameters, load_robot_model, regressor

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORPUS = ROOT / "src" / "robot_id_bringup" / "test" / "data" / "urdf_corpus"
MESHES = ROOT / "src" / "robot_id_description" / "meshes"
DESIGN = ["--acceleration-limit", "10", "--flange-speed", "1.0", "--floor-z", "0.05", "--harmonics", "2",
          "--base-frequency", "0.2", "--samples", "40", "--starts", "1", "--max-iterations", "100"]
FRICTION = ("FV", "FC", "FO")
HINTED_PAIR = re.compile(r"allow the pair \(--allow-pair (\S+),")
CLOSEST = re.compile(r"closest approach \(.*?\): (-?[\d.]+) mm between (\S+) and (\S+) at")


@dataclass(frozen=True)
class SyntheticData:
    """The recording identified: periods of a random Fourier motion, sampled at rate_hz, 0.05 Nm noise."""

    periods: int = 2
    period_s: float = 10.0
    rate_hz: float = 200.0


@dataclass(frozen=True)
class Design:
    """A design's outcome: its exit code and its condition number and closest approach, or the lines of its
    refusal."""

    exit_code: int
    summary: str
    hinted_pairs: tuple[str, ...] = ()
    closest_mm: float | None = None
    """the least distance of two links or a link and the floor, allowed pairs included"""
    closest_pair: str = ""


def with_vendor_meshes() -> dict[str, str]:
    """This environment with robot_id_description's vendor meshes first on ROS_PACKAGE_PATH."""
    paths = [str(MESHES), *filter(None, os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep))]
    return {**os.environ, "ROS_PACKAGE_PATH": os.pathsep.join(paths)}


def design(urdf: pathlib.Path, out: pathlib.Path, allowed: tuple[str, ...] = ()) -> Design:
    """The short design on the URDF's arm, allowing `allowed` pairs (LINK,LINK)."""
    pairs = [arg for pair in allowed for arg in ("--allow-pair", pair)]
    result = subprocess.run([sys.executable, "-m", "robot_id_excitation", "design", "--urdf", str(urdf), *DESIGN,
                             *pairs, "--out", str(out)], capture_output=True, text=True, timeout=600,
                            env=with_vendor_meshes())
    found = re.search(r"cond\S*\s*=\s*([\d.e+]+)", result.stdout)
    if result.returncode == 0 and found:
        cond = f"cond {float(found.group(1)):.3g}"
        closest = CLOSEST.search(result.stdout)
        if closest is None:
            return Design(0, f"{cond}, collision not checked")
        pair = f"{closest.group(2)}–{closest.group(3)}"
        return Design(0, f"{cond}, closest approach {closest.group(1)} mm ({pair})", closest_mm=float(closest.group(1)),
                      closest_pair=pair)
    refusal = result.stderr.strip()
    return Design(result.returncode, refusal, tuple(HINTED_PAIR.findall(refusal)))


def independent_check(out: pathlib.Path, joints: tuple[str, ...], truth_pi: np.ndarray,
                      truth_robot: RobotModel) -> list[float]:
    """Per joint, the torque error [% of RMS] of identified.urdf (pinocchio) + identified.yaml's friction against
    the truth on a held-out motion (another seed than the identification's)."""
    t_s = np.arange(0.0, 10.0, 0.01)
    q, dq, ddq = random_motion(truth_robot, 10.0, 5, t_s, 7)
    predicted = written_torque_nm(out, joints, q, dq, ddq)
    truth = regressor(truth_robot, q, dq, ddq) @ truth_pi
    return list(100.0 * np.sqrt(np.mean((predicted - truth) ** 2, axis=0) / np.mean(truth**2, axis=0)))


def validate_against_check(out: pathlib.Path, truth_pi: np.ndarray, truth_robot: RobotModel) -> dict:
    """Step 6: `validate` (the estimator's, with the written model as its command line loads it) beside the
    independent check of step 4 on the same samples, per joint [Nm]: on a periodic motion (2 periods of another
    seed) and a non-periodic one (20 s of a 60 s motion, the ends validate trims for its filters left out of both),
    noise-free, so that both measure the model's own error."""
    result = read_identification(out / "identification.json")
    written = load_written_model(out / "identified.urdf", out / "identified.yaml", truth_robot.joint_names,
                                 result.setup.gravity_m_s2)
    periodic = Recording.of_arrays(**vars(random_run(truth_robot, truth_pi, 2, seed=9, period_s=10.0,
                                                     rate_hz=100.0, source="periodic")))
    t_s = np.arange(0.0, 20.0, 0.01)
    q, dq, ddq = random_motion(truth_robot, 60.0, 8, t_s, 13)
    tau = regressor(truth_robot, q, dq, ddq) @ truth_pi
    other = Recording(truth_robot.joint_names, t_s, q, tau, None, None, None, None, "non-periodic", ())
    non_periodic = dataclasses.replace(result.config, processing=dataclasses.replace(
        result.config.processing, non_periodic=True))
    edge = round(edge_s(non_periodic.processing) / 0.01)
    t_p = sample_times_s(10.0, 100.0)
    motions = {"periodic": (periodic, result.config, random_motion(truth_robot, 10.0, 5, t_p, 9)),
               "non_periodic": (other, non_periodic, tuple(x[edge:-edge] for x in (q, dq, ddq)))}
    out_rows = {}
    for name, (recording, config, (q_k, dq_k, ddq_k)) in motions.items():
        tool = validate(result, [recording], config, written=written).rms_nm["physical"]
        predicted = written_torque_nm(out, truth_robot.joint_names, q_k, dq_k, ddq_k)
        check = np.sqrt(np.mean((predicted - regressor(truth_robot, q_k, dq_k, ddq_k) @ truth_pi) ** 2, axis=0))
        out_rows[name] = {"validate_nm": [round(float(x), 5) for x in tool],
                          "check_nm": [round(float(x), 5) for x in check]}
    return out_rows


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


def identify_and_check(urdf: pathlib.Path, robot: RobotModel, work: pathlib.Path, data: SyntheticData) -> dict:
    """Steps 3-5: identify the synthetic data with the default settings; the independent check; MuJoCo."""
    truth = heavier_links_with_tool(robot)
    run = random_run(robot, truth, data.periods, seed=0, period_s=data.period_s, rate_hz=data.rate_hz,
                     tau_noise_nm=0.05, noise_seed=1, source=urdf.stem)
    recording = Recording.of_arrays(**vars(run))
    csv = save_csv(recording, work / "data.csv")
    started = time.perf_counter()
    identified = subprocess.run([sys.executable, "-m", "robot_id_estimator", "identify", "--urdf", str(urdf),
                                 "--data", str(csv), "--out", str(work / "out")], capture_output=True, text=True,
                                timeout=900, env=with_vendor_meshes())
    row = {"identify_exit": identified.returncode, "identify_s": round(time.perf_counter() - started, 1),
           "notes": [line[len("note: "):] for line in identified.stdout.splitlines() if line.startswith("note: ")],
           "stderr": identified.stderr.strip()}
    if not (work / "out" / "identified.urdf").is_file():
        return row
    errors = independent_check(work / "out", robot.joint_names, truth, robot)
    return {**row, "held_out_error_percent": [round(x, 2) for x in errors],
            "validate_against_check": validate_against_check(work / "out", truth, robot),
            "mujoco": mujoco_run(work / "out" / "identified.xml")}


def one_urdf(urdf: pathlib.Path, work: pathlib.Path, data: SyntheticData = SyntheticData()) -> dict:
    """Every figure of one URDF (the module docstring's steps 1-5)."""
    robot = load_robot_model(urdf, friction=FRICTION)
    first = design(urdf, work / "design")
    row = {"urdf": urdf.name, "joints": len(robot.joint_names), "locked": len(robot.locked),
           "base_parameters": base_parameters(robot).n_base, "design": first.summary.splitlines()[-1][:200]}
    if first.hinted_pairs:
        row["design_allowing"] = {"pairs": list(first.hinted_pairs),
                                  "outcome": design(urdf, work / "design", first.hinted_pairs).summary[:200]}
    return {**row, **identify_and_check(urdf, robot, work, data)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=pathlib.Path, default=CORPUS)
    args = parser.parse_args()
    urdfs = sorted(args.corpus.glob("*.urdf"))
    if not urdfs:
        sys.exit(f"error: no URDF in {args.corpus}")
    rows = []
    for urdf in urdfs:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(one_urdf(urdf, pathlib.Path(tmp)))
        r = rows[-1]
        worst = max(r["held_out_error_percent"]) if "held_out_error_percent" in r else None
        allowing = f" (allowing {r['design_allowing']['pairs']}: {r['design_allowing']['outcome']})" \
            if "design_allowing" in r else ""
        print(f"{r['urdf']:18s} {r['joints']} joints ({r['locked']} locked), {r['base_parameters']} base; design: "
              f"{r['design']}{allowing}; identify exit {r['identify_exit']} ({r['identify_s']} s); held-out error "
              f"of identified.urdf ≤ {worst} %; MuJoCo: {r.get('mujoco', r['stderr'][-200:])}; validate against "
              f"the check [Nm]: {r.get('validate_against_check')}", flush=True)
    print(json.dumps({"benchmark": "urdf_corpus", "corpus": str(args.corpus), "rows": rows}))


if __name__ == "__main__":
    main()
