"""The package's import graph: TrainConfig sits on the bottom floor (config.py), and the library's
top-level modules import each other without circles (TYPE_CHECKING and in-function imports count:
a circle hidden from the interpreter is still one for the reader)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "grpo_lab"


def imported_modules(path: Path) -> set[str]:
    """The grpo_lab modules ``path`` imports anywhere in its text, as dotted names ('grpo_lab.task')."""
    package = ".".join(("grpo_lab", *path.relative_to(PACKAGE).parent.parts))
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("grpo_lab")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if not module.startswith("grpo_lab"):
                continue
            found.add(module)
            found |= {
                f"{module}.{alias.name}"
                for alias in node.names
                if (PACKAGE.parent / f"{module}.{alias.name}".replace(".", "/")).with_suffix(".py").is_file()
            }
    return found


def top_level_graph() -> dict[str, set[str]]:
    """{module: the top-level modules it imports} for grpo_lab/*.py (the package __init__ left out:
    it only re-exports)."""
    names = {f"grpo_lab.{path.stem}" for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    return {f"grpo_lab.{path.stem}": imported_modules(path) & names for path in PACKAGE.glob("*.py") if path.stem != "__init__"}


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for module in graph.get(todo.pop(), ()):
            if module not in seen:
                seen.add(module)
                todo.append(module)
    return seen


def test_the_config_is_on_the_bottom_floor():
    below_config = reachable(top_level_graph(), "grpo_lab.config")
    assert not below_config & {"grpo_lab.trainer", "grpo_lab.task", "grpo_lab.losses", "grpo_lab.critic", "grpo_lab.policy"}, below_config


def test_the_library_modules_import_each_other_without_circles():
    graph = top_level_graph()
    circles = sorted(module for module in graph if module in reachable(graph, module))
    assert not circles, f"modules on an import circle: {circles}"


@pytest.mark.parametrize("module", ["task", "losses", "critic"])
def test_the_modules_the_trainer_uses_take_the_config_from_config_py(module):
    assert "TYPE_CHECKING" not in (PACKAGE / f"{module}.py").read_text()
    assert "grpo_lab.config" in imported_modules(PACKAGE / f"{module}.py")


def test_the_moved_names_are_still_importable_where_they_were():
    from grpo_lab import TrainConfig as public
    from grpo_lab.config import TrainConfig
    from grpo_lab.losses import LOSS_AGGREGATIONS
    from grpo_lab.policy import REFERENCE_NAMES, available_devices, resolve_device
    from grpo_lab.task import MAX_DIGITS, OPERATIONS, REWARD_KINDS, Task
    from grpo_lab.trainer import TrainConfig as from_trainer
    from grpo_lab.trainer import memory_problem, probe_chunks

    assert public is TrainConfig is from_trainer
    assert Task.parse("2d+").digits == 2 and MAX_DIGITS == 5 and OPERATIONS == "+-*"
    assert "seq_mean" in LOSS_AGGREGATIONS and "exact" in REWARD_KINDS and "default" in REFERENCE_NAMES
    assert resolve_device("cpu").type == "cpu" and "cpu" in available_devices()
    assert memory_problem(TrainConfig()) is None and probe_chunks(16) == 4
