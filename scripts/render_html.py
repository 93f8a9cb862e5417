"""``make html``: execute every course notebook and write a readable HTML copy to build/html/.

    python scripts/render_html.py [NOTEBOOK ...] [--fast] [--solutions]

Teaching mode by default (the sizes the prose talks about); ``--fast`` (or GRPO_LAB_FAST=1) for
a quick render. ``--solutions`` fills the exercise cells with their worked solutions. The
committed notebooks stay stripped; only the copies in build/html/ carry outputs. Widgets are
saved with their state, but they need a running kernel to respond.
"""

from __future__ import annotations

import argparse
import html
import os
import sys
from pathlib import Path

from nbconvert import HTMLExporter
from notebook_tools import ROOT, course_notebooks, execute_notebook, needs_missing_module

OUT_DIR = ROOT / "build" / "html"


def render(path: Path, fast: bool, solutions: bool) -> str:
    """Execute one notebook and write its HTML; returns a one-line status."""
    missing = needs_missing_module(path)
    if missing:
        return f"skipped: it needs `{missing}` (pip install -e '.[trl]')"
    executed, seconds = execute_notebook(path, fast=fast, solutions=solutions, store_widget_state=True)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(executed)
    target = OUT_DIR / f"{path.stem}.html"
    target.write_text(body, encoding="utf-8")
    return f"executed in {seconds:.0f} s"


def write_index(statuses: dict[str, str], mode: str) -> Path:
    """An index of every course notebook: this run's status, or whether an earlier render exists."""
    items = []
    for stem in (path.stem for path in course_notebooks()):
        page = OUT_DIR / f"{stem}.html"
        status = statuses.get(stem, "rendered earlier" if page.is_file() else "not rendered yet")
        name = f'<a href="{html.escape(page.name)}">{html.escape(stem)}</a>' if page.is_file() else html.escape(stem)
        items.append(f"<li>{name} ({html.escape(status)})</li>")
    items = "".join(items)
    index = OUT_DIR / "index.html"
    index.write_text(f"<!doctype html><meta charset='utf-8'><title>grpo-lab course</title><h1>grpo-lab: the course</h1>"
                     f"<p>Executed copies of the notebooks ({html.escape(mode)}).</p><ul>{items}</ul>\n", encoding="utf-8")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/render_html.py", description="Execute the notebooks into build/html/.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    parser.add_argument("--fast", action="store_true", help="fast mode (also set by GRPO_LAB_FAST=1)")
    parser.add_argument("--solutions", action="store_true", help="fill the exercise cells with the worked solutions")
    args = parser.parse_args(argv)
    fast = args.fast or os.environ.get("GRPO_LAB_FAST") == "1"
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    statuses = {}
    for path in [p.resolve() for p in args.notebooks] or course_notebooks():
        statuses[path.stem] = render(path, fast, args.solutions)
        print(f"{path.name}: {statuses[path.stem]}", flush=True)
    index = write_index(statuses, "fast mode" if fast else "teaching mode")
    print(f"open {index.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
