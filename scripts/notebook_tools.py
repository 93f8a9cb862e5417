"""Keep the course notebooks committable and check that they run.

    python scripts/notebook_tools.py strip [NOTEBOOK ...] [--check]   outputs stripped, kernelspec set
    python scripts/notebook_tools.py time [NOTEBOOK ...] [--mode fast|full|both]   run notebooks, record their times

``time`` writes data/course/notebook_times.json and rewrites the run-time table of
notebooks/00_start_here.ipynb (the markdown cell tagged ``notebook-times``) from it, so the
times quoted in the course map are the ones measured. The tests and ``render_html.py`` execute
notebooks with ``execute_notebook`` below; exercise cells (cell metadata ``"exercise": NAME``) can
be replaced by their worked solution, notebooks/solutions/NAME.py, before running.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from grpo_lab.checks.files import json_text, write_atomically

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = ROOT / "notebooks"
SOLUTIONS_DIR = NOTEBOOKS_DIR / "solutions"
TIMES_PATH = ROOT / "data" / "course" / "notebook_times.json"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
TIMES_TAG = "notebook-times"
VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "jp-MarkdownHeadingCollapsed")
CLOCK_LINE = re.compile(r"ran in ([\d.]+) s wall clock \(([\d.]+) s CPU\)")


def course_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def strip_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Outputs, execution counts, widget state and volatile metadata removed; kernelspec set."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
    notebook.metadata.pop("widgets", None)
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def stripping_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """What ``strip_notebook`` would change, in words (empty: the file is clean)."""
    problems = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            problems.append(f"cell {index} has outputs or an execution count")
    if notebook.metadata.get("kernelspec") != KERNELSPEC:
        problems.append(f"kernelspec is {notebook.metadata.get('kernelspec')!r}, expected {KERNELSPEC!r}")
    if "widgets" in notebook.metadata:
        problems.append("saved widget state in the metadata")
    return problems


def exercise_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(cell index, exercise name) of every exercise cell."""
    return [(index, cell.metadata["exercise"]) for index, cell in enumerate(notebook.cells) if "exercise" in cell.metadata]


def solution_source(name: str) -> str:
    path = SOLUTIONS_DIR / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"exercise {name!r} has no worked solution at {path}")
    return path.read_text()


