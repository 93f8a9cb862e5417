"""Headline results as live runs: a few short training runs the learner starts, the curves, and one
line that reads the result from the runs' own numbers (one seed), before the cached multi-seed sweep
is offered as the full measurement.

``live_comparison({"label": {TrainConfig overrides}, ...}, steps)`` trains each run on seed 0, prints
each run's start, late and final held-out accuracy (or why it stopped), then one verdict line
comparing the first run with each of the others, and returns the (label, history) pairs that
``plots.run_figure`` draws.
"""

from __future__ import annotations

import statistics

from ..core.config import TrainConfig
from ..experiments.measures import LATE_FRACTION  # "late" means what it means in the sweeps
from ..trainer import train

SAME_WITHIN = 0.02  # late accuracies closer than this read "about the same": one seed cannot resolve less


def late_accuracy(history: list[dict]) -> float | None:
    """Mean held-out accuracy over the evaluations in the last LATE_FRACTION of a run's steps, or None."""
    evals = [record for record in history if "eval_accuracy" in record and record["step"] > 0]
    if not evals:
        return None
    last_step = history[-1]["step"]
    late = [record["eval_accuracy"] for record in evals if record["step"] >= (1 - LATE_FRACTION) * last_step]
    return statistics.fmean(late or [evals[-1]["eval_accuracy"]])


def comparison_line(first: str, first_late: float | None, other: str, other_late: float | None) -> str:
    """'this run: zscore ends 0.041 above mean (late accuracy, one seed)': the verdict of one comparison."""
    if first_late is None or other_late is None:
        stopped = first if first_late is None else other
        return f"this run: {stopped} stopped (see its line above), so the two cannot be compared on accuracy"
    gap = first_late - other_late
    if round(abs(gap), 3) < SAME_WITHIN:
        return (
            f"this run: {first} and {other} end about the same (late accuracy {first_late:.3f} vs {other_late:.3f}, within {SAME_WITHIN}; one seed)"
        )
    return f"this run: {first} ends {abs(gap):.3f} {'above' if gap > 0 else 'below'} {other} (late accuracy {first_late:.3f} vs {other_late:.3f}; one seed)"


def live_comparison(runs: dict[str, dict], steps: int, seed: int = 0, base: TrainConfig | None = None) -> list[tuple[str, list[dict]]]:
    """Train every run of ``runs`` ({label: TrainConfig overrides}) for ``steps`` steps on ``seed``,
    print what each did and the first run against each other run, and return [(label, history)]."""
    if len(runs) < 2:
        raise ValueError(f"runs has {len(runs)} run(s): a comparison needs at least 2")
    base = base or TrainConfig()
    finished: list[tuple[str, list[dict]]] = []
    lates: dict[str, float | None] = {}
    for label, overrides in runs.items():
        result = train(TrainConfig.from_dict({**base.to_dict(), "steps": steps, "seed": seed, **overrides}))
        accuracy = [record["eval_accuracy"] for record in result.history if "eval_accuracy" in record]
        lates[label] = late_accuracy(result.history) if result.status == "finished" else None
        if result.status == "finished":
            print(f"{label:28} held-out accuracy: start {accuracy[0]:.3f}, late {lates[label]:.3f}, last {accuracy[-1]:.3f}")
        else:
            print(f"{label:28} {result.status}: {result.message}")
        finished.append((label, result.history))
    first = next(iter(runs))
    for other in list(runs)[1:]:
        print(comparison_line(first, lates[first], other, lates[other]))
    return finished
