"""Figures of robot_id_model on the shipped robots: regressor speed and accuracy, base-parameter counts.

Run: `make bench` or `source env.sh && python benchmarks/model.py`. Ends with one JSON line.
"""

import json
import time

import numpy as np
import pinocchio as pin

from robot_id_model import base_parameters, load_robot_config, nominal_parameters, regressor
from robot_id_model.base_parameters import random_states


def measure(name: str) -> dict:
    config = load_robot_config(name)
    inertial = config.load_model(friction=())
    q, dq, ddq = random_states(inertial, 10_000, seed=1)
    start = time.perf_counter()
    y = regressor(inertial, q, dq, ddq)
    regressor_s = time.perf_counter() - start
    data = inertial.model.createData()
    tau = np.array([pin.rnea(inertial.model, data, q[k], dq[k], ddq[k]) for k in range(1000)])
    rnea_error = float(np.abs(y[:1000] @ nominal_parameters(inertial) - tau).max())
    start = time.perf_counter()
    n_base = base_parameters(inertial).n_base
    base_s = time.perf_counter() - start
    return {
        "regressor_10k_s": round(regressor_s, 3),
        "max_error_vs_rnea_nm": rnea_error,
        "base_inertial": n_base,
        "base_with_fv_fc": base_parameters(config.load_model(friction=("FV", "FC"))).n_base,
        "base_with_fv_fc_fo": base_parameters(config.load_model(friction=("FV", "FC", "FO"))).n_base,
        "base_reduction_s": round(base_s, 3),
    }


def main() -> None:
    figures = {}
    for name in ("iiwa7", "iiwa14", "panda"):
        figures[name] = measure(name)
        f = figures[name]
        print(
            f"{name:7s} regressor 10k samples {f['regressor_10k_s']:.3f} s,"
            f" |Y·π − RNEA| ≤ {f['max_error_vs_rnea_nm']:.1e} Nm,"
            f" base parameters {f['base_inertial']} inertial / {f['base_with_fv_fc']} with Fv,Fc /"
            f" {f['base_with_fv_fc_fo']} with Fv,Fc,offset ({f['base_reduction_s']:.3f} s)"
        )
    print(json.dumps({"benchmark": "model", **figures}))


if __name__ == "__main__":
    main()
