"""The ground floor: the results that travel, as types, and their serialisation. Every stage above builds these;
none of them imports a stage.

- identification: Identification (ParameterSet, Friction, Metrics, Physical, Traces), identification.json
  (identification_to_dict / _from_dict, write_identification, read_identification, write_json)
- validation: Validation, validation.json (write_validation)
- held_out: HeldOut, each parameter set's prediction of data it was not fitted to
- set_checks: RULE, SetCheck, check_sets, best_set: each set's verdict on held-out data
- law_choice: CoulombLawChoice, how each joint's Coulomb law was chosen
- plausibility: Plausibility, LinkPlausibility: the retrieved bodies against the URDF and the bounds
- written_check: WrittenCheck, the written model files checked as loaded
- json_values: dataclasses to JSON and back (NOT_WRITTEN, dataclass_to_json, dataclass_from_json)
- files: write_text, atomic_path: files written whole or not at all
"""

from robot_id_estimator.results.identification import (
    FORMAT,
    Friction,
    Identification,
    Metrics,
    ParameterSet,
    Physical,
    Traces,
    concatenated_times,
    identification_from_dict,
    identification_to_dict,
    read_identification,
    write_identification,
    write_json,
)

__all__ = [
    "FORMAT",
    "Friction",
    "Identification",
    "Metrics",
    "ParameterSet",
    "Physical",
    "Traces",
    "concatenated_times",
    "identification_from_dict",
    "identification_to_dict",
    "read_identification",
    "write_identification",
    "write_json",
]
