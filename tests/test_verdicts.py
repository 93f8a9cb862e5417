"""The statistics behind every verdict (stats.py) and the judging of the claims table (claims.py): Welch's t and
its power, the rank test for seeds that never reach a target, Benjamini-Hochberg over the table, "not detected"
with its unit, near-the-line judged from the deciding comparisons' data, replication, and the seed plan."""

from __future__ import annotations

import json
import math

import pytest

from grpo_lab.experiments import stats
from grpo_lab.experiments.catalog import MAX_SEEDS, MIN_SEEDS, SEEDS, experiments_in
from grpo_lab.experiments.claims import CLAIMS, REPLICATED, Claim, judge_finding, judged, verdict_table
from grpo_lab.experiments.findings import FAILS, HOLDS, NOT_DETECTED, PARTLY, Finding, cell_summary
from grpo_lab.experiments.runner import RESULTS_DIR, load_result


def summary(mean: float, std: float, n: int) -> dict:
    return {"mean": mean, "std": std, "n": n}


# --- Student's t ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, df, expected",  # textbook t tables
    [(0.975, 1, 12.706), (0.975, 4, 2.776), (0.975, 10, 2.228), (0.995, 7, 3.499), (0.8, 10, 0.879), (0.975, 1e9, 1.960)],
)
def test_t_quantiles_match_the_tables(p, df, expected):
    assert stats.t_quantile(p, df) == pytest.approx(expected, abs=1e-3)
    assert stats.t_sf(expected, df) == pytest.approx(1 - p, rel=2e-3)


def test_welch_uses_unequal_variances_and_the_satterthwaite_degrees_of_freedom():
    a, b = summary(0.80, 0.02, 8), summary(0.75, 0.06, 5)
    va, vb = 0.02**2 / 8, 0.06**2 / 5
    error, df, p = stats.welch(a, b)
    assert error == pytest.approx(math.sqrt(va + vb))
    assert df == pytest.approx((va + vb) ** 2 / (va**2 / 7 + vb**2 / 4))
    assert p == pytest.approx(2 * stats.t_sf(0.05 / error, df))
    assert 0.1 < p < 0.2  # 1.8 SE on about 4.5 df: a normal 2-SE rule would call it borderline, t calls it noise


def test_a_difference_counts_only_past_the_t_line_and_the_minimum_effect():
    for n in (3, 8):
        line = stats.t_quantile(0.975, 2 * n - 2) * math.sqrt(2 * 0.03**2 / n)
        assert stats.compare(summary(0.70 + 1.02 * line, 0.03, n), summary(0.70, 0.03, n)).direction() == "higher"
        assert stats.compare(summary(0.70 + 0.98 * line, 0.03, n), summary(0.70, 0.03, n)).direction() == "same"
        assert stats.compare(summary(0.70 - 1.02 * line, 0.03, n), summary(0.70, 0.03, n)).direction() == "lower"
    tight = stats.compare(summary(0.705, 0.0001, 8), summary(0.700, 0.0001, 8), 0.01)
    assert tight.p_value < 1e-6 and tight.direction() == "same"  # below the minimum effect: no difference
    assert tight.line() == pytest.approx(0.01)
    strict = stats.compare(summary(0.74, 0.03, 8), summary(0.70, 0.03, 8))
    assert strict.direction() == "higher" and strict.direction(level=0.001) == "same"


def test_detectable_is_the_t_power_formula():
    comparison = stats.compare(summary(0.72, 0.03, 5), summary(0.70, 0.03, 5))
    df = comparison.df
    expected = (stats.t_quantile(0.975, df) + stats.t_quantile(0.8, df)) * comparison.standard_error
    assert comparison.detectable() == pytest.approx(expected)
    assert comparison.detectable(0.001) > comparison.detectable()  # a stricter level needs a larger difference
    assert stats.compare(summary(0.72, 0.03, 1), summary(0.70, 0.03, 5)).detectable() == math.inf


def test_a_contrast_of_two_cells_is_welchs_test():
    a, b = summary(0.8, 0.02, 6), summary(0.7, 0.05, 4)
    two = stats.contrast([a, b], [1, -1])
    assert (two.standard_error, two.df, two.p_value) == pytest.approx(stats.welch(a, b))
    assert stats.contrast([a, b, a], [1, -2, 1]).n == (6, 4, 6)


