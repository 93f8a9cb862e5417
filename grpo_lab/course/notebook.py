"""Small helpers every course notebook uses: fast mode, the notebook clock, cached results.

Fast mode (``GRPO_LAB_FAST=1``) shrinks steps and seeds so that each notebook runs in about a
minute on two CPU cores (CI runs the notebooks this way); without it a notebook runs in teaching
mode, with the sizes its prose talks about.
"""

from __future__ import annotations

import os
import platform
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import torch
from matplotlib.figure import Figure

from ..checks.files import write_atomically
from ..experiments.catalog import cell_label, result_cell
from ..plots import figure_png

FAST_ENV = "GRPO_LAB_FAST"
RESULTS_DIR_ENV = "GRPO_LAB_RESULTS_DIR"  # when set, cached experiment results are read from this folder
FIGURE_DIR_ENV = "GRPO_LAB_FIGURE_DIR"  # when set, show() also saves every figure there (a PNG and the pickled Figure)
THREADS_ENV = "GRPO_LAB_THREADS"  # torch threads in the notebooks (default 1, see start_notebook)
T = TypeVar("T")


def fast_mode() -> bool:
    """True when the environment variable GRPO_LAB_FAST is "1"."""
    return os.environ.get(FAST_ENV) == "1"


def pick(full: T, fast: T) -> T:
    """``full`` in teaching mode, ``fast`` in fast mode: ``steps = pick(150, 40)``."""
    return fast if fast_mode() else full


def machine_summary() -> str:
    """One line naming the CPU, the number of torch threads and the torch version."""
    device = "CUDA" if torch.cuda.is_available() else "CPU"
    return f"{device} ({platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} using {torch.get_num_threads()} threads)"


@dataclass
class NotebookClock:
    """Measures a notebook's run time: wall clock and the CPU time of this process (the kernel)."""

    name: str
    wall_start: float = field(default_factory=time.perf_counter)
    cpu_start: float = field(default_factory=time.process_time)

    def elapsed(self) -> tuple[float, float]:
        """(wall seconds, CPU seconds) since the notebook started."""
        return time.perf_counter() - self.wall_start, time.process_time() - self.cpu_start

    def report(self, note: str = "") -> None:
        """Print the notebook's run time (the last cell of every notebook calls this); ``note`` is
        added to the line, e.g. that work started by a cell goes on in the background."""
        wall, cpu = self.elapsed()
        mode = "fast mode" if fast_mode() else "teaching mode"
        print(f"{self.name} ran in {wall:.1f} s wall clock ({cpu:.1f} s CPU) in {mode} on {machine_summary()}." + (f" {note}" if note else ""))


def start_notebook(name: str, seed: int = 0) -> NotebookClock:
    """Print the mode and the machine, seed torch, set its thread count, and start the clock.

    One torch thread unless GRPO_LAB_THREADS says otherwise: on a model this small a second
    intra-op thread gains little, and when anything else is using a core (a browser, another
    kernel, CI) the threads wait on each other and a training step gets several times slower.
    """
    torch.manual_seed(seed)
    threads = os.environ.get(THREADS_ENV, "1")
    if not threads.isdigit() or int(threads) < 1:
        raise ValueError(f"{THREADS_ENV}={threads!r} is not valid: it must be a whole number of threads, 1 or more")
    torch.set_num_threads(int(threads))
    mode = f"fast mode ({FAST_ENV}=1): fewer steps and seeds" if fast_mode() else f"teaching mode (set {FAST_ENV}=1 for a quick check run)"
    print(f"{name}: {mode}; {machine_summary()}")
    return NotebookClock(name)


def show(figure: Figure, name: str = "") -> None:
    """Display a matplotlib Figure in the notebook (as a PNG, so it also survives nbconvert);
    with GRPO_LAB_FIGURE_DIR set, also save it there as NAME.png, and the Figure itself as NAME.figure.pickle (the
    figure check, tests/test_figures.py, reads those of the figures drawn in the notebooks' own cells)."""
    import pickle

    from IPython.display import Image, display

    png = figure_png(figure, dpi=100)
    display(Image(png))
    folder = os.environ.get(FIGURE_DIR_ENV)
    if folder and name:
        write_atomically(Path(folder) / f"{name}.png", png)
        write_atomically(Path(folder) / f"{name}.figure.pickle", pickle.dumps(figure))


