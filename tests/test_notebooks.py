"""Every course notebook: committed stripped with a kernelspec, and run top to bottom in fast mode
with the worked solutions injected into its exercise cells (so the checkers run too)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from notebook_tools import (  # noqa: E402
    KERNELSPEC,
    NOTEBOOKS_DIR,
    SOLUTIONS_DIR,
    TIMES_PATH,
    TIMES_TAG,
    course_notebooks,
    execute_notebook,
    exercise_cells,
    needs_missing_module,
    output_text,
    stripping_problems,
    times_table,
)

NOTEBOOKS = course_notebooks()
COURSE = (
    "00_start_here",
    "01_why_a_baseline",
    "02_the_group_baseline",
    "02b_the_loop_by_hand",
    "03_interactive_lab",
    "04_pitfalls",
    "05_grpo_vs_ppo",
    "06_interview_drill",
    "06_interview_drill_zh",
)
# a notebook should finish in ~90 s in fast mode on 2 cores; this limit only catches a hang on a loaded CI box
NOTEBOOK_TIMEOUT_S = 300
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_the_course_notebooks_exist():
    present = {path.stem for path in NOTEBOOKS}
    assert not set(COURSE) - present, f"missing notebooks: {sorted(set(COURSE) - present)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_with_outputs_stripped_and_a_kernelspec(path):
    notebook = read(path)
    nbformat.validate(notebook)
    assert notebook.metadata.get("kernelspec") == KERNELSPEC
    assert stripping_problems(notebook) == [], f"run: python scripts/notebook_tools.py strip {path.relative_to(NOTEBOOKS_DIR.parent)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_exercise_has_a_worked_solution(path):
    for _, name in exercise_cells(read(path)):
        assert (SOLUTIONS_DIR / f"{name}.py").is_file(), f"{path.name}: exercise {name!r} has no notebooks/solutions/{name}.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercise_cells_say_your_code_here_and_run_unsolved(path):
    """An unsolved exercise cell only defines things (so 'Run All' goes through) and marks the gap."""
    for index, name in exercise_cells(read(path)):
        source = read(path).cells[index].source
        assert "YOUR CODE HERE" in source, f"{path.name} cell {index} ({name}) has no YOUR CODE HERE marker"
        namespace: dict = {}
        exec("import torch\n" + source, namespace)  # raises if the unsolved cell does more than define


@pytest.mark.notebook
@pytest.mark.timeout(NOTEBOOK_TIMEOUT_S)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_top_to_bottom_in_fast_mode_with_solutions(path):
    missing = needs_missing_module(path)
    if missing:
        pytest.skip(f"{path.name} needs {missing}, which is not installed (pip install -e '.[trl]')")
    executed, seconds = execute_notebook(path, fast=True, solutions=True, cell_timeout=NOTEBOOK_TIMEOUT_S)
    text = output_text(executed)
    for _, name in exercise_cells(read(path)):
        assert re.search(rf"\[{re.escape(name)}\] (PASS|PREDICTION RECORDED)", text), f"the checker of {name} did not pass:\n{text[-2000:]}"
    assert "] FAIL" not in text and "] NOT ATTEMPTED" not in text
    ARTIFACTS.mkdir(exist_ok=True)
    record = ARTIFACTS / "notebook_seconds_fast.json"
    seconds_by_notebook = json.loads(record.read_text()) if record.is_file() else {}
    seconds_by_notebook[path.stem] = round(seconds, 1)
    record.write_text(json.dumps(seconds_by_notebook, indent=1) + "\n")


def test_course_map_quotes_the_measured_run_times():
    """The run-time table in notebook 00 is the one generated from data/course/notebook_times.json."""
    cells = [c for c in read(NOTEBOOKS_DIR / "00_start_here.ipynb").cells if TIMES_TAG in c.metadata.get("tags", [])]
    assert len(cells) == 1
    assert cells[0].source == times_table(json.loads(TIMES_PATH.read_text())), "run: python scripts/notebook_tools.py time"
