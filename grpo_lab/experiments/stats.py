"""Statistics over seeds: a metric's summary, whether two summaries differ beyond noise (and how large a
difference the seeds could have detected), and the summary as text (mean ± std), the one formatter
claims.md, the drill and the course notebooks share."""

from __future__ import annotations

import contextvars
import math
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

DETECTION_SE = 2.0  # a difference counts when it exceeds this many standard errors (about 5%, two-sided)
POWER_Z = 0.84  # the normal quantile of 80% power
DETECTABLE_SE = DETECTION_SE + POWER_Z  # the smallest true difference detected 80% of the time: 2.84 standard errors
# a difference within this fraction of the line it is judged against (1.5-2.5 SE where the SE sets the line) is
# "near the line": other seeds, or another CPU's float path, may well put it on the other side (data/results/README.md)
NEAR_LINE = (0.75, 1.25)


@dataclass(frozen=True)
class Comparison:
    """One ``compare`` call: difference = mean(a) - mean(b); standard_error of that difference over seeds;
    detectable = the smallest true difference the seeds detect with 80% power (DETECTABLE_SE x SE, at
    least min_effect); scale = the larger |mean| (to read the others against); direction as compare returns it;
    line = the |difference| above which it counts (DETECTION_SE x SE, at least min_effect)."""

    difference: float
    standard_error: float
    detectable: float
    scale: float
    direction: str
    line: float = 0.0

    @property
    def near_line(self) -> bool:
        """|difference| within NEAR_LINE of the line: a verdict that rests on it could go the other way."""
        low, high = NEAR_LINE
        return self.line > 0 and low <= abs(self.difference) / self.line <= high


_recorded: contextvars.ContextVar[list[Comparison] | None] = contextvars.ContextVar("recorded_comparisons", default=None)
_flipped: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("flipped_comparisons", default=frozenset())


@contextmanager
def recording_comparisons() -> Iterator[list[Comparison]]:
    """Collect every ``compare`` made inside the block (how claims.py gives each verdict its power)."""
    comparisons: list[Comparison] = []
    token = _recorded.set(comparisons)
    try:
        yield comparisons
    finally:
        _recorded.reset(token)


@contextmanager
def flipping(indices: frozenset[int]) -> Iterator[None]:
    """Inside ``recording_comparisons``, the compare calls with these indices (0: the block's first) answer
    as if their difference fell on the line's other side: 'same' becomes its sign's direction, a direction
    'same'. How claims.py asks whether a verdict hangs on a comparison near the line."""
    token = _flipped.set(indices)
    try:
        yield
    finally:
        _flipped.reset(token)


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


def standard_error_of_difference(a: dict, b: dict) -> float:
    """The standard error over seeds of mean(a) - mean(b) (independent seeds: the variances add)."""
    return math.sqrt((a["std"] ** 2 / max(a["n"], 1)) + (b["std"] ** 2 / max(b["n"], 1)))


def compare(a: dict, b: dict, min_effect: float = 0.0) -> str:
    """'higher', 'lower' or 'same': summary a against summary b, 'same' unless the difference of the
    means exceeds DETECTION_SE standard errors over seeds and ``min_effect``. Inside
    ``recording_comparisons`` each call is also recorded with its power."""
    if a["mean"] is None or b["mean"] is None:
        return "same"
    difference = a["mean"] - b["mean"]
    error = standard_error_of_difference(a, b)
    line = max(DETECTION_SE * error, min_effect)
    direction = "same" if abs(difference) <= line else "higher" if difference > 0 else "lower"
    recorded = _recorded.get()
    if recorded is not None and len(recorded) in _flipped.get():
        direction = ("higher" if difference > 0 else "lower") if direction == "same" else "same"
    if recorded is not None:
        detectable = max(DETECTABLE_SE * error, min_effect)
        recorded.append(Comparison(difference, error, detectable, max(abs(a["mean"]), abs(b["mean"])), direction, line))
    return direction


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
