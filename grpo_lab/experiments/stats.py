"""Statistics over seeds: a metric's summary, the comparison of two cells (Welch's t, or a rank test where
some seeds never reached a target), the difference the seeds could detect, false-discovery control over a
table of comparisons, the seeds a comparison needs, and the summary as text (mean ± std).

Everything here is a pure function of the numbers it is given: a comparison is a value (``Comparison``),
judged at a significance level that the caller passes (the claims table passes the Benjamini-Hochberg
level of the whole table, ``bh_level``), never a setting held elsewhere.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass

ALPHA = 0.05  # two-sided significance level; also the false discovery rate over the claims table
POWER = 0.8  # "could detect": the smallest true difference found with this probability
# a difference within this fraction of the line it is judged against is "near the line": other seeds, or
# another CPU's float path, may well put it on the other side (data/results/README.md)
NEAR_LINE = (0.75, 1.25)
EXACT_RANK_TEST_LIMIT = 200_000  # splits of the pooled seeds enumerated exactly; beyond this, the normal approximation


# --- Student's t distribution (no scipy: the regularised incomplete beta by its continued fraction) -------


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by the continued fraction of Numerical Recipes §6.4
    (modified Lentz), using the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where it converges faster."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _incomplete_beta(1.0 - x, b, a)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * fraction / a


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (df may be fractional, as Welch's is)."""
    if math.isinf(df):
        return 0.5 * math.erfc(t / math.sqrt(2.0))
    tail = 0.5 * _incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
    return tail if t >= 0 else 1.0 - tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p, by bisection on ``t_sf`` (p in (0, 1))."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p={p!r} must lie strictly between 0 and 1")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_sf(high, df) > 1.0 - p:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if t_sf(middle, df) > 1.0 - p else (low, middle)
        if high - low < 1e-12 * max(1.0, high):
            break
    return 0.5 * (low + high)


# --- one comparison -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Cell a against cell b on one metric: difference = mean(a) - mean(b), its standard error over seeds and
    Welch's degrees of freedom; p_value two-sided, from Welch's t (test "welch") or from an exact rank test
    (test "rank", where seeds that never reached a target rank last: ``censored_values``); min_effect: a
    difference no larger than this never counts (a size the rule names); scale: the larger |mean|.
    reached: (seeds of a that reached the target, of b) where the metric is a time to a target, else None.
    n: seeds per cell compared (two for a and b; one per cell of a ``contrast``).
    identical: a and b have the same value seed by seed, and the seeds differ among themselves: the two cells compute
    the same thing (an invariance that holds by construction, such as a reward offset under a subtracted group mean),
    so there is no sampling error to test; claims.py leaves it out of the false discovery control."""

    label: str
    metric: str
    difference: float
    standard_error: float
    df: float
    p_value: float
    n: tuple[int, ...]
    min_effect: float = 0.0
    scale: float = 0.0
    test: str = "welch"
    reached: tuple[int, int] | None = None
    identical: bool = False

    def critical_t(self, level: float = ALPHA) -> float:
        """The t a difference must exceed at this two-sided level (infinite without degrees of freedom)."""
        return t_quantile(1.0 - level / 2.0, self.df) if self.df > 0 else math.inf

    def line(self, level: float = ALPHA) -> float:
        """The |difference| above which it counts at this level: the critical t times SE, at least min_effect."""
        return max(self.critical_t(level) * self.standard_error, self.min_effect)

    def direction(self, level: float = ALPHA) -> str:
        """'higher', 'lower' or 'same': a's mean against b's, 'same' unless p <= level and |difference| > min_effect."""
        if not math.isfinite(self.difference) or self.p_value > level or abs(self.difference) <= self.min_effect:
            return "same"
        return "higher" if self.difference > 0 else "lower"

    def detectable(self, level: float = ALPHA) -> float:
        """The smallest true difference these seeds detect with probability POWER at this level:
        (t_{1-level/2} + t_{POWER}) x SE with Welch's df (at least min_effect); infinite without df."""
        if self.df <= 0 or not math.isfinite(self.standard_error):
            return math.inf
        return max((self.critical_t(level) + t_quantile(POWER, self.df)) * self.standard_error, self.min_effect)

    def near_line(self, level: float = ALPHA) -> bool:
        """|difference| within NEAR_LINE of its line: a verdict resting on it could go the other way."""
        line = self.line(level)
        low, high = NEAR_LINE
        return 0 < line < math.inf and math.isfinite(self.difference) and low <= abs(self.difference) / line <= high


