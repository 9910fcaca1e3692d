"""docs/troubleshooting.md's table of the mistakes the tool names is a test: every row names the tests that assert
it (TESTS), and those tests must exist and hold what the row promises: every quoted message (without the numbers
and names of the run it was quoted from and what "…" leaves out) among their strings, and every exit code the row
names compared in one of them.
A row without a test, a test that is not there, a quote no test holds or a TESTS key no row has fails."""

from __future__ import annotations

import ast
import functools
import pathlib
import re

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
TROUBLESHOOTING = SRC.parent / "docs" / "troubleshooting.md"

TESTS: dict[str, tuple[str, ...]] = {
    "positions in degrees; velocities in deg/s": (
        "robot_id_estimator/test/test_trust.py::test_positions_in_degrees_are_refused_with_a_hint",
        "robot_id_estimator/test/test_trust.py::test_logged_velocities_in_degrees_per_second_are_refused",
    ),
    "torque in mNm or Nm/deg": (
        "robot_id_estimator/test/test_urdf_dynamics.py::test_units_and_a_flipped_sign_on_a_loaded_joint_are_refused",
        "robot_id_estimator/test/test_trust.py::test_validate_refuses_what_identify_refuses",
    ),
    "a torque sign flipped on a loaded joint": (
        "robot_id_estimator/test/test_urdf_dynamics.py::test_units_and_a_flipped_sign_on_a_loaded_joint_are_refused",
        "robot_id_estimator/test/test_trust.py::test_torque_of_the_wrong_sign_or_units_is_refused_by_identify",
    ),
    # the diagnosed data mistakes below end with exit 4 through one path (Identification.mistake): asserted by the
    # command line on an A3 encoder and on each kind of test_data_mistakes.MISTAKES; the iiwa7 row's is no mistake
    "a torque sign flipped on a lightly loaded joint (a wrist)": (
        "robot_id_estimator/test/test_urdf_dynamics.py::"
        "test_a_flipped_sign_on_a_joint_the_urdf_barely_loads_is_warned_not_refused",
        "robot_id_estimator/test/test_diagnosis.py::test_a_mistake_in_the_data_is_named",
        "robot_id_estimator/test/test_data_mistakes.py::"
        "test_a_flipped_torque_sign_or_encoder_on_any_joint_is_named_with_its_joint",
        "robot_id_estimator/test/test_data_mistakes.py::"
        "test_the_last_joints_friction_taken_as_giving_energy_is_the_truths_once_corrected",
        "robot_id_estimator/test/test_data_mistakes.py::"
        "test_the_command_line_ends_with_exit_4_and_writes_the_model_only_as_rejected",
        "robot_id_estimator/test/test_validation.py::test_a_joint_every_set_predicts_worse_than_zero_torque_is_warned_about",
    ),
    "an encoder counting the other way (A3)": (
        "robot_id_estimator/test/test_diagnosis.py::test_a_mistake_in_the_data_is_named",
        "robot_id_estimator/test/test_diagnosis.py::"
        "test_the_command_line_ends_with_exit_4_naming_the_mistake_and_removes_an_earlier_model",
        "robot_id_estimator/test/test_data_mistakes.py::"
        "test_a_flipped_torque_sign_or_encoder_on_any_joint_is_named_with_its_joint",
    ),
    "a joint's zero 0.3 rad off (A2)": (
        "robot_id_estimator/test/test_diagnosis.py::test_a_mistake_in_the_data_is_named",
        "robot_id_estimator/test/test_diagnosis.py::"
        "test_the_command_line_ends_with_exit_4_naming_the_mistake_and_removes_an_earlier_model",
    ),
    "an lbr_fri_ros2_stack whose `measured_torque_tau` is not the config's (recorded from its robot_description)": (
        "robot_id_estimator/test/test_torque_filter.py::test_the_filter_the_robots_stack_announces_is_used_and_said",
    ),
    "positions published open loop (lbr_fri_ros2_stack's default `open_loop: true`: the commands, not the "
    "encoders)": (
        "robot_id_estimator/test/test_torque_filter.py::"
        "test_positions_a_stack_published_open_loop_are_refused_naming_the_setting",
    ),
    "a torque-filter time constant that does not match the robot's (16 ms as 0, 0 as 16 ms, the LBR's 40 or 100 ms "
    "as 16)": (
        "robot_id_estimator/test/test_diagnosis.py::"
        "test_a_torque_filter_time_constant_that_does_not_match_the_robot_is_found_and_used",
        "robot_id_estimator/test/test_torque_filter.py::test_a_filter_other_than_the_configured_is_found_used_and_said",
    ),
    "a dead torque sensor (zeros, a constant, noise only)": (
        "robot_id_estimator/test/test_trust.py::test_a_dead_torque_sensor_on_a_lightly_loaded_joint_is_named",
        "robot_id_estimator/test/test_data_mistakes.py::test_a_wrist_sensor_putting_out_noise_is_a_data_mistake",
        "robot_id_estimator/test/test_diagnosis.py::"
        "test_the_command_line_ends_with_exit_4_naming_the_mistake_and_removes_an_earlier_model",
    ),
    "effects outside the model (a cogging or cable ripple) that the base set absorbs on its training data": (
        "robot_id_estimator/test/test_held_out_check.py::"
        "test_a_physical_set_worse_on_training_data_and_better_held_out_is_kept",
    ),
    "data that would make a 2.5 kg link a point mass (its inertia a thousandth of the URDF's)": (
        "robot_id_estimator/test/test_size_bounds.py::test_a_link_the_data_make_a_point_mass_keeps_the_spread_of_its_size",
    ),
    "a time column in milliseconds": (
        "robot_id_estimator/test/test_recording.py::test_a_time_column_in_milliseconds_is_named_not_taken_for_gaps",
        "robot_id_estimator/test/test_cli.py::"
        "test_an_excitation_given_as_a_friction_sweep_or_a_time_column_in_ms_exits_2_naming_it",
    ),
    "the same recording twice, also a copy under another name": (
        "robot_id_estimator/test/test_trust.py::test_the_same_samples_twice_are_refused_under_any_name",
    ),
    "an excitation recording given as `--friction-sweep`": (
        "robot_id_estimator/test/test_friction.py::test_an_excitation_given_as_a_friction_sweep_is_refused_naming_it",
        "robot_id_estimator/test/test_cli.py::"
        "test_an_excitation_given_as_a_friction_sweep_or_a_time_column_in_ms_exits_2_naming_it",
    ),
    "a bag whose recording was killed (no metadata.yaml; an MCAP without its summary)": (
        "robot_id_estimator/test/test_cli.py::test_an_unclosed_bag_is_refused_naming_the_command_that_repairs_it",
    ),
    "a value of the wrong form in a robot config, estimator config or collision file (`state_rate_hz: 500 Hz`)": (
        "robot_id_model/test/test_robot_config.py::"
        "test_a_wrong_value_in_a_robot_config_names_the_file_the_key_and_what_it_expects",
        "robot_id_model/test/test_robot_config.py::"
        "test_a_wrong_value_in_a_collision_file_names_the_file_the_key_and_what_it_expects",
        "robot_id_estimator/test/test_cli.py::"
        "test_a_wrong_value_in_the_estimator_config_names_the_file_the_key_and_what_it_expects",
    ),
    "hardware mode with no robot publishing (its stack not started, or in another ROS_DOMAIN_ID)": (
        "robot_id_bringup/test/test_runner_end_to_end.py::"
        "test_hardware_mode_with_no_robot_publishing_ends_after_the_robot_timeout_naming_the_topic",
        "robot_id_bringup/test/test_runner_end_to_end.py::test_the_robot_timeout_is_30_s_unless_given",
    ),
    "too little data for the base parameters": (
        "robot_id_estimator/test/test_trust.py::test_fifty_rows_are_too_little_data_and_say_how_much_is_needed",
    ),
    "the iiwa7 config on good iiwa14 data (the fit looks good)": (
        "robot_id_estimator/test/test_diagnosis.py::"
        "test_the_config_of_another_arm_on_good_data_is_named_as_a_model_that_misses_something",
    ),
    "5 s of a 10 s excitation (enough equations, too little motion)": (
        "robot_id_estimator/test/test_diagnosis.py::"
        "test_five_seconds_of_an_excitation_are_a_data_mistake_with_the_seconds_to_record",
        "robot_id_estimator/test/test_diagnosis.py::"
        "test_the_command_line_ends_with_exit_4_naming_the_mistake_and_removes_an_earlier_model",
    ),
    "a URDF edited or moved after identifying": (
        "robot_id_estimator/test/test_results_stand_alone.py::"
        "test_a_validation_after_the_urdf_changed_uses_the_held_one_and_says_so",
    ),
    "data of another robot or payload": (
        "robot_id_estimator/test/test_urdf_dynamics.py::test_a_torque_far_from_the_urdf_but_not_a_unit_error_is_a_warning",
        "robot_id_estimator/test/test_validation.py::test_data_the_urdf_model_predicts_better_on_most_joints_are_asked_about",
    ),
    "`design --base-frequency 20` (a period typed as a frequency)": (
        "robot_id_excitation/test/test_design_edge_cases.py::test_bad_design_options_are_refused_in_one_line_before_any_work",
    ),
    "`design --base-frequency 0.001` or `1.1` (a period of 1000 s or 0.9 s)": (
        "robot_id_excitation/test/test_design_edge_cases.py::test_bad_design_options_are_refused_in_one_line_before_any_work",
    ),
    "a design the data would not identify": (  # its DesignError exits 3 as the next rows' do
        "robot_id_excitation/test/test_design.py::test_a_design_whose_data_would_not_identify_the_base_parameters_is_refused",
        "robot_id_excitation/test/test_design_refusals.py::test_floor_and_clearance_typed_in_millimetres_ask_whether_they_are_right",
    ),
    "`--floor-z` or `--clearance` typed in the wrong unit": (
        "robot_id_excitation/test/test_design_refusals.py::test_floor_and_clearance_typed_in_millimetres_ask_whether_they_are_right",
        "robot_id_excitation/test/test_design.py::test_pairs_always_too_close_get_the_fix_that_fits_them",
    ),
    "links built closer than the clearance (FR3 links 5–7, UR5e wrist)": (
        "robot_id_excitation/test/test_design_refusals.py::"
        "test_links_built_closer_than_the_clearance_name_the_allow_pair_that_exempts_them",
        "robot_id_bringup/test/test_urdf_corpus.py::test_the_design_runs_or_says_why_not_and_what_to_do",
    ),
    "a trajectory used with an allowance it does not record (`check --allow-pair` of a file designed without it; a "
    "file whose allowance the config's collision file does not allow, in `check`, the node or the runner)": (
        "robot_id_excitation/test/test_collision.py::"
        "test_a_urdf_arm_refuses_pairs_the_trajectory_was_not_designed_allowing_and_bad_ones",
        "robot_id_bringup/test/test_urdf_corpus.py::"
        "test_a_trajectory_used_with_allowances_it_was_not_designed_with_is_refused_in_one_line",
    ),
    "a load identified on a frame of another body than the flange (`payload --frame lbr_link_6`)": (
        "robot_id_estimator/test/test_payload.py::"
        "test_a_load_on_another_frame_fails_the_check_naming_the_joint_it_leaves_unexplained",
    ),
    "a vendor URDF whose meshes are not installed": (
        "robot_id_excitation/test/test_design_refusals.py::"
        "test_a_vendor_urdf_whose_meshes_are_not_installed_names_the_mesh_and_where_they_ship",
    ),
}
"""Each row of the table (its first cell) and the tests (node ids under src/) that assert what it promises."""