def load_or_run(name: str, rerun: bool = False, seeds: int | None = None, regime: str = "gentle") -> dict:
    """The cached result of experiment ``name`` (data/results/NAME.json, or NAME.json in the folder
    named by GRPO_LAB_RESULTS_DIR, e.g. your own sweeps; regimes/REGIME/ for a ``regime`` other than
    the gentle one), or a fresh run of it when ``rerun`` is True (in fast mode the fresh run is the
    experiment's fast slice; ``seeds``: how many)."""
    from ..experiments import load_result, run_experiment

    if rerun:
        return run_experiment(name, seeds=seeds, fast=fast_mode(), progress=True, regime=regime)
    return load_result(name, directory=os.environ.get(RESULTS_DIR_ENV) or None, regime=regime)


def mean_std_seeds(result: dict, cell_id: str, metric: str) -> tuple[float | None, float | None, int]:
    """(mean, std over seeds, number of seeds) of one metric of the cell ``cell_id`` (its catalog id: "g2",
    "zscore-offset5"; an id the catalog lacks raises catalog.UnknownCellError, listing the ids there are)."""
    entry = result_cell(result, cell_id)["summary"].get(metric, {})
    return entry.get("mean"), entry.get("std"), entry.get("n", 0)


def mean_std_text(result: dict, cell_id: str, metric: str, digits: int = 3) -> str:
    """'0.734 ± 0.012 (5 seeds)': a metric of the cell ``cell_id`` as the course quotes it, mean ± std over seeds ('n/a' when absent);
    a count (a mean of 100 or more: responses, steps) in whole numbers, '9099 ± 3967 (8 seeds)'."""
    from ..experiments.stats import format_mean_std

    summary = result_cell(result, cell_id)["summary"].get(metric, {})
    mean, std = summary.get("mean"), summary.get("std") or 0.0
    whole = isinstance(mean, (int, float)) and (abs(mean) >= 100 or (float(mean).is_integer() and std == 0))  # 32 ± 0 responses
    return format_mean_std(summary, 0 if whole else digits, prose=True)


def describe_result(result: dict) -> None:
    """Print where a result comes from: its file, the command that makes it, seeds and date."""
    mode = "fast slice" if result.get("fast") else "full run"
    print(
        f"{result['name']} ({mode}): {result.get('question', '')}\n"
        f"  made by: {result.get('command')}  on {result.get('created', '?')[:10]}, {result.get('wall_time_s', 0) / 60:.1f} min"
    )


TABLE_CHARACTERS = 110  # what a notebook's output shows at about 900 px without scrolling sideways
TABLE_LABEL_CHARACTERS = 44  # longer cell labels wrap onto further lines


def print_table(result: dict, metrics: list[str], cell_ids: list[str] | None = None, digits: int = 3) -> None:
    """One row per cell (``cell_ids``, default every cell of the result), shown by its label, one column per
    metric, mean ± std over seeds; within TABLE_CHARACTERS: long labels wrap, and metrics that do not fit
    beside each other go to a further table below."""
    cell_ids = cell_ids or [cell["id"] for cell in result["cells"]]
    labels = [cell_label(result["name"], cell_id) for cell_id in cell_ids]
    values = {label: [mean_std_text(result, cell_id, metric, digits) for metric in metrics] for cell_id, label in zip(cell_ids, labels)}
    label_width = min(max(len(label) for label in labels), TABLE_LABEL_CHARACTERS)
    widths = [max(len(metric), *(len(values[label][index]) for label in labels)) for index, metric in enumerate(metrics)]
    blocks, block = [], []
    for index in range(len(metrics)):  # as many metrics a table as fit beside the labels
        if block and label_width + sum(widths[i] + 2 for i in [*block, index]) > TABLE_CHARACTERS:
            blocks.append(block)
            block = []
        block.append(index)
    blocks.append(block)
    for number, block in enumerate(blocks):
        if number:
            print()
        print(f"{'':{label_width}}  " + "  ".join(f"{metrics[i]:>{widths[i]}}" for i in block))
        for label in labels:
            lines = textwrap.wrap(label, label_width) or [""]
            print(f"{lines[0]:{label_width}}  " + "  ".join(f"{values[label][i]:>{widths[i]}}" for i in block))
            for line in lines[1:]:
                print(f"  {line}")
