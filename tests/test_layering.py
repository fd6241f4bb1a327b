"""The core's layers: no import circles, no Qt, and the report read from outside only by the CLI.

Every import counts, wherever it stands: at the top, inside a function (a lazy import still
ties two modules together) or under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import tomllib
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import physgrade

CORE = Path(physgrade.__file__).parent
QT = {"PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6", "physgrade_ui"}
#: Outside physgrade/report/, the modules that may build or write a report.
REPORT_READERS = {"physgrade.cli"}


def module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(CORE.rglob("*.py"))}


def imports(name: str) -> set[str]:
    """Every module ``name`` imports (relative imports resolved; ``from package import
    module`` counts as the module)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..y import z
                above = package.split(".")[:len(package.split(".")) + 1 - node.level]
                base = ".".join(above + ([base] if base else []))
            found |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                      for alias in node.names}
    return found


IMPORTS = {name: imports(name) for name in MODULES}


def test_no_import_circles() -> None:
    graph = {name: {other for other in found if other in MODULES and other != name}
             for name, found in IMPORTS.items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as circle:
        raise AssertionError(f"an import circle: {' -> '.join(circle.args[1])}") from None


def test_the_core_never_imports_qt_or_the_app() -> None:
    naming = {name: sorted(m for m in found if m.split(".")[0] in QT)
              for name, found in IMPORTS.items()}
    assert {name: found for name, found in naming.items() if found} == {}


def in_report(module: str) -> bool:
    return module == "physgrade.report" or module.startswith("physgrade.report.")


def test_only_the_report_and_the_cli_import_the_report() -> None:
    outside = {name: sorted(filter(in_report, found)) for name, found in IMPORTS.items()
               if not in_report(name) and name not in REPORT_READERS}
    assert {name: found for name, found in outside.items() if found} == {}


def test_every_core_package_is_installed() -> None:
    """A package missing from pyproject's list imports from the source tree (an editable
    install) but is left out of a wheel and of the bundle."""
    declared = set(tomllib.loads((CORE.parent / "pyproject.toml").read_text(encoding="utf-8"))
                   ["tool"]["setuptools"]["packages"])
    packages = {module_name(path) for path in CORE.rglob("__init__.py")}
    assert packages - declared == set()
