"""The package's import graph: the algorithm (grpo_lab/core/) imports nothing of the package outside
itself and nothing but the standard library and torch, and no module of the package sits on an
import circle (TYPE_CHECKING and in-function imports count: a circle hidden from the interpreter is
still one for the reader)."""

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "grpo_lab"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, package: str | None = None) -> set[str]:
    """Every module ``path`` imports anywhere in its text, as dotted absolute names ('grpo_lab.task',
    'torch.nn'); a name imported from a package counts as its module when it is one. ``package``: the
    package a relative import starts from (by default the one ``path`` is in)."""
    if package is None:
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            found |= {
                f"{module}.{alias.name}"
                for alias in node.names
                if (PACKAGE.parent / f"{module}.{alias.name}".replace(".", "/")).with_suffix(".py").is_file()
            }
    return found


def package_graph() -> dict[str, set[str]]:
    """{module: the package's modules it imports} for every module of grpo_lab (package __init__s
    left out: they only gather names)."""
    paths = [path for path in PACKAGE.rglob("*.py") if path.name != "__init__.py" and "voila_page" not in path.parts]
    names = {module_name(path) for path in paths}
    return {module_name(path): {name for name in imports_of(path) if name in names} for path in paths}


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for module in graph.get(todo.pop(), ()):
            if module not in seen:
                seen.add(module)
                todo.append(module)
    return seen


CORE_FILES = sorted((PACKAGE / "core").glob("*.py"))


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda path: path.name)
def test_the_algorithm_imports_nothing_outside_core_but_torch_and_the_standard_library(path):
    allowed_roots = {"torch", *sys.stdlib_module_names}
    outside = sorted(
        name for name in imports_of(path) if not name.startswith("grpo_lab.core") and name.split(".")[0] not in allowed_roots and name != "__future__"
    )
    assert not outside, f"{path.name} imports {outside}"


def test_the_layout_check_sees_a_forbidden_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def late():\n    from ..checks.files import write_atomically\n    import numpy\n")
    assert {"grpo_lab.checks.files", "numpy"} <= imports_of(planted, package="grpo_lab.core")


def test_the_package_modules_import_each_other_without_circles():
    graph = package_graph()
    circles = sorted(module for module in graph if module in reachable(graph, module))
    assert not circles, f"modules on an import circle: {circles}"


def test_the_public_contract_imports_as_documented():
    from grpo_lab import GRPOLab, TrainConfig, TrainResult, compute_advantages, load_reference_policy, train
    from grpo_lab.errors import ConfigError
    from grpo_lab.live_figure import LiveRunFigure

    assert callable(train) and TrainConfig().group_size == 8 and TrainResult.__name__ == "TrainResult"
    assert all(callable(item) for item in (GRPOLab, compute_advantages, load_reference_policy, LiveRunFigure))
    assert issubclass(ConfigError, ValueError)
