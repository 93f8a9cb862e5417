"""Every course notebook: committed stripped with a kernelspec, and run top to bottom in fast mode
with the worked solutions injected into its exercise cells (so the checkers run too)."""

from __future__ import annotations

import ast
import json
import re
import sys
from inspect import signature
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
    "01b_variance_and_offset",
    "02_the_group_baseline",
    "02b_the_loop_by_hand",
    "02c_the_small_print",
    "03_interactive_lab",
    "04a_small_groups",
    "04b_sigma_to_zero",
    "04c_batch_and_tiny_groups",
    "05a_the_critic",
    "05b_grpo_vs_ppo",
    "05c_sampling_cost",
    "06_interview_drill",
    "06_interview_drill_zh",
    "08_appendix_full_measurements",
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
def test_runs_top_to_bottom_in_fast_mode_with_solutions(path, tmp_path, monkeypatch):
    """Every cell runs, every checker passes, and every figure the notebook shows (its own cells' included) passes the
    figure check of tests/test_figures.py (show() saves each Figure when GRPO_LAB_FIGURE_DIR is set)."""
    import pickle

    from test_figures import check_figure

    from grpo_lab.course.notebook import FIGURE_DIR_ENV

    missing = needs_missing_module(path)
    if missing:
        pytest.skip(f"{path.name} needs {missing}, which is not installed (pip install -e '.[trl]')")
    monkeypatch.setenv(FIGURE_DIR_ENV, str(tmp_path))  # the kernel inherits it
    executed, seconds = execute_notebook(path, fast=True, solutions=True, cell_timeout=NOTEBOOK_TIMEOUT_S)
    for saved in sorted(tmp_path.glob("*.figure.pickle")):
        try:
            check_figure(pickle.loads(saved.read_bytes()))
        except AssertionError as problem:
            raise AssertionError(f"{path.name}, figure {saved.name.removesuffix('.figure.pickle')}: {problem}") from None
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


# the main path: every unit a learner reads from 00 to the final answer (03's study plan is its owner's)
MAIN_PATH = tuple(name for name in COURSE if not name.startswith(("03_", "06_", "08_")))
GLOSSARY = NOTEBOOKS_DIR / "glossary.md"


@pytest.mark.parametrize("name", [name for name in MAIN_PATH if name != "00_start_here"])
def test_a_unit_opens_with_goals_prerequisites_and_study_time_and_closes_with_a_recap_and_self_check(name):
    markdown = [cell.source for cell in read(NOTEBOOKS_DIR / f"{name}.ipynb").cells if cell.cell_type == "markdown"]
    opening, closing = markdown[0], markdown[-1]
    for marker in ("**Learning goals**", "**Prerequisites:**", "**Study time:**", "](glossary.md)"):
        assert marker in opening, f"{name}'s first cell lacks {marker}"
    assert closing.startswith("## Recap") and "**Self-check**" in closing, f"{name} must end with a recap and its self-check questions"
    questions = re.findall(r"^\d\. ", closing.split("**Self-check**")[1], flags=re.MULTILINE)
    assert len(questions) == 3, f"{name} has {len(questions)} self-check questions, expected 3"


def tabulated_metrics(notebook: nbformat.NotebookNode) -> set[str]:
    """The metric names a notebook's code prints in tables (print_table's list) or quotes (mean_std_seeds' third argument)."""
    names: set[str] = set()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for listed in re.findall(r"print_table\([^,]+,\s*\[([^\]]*)\]", cell.source):
                names |= set(re.findall(r'"([^"]+)"', listed))
            names |= set(re.findall(r'mean_std_seeds\([^,]+,\s*[^,]+,\s*"([\w.=]+)"\)', cell.source))
    return names


def test_every_metric_the_course_tabulates_is_in_the_glossary():
    entries = set(re.findall(r"`([\w.={}]+)`", GLOSSARY.read_text(encoding="utf-8")))
    entries |= {name.replace("{baseline}", "{b}") for name in entries}  # net_snr.{b}: the notebook's f-string
    missing = {
        f"{path.stem}: {metric}"
        for path in NOTEBOOKS
        if path.stem in MAIN_PATH
        for metric in tabulated_metrics(read(path))
        if re.sub(r"G=\d+", "G=g", metric) not in entries
    }
    assert not missing, f"metrics printed but not in notebooks/glossary.md: {sorted(missing)}"


def cited_claims(notebook: nbformat.NotebookNode, function: str) -> set[str]:
    """The claim keys passed as a literal list to ``function(...)`` in the notebook's code cells."""
    keys: set[str] = set()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for literal in re.findall(rf"{function}\((\[[^\]]*\])", cell.source):
                keys |= set(ast.literal_eval(literal))
    return keys