def test_the_rank_test_is_exact_and_counts_seeds_that_never_reached():
    assert stats.rank_test_p([1, 2, 3], [4, 5, 6]) == pytest.approx(0.1)  # 2 of the 20 splits are as extreme
    assert stats.rank_test_p([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    reached = {"mean": 100.0, "std": 10.0, "n": 5, "values": [90.0, 95.0, 100.0, 105.0, 110.0], "budget": 1000.0}
    slow = {"mean": 80.0, "std": 0.0, "n": 1, "values": [80.0, None, None, None, None], "budget": 1000.0}
    comparison = stats.compare(slow, reached)
    # on the reached seeds alone 'slow' looks faster (80 against 100); counting the four that never got there it is slower
    assert comparison.test == "rank" and comparison.reached == (1, 5) and comparison.difference > 0
    assert comparison.p_value == pytest.approx(stats.rank_test_p([80.0, 1000.0, 1000.0, 1000.0, 1000.0], reached["values"]))
    every_seed = {**reached, "values": [90.0, 95.0, 100.0, 105.0, 110.0]}
    assert stats.compare(every_seed, reached).test == "welch"  # no seed missing: Welch's t


def test_seeds_that_never_reached_rank_last_even_when_their_own_runs_are_shorter():
    """Issue 40: a learner whose whole run (its budget, 2 s) is shorter than the other's time to the target (8 s) and
    never reaches it is the slower one, not the faster: unreached seeds take one budget for both cells, above every
    reached value. Two cells where no seed reached the target do not differ (they tied at 'never')."""
    never_short = {"mean": None, "std": None, "n": 0, "values": [None] * 4, "budget": 2.0}
    reached_late = {"mean": 8.0, "std": 0.5, "n": 4, "values": [7.5, 8.0, 8.0, 8.5], "budget": 9.0}
    comparison = stats.compare(never_short, reached_late)
    assert comparison.test == "rank" and comparison.reached == (0, 4)
    assert comparison.difference > 0 and comparison.p_value == pytest.approx(stats.rank_test_p([9.0] * 4, [7.5, 8.0, 8.0, 8.5]))
    never_long = {**never_short, "budget": 5.0}
    both_never = stats.compare(never_short, never_long)
    assert both_never.p_value == 1.0 and both_never.difference == 0 and both_never.direction() == "same"


def test_benjamini_hochberg():
    p = [0.01, 0.04, 0.03, 0.5]
    assert stats.q_values(p) == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])
    assert stats.bh_level(p) == 0.0125  # only p_(1) <= 1 x 0.05 / 4: one discovery
    assert stats.bh_level([0.001] * 10) == pytest.approx(0.05)  # ten discoveries
    alone = stats.bh_level([0.02])
    crowded = stats.bh_level([0.02] + [0.5] * 99)
    assert alone == 0.05 and crowded == pytest.approx(0.05 / 100)  # among 99 nulls, p = 0.02 is no discovery


def test_seeds_needed_is_the_fewest_that_detect_the_effect():
    n = stats.seeds_needed(0.02, 0.02, 0.04)
    error = lambda k: math.sqrt(2 * 0.02**2 / k)  # noqa: E731
    power = lambda k: (stats.t_quantile(0.975, 2 * k - 2) + stats.t_quantile(0.8, 2 * k - 2)) * error(k)  # noqa: E731
    assert power(n) <= 0.04 < power(n - 1)
    assert stats.seeds_needed(0.5, 0.5, 0.01, most=20) is None


# --- judging -------------------------------------------------------------------------------------------


def toy_claim(claimed_effect: float | None = None) -> Claim:
    return Claim("toy", "test", "—", "a beats b", (), None, claimed_effect=claimed_effect)


def toy_finding(a: dict, b: dict, auxiliary: tuple = ()) -> Finding:
    comparison = stats.compare(a, b, label="a vs b", metric="late_eval_accuracy")
    return Finding("numbers", lambda d: (HOLDS if d == "higher" else FAILS, "words"), (comparison,), auxiliary)


