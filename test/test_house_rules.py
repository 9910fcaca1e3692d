"""The workspace's house rules, checked over every package's code and tests: no module over 400 lines, no function
over 60 (docstring included), no test module imported by another (shared helpers live in support modules), and
every package in the package table of docs/architecture.md."""

from __future__ import annotations

import ast
import pathlib
import re

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
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


LAB_USERS = {("robot_id_bringup", "demo.py"), ("robot_id_bringup", "offline_demo.py"),
             ("robot_id_bringup", "payload_check.py")}
"""The product's modules that may import robot_id_lab: the demos (the lab's showcase) and the payload check."""


def test_no_run_time_module_imports_the_lab():
    """robot_id_lab is no part of the product's run time: outside the tests, only the demos import it."""
    found = []
    for path in _modules():
        package = path.relative_to(SRC).parts[0]
        if package == "robot_id_lab" or "test" in path.relative_to(SRC).parts or (package, path.name) in LAB_USERS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            if any(name.split(".")[0] == "robot_id_lab" for name in names):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not found, found


def test_every_package_is_in_the_package_table():
    packages = sorted(p.parent.name for p in SRC.glob("*/package.xml"))
    table = ARCHITECTURE.read_text().split("## The packages", 1)[1].split("\n\n", 2)[1]
    assert [p for p in packages if f"| `{p}` |" not in table] == []


ESTIMATOR = SRC / "robot_id_estimator" / "robot_id_estimator"
ESTIMATOR_FLOORS = (
    ("progress", "stribeck_law"), ("settings",), ("robot_setup",), ("results",), ("exit_codes",), ("recordings",),
    ("processing",), ("estimation",), ("friction",), ("physical",), ("validation",), ("output",),
    ("pipeline",), ("identify_and_write", "validate"), ("payload",), ("messages",), ("node", "__main__"),
)
"""The estimator's rooms (its top-level modules and folders), ground floor first: each imports only rooms below it
(robot_id_estimator/__init__.py says why this order)."""


def _estimator_imports() -> list[tuple[str, str, str, str]]:
    """(module, its room, the estimator module it imports, file:line) for every import of the estimator's own code in
    it, those for type checking included."""
    found = []
    for path in sorted(ESTIMATOR.rglob("*.py")):
        rel = path.relative_to(ESTIMATOR)
        module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = ([f"{node.module}.{a.name}" for a in node.names] if node.module == "robot_id_estimator"
                         else [node.module])
            else:
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [(module, rel.parts[0].removesuffix(".py"), name.removeprefix("robot_id_estimator."),
                       f"{rel}:{node.lineno}") for name in names if name.startswith("robot_id_estimator.")]
    return found


def test_the_estimator_imports_only_downwards_and_no_module_in_a_circle():
    floor = {room: i for i, rooms in enumerate(ESTIMATOR_FLOORS) for room in rooms}
    imports = _estimator_imports()
    unplaced = {room for _, room, _, _ in imports if room not in floor and room != "__init__"}
    assert not unplaced, f"rooms on no floor of ESTIMATOR_FLOORS: {sorted(unplaced)}"
    upwards = [f"{where}: {room} imports {target} (floor {floor[target.split('.')[0]]}, not below {floor[room]})"
               for _, room, target, where in imports
               if target.split(".")[0] != room and floor[target.split(".")[0]] >= floor[room]]
    assert not upwards, upwards
    graph: dict[str, set[str]] = {}
    for module, _, target, _ in imports:
        graph.setdefault(module, set()).add(target)
    done: set[str] = set()

    def circle_from(module: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        if module in path:
            return (*path[path.index(module):], module)
        if module in done:
            return None
        done.add(module)
        return next(filter(None, (circle_from(t, (*path, module)) for t in sorted(graph.get(module, ())))), None)

    circles = [c for c in (circle_from(m, ()) for m in sorted(graph)) if c]
    assert not circles, [" -> ".join(c) for c in circles]
