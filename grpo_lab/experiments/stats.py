"""Statistics over seeds: a metric's summary, whether two summaries differ beyond noise, and the
summary as text (mean ± std), the one formatter claims.md, the drill and the course notebooks share."""

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


def format_mean_std(summary: dict, digits: int = 3, *, percent: bool = False, prose: bool = False) -> str:
    """A metric's summary over seeds ({"mean", "std", "n"}, as ``summarize`` gives it) as 'mean ± std'.

    By default the form of claims.md and the drill: '0.752 ± 0.012 (n=5)', ``digits`` significant
    digits for the mean and one fewer for the std; counts (|mean| >= 100) as whole numbers,
    '1536 ± 0 (n=3)'; 'n/a (no seed)' when no seed has a value.
    prose: the form the course's notebooks print: '0.734 ± 0.012 (5 seeds)', ``digits`` decimals for
    both; one seed as '0.734 (1 seed)'; 'n/a' when no seed has a value.
    percent (either form): a fraction in percent with one decimal, '75.2% ± 1.2 (n=5)'."""
    mean, std, n = summary.get("mean"), summary.get("std"), summary.get("n", 0)
    if mean is None:
        return "n/a" if prose else "n/a (no seed)"
    if percent:
        mean_text, std_text = f"{100 * mean:.1f}%", f"{100 * std:.1f}"
    elif prose:
        mean_text, std_text = f"{mean:.{digits}f}", f"{std:.{digits}f}"
    elif abs(mean) >= 100:  # counts of responses or steps
        mean_text, std_text = f"{mean:.0f}", f"{std:.0f}"
    else:
        mean_text, std_text = f"{mean:.{digits}g}", f"{std:.{max(digits - 1, 1)}g}"
    if prose:
        return f"{mean_text} ± {std_text} ({n} seeds)" if n > 1 else f"{mean_text} (1 seed)"
    return f"{mean_text} ± {std_text} (n={n})"
