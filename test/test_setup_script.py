"""`make setup` says what it installs while pip runs (scripts/pip_install.py, called by scripts/setup_workspace.sh
for each requirements file), keeps pip's output in the log, and fails loudly with the log's tail."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "pip_install.py"


def _module():
    spec = importlib.util.spec_from_file_location("pip_install", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_setup_workspace_installs_every_requirements_file_through_the_script():
    text = (ROOT / "scripts" / "setup_workspace.sh").read_text()
    assert 'scripts/pip_install.py "$r" "$LOG" || exit 1' in text
    assert "pip install --quiet -r" not in text


def test_pip_lines_become_short_status_lines():
    pip_install = _module()
    assert pip_install.status("Collecting scipy==1.17.1 (from -r requirements/science.txt (line 2))\n") == (
        "collecting scipy==1.17.1 (from -r requirements/science.txt (line 2))")
    assert pip_install.status("Installing collected packages: a, b, c, d, e, f, g, h, i, j\n") == (
        "installing 10 packages: a, b, c, d, e, f, g, h and 2 more")
    assert pip_install.status("  Downloading scipy-1.17.1.whl (35.2 MB)\n") is None


def test_requirements_are_named_without_versions_comments_or_options(tmp_path):
    source = tmp_path / "r.txt"
    source.write_text("# tools\nscipy==1.17.1\n--index-url http://x\nmcap-ros2-support>=0.6  # bags\n\nPyYAML[x]==6\n")
    assert _module().requirements(source) == ["scipy", "mcap-ros2-support", "PyYAML"]


def test_an_installed_requirement_is_named_and_logged(tmp_path):
    source, log = tmp_path / "r.txt", tmp_path / "install.log"
    source.write_text("PyYAML==6.0.3\n")  # pinned in requirements/science.txt: already in the venv
    result = subprocess.run([sys.executable, str(SCRIPT), str(source), str(log)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"[setup] pip install -r {source}: 1 package (PyYAML)"
    assert lines[-1].startswith("[setup]   done in ") and len(lines) == 2
    assert "Requirement already satisfied: PyYAML==6.0.3" in log.read_text()


def test_a_failing_install_exits_non_zero_with_the_log_tail(tmp_path):
    source, log = tmp_path / "r.txt", tmp_path / "install.log"
    source.write_text("not a requirement ===\n")
    result = subprocess.run([sys.executable, str(SCRIPT), str(source), str(log)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode != 0
    err = result.stderr.splitlines()
    assert err[0] == f"[setup] pip install -r {source} failed (exit code {result.returncode}); the end of {log}:"
    assert any("Invalid requirement: 'not a requirement ==='" in line for line in err[1:])


def test_env_sh_puts_the_command_lines_on_path():
    """The README's `robot_id identify ...` and the other command lines work as typed after `source env.sh`."""
    found = subprocess.run(["bash", "-c", f"source {ROOT / 'env.sh'} && cd / && command -v robot_id robot_id_estimator "
                            "robot_id_excitation robot_id_recorder excitation_node"],
                           capture_output=True, text=True, check=False)
    paths = found.stdout.split()
    assert found.returncode == 0 and len(paths) == 5, found.stdout + found.stderr
    assert all(pathlib.Path(p).is_relative_to(ROOT / "install") for p in paths)
