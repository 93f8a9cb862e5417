"""Statistics over seeds: a metric's summary, and whether two summaries differ beyond noise."""

from __future__ import annotations

import math
import statistics


def summarize(per_seed: list[dict]) -> dict:
    """{metric: {"mean", "std", "n"}} over the seeds that have a finite value of it.
    per_seed: [{"metrics": {name: value}}, ...]; std with Bessel's correction (0 for one seed)."""
    names = sorted({name for entry in per_seed for name in entry["metrics"]})
    summary = {}
    for name in names:
        values = [entry["metrics"].get(name) for entry in per_seed]
        values = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
        summary[name] = {
            "mean": statistics.fmean(values) if values else None,
            "std": statistics.stdev(values) if len(values) > 1 else (0.0 if values else None),
            "n": len(values),
        }
    return summary


def compare(a: dict, b: dict, min_effect: float = 0.0) -> str:
    """'higher', 'lower' or 'same': summary a against summary b, 'same' unless the difference of the
    means exceeds twice its standard error over seeds and ``min_effect``."""
    if a["mean"] is None or b["mean"] is None:
        return "same"
    difference = a["mean"] - b["mean"]
    error = math.sqrt((a["std"] ** 2 / max(a["n"], 1)) + (b["std"] ** 2 / max(b["n"], 1)))
    if abs(difference) <= max(2 * error, min_effect):
        return "same"
    return "higher" if difference > 0 else "lower"