def test_no_difference_without_power_is_not_detected_with_its_unit_and_with_power_it_does_not_hold():
    noisy = judge_finding(toy_claim(), toy_finding(summary(0.72, 0.05, 3), summary(0.70, 0.05, 3)), "gentle", 0.05, (0.5,), None)
    assert noisy.verdict == NOT_DETECTED and noisy.detectable[1] == "accuracy points"
    assert noisy.detectable[0] == pytest.approx(100 * noisy.finding.deciding[0].detectable(0.05))
    assert noisy.verdict_text.startswith("not detected (could detect ≥ ") and noisy.verdict_text.endswith(" accuracy points)")
    precise = judged(toy_claim(), toy_finding(summary(0.700, 0.001, 8), summary(0.700, 0.001, 8)), 0.05)
    assert precise[0] == FAILS
    reversed_effect = judged(toy_claim(), toy_finding(summary(0.60, 0.01, 8), summary(0.75, 0.01, 8)), 0.05)
    assert reversed_effect[0] == FAILS  # b beats a beyond noise: the claim is wrong here, whatever the power
    assert judged(toy_claim(claimed_effect=0.5), toy_finding(summary(0.72, 0.05, 3), summary(0.70, 0.05, 3)), 0.05)[0] == FAILS


def test_auxiliary_comparisons_never_decide_nor_count_for_power():
    hopeless = stats.compare(summary(0.7, 0.5, 2), summary(0.7, 0.5, 2), label="aux", metric="net_snr.zscore")
    finding = toy_finding(summary(0.700, 0.001, 8), summary(0.700, 0.001, 8), auxiliary=(hopeless,))
    assert judged(toy_claim(), finding, 0.05)[0] == FAILS  # the underpowered auxiliary comparison does not make it "not detected"


def test_near_the_line_is_judged_by_flipping_a_deciding_comparison():
    n, std = 8, 0.03
    line = stats.t_quantile(0.975, 2 * n - 2) * math.sqrt(2 * std**2 / n)
    near = judge_finding(toy_claim(), toy_finding(summary(0.70 + 1.1 * line, std, n), summary(0.70, std, n)), "gentle", 0.05, (0.04,), None)
    clear = judge_finding(toy_claim(), toy_finding(summary(0.70 + 2.0 * line, std, n), summary(0.70, std, n)), "gentle", 0.05, (0.001,), None)
    assert near.verdict == clear.verdict == HOLDS and near.near_line and not clear.near_line
    below = judge_finding(toy_claim(), toy_finding(summary(0.70 + 0.9 * line, std, n), summary(0.70, std, n)), "gentle", 0.05, (0.1,), None)
    assert below.verdict in (FAILS, NOT_DETECTED) and below.near_line

    # a rule that holds when either of two comparisons is higher keeps its verdict when only the near one flips
    either = Finding(
        "numbers",
        lambda *d: (HOLDS if "higher" in d else FAILS, ""),
        (
            stats.compare(summary(0.70 + 1.1 * line, std, n), summary(0.70, std, n), label="near", metric="late_eval_accuracy"),
            stats.compare(summary(0.70 + 3.0 * line, std, n), summary(0.70, std, n), label="clear", metric="late_eval_accuracy"),
        ),
    )
    verdict = judge_finding(toy_claim(), either, "gentle", 0.05, (0.04, 0.001), None)
    assert verdict.verdict == HOLDS and not verdict.near_line


def test_the_table_judges_every_deciding_comparison_at_one_false_discovery_level():
    gentle = {name: load_result(name) for name in ("offset-and-scale", "small-group-remedies")}
    table = verdict_table({"gentle": gentle, "large-step": gentle})
    deciding = [c for verdicts in table.values() for v in verdicts for c in v.finding.deciding]
    # the offset under mean and z-score leaves every seed's run as it was: identical cells test nothing and stay out
    identical = [c for c in deciding if c.identical]
    assert {c.label for c in identical} == {"mean: offset 5 vs 0", "zscore: offset 5 vs 0"} and len(identical) == 4
    tested = [c for c in deciding if not c.identical]
    level = stats.bh_level([c.p_value for c in tested])
    assert len(tested) > 10 and all(v.level == level for verdicts in table.values() for v in verdicts)
    q = [q for verdicts in table.values() for v in verdicts for c, q in zip(v.finding.deciding, v.q)]
    assert [value for value, c in zip(q, deciding) if c.identical] == [None] * 4
    assert [value for value, c in zip(q, deciding) if not c.identical] == pytest.approx(stats.q_values([c.p_value for c in tested]))
    for verdicts in table.values():
        for verdict in verdicts:
            directions = tuple(c.direction(level) for c in verdict.finding.deciding)
            expected = judged(verdict.claim, verdict.finding, level, directions)[0]
            assert verdict.verdict == expected