def inject_solutions(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy whose exercise cells hold the worked solutions."""
    solved = copy.deepcopy(notebook)
    for index, name in exercise_cells(solved):
        solved.cells[index].source = solution_source(name)
    return solved


def execute_notebook(
    path: Path, fast: bool = True, solutions: bool = False, cell_timeout: int = 600, store_widget_state: bool = False
) -> tuple[nbformat.NotebookNode, float]:
    """Run a notebook top to bottom in a fresh python3 kernel started in notebooks/.
    Returns (the executed notebook, wall seconds). A failing cell raises nbclient's CellExecutionError."""
    notebook = nbformat.read(path, as_version=4)
    if solutions:
        notebook = inject_solutions(notebook)
    environment = {**os.environ, "GRPO_LAB_FAST": "1" if fast else "0"}
    client = NotebookClient(
        notebook,
        timeout=cell_timeout,
        kernel_name="python3",
        store_widget_state=store_widget_state,
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.perf_counter()
    client.execute(env=environment)
    return notebook, time.perf_counter() - started


def output_text(notebook: nbformat.NotebookNode) -> str:
    """All stream and text/plain output of an executed notebook, concatenated."""
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "data" in output:
                parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


def notebook_clock(notebook: nbformat.NotebookNode) -> tuple[float, float] | None:
    """(wall, CPU) seconds the notebook reported for itself in its last clock line."""
    found = CLOCK_LINE.findall(output_text(notebook))
    return (float(found[-1][0]), float(found[-1][1])) if found else None


def needs_missing_module(path: Path) -> str | None:
    """The name of an optional package a notebook imports that is not installed (e.g. 'trl'), or None."""
    import importlib.util

    source = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    for module in ("trl", "transformers", "datasets", "peft"):
        if re.search(rf"^\s*(from|import)\s+{module}\b", source, flags=re.MULTILINE) and importlib.util.find_spec(module) is None:
            return module
    return None


def command_strip(paths: list[Path], check: bool) -> int:
    dirty = 0
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        problems = stripping_problems(notebook)
        if check:
            for problem in problems:
                print(f"{path.relative_to(ROOT)}: {problem}")
            dirty += bool(problems)
        elif problems:
            nbformat.write(strip_notebook(notebook), path)
            print(f"stripped {path.relative_to(ROOT)}")
    if check and dirty:
        print(f"{dirty} notebook(s) need: python scripts/notebook_tools.py strip")
    return 1 if dirty else 0


def times_table(times: dict) -> str:
    """The markdown run-time table of notebook 00, from data/course/notebook_times.json."""
    machine = times.get("machine", "")
    loads = [entry["load_before"] for modes in times["notebooks"].values() for entry in modes.values() if "load_before" in entry]
    busy = (
        f" The machine's load average when each run started ranged from {min(loads):.1f} to {max(loads):.1f} (other jobs sharing the cores slow the runs down; 2.0 means both cores busy)."
        if loads
        else ""
    )
    lines = [
        f"Measured run times on {machine} (`python scripts/notebook_tools.py time --mode both`, "
        "written to `data/course/notebook_times.json`); wall clock seconds, the notebook's own kernel CPU seconds in brackets." + busy,
        "",
        "| notebook | fast mode (`GRPO_LAB_FAST=1`) | teaching mode |",
        "|---|---|---|",
    ]
    for name, modes in times["notebooks"].items():
        cells = []
        for mode in ("fast", "full"):
            entry = modes.get(mode)
            if entry is None:
                cells.append("not measured")
            elif "skipped" in entry:
                cells.append(entry["skipped"])
            else:
                cpu = f" ({entry['cpu_s']:.0f} s CPU)" if entry.get("cpu_s") is not None else ""
                cells.append(f"{entry['wall_s']:.0f} s{cpu}")
        lines.append(f"| `{name}` | {cells[0]} | {cells[1]} |")
    totals = [sum(m[mode]["wall_s"] for m in times["notebooks"].values() if "wall_s" in m.get(mode, {})) for mode in ("fast", "full")]
    lines.append(f"| **all** | {totals[0] / 60:.1f} min | {totals[1] / 60:.1f} min |")
    return "\n".join(lines)


def update_course_map(times: dict) -> None:
    path = NOTEBOOKS_DIR / "00_start_here.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cells = [cell for cell in notebook.cells if TIMES_TAG in cell.metadata.get("tags", [])]
    if len(cells) != 1:
        raise SystemExit(f"{path} needs exactly one markdown cell tagged {TIMES_TAG!r}, found {len(cells)}")
    cells[0].source = times_table(times)
    nbformat.write(strip_notebook(notebook), path)


def command_time(modes: list[str], paths: list[Path]) -> int:
    """Time ``paths`` (default: every notebook) in each mode; other notebooks keep their recorded times."""
    times = json.loads(TIMES_PATH.read_text()) if TIMES_PATH.is_file() else {"notebooks": {}}
    times["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}"
    for path in paths or course_notebooks():
        entry = times["notebooks"].setdefault(path.stem, {})
        for mode in modes:
            missing = needs_missing_module(path)
            if missing:
                entry[mode] = {"skipped": f"skipped (needs `{missing}`)"}
                print(f"{path.name} [{mode}]: skipped, {missing} is not installed", flush=True)
                continue
            load = os.getloadavg()[0]  # other jobs on the machine slow a notebook down: record how busy it was
            executed, wall = execute_notebook(path, fast=mode == "fast")
            clock = notebook_clock(executed)
            entry[mode] = {"wall_s": round(wall, 1), "cpu_s": round(clock[1], 1) if clock else None, "load_before": round(load, 1)}
            print(f"{path.name} [{mode}]: {wall:.1f} s", flush=True)
    times["notebooks"] = {name: times["notebooks"][name] for name in sorted(times["notebooks"])}
    write_atomically(TIMES_PATH, json_text(times, indent=1))
    update_course_map(times)
    print(f"wrote {TIMES_PATH.relative_to(ROOT)} and the run-time table of 00_start_here.ipynb")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/notebook_tools.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    strip_parser = commands.add_parser("strip", help="strip outputs and set the kernelspec (or --check)")
    strip_parser.add_argument("paths", nargs="*", type=Path)
    strip_parser.add_argument("--check", action="store_true", help="only report; exit 1 if a notebook is not clean")
    time_parser = commands.add_parser("time", help="run every notebook and record its run time")
    time_parser.add_argument("paths", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    time_parser.add_argument("--mode", choices=("fast", "full", "both"), default="both")
    args = parser.parse_args(argv)
    if args.command == "strip":
        return command_strip([p.resolve() for p in args.paths] or course_notebooks(), args.check)
    return command_time(["fast", "full"] if args.mode == "both" else [args.mode], [p.resolve() for p in args.paths])


if __name__ == "__main__":
    sys.exit(main())
