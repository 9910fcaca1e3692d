"""The estimator's results as messages: an arm's identification, or a payload's, as one IdentificationResult."""

from __future__ import annotations

import numpy as np

from robot_id_estimator.payload.result import PayloadResult
from robot_id_estimator.results import Identification
from robot_id_model.physical import inertia_six
from robot_id_msgs.msg import IdentificationResult, JointFriction, LinkInertial


def _floats(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=float).ravel()]


def result_message(result: Identification, output_dir: str) -> IdentificationResult:
    """IdentificationResult of an identification (NaN for parameters the data did not identify); success false when
    a set failed its check or the diagnosis named a data mistake (the message says which).

    JointFriction holds the linear terms, the Coulomb law as its family and shape parameters by name
    (CoulombLaw.shape) and, when a sweep gave a Stribeck fit, its seven coefficients of Luo et al. 2024, eq. (7).
    """
    failed = result.failed_sets()
    msg = IdentificationResult(robot=result.setup.name, output_dir=output_dir,
                               success=not failed and result.mistake is None, failed_sets=failed,
                               warnings=list(result.warnings))
    msg.message = "; ".join(
        ([f"a mistake in the data, the model rejected: {result.mistake}"] if result.mistake else [])
        + ([f"{', '.join(failed)} failed the check on held-out data"] if failed else [])
    ) or (f"{len(result.essential.names)} essential of {len(result.base.names)} base parameters, "
          f"cond(Yb) = {result.metrics.condition_number:.4g}; best on held-out data: {result.best_set}")
    msg.joint_names = list(result.setup.joint_names)
    msg.base_names = list(result.base.names)
    msg.base_expressions = list(result.base_expressions)
    msg.base_values = _floats(result.base.values)
    msg.base_rsd_percent = _floats(result.base.rsd_percent)
    msg.essential_names = list(result.essential.names)
    msg.essential_values = _floats(result.essential.values)
    msg.essential_rsd_percent = _floats(result.essential.rsd_percent)
    f = result.friction
    for j, (name, law) in enumerate(zip(f.joint_names, f.laws(), strict=True)):
        joint = JointFriction(joint_name=name, viscous_nm_s_rad=float(f.viscous_nm_s_rad[j]),
                              coulomb_nm=float(f.coulomb_nm[j]), offset_nm=float(f.offset_nm[j]),
                              coulomb_law=law.family, coulomb_shape_names=[p.name for p in law.shape],
                              coulomb_shape_values=list(law.shape_values()))
        if f.stribeck is not None and not np.isnan(f.stribeck[j]).any():
            joint.stribeck_coefficients = [float(c) for c in f.stribeck[j]]
        msg.friction.append(joint)
    if result.physical is not None:
        for name, link in zip(result.physical.link_names, result.physical.links, strict=True):
            msg.physical.append(_link(name, link))
    msg.condition_number = float(result.metrics.condition_number)
    return msg


def payload_message(result: PayloadResult, robot: str, joint_names: tuple[str, ...],
                    output_dir: str) -> IdentificationResult:
    """IdentificationResult of a payload identification: the load in `payload` (link_name: its frame), success
    when its model explained its torque on held-out data and its written files reproduce it."""
    load = result.estimate.inertial
    msg = IdentificationResult(robot=robot, joint_names=list(joint_names), output_dir=output_dir,
                               success=result.passed and result.file_check.passed,
                               failed_sets=[] if result.passed else ["payload"],
                               warnings=list(result.warnings))
    msg.payload = [_link(result.frame, load)]
    msg.message = (f"payload on {result.frame} ({result.method}): {load.mass_kg:.4g} kg, CoM "
                   + " ".join(f"{1000.0 * x:.1f}" for x in load.com_m) + " mm"
                   + ("" if result.estimate.axes.all_determined else
                      "; its principal axes not all determined (A B C: see the warnings)")
                   + ("" if result.passed else
                      f"; its model failed the check on held-out data ({'; '.join(result.failures)})")
                   + ("" if result.file_check.passed else
                      f"; its written files do not reproduce it ({'; '.join(result.file_check.failures)})"))
    return msg


def _link(name: str, link) -> LinkInertial:
    return LinkInertial(link_name=name, mass_kg=float(link.mass_kg), com_m=_floats(link.com_m),
                        inertia_kg_m2=_floats(inertia_six(link.inertia_com_kg_m2)))
