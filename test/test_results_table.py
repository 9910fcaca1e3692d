"""docs/results.md and the README's table of what the suite achieves are what scripts/render_results.py renders from
the benchmark records in benchmarks/results/ now (issue 43: figures generated, not typed), and each figure they show
is the record's own."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


render = _script("render_results")
RECORDS = render.load_records()


def _readme_block() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split(render.BEGIN, 1)[1].split(render.END, 1)[0].strip("\n")


def test_results_page_and_readme_table_are_what_the_stored_records_render():
    assert RECORDS, "benchmarks/results/ holds no record"
    assert (ROOT / "docs" / "results.md").read_text() == render.results_page(RECORDS), "run make results"
    assert _readme_block() == render.readme_table(RECORDS), "run make results"


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_record_says_what_when_and_how_it_was_measured(name):
    record = RECORDS[name]
    assert record["benchmark"] == name and record["command"].startswith(f"python benchmarks/{name}.py")
    assert record["about"]  # what it measures, as its script said when it ran
    assert (ROOT / "benchmarks" / f"{name}.py").is_file()
    if record["re_measured"]:
        assert {"cores", "cpu", "python", "platform"} <= set(record["machine"])
        assert len(record["load_average_1_5_15_min"]["before"]) == 3
    else:  # a figure nobody measured again says where it was stated and when it was measured
        assert record["source"] and len(record["measured_at"]) >= 10
        assert f"measured on {record['measured_at'][:10]}" in render.provenance(record)


def test_each_figure_of_the_results_page_is_the_record_s_value():
    """Walked here apart from the renderer: every leaf number of every record appears in its section's rows."""
    page = (ROOT / "docs" / "results.md").read_text()
    for name, record in RECORDS.items():
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        cells = [[c.strip() for c in line.strip("|").split(" | ")] for line in section.splitlines()
                 if line.startswith("| ")]
        table = {c[0]: c[1] for c in cells if len(c) == 2}

        def leaves(value, path):
            if isinstance(value, dict):
                for key, item in value.items():
                    yield from leaves(item, [*path, key])
            elif not isinstance(value, list) or not any(isinstance(x, (dict, list)) for x in value):
                yield " › ".join(path), value

        for path, value in leaves(record["figures"], []):
            if path == "benchmark" or isinstance(value, (str, list)) or value is None:
                continue
            shown = table[path]
            if isinstance(value, bool):
                assert shown == ("yes" if value else "no"), (name, path)
            else:
                assert abs(float(shown) - value) <= 5e-3 * abs(value), (name, path, shown, value)  # 3-4 digits


def test_the_readme_table_says_when_a_figure_was_not_re_measured():
    block = _readme_block()
    for name, record in RECORDS.items():
        if f"(docs/results.md#{name})" in block and not record["re_measured"]:
            assert f"[{name}](docs/results.md#{name}): measured {record['measured_at'][:10]}, not re-measured" in block


def test_the_runner_keeps_a_benchmark_s_json_line_with_machine_load_and_command():
    run = _script("run_benchmarks")
    record = run.record(ROOT / "benchmarks" / "model.py", ["python", "benchmarks/model.py"], {"x": [1.0, 2.0]},
                        run.datetime.datetime(2026, 11, 28, tzinfo=run.datetime.UTC), 3.04, [1.0, 0.5, 0.25])
    assert json.loads(run.dumps(record)) == record
    assert record["measured_at"] == "2026-11-28T00:00:00+00:00" and record["wall_s"] == 3.0
    assert record["benchmark"] == "model" and record["about"].startswith("Figures of robot_id_model")
    assert record["machine"]["cores"] >= 1 and record["load_average_1_5_15_min"]["before"] == [1.0, 0.5, 0.25]
    assert '"x": [1.0, 2.0]' in run.dumps(record)
