"""Experiments: every claim of the interview card, measured over seeds (issue 4).

``python -m grpo_lab sweep NAME [--seeds N] [--fast] [--regime R]`` runs one of ``EXPERIMENTS`` in worker
processes and writes data/results/NAME.json and NAME.png (regimes/R/ for a regime of ``REGIMES`` other
than the gentle one); ``sweep claims`` rebuilds claims.md, a verdict column per regime with results.

    from grpo_lab.experiments import run_experiment, load_result, experiment_figure
    result = load_result("group-size")              # the cached full run
    fast = run_experiment("group-size", fast=True)  # or re-run it, small
    experiment_figure("group-size", result)

catalog.py: what each experiment varies; measures.py: what one (cell, seed) measures;
runner.py: processes and files; stats.py: summaries over seeds, Welch's t, the rank test, power and false-discovery
control; figures.py: one figure per experiment; findings.py: what a rule returns; rules/: the rules, one module per theme;
claims.py: the card's claims, which rule tests each, and the judging of the whole table; claims_report.py: claims.md,
written from those verdicts.
"""

from .catalog import EXPERIMENTS, REGIMES, TARGET_ACCURACY, Experiment, Regime
from .claims import CLAIMS, verdict_table
from .claims_report import claims_markdown, write_claims
from .figures import experiment_figure
from .runner import (
    RESULTS_DIR,
    UnreadableResultError,
    check_result,
    load_result,
    result_path,
    run_cell,
    run_experiment,
    write_result,
)
from .stats import compare, summarize

__all__ = [
    "CLAIMS",
    "EXPERIMENTS",
    "REGIMES",
    "RESULTS_DIR",
    "TARGET_ACCURACY",
    "Experiment",
    "Regime",
    "UnreadableResultError",
    "check_result",
    "claims_markdown",
    "compare",
    "experiment_figure",
    "load_result",
    "result_path",
    "run_cell",
    "run_experiment",
    "summarize",
    "verdict_table",
    "write_claims",
    "write_result",
]
