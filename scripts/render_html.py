"""``make html``: execute every course notebook and write a readable HTML copy to build/html/.

    python scripts/render_html.py [NOTEBOOK ...] [--fast] [--solutions]

Teaching mode by default (the sizes the prose talks about); ``--fast`` (or GRPO_LAB_FAST=1) for
a quick render. ``--solutions`` fills the exercise cells with their worked solutions. The
committed notebooks stay stripped; only the copies in build/html/ carry outputs. Widgets are
saved with their state, but they need a running kernel to respond.

The equations are typeset offline: MathJax 2, as shipped by the jupyter-server-mathjax package (the
dev extra), is copied to build/html/mathjax/ and the pages load it from there, not from a CDN.
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
import sys
from pathlib import Path

from nbconvert import HTMLExporter
from notebook_tools import ROOT, course_notebooks, execute_notebook, needs_missing_module

OUT_DIR = ROOT / "build" / "html"
MATHJAX_DIR = OUT_DIR / "mathjax"
# The classic notebook's settings for this MathJax copy: it ships the STIX-Web web fonts only, so MathJax
# must neither look for TeX fonts nor fall back to image fonts (neither is in the copy).
MATHJAX_OFFLINE_CONFIG = """MathJax.Hub.Config({"HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null}});
MathJax.Ajax.loadComplete("[MathJax]/config/local/offline.js");
"""


def offline_mathjax() -> str:
    """Copy MathJax next to the HTML pages (once) and return the URL the pages load it from, relative to them."""
    import jupyter_server_mathjax

    if not (MATHJAX_DIR / "MathJax.js").is_file():
        shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", MATHJAX_DIR, dirs_exist_ok=True)
    config = MATHJAX_DIR / "config" / "local" / "offline.js"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(MATHJAX_OFFLINE_CONFIG, encoding="utf-8")
    return f"{MATHJAX_DIR.name}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe,local/offline"


def render(path: Path, fast: bool, solutions: bool, mathjax_url: str) -> str:
    """Execute one notebook and write its HTML; returns a one-line status."""
    missing = needs_missing_module(path)
    if missing:
        return f"skipped: it needs `{missing}` (pip install -e '.[trl]')"
    executed, seconds = execute_notebook(path, fast=fast, solutions=solutions, store_widget_state=True)
    body, _ = HTMLExporter(template_name="lab", mathjax_url=mathjax_url).from_notebook_node(executed)
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
    index.write_text(
        f"<!doctype html><meta charset='utf-8'><title>grpo-lab course</title><h1>grpo-lab: the course</h1>"
        f"<p>Executed copies of the notebooks ({html.escape(mode)}).</p><ul>{items}</ul>\n",
        encoding="utf-8",
    )
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/render_html.py", description="Execute the notebooks into build/html/.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    parser.add_argument("--fast", action="store_true", help="fast mode (also set by GRPO_LAB_FAST=1)")
    parser.add_argument("--solutions", action="store_true", help="fill the exercise cells with the worked solutions")
    args = parser.parse_args(argv)
    fast = args.fast or os.environ.get("GRPO_LAB_FAST") == "1"
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    mathjax_url = offline_mathjax()
    statuses = {}
    for path in [p.resolve() for p in args.notebooks] or course_notebooks():
        statuses[path.stem] = render(path, fast, args.solutions, mathjax_url)
        print(f"{path.name}: {statuses[path.stem]}", flush=True)
    index = write_index(statuses, "fast mode" if fast else "teaching mode")
    print(f"open {index.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