OF_ONE_RUN = re.compile(r"\S*\d\S*")
"""A word with a digit in it: a number or a name (lbr_A5's, 2.8×) of the run a message was quoted from."""
SHORTEST_FRAGMENT = 5
"""Shorter pieces of a quote between the words of one run and "…" (a unit, a bracket) are not looked for alone."""
BEFORE = re.compile(r"\(before:[^)]*\)")
"""What a row says the tool did before it was fixed."""
EXIT = re.compile(r"exit(?: code)? (\d+)")


def table() -> dict[str, str]:
    """The table's rows: the mistake and what the tool says, in the page's order."""
    section = TROUBLESHOOTING.read_text().split("## The mistakes a lab makes", 1)[1]
    block = next(b for b in section.split("\n\n") if b.startswith("| mistake |"))
    rows = [line.strip().strip("|").split(" | ", 1) for line in block.splitlines()[2:]]
    return {mistake.strip(): says.strip() for mistake, says in rows}


def fragments(says: str) -> list[str]:
    """The pieces of the row's quoted messages a test must hold: between "…" and the words of one run (OF_ONE_RUN);
    not those of what the tool said before."""
    pieces = []
    for quote in re.findall(r'"([^"]+)"', BEFORE.sub("", says)):
        for part in quote.split("…"):
            pieces += [p.strip(" ,;:()%") for p in OF_ONE_RUN.split(part)]
    return [p for p in pieces if len(p) >= SHORTEST_FRAGMENT]