def welch(a: dict, b: dict) -> tuple[float, float, float]:
    """(standard error of mean(a) - mean(b), Welch-Satterthwaite degrees of freedom, two-sided p) from two
    summaries {mean, std, n}: ``welch_contrast`` with coefficients (1, -1)."""
    return welch_contrast([a, b], [1.0, -1.0])


def welch_contrast(summaries: list[dict], coefficients: list[float]) -> tuple[float, float, float]:
    """(standard error, degrees of freedom, two-sided p) of the contrast sum_i c_i mean_i of several cells: standard
    error sqrt(sum_i v_i) with v_i = c_i² std_i² / n_i, Welch-Satterthwaite df (sum_i v_i)² / sum_i v_i² / (n_i - 1),
    p from Student's t. A cell with fewer than 2 seeds (or no mean): no df (0), an infinite standard error and p = 1.
    Every std 0: df = sum_i (n_i - 1), p = 0 for a non-zero contrast and 1 for none."""
    cells = [(s, c) for s, c in zip(summaries, coefficients) if c != 0]
    if any(s["mean"] is None or s["n"] < 2 for s, _ in cells):
        return math.inf, 0.0, 1.0
    value = sum(c * s["mean"] for s, c in cells)
    variances = [(c * s["std"]) ** 2 / s["n"] for s, c in cells]
    error = math.sqrt(sum(variances))
    if error == 0.0:
        return 0.0, float(sum(s["n"] - 1 for s, _ in cells)), 0.0 if value != 0 else 1.0
    df = sum(variances) ** 2 / sum(v**2 / (s["n"] - 1) for v, (s, _) in zip(variances, cells) if v)
    return error, df, min(1.0, 2.0 * t_sf(abs(value) / error, df))


def contrast(summaries: list[dict], coefficients: list[float], min_effect: float = 0.0, *, label: str = "", metric: str = "") -> Comparison:
    """The contrast sum_i c_i mean_i of several cells as a Comparison (its difference), tested by Welch's t
    (``welch_contrast``); coefficients (1, -1) give ``compare``'s Welch test. n: the seeds of each cell with c_i != 0."""
    used = [(s, c) for s, c in zip(summaries, coefficients) if c != 0]
    error, df, p_value = welch_contrast(summaries, coefficients)
    value = sum(c * s["mean"] for s, c in used) if all(s["mean"] is not None for s, _ in used) else math.nan
    scale = max(abs(s["mean"] or 0.0) for s, _ in used)
    return Comparison(label, metric, value, error, df, p_value, tuple(s["n"] for s, _ in used), min_effect, scale)


def rank_test_p(a: list[float], b: list[float]) -> float:
    """Two-sided p of the Mann-Whitney rank-sum test: the share of the splits of the pooled values into groups
    of len(a) and len(b) whose rank sum lies at least as far from its mean as a's (mid-ranks for ties;
    exact enumeration up to EXACT_RANK_TEST_LIMIT splits, else the normal approximation with the tie correction)."""
    pooled = sorted(a + b)
    counts = [len(list(group)) for _, group in itertools.groupby(pooled)]
    ranks, position = {}, 1
    for value, count in zip(sorted(set(pooled)), counts):
        ranks[value] = position + (count - 1) / 2.0
        position += count
    all_ranks = [ranks[v] for v in a + b]
    n_a, total = len(a), len(a) + len(b)
    expected = n_a * (total + 1) / 2.0
    observed = abs(sum(ranks[v] for v in a) - expected)
    if math.comb(total, n_a) <= EXACT_RANK_TEST_LIMIT:
        splits = [abs(sum(chosen) - expected) for chosen in itertools.combinations(all_ranks, n_a)]
        return sum(distance >= observed - 1e-9 for distance in splits) / len(splits)
    ties = sum(count**3 - count for count in counts)
    variance = n_a * len(b) / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    return math.erfc(observed / math.sqrt(2.0 * variance)) if variance > 0 else 1.0


