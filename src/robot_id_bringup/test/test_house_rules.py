"""The workspace's house rules, checked over every package's code and tests: no module over 400 lines, no function
over 60 (docstring included), no test module imported by another (shared helpers live in support modules), and
every package in the package table of docs/architecture.md."""

from __future__ import annotations

import ast
import pathlib
import re

SRC = pathlib.Path(__file__).resolve().parents[2]
ARCHITECTURE = SRC.parent / "docs" / "architecture.md"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> list[pathlib.Path]:
    return sorted(p for p in SRC.rglob("*.py") if not {"build", "install"} & set(p.parts))


def test_no_module_over_400_lines_and_no_function_of_60_or_more():
    long_modules, long_functions = [], []
    for path in _modules():
        text = path.read_text()
        if len(text.splitlines()) > MAX_MODULE_LINES:
            long_modules.append(f"{path.relative_to(SRC)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length >= MAX_FUNCTION_LINES:
                    long_functions.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}: {length} lines")
    assert not long_modules and not long_functions, long_modules + long_functions


def test_no_test_module_imports_another():
    imports = re.compile(r"^\s*(?:from|import)\s+(test_\w+)", re.M)
    found = [f"{path.relative_to(SRC)} imports {name}" for path in _modules() for name in imports.findall(
        path.read_text())]
    assert not found, found


def test_every_package_is_in_the_package_table():
    packages = sorted(p.parent.name for p in SRC.glob("*/package.xml"))
    table = ARCHITECTURE.read_text().split("## The packages", 1)[1].split("\n\n", 2)[1]
    assert [p for p in packages if f"| `{p}` |" not in table] == []