# what only the auditor's view (08, claims.md) shows: the long findings, regime columns, q-values and Power lines
AUDIT_FUNCTIONS = {"print_findings", "regime_table_markdown", "claims_audit_zh", "claims_markdown", "power_line"}
AUDIT_MARKS = re.compile(r"near the line|\b[pq] \d|Welch t|\bSE \d|Power|detectable ≥|^\|", flags=re.MULTILINE)


def called_functions(notebook: nbformat.NotebookNode) -> list[ast.Call]:
    """Every call with a plain name (f(...), not obj.f(...)) in the notebook's code cells, in cell order."""
    calls = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            found = [node for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
            calls += sorted(found, key=lambda node: (node.lineno, node.col_offset))
    return calls


def test_the_main_path_shows_only_plain_verdicts_and_08_prints_them_in_full():
    """Issues 22 and 39: from 00 to 05c a verdict is one plain sentence (plain_verdicts_markdown), in the default regime
    until the one unit that introduces the regimes (regimes_markdown) has; no regime columns, near-the-line marks,
    q-values or Power lines before 08, which prints every cited claim in full."""
    from grpo_lab.course.drill import plain_verdicts_markdown

    appendix = cited_claims(read(NOTEBOOKS_DIR / "08_appendix_full_measurements.ipynb"), "print_findings")
    calls = {name: called_functions(read(NOTEBOOKS_DIR / f"{name}.ipynb")) for name in MAIN_PATH}
    introducing = [name for name in MAIN_PATH if any(call.func.id == "regimes_markdown" for call in calls[name])]
    assert len(introducing) == 1, f"the regimes must be introduced in one main-path unit, not in {introducing}"
    regimes_introduced = False
    for name in MAIN_PATH:
        for call in calls[name]:
            assert call.func.id not in AUDIT_FUNCTIONS, f"{name} calls {call.func.id}: the auditor's view belongs in 08"
            regimes_introduced |= call.func.id == "regimes_markdown"
            if call.func.id != "plain_verdicts_markdown":
                continue
            arguments = signature(plain_verdicts_markdown).bind(
                *map(ast.literal_eval, call.args), **{keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
            )
            arguments.apply_defaults()
            keys, regime = arguments.arguments["keys"], arguments.arguments["regime"]
            assert regime == "gentle" or regimes_introduced, (
                f"{name} shows the {regime} regime's verdicts before {introducing[0]} introduces the regimes"
            )
            marks = AUDIT_MARKS.findall(plain_verdicts_markdown(*arguments.args, **arguments.kwargs))
            assert not marks, f"{name}'s verdicts of {keys} show the auditor's marks {marks}"
            missing = set(keys) - appendix
            assert not missing, f"{name} shows the verdicts of {sorted(missing)}, which notebook 08 does not print"


@pytest.mark.parametrize("name", MAIN_PATH)
def test_every_exercise_is_asked_in_the_markdown_cell_just_before_it(name):
    """A learner meets a YOUR CODE HERE cell only after the question it answers (05b's prediction
    once sat under a list of learners with no question)."""
    cells = read(NOTEBOOKS_DIR / f"{name}.ipynb").cells
    for index, exercise in exercise_cells(read(NOTEBOOKS_DIR / f"{name}.ipynb")):
        before = cells[index - 1]
        assert before.cell_type == "markdown" and "exercise" in before.source.lower(), (
            f"{name}: exercise {exercise!r} (cell {index}) is not introduced by the markdown cell before it"
        )


# issue 22: each headline result is a run the learner starts (a verdict from its own numbers) before
# the cached multi-seed sweep is offered as the full measurement
HEADLINE_LIVE_RUNS = {
    "01b_variance_and_offset": "offset-and-scale",  # the reward offset
    "02_the_group_baseline": "offset-and-scale",  # sigma and reward scales
    "04a_small_groups": "group-size",  # G against prompts at equal samples
    "04b_sigma_to_zero": "sigma-to-zero",  # sigma -> 0
    "05b_grpo_vs_ppo": "grpo-vs-ppo",  # GRPO against the critic, and the critic-free control
}


@pytest.mark.parametrize("name", HEADLINE_LIVE_RUNS)
def test_each_headline_result_runs_live_before_its_cached_sweep(name):
    sources = [cell.source for cell in read(NOTEBOOKS_DIR / f"{name}.ipynb").cells if cell.cell_type == "code"]
    live = [index for index, source in enumerate(sources) if "live_comparison(" in source]
    cached = [index for index, source in enumerate(sources) if f'load_or_run("{HEADLINE_LIVE_RUNS[name]}"' in source]
    assert live and cached, f"{name} needs a live_comparison run and the cached {HEADLINE_LIVE_RUNS[name]} sweep"
    assert live[0] < cached[0], f"{name} shows the cached {HEADLINE_LIVE_RUNS[name]} sweep before the learner's own run"
