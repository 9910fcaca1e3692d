"""Payload identification through the whole graph (issue 29): the runner records the simulated iiwa14's payload
excitation without a load (--payload --record-only), then with the simulator's seeded load on its flange
(--sim-load), and the estimator identifies that load against the first recording (--baseline); checked against the
load the simulator wrote to its truth file."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import yaml

from robot_id_bringup.graph import Run
from robot_id_model.urdf_inertials import read_link_inertial

RUNNER = [sys.executable, "-m", "robot_id_bringup", "identify", "--robot", "iiwa14", "--payload", "--periods", "2",
          "--timeout", "240"]


@pytest.mark.timeout(600)
def test_a_seeded_load_is_identified_through_the_graph_against_a_baseline(tmp_path, domain_id):
    """Two 10 s periods each (about 60 s of wall time here). Measured (2026-11-28): mass +0.005 %, CoM 0.08 mm; the
    moments of this 2.8 kg box (5-8e-3 kg m²) +19, +4, -2 % at RSDs of 10, 8, 6 %: named undetermined by two
    periods (MOMENT_RSD_PERCENT). A baseline of another robot or another excitation is refused before the arm
    moves."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(domain_id))
    bare = subprocess.run([*RUNNER, "--record-only", "--out", str(tmp_path / "bare")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert bare.returncode == 0, bare.stdout[-3000:] + bare.stderr[-2000:]
    assert "estimator" not in bare.stdout.splitlines()[0]  # it only records
    other = subprocess.run([*RUNNER, "--robot", "panda", "--baseline", str(tmp_path / "bare" / "bag"), "--out",
                            str(tmp_path / "other")], env=env, capture_output=True, text=True, timeout=120)
    assert other.returncode == 2 and "error: --baseline" in other.stderr and "fer_joint" in other.stderr, other.stderr
    excitation = subprocess.run([*RUNNER, "--trajectory", "iiwa14", "--baseline", str(tmp_path / "bare" / "bag"),
                                 "--out", str(tmp_path / "arm_excitation")], env=env, capture_output=True, text=True,
                                timeout=120)
    assert excitation.returncode == 2 and "it ran another excitation than this run's iiwa14 (" in excitation.stderr, \
        excitation.stderr
    run = Run("iiwa14", "sim", str(tmp_path / "loaded"), payload=True)
    loaded = subprocess.run([*RUNNER, "--sim-load", "1", "--baseline", str(tmp_path / "bare" / "bag"), "--out",
                             run.output_dir], env=env, capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stdout[-3000:] + loaded.stderr[-2000:]
    assert "robot_id: identified: payload on lbr_link_ee (the arm identified from the baseline" in loaded.stdout
    truth = yaml.safe_load(pathlib.Path(run.truth_path).read_text())["load"]
    found = yaml.safe_load((pathlib.Path(run.results_path) / "payload.yaml").read_text())
    print(f"mass {100 * (found['mass_kg'] / truth['mass_kg'] - 1):+.3f} %, CoM "
          f"{1000 * np.linalg.norm(np.subtract(found['com_m'], truth['com_m'])):.2f} mm, moments "
          f"{found['principal_moments_kg_m2']} (true {np.linalg.eigvalsh(np.array(truth['inertia_com_kg_m2']))}), "
          f"undetermined {found['undetermined_principal_moments']}")
    assert found["mass_kg"] == pytest.approx(truth["mass_kg"], rel=0.02)
    assert np.linalg.norm(np.subtract(found["com_m"], truth["com_m"])) < 0.005
    true_moments = np.linalg.eigvalsh(np.array(truth["inertia_com_kg_m2"]))
    for k, (moment, true) in enumerate(zip(found["principal_moments_kg_m2"], true_moments, strict=True)):
        assert abs(moment / true - 1.0) < 0.2 or k in found["undetermined_principal_moments"]
    attached = read_link_inertial((pathlib.Path(run.results_path) / "arm_with_payload.urdf").read_text(), "payload")
    assert attached.mass_kg == pytest.approx(found["mass_kg"])