def compare(a: dict, b: dict, min_effect: float = 0.0, *, label: str = "", metric: str = "") -> Comparison:
    """Summary a {mean, std, n} against summary b, by Welch's t. When both carry "values" with None for seeds
    that never reached a target and a "budget" (``censored_values``) and any seed is None, by the rank test
    instead: unreached seeds rank last, tied among themselves, and the difference is of the means with unreached seeds
    at one budget for both cells, the larger of theirs and of every reached value (a cell's own budget can lie below
    the other cell's reached values: a learner whose whole run is shorter than the other's time to the target)."""
    scale = max(abs(a["mean"] or 0.0), abs(b["mean"] or 0.0))
    censored = [s for s in (a, b) if "budget" in s and any(v is None for v in s["values"])]
    if censored:
        budget = max([s.get("budget", 0.0) for s in (a, b)] + [v for s in (a, b) for v in s["values"] if v is not None])
        filled_a, filled_b = ([budget if v is None else v for v in s["values"]] for s in (a, b))
        ma, mb = summarize_values(filled_a), summarize_values(filled_b)
        error, df, _ = welch(ma, mb)
        p_value = rank_test_p(filled_a, filled_b) if filled_a and filled_b else 1.0
        reached = tuple(sum(v is not None for v in s["values"]) for s in (a, b))
        difference = ma["mean"] - mb["mean"] if ma["mean"] is not None and mb["mean"] is not None else math.nan
        return Comparison(label, metric, difference, error, df, p_value, (len(filled_a), len(filled_b)), min_effect, scale, "rank", reached)
    error, df, p_value = welch(a, b)
    difference = a["mean"] - b["mean"] if a["mean"] is not None and b["mean"] is not None else math.nan
    reached = tuple(sum(v is not None for v in s["values"]) for s in (a, b)) if all("budget" in s for s in (a, b)) else None
    values = a.get("values"), b.get("values")
    identical = bool(values[0]) and values[0] == values[1] and None not in values[0] and len(set(values[0])) > 1
    return Comparison(label, metric, difference, error, df, p_value, (a["n"], b["n"]), min_effect, scale, "welch", reached, identical)


# --- a table of comparisons ------------------------------------------------------------------------------


def q_values(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q), in the order given: q_(i) = min over j >= i of m p_(j) / j."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] * m / rank)
        adjusted[index] = running
    return adjusted


def bh_level(p_values: list[float], rate: float = ALPHA) -> float:
    """The per-comparison level that controls the false discovery rate at ``rate`` over these p-values
    (Benjamini-Hochberg): k rate / m, k the largest rank with p_(k) <= k rate / m (rate / m when there is none: what
    the smallest p would have needed). A comparison counts when its p <= this level, i.e. when its q <= rate."""
    m = len(p_values)
    if m == 0:
        return rate
    discoveries = max((k for k, p in enumerate(sorted(p_values), 1) if p <= k * rate / m), default=1)
    return discoveries * rate / m


def seeds_needed(std_a: float, std_b: float, effect: float, level: float = ALPHA, most: int = 100) -> int | None:
    """The fewest seeds per cell (the same on both sides, at least 2) whose detectable difference at ``level``
    is at most ``effect``, given each cell's std over seeds; None when ``most`` seeds are not enough."""
    for n in range(2, most + 1):
        a, b = {"mean": 0.0, "std": std_a, "n": n}, {"mean": 0.0, "std": std_b, "n": n}
        error, df, _ = welch(a, b)
        if error == 0.0 or Comparison("", "", 0.0, error, df, 1.0, (n, n)).detectable(level) <= effect:
            return n
    return None


# --- summaries ---------------------------------------------------------------------------------------


def summarize_values(values: list[float]) -> dict:
    """{"mean", "std", "n"} of finite numbers (std with Bessel's correction, 0 for one value; None for none)."""
    return {
        "mean": statistics.fmean(values) if values else None,
        "std": statistics.stdev(values) if len(values) > 1 else (0.0 if values else None),
        "n": len(values),
    }


def summarize(per_seed: list[dict]) -> dict:
    """{metric: {"mean", "std", "n"}} over the seeds that have a finite value of it.
    per_seed: [{"metrics": {name: value}}, ...]."""
    names = sorted({name for entry in per_seed for name in entry["metrics"]})
    summary = {}
    for name in names:
        values = [entry["metrics"].get(name) for entry in per_seed]
        summary[name] = summarize_values([float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)])
    return summary


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