def test_replication_agrees_or_says_what_fresh_seeds_gave():
    gentle = {"small-group-remedies": load_result("small-group-remedies")}
    key = "g2-ema"
    same = {v.claim.key: v for v in verdict_table({"gentle": gentle}, {"gentle": gentle})["gentle"]}[key]
    assert same.replication == REPLICATED and same.replication_text == "replicated"
    flipped = json.loads(json.dumps(gentle))
    from synthetic_results import around, set_values

    set_values(flipped, "small-group-remedies", "g2-ema", "late_eval_accuracy", around(0.2, 0.001, 8))  # the remedy now ruins G=2
    set_values(flipped, "small-group-remedies", "g2", "late_eval_accuracy", around(0.7, 0.001, 8))
    other = {v.claim.key: v for v in verdict_table({"gentle": gentle}, {"gentle": flipped})["gentle"]}[key]
    assert other.replication not in (None, REPLICATED) and other.replication_text.startswith("not replicated (fresh seeds: ")
    if other.verdict == HOLDS:
        assert "did not replicate" in other.course_text
    alone = {v.claim.key: v for v in verdict_table({"gentle": gentle})["gentle"]}[key]
    assert alone.replication is None and alone.replication_text == "not run"
    if alone.verdict == HOLDS:
        assert alone.course_text == "holds here (not yet replicated)"


def test_a_seed_that_never_reached_the_target_enters_the_comparison():
    results = {"grpo-vs-ppo": json.loads(json.dumps(load_result("grpo-vs-ppo")))}
    cell = next(c for c in results["grpo-vs-ppo"]["cells"] if c["id"] == "grpo")
    cell["per_seed"][0]["metrics"]["samples_to_target"] = None
    summary_ = cell_summary(results, "grpo-vs-ppo", "grpo", "samples_to_target")
    assert summary_["values"][0] is None and summary_["budget"] == max(e["metrics"]["samples"] for e in cell["per_seed"])
    comparison = stats.compare(summary_, cell_summary(results, "grpo-vs-ppo", "ppo", "samples_to_target"))
    assert comparison.test == "rank" and comparison.reached[0] == len(cell["per_seed"]) - 1


# --- the seed plan ---------------------------------------------------------------------------------------


def test_the_catalogs_seeds_are_the_written_plans():
    plan = json.loads((RESULTS_DIR / "seed-plan.json").read_text())
    assert plan["command"] == "python scripts/seed_plan.py" and (plan["min_seeds"], plan["max_seeds"]) == (MIN_SEEDS, MAX_SEEDS)
    for regime, experiments in plan["regimes"].items():
        assert set(experiments) == set(experiments_in(regime)) == set(SEEDS[regime]), regime
        for name, entry in experiments.items():
            assert SEEDS[regime][name] == entry["planned"], (regime, name)
            assert MIN_SEEDS <= entry["planned"] <= MAX_SEEDS
            assert entry["planned"] >= min(entry["needed"], MAX_SEEDS)
            if entry["quoted_by_the_answer"]:
                assert entry["planned"] >= plan["answer_seeds"] >= 8, (regime, name)


def test_every_claim_with_a_rule_is_in_the_table():
    table = verdict_table({"gentle": {}})
    assert [v.claim.key for v in table["gentle"]] == [claim.key for claim in CLAIMS]
    assert {v.verdict for v in table["gentle"]} <= {HOLDS, PARTLY, FAILS, NOT_DETECTED, "not tested"}


def test_only_cells_identical_seed_by_seed_and_varying_across_seeds_count_as_identical():
    """An invariance by construction (the same run with and without a reward offset) is not a test; two cells that
    merely agree on every seed's constant (all 0) or on their means are compared as usual."""

    def summary(values: list[float]) -> dict:
        return {**stats.summarize_values(values), "values": values}

    same = [0.61, 0.64, 0.66, 0.6]
    assert stats.compare(summary(same), summary(list(same))).identical
    assert not stats.compare(summary(same), summary([0.64, 0.61, 0.66, 0.6])).identical  # same mean, other seeds
    assert not stats.compare(summary([0.0] * 4), summary([0.0] * 4)).identical  # a constant: nothing computed twice
