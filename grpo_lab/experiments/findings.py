"""What a claim's rule returns, and the words and numbers it is built from.

A rule (grpo_lab/experiments/rules/) reads result files and returns a ``Finding``: the numbers it quotes,
the comparisons that decide its verdict (``deciding``, each made once, in a fixed order), the comparisons
it only quotes in words (``auxiliary``: never deciding, never in the power check), and ``judge``, a pure
function from the deciding comparisons' directions to (verdict, plain words). claims.py judges every
finding of the table at one false-discovery level and asks ``judge`` again with one direction flipped to
see whether a verdict hangs on a comparison near its line: no rule is ever re-run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .catalog import result_cell
from .stats import Comparison, compare, format_mean_std

HOLDS, PARTLY, FAILS, UNTESTED = "holds here", "partly", "does not hold here", "not tested"
NOT_DETECTED = "not detected"  # FAILS without the power to see the claimed effect (claims.py)
VERDICTS = (HOLDS, PARTLY, FAILS, NOT_DETECTED, UNTESTED)
CLAIMED_RELATIVE_EFFECT = 0.05  # a claim with no size of its own claims at least 5% of the compared means
ACC = "late_eval_accuracy"  # mean held-out accuracy over the last 20% of the steps
SMALL_EFFECT = 0.01  # accuracy differences below one point are treated as no difference

# metrics where a seed may never get a value (it never reached the target): the per-seed total that bounds it
CENSORED_BY = {"samples_to_target": "samples", "steps_to_target": "steps_completed", "time_to_target_s": "wall_time_s"}

# the unit a difference of a metric is read in: (words, factor from the stored value); first matching prefix
METRIC_UNITS = (
    ("samples_to_target", ("responses", 1.0)),
    ("steps_to_target", ("steps", 1.0)),
    ("time_to_target_s", ("s", 1.0)),
    ("time_per_step_s", ("s per step", 1.0)),
    ("eval_max_drawdown", ("accuracy points", 100.0)),
    ("frac_", ("percentage points", 100.0)),
    ("probe_no_signal_share", ("percentage points", 100.0)),
    ("net_snr", ("SNR", 1.0)),
    ("weight_vs_middle", ("x a balanced group's weight", 1.0)),
    ("cos_step", ("cosine", 1.0)),
    ("reward_step_noise", ("reward", 1.0)),
    ("group_ev", ("explained variance", 1.0)),
    ("oracle_ev", ("explained variance", 1.0)),
    ("critic_ev", ("explained variance", 1.0)),
    ("eval_accuracy_auc", ("accuracy points", 100.0)),
    ("", ("accuracy points", 100.0)),  # late, hard-problem and final accuracies
)


def metric_unit(metric: str) -> tuple[str, float]:
    """(the unit a difference of ``metric`` is read in, the factor from the stored value): ('accuracy points', 100.0)."""
    return next(unit for prefix, unit in METRIC_UNITS if metric.startswith(prefix))


def in_units(metric: str, value: float) -> str:
    """A difference of ``metric`` in its unit: '1.1 accuracy points', '372 responses', '0.031 SNR'."""
    words, factor = metric_unit(metric)
    return f"{number_text(value * factor)} {words}"


def number_text(value: float) -> str:
    """Two significant digits below 10, whole numbers above: '1.1', '0.031', '372'."""
    return f"{value:.2g}" if abs(value) < 10 else f"{value:.0f}"


@dataclass(frozen=True)
class Finding:
    """A rule's answer. evidence: the numbers, in markdown; deciding: the comparisons whose directions decide
    the verdict; judge(*directions) -> (verdict, explanation) for those directions, in ``deciding``'s order;
    auxiliary: comparisons quoted in the explanation only."""

    evidence: str
    judge: Callable[..., tuple[str, str]]
    deciding: tuple[Comparison, ...] = ()
    auxiliary: tuple[Comparison, ...] = ()


def untested(evidence: str, reason: str = "") -> Finding:
    """A finding that cannot be judged: 'not tested', saying why."""
    return Finding(evidence, lambda: (UNTESTED, reason))


def cell_summary(results: dict, name: str, cell_id: str, metric: str) -> dict:
    """{mean, std, n, values} of one metric of one cell: values per seed (None where a seed has none); a metric that
    some seeds may never reach (CENSORED_BY) also carries "budget", the largest per-seed total that bounds it, so that
    ``compare`` counts the seeds that never reached it. An id the catalog lacks raises catalog.UnknownCellError; a
    catalog cell the result lacks, KeyError (catalog.result_cell)."""
    cell = result_cell(results[name], cell_id)
    summary = dict(cell["summary"].get(metric) or {"mean": None, "std": None, "n": 0})
    summary["values"] = [entry["metrics"].get(metric) for entry in cell["per_seed"]]
    if metric in CENSORED_BY:
        totals = [entry["metrics"].get(CENSORED_BY[metric]) for entry in cell["per_seed"]]
        summary["budget"] = max((t for t in totals if t is not None), default=0.0)
    return summary


def fmt(summary: dict, digits: int = 3, *, percent: bool = False) -> str:
    """A summary as claims.md quotes it, '0.752 ± 0.012 (n=5)', with the seeds that never reached a target named:
    '1536 ± 200 (n=3; 2 of 5 seeds never reached it)'."""
    text = format_mean_std(summary, digits, percent=percent)
    values = summary.get("values")
    if "budget" in summary and values and None in values:
        text = text[:-1] + f"; {values.count(None)} of {len(values)} seeds never reached it)"
    return text


def versus(a: dict, b: dict, label: str, metric: str, min_effect: float = 0.0) -> Comparison:
    """``stats.compare`` with the label and metric a Power line names."""
    return compare(a, b, min_effect, label=label, metric=metric)


def worded(direction: str, higher: str = "higher", lower: str = "lower", same: str = "within noise of") -> str:
    return {"higher": higher, "lower": lower, "same": same}[direction]