def exit_codes(says: str) -> set[int]:
    """The exit codes the row promises (not those it says the tool gave before): those it names, else 2 for a
    refusal (the table's rule: a one-line error is exit code 2 unless said)."""
    now = BEFORE.sub("", says)
    named = {int(code) for code in EXIT.findall(now)}
    return named or ({2} if now.startswith("refused") else set())


def test_a_row_asks_for_its_quotes_without_their_numbers_and_for_its_exit_codes():
    """The reading of a row, checked on one written here."""
    says = ('refused: "lbr_A2\'s zero is off by +0.3 rad (its zero)? cond(Yb) 1.34e+03 … twice" '
            '(before: exit 0, "no word")')
    assert fragments(says) == ["zero is off by", "rad (its zero)? cond(Yb", "twice"]
    assert exit_codes(says) == {2}
    assert exit_codes("infeasible (exit 3), naming the pair (before: exit 0, no word)") == {3}
    assert exit_codes("refused (exit 3), nothing written") == {3}


@functools.cache
def _module(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def named_test(node_id: str) -> tuple[str, list[str]] | None:
    """The source of a test (its decorators included) and its strings (regular expressions unescaped, f-strings
    in their literal parts); None when there is no such test."""
    file, _, name = node_id.partition("::")
    path = SRC / file
    if not path.is_file():
        return None
    module = _module(path)
    function = next((f for f in module.body if isinstance(f, ast.FunctionDef) and f.name == name), None)
    if function is None:
        return None
    lines = path.read_text().splitlines()
    first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    source = "\n".join(lines[first - 1:function.end_lineno])
    strings = [re.sub(r"\\(.)", r"\1", node.value) for part in [*function.decorator_list, function]
               for node in ast.walk(part) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return source, strings


def test_every_row_names_its_tests_and_every_name_is_a_row():
    rows = table()
    assert list(rows) == [row for row in rows if row in TESTS], f"rows without a test: {set(rows) - set(TESTS)}"
    assert set(TESTS) <= set(rows), f"tests of rows the table no longer has: {set(TESTS) - set(rows)}"


@pytest.mark.parametrize("mistake", list(TESTS))
def test_the_row_is_asserted_by_tests_that_exist_and_hold_its_message_and_exit_code(mistake):
    says = table()[mistake]
    found = {node_id: named_test(node_id) for node_id in TESTS[mistake]}
    assert found and all(found.values()), f"no such test: {[n for n, f in found.items() if f is None]}"
    strings = [s for _, test_strings in found.values() for s in test_strings]
    missing = [piece for piece in fragments(says) if not any(piece in s for s in strings)]
    assert not missing, f"{mistake}: no test of {list(found)} holds {missing}"
    for code in exit_codes(says):
        assert any(re.search(rf"==\s*{code}\b", source) for source, _ in found.values()), (
            f"{mistake}: no test of {list(found)} compares an exit code with {code}")
