"""The classroom page's notebook: the lab notebook without its cells tagged ``voila-skip`` (the
prediction checks, which train seven runs, and the notebook's clock), so that nothing trains in the
page that the class did not ask for.

    python grpo_lab/lab/voila_page/classroom_page.py notebooks/03_interactive_lab.ipynb build/classroom/03_interactive_lab.ipynb

`make voila` serves that file, with kernels warmed in advance (warm/voila.py); the JupyterHub route
leaves the same cells out as each page opens (voila.py's prelaunch hook). Run as a script or loaded
by path, never imported as part of grpo_lab: the Jupyter server loads it, and grpo_lab imports torch.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

VOILA_SKIP_TAG = "voila-skip"


def without_voila_skip_cells(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook with its cells tagged ``voila-skip`` left out (changed in place, and returned)."""
    notebook.cells = [cell for cell in notebook.cells if VOILA_SKIP_TAG not in cell.get("metadata", {}).get("tags", [])]
    return notebook


def write_classroom_notebook(source: Path, target: Path) -> Path:
    """Write ``source`` without its voila-skip cells to ``target`` (folders made as needed)."""
    notebook = without_voila_skip_cells(nbformat.read(source, as_version=4))
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    return target


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python grpo_lab/lab/voila_page/classroom_page.py LAB_NOTEBOOK CLASSROOM_NOTEBOOK", file=sys.stderr)
        return 2
    source, target = map(Path, argv)
    if not source.is_file():
        print(f"no notebook at {source}: give the lab notebook (notebooks/03_interactive_lab.ipynb)", file=sys.stderr)
        return 2
    print(f"classroom page: {write_classroom_notebook(source, target)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
