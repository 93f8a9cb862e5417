"""The group claims' rules (rules/groups.py) on both sides of every line they draw: each judge on the directions
that decide it, each numeric threshold just above and just below, and each rule end to end on per-seed values
clearly beyond, or clearly within, noise."""

from __future__ import annotations

import itertools
import math

import pytest
from synthetic_results import around, set_values, shipped

from grpo_lab.experiments import stats
from grpo_lab.experiments.catalog import blowup_derive, group_size_derive
from grpo_lab.experiments.findings import ACC, FAILS, HOLDS, PARTLY, SMALL_EFFECT, UNTESTED
from grpo_lab.experiments.rules import groups
from grpo_lab.experiments.stats import compare
from grpo_lab.experiments.stats import summarize_values as summary

DIRECTIONS = ("higher", "lower", "same")
GS, REMEDIES, BLOWUP = "group-size", "small-group-remedies", "batch-blowup"
SEEDS = 5  # seeds of the shipped group-size and small-group-remedies results (set_values only adds seeds)
REMEDY_CELLS = (("g2-ema", "an EMA baseline"), ("g2-kl0.04", "KL 0.04"), ("g2-lr3e-5", "lr 3e-5 (from {base_lr})"))


def verdict(finding) -> str:
    return finding.judge(*(c.direction() for c in finding.deciding))[0]


def set_cells(results: dict, name: str, metric: str, values: dict) -> dict:
    """values: {cell id: per-seed values}."""
    for cell_id, cell_values in values.items():
        set_values(results, name, cell_id, metric, cell_values)
    return results


# --- the contrast ------------------------------------------------------------------------------------


def test_a_two_cell_contrast_is_welchs_test():
    a, b = summary([0.70, 0.74, 0.71, 0.69]), summary([0.60, 0.66, 0.63, 0.58, 0.61])
    contrast = stats.contrast([a, b], [1, -1], label="", metric=ACC)
    welch = compare(a, b)
    for field in ("difference", "standard_error", "df", "p_value"):
        assert getattr(contrast, field) == pytest.approx(getattr(welch, field), rel=1e-9)


def test_the_gain_contrast_has_the_welch_satterthwaite_error_and_df():
    cells = [summary([0.60, 0.62, 0.58]), summary([0.70, 0.71, 0.69, 0.70]), summary([0.75, 0.80, 0.70, 0.78, 0.72])]
    contrast = stats.contrast(cells, [-1, 2, -1], label="", metric=ACC)
    variances = [c**2 * s["std"] ** 2 / s["n"] for s, c in zip(cells, (-1, 2, -1))]
    assert contrast.difference == pytest.approx(2 * cells[1]["mean"] - cells[0]["mean"] - cells[2]["mean"])
    assert contrast.standard_error == pytest.approx(math.sqrt(sum(variances)))
    assert contrast.df == pytest.approx(sum(variances) ** 2 / sum(v**2 / (s["n"] - 1) for v, s in zip(variances, cells)))
    assert contrast.n == (3, 4, 5)


def test_a_contrast_with_a_one_seed_cell_finds_nothing_and_one_without_spread_is_exact():
    one_seed = stats.contrast([summary([0.6]), summary([0.7, 0.7]), summary([0.9, 0.9])], [-1, 2, -1], label="", metric=ACC)
    assert one_seed.p_value == 1.0 and one_seed.direction() == "same"
    exact = stats.contrast([summary([0.6] * 3), summary([0.7] * 3), summary([0.9] * 3)], [-1, 2, -1], label="", metric=ACC)
    assert exact.direction() == "lower" and exact.df == 6


# --- group_size_needed ----------------------------------------------------------------------------------


def test_group_size_judge_holds_when_both_small_groups_fall_behind():
    finding = groups.group_size_needed(shipped(GS, "variance"))
    assert [c.metric for c in finding.deciding] == [ACC, ACC]
    for g2_dir, g4_dir in itertools.product(DIRECTIONS, repeat=2):
        worse = [g2_dir, g4_dir].count("lower")
        expected = HOLDS if worse == 2 else PARTLY if worse == 1 else FAILS
        assert finding.judge(g2_dir, g4_dir)[0] == expected


def equal_samples_accuracy(g2: list[float], g4: list[float], g8: list[float]) -> dict:
    results = shipped(GS, "variance")
    return set_cells(results, GS, ACC, {"equal-samples-g2": g2, "equal-samples-g4": g4, "equal-samples-g8": g8})


def test_group_size_end_to_end_a_tight_gap_decides_a_noisy_one_does_not():
    g8 = around(0.77, 0.005, SEEDS)
    assert verdict(groups.group_size_needed(equal_samples_accuracy(around(0.70, 0.005, SEEDS), around(0.72, 0.005, SEEDS), g8))) == HOLDS
    assert verdict(groups.group_size_needed(equal_samples_accuracy(around(0.70, 0.005, SEEDS), around(0.72, 0.15, SEEDS), g8))) == PARTLY
    assert verdict(groups.group_size_needed(equal_samples_accuracy(around(0.70, 0.15, SEEDS), around(0.72, 0.15, SEEDS), g8))) == FAILS


def test_group_size_a_gap_counts_only_beyond_one_accuracy_point():
    g8, g4 = around(0.77, 0.0005, SEEDS), around(0.77, 0.0005, SEEDS)
    beyond = equal_samples_accuracy(around(0.77 - 1.2 * SMALL_EFFECT, 0.0005, SEEDS), g4, g8)
    within = equal_samples_accuracy(around(0.77 - 0.8 * SMALL_EFFECT, 0.0005, SEEDS), g4, g8)
    assert verdict(groups.group_size_needed(beyond)) == PARTLY
    assert verdict(groups.group_size_needed(within)) == FAILS


@pytest.mark.parametrize("snr_at_largest", [0.1, 5.0])
def test_group_size_the_snr_of_the_variance_experiment_never_decides(snr_at_largest):
    results = equal_samples_accuracy(around(0.70, 0.005, SEEDS), around(0.77, 0.005, SEEDS), around(0.77, 0.005, SEEDS))
    largest = max(c["axes"]["group_size"] for c in results["variance"]["cells"])
    set_values(results, "variance", f"reference-g{largest}", "net_snr.zscore", around(snr_at_largest, 0.01, 3))
    finding = groups.group_size_needed(results)
    assert [c.metric for c in finding.auxiliary] == ["net_snr.zscore"]
    assert all(c.metric == ACC for c in finding.deciding)
    assert verdict(finding) == PARTLY
    without_variance = groups.group_size_needed({GS: results[GS]})
    assert without_variance.auxiliary == () and verdict(without_variance) == PARTLY


# --- small_groups_noisier --------------------------------------------------------------------------------


def test_small_groups_judge_needs_a_slower_step_and_reads_samples_on_top():
    finding = groups.small_groups_noisier(shipped(GS, "variance"))
    assert [c.metric for c in finding.deciding] == ["steps_to_target"] * 2 + ["samples_to_target"] * 2
    for steps_g2, steps_g4, samples_g2, samples_g4 in itertools.product(DIRECTIONS, repeat=4):
        per_step = "higher" in (steps_g2, steps_g4)
        per_sample = "higher" in (samples_g2, samples_g4)
        expected = HOLDS if per_step and per_sample else PARTLY if per_step else FAILS
        assert finding.judge(steps_g2, steps_g4, samples_g2, samples_g4)[0] == expected


def small_group_targets(steps_g2: list, samples_g2: list) -> dict:
    results = shipped(GS, "variance")
    set_cells(
        results,
        GS,
        "steps_to_target",
        {"equal-prompts-g2": steps_g2, "equal-prompts-g4": around(25, 1, SEEDS), "equal-prompts-g8": around(25, 1, SEEDS)},
    )
    same = around(2400, 50, SEEDS)
    return set_cells(results, GS, "samples_to_target", {"equal-samples-g2": samples_g2, "equal-samples-g4": same, "equal-samples-g8": same})


def test_small_groups_end_to_end_slower_beyond_noise_or_within_it():
    assert verdict(groups.small_groups_noisier(small_group_targets(around(60, 1, SEEDS), around(4000, 50, SEEDS)))) == HOLDS
    assert verdict(groups.small_groups_noisier(small_group_targets(around(60, 1, SEEDS), around(4000, 3000, SEEDS)))) == PARTLY
    assert verdict(groups.small_groups_noisier(small_group_targets(around(60, 80, SEEDS), around(4000, 50, SEEDS)))) == FAILS


def test_small_groups_seeds_that_never_reach_the_target_count_as_slowest():
    results = small_group_targets([None, None, None, None, 60], around(2400, 50, SEEDS))
    steps_g2 = groups.small_groups_noisier(results).deciding[0]
    assert steps_g2.n == (SEEDS, SEEDS) and steps_g2.reached == (1, SEEDS)
    assert steps_g2.direction() == "higher"
    assert verdict(groups.small_groups_noisier(results)) == PARTLY


def test_small_groups_the_learner_that_fails_most_does_not_look_fastest():
    # two fast seeds and three that never reach: on the reached seeds alone G=2 would be faster than G=8
    results = small_group_targets([5, 6, None, None, None], around(2400, 50, SEEDS))
    steps_g2 = groups.small_groups_noisier(results).deciding[0]
    assert steps_g2.n == (SEEDS, SEEDS)
    assert steps_g2.direction() != "lower"


# --- g4_oscillates -------------------------------------------------------------------------------------


def test_g4_judge_holds_when_g4_falls_back_more_in_both_regimes():
    finding = groups.g4_oscillates(shipped(GS))
    assert [c.metric for c in finding.deciding] == ["eval_max_drawdown"] * 2
    assert [c.metric for c in finding.auxiliary] == ["reward_step_noise"] * 2
    for prompts_dir, samples_dir in itertools.product(DIRECTIONS, repeat=2):
        worse = [prompts_dir, samples_dir].count("higher")
        expected = HOLDS if worse == 2 else PARTLY if worse == 1 else FAILS
        assert finding.judge(prompts_dir, samples_dir)[0] == expected


def test_g4_end_to_end_a_tight_fall_counts_a_noisy_one_does_not():
    results = shipped(GS)
    for prefix in ("equal-prompts", "equal-samples"):
        set_cells(results, GS, "eval_max_drawdown", {f"{prefix}-g4": around(0.08, 0.005, SEEDS), f"{prefix}-g16": around(0.02, 0.005, SEEDS)})
    assert verdict(groups.g4_oscillates(results)) == HOLDS
    set_values(results, GS, "equal-samples-g4", "eval_max_drawdown", around(0.08, 0.1, SEEDS))
    assert verdict(groups.g4_oscillates(results)) == PARTLY
    set_values(results, GS, "equal-prompts-g4", "eval_max_drawdown", around(0.08, 0.1, SEEDS))
    assert verdict(groups.g4_oscillates(results)) == FAILS


# --- logarithmic_returns ------------------------------------------------------------------------------


def test_log_returns_judge():
    finding = groups.logarithmic_returns(shipped(GS))
    assert len(finding.deciding) == 3
    for early, late, contrast in itertools.product(DIRECTIONS, repeat=3):
        if early != "higher":
            expected = FAILS
        elif late != "higher":
            expected = PARTLY
        else:
            expected = HOLDS if contrast == "same" else PARTLY
        assert finding.judge(early, late, contrast)[0] == expected


def equal_prompts_accuracy(acc4: float, acc16: float, acc64: float, spread: float) -> dict:
    results = shipped(GS)
    values = {f"equal-prompts-g{G}": around(mean, spread, SEEDS) for G, mean in ((4, acc4), (16, acc16), (64, acc64))}
    return set_cells(results, GS, ACC, values)


def test_log_returns_end_to_end_shapes():
    assert verdict(groups.logarithmic_returns(equal_prompts_accuracy(0.60, 0.70, 0.80, 0.005))) == HOLDS  # the same gain twice
    assert verdict(groups.logarithmic_returns(equal_prompts_accuracy(0.60, 0.70, 0.73, 0.005))) == PARTLY  # diminishing
    assert verdict(groups.logarithmic_returns(equal_prompts_accuracy(0.60, 0.70, 0.70, 0.005))) == PARTLY  # saturating
    assert verdict(groups.logarithmic_returns(equal_prompts_accuracy(0.60, 0.60, 0.70, 0.005))) == FAILS  # 4 -> 16 flat


def test_log_returns_a_smaller_late_gain_is_a_different_shape_only_beyond_noise():
    tight = groups.logarithmic_returns(equal_prompts_accuracy(0.60, 0.70, 0.78, 0.002))
    noisy = groups.logarithmic_returns(equal_prompts_accuracy(0.60, 0.70, 0.78, 0.02))
    assert tight.deciding[2].difference == pytest.approx(0.02)
    assert tight.deciding[2].direction() == "higher" and verdict(tight) == PARTLY
    assert noisy.deciding[2].direction() == "same" and verdict(noisy) == HOLDS


# --- two_grpo ---------------------------------------------------------------------------------------------


def two_grpo_at(ratio: float) -> dict:
    """G=2's late accuracy at equal prompts at this fraction of G=16's, with the derived numbers recomputed."""
    results = set_cells(shipped(GS), GS, ACC, {"equal-prompts-g16": around(0.8, 0.005, SEEDS), "equal-prompts-g2": around(0.8 * ratio, 0.005, SEEDS)})
    results[GS]["derived"] = group_size_derive(results[GS]["cells"])
    return results


@pytest.mark.parametrize(("ratio", "expected"), [(0.952, HOLDS), (0.948, PARTLY), (0.902, PARTLY), (0.898, FAILS)])
def test_two_grpo_accuracy_ratio_lines(ratio, expected):
    finding = groups.two_grpo(two_grpo_at(ratio))
    assert finding.deciding == () and [c.metric for c in finding.auxiliary] == [ACC]
    assert finding.judge()[0] == expected


def test_two_grpo_without_a_g2_g16_pair_is_untested():
    results = shipped(GS)
    del results[GS]["derived"]["two_vs_large"]
    assert groups.two_grpo(results).judge()[0] == UNTESTED


# --- blowup_and_accumulation ---------------------------------------------------------------------------


def blowup_with(activations: dict | None = None, grad_norm_change: float = 0.0) -> dict:
    """The batch-blowup result with these cells' saved activations (MB, every seed) and the micro-batched cells'
    step-1 gradient norms moved by this relative change; the micro-batch checks recomputed."""
    results = shipped(BLOWUP)
    for cell_id, megabytes in (activations or {}).items():
        set_values(results, BLOWUP, cell_id, "saved_activations_mb", [megabytes] * 3)
    cells = results[BLOWUP]["cells"]
    full = {(c["axes"]["prompts_per_step"], c["axes"]["group_size"]): c for c in cells if c["axes"]["micro_batch_size"] == 0}
    for cell in cells:
        if cell["axes"]["micro_batch_size"]:
            reference = full[(cell["axes"]["prompts_per_step"], cell["axes"]["group_size"])]
            norms = [s["metrics"]["first_grad_norm"] * (1 + grad_norm_change) for s in reference["per_seed"]]
            set_values(results, BLOWUP, cell["id"], "first_grad_norm", norms)
    results[BLOWUP]["derived"] = blowup_derive(cells)
    return results


def test_blowup_end_to_end_holds_on_the_shipped_shape():
    finding = groups.blowup_and_accumulation(blowup_with())
    assert finding.deciding == () and finding.judge()[0] == HOLDS


@pytest.mark.parametrize(("share", "expected"), [(0.51, HOLDS), (0.49, PARTLY)])
def test_blowup_memory_must_grow_more_than_half_as_fast_as_the_batch(share, expected):
    results = shipped(BLOWUP)
    sizes = {c["id"]: c["summary"]["responses_per_step"]["mean"] for c in results[BLOWUP]["cells"] if c["axes"]["micro_batch_size"] == 0}
    smallest, largest = min(sizes, key=sizes.get), max(sizes, key=sizes.get)
    growth = sizes[largest] / sizes[smallest]
    finding = groups.blowup_and_accumulation(blowup_with({smallest: 1.0, largest: share * growth}))
    assert finding.judge()[0] == expected


@pytest.mark.parametrize(("change", "expected"), [(0.99e-4, HOLDS), (1.01e-4, PARTLY)])
def test_blowup_micro_batching_must_give_the_same_gradient_within_1e_4(change, expected):
    assert groups.blowup_and_accumulation(blowup_with(grad_norm_change=change)).judge()[0] == expected


@pytest.mark.parametrize(("kept", "expected"), [(0.49, HOLDS), (0.51, PARTLY)])
def test_blowup_the_smallest_micro_batch_must_keep_under_half_the_activations(kept, expected):
    micro = {c["id"] for c in shipped(BLOWUP)[BLOWUP]["cells"] if c["axes"]["micro_batch_size"]}
    activations = {"p64-g16": 40.0} | dict.fromkeys(micro, kept * 40.0)
    assert groups.blowup_and_accumulation(blowup_with(activations)).judge()[0] == expected


# --- g2_usable_but_poor -----------------------------------------------------------------------------------


def g2_results(g2: float, g2_64: list[float], start: float = 0.5) -> dict:
    results = shipped(REMEDIES)
    set_values(results, REMEDIES, "g2", "initial_eval_accuracy", [start] * SEEDS)
    return set_cells(results, REMEDIES, ACC, {"g2": around(g2, 0.005, SEEDS), "g8": around(0.80, 0.005, SEEDS), "g2-64prompts": g2_64})


def test_g2_judge_when_g2_learns():
    finding = groups.g2_usable_but_poor(g2_results(0.70, around(0.70, 0.005, SEEDS)))
    for per_step, per_sample in itertools.product(DIRECTIONS, repeat=2):
        expected = HOLDS if per_sample == "lower" else PARTLY if per_step == "lower" else FAILS
        assert finding.judge(per_step, per_sample)[0] == expected


def test_g2_judge_fails_whatever_the_comparisons_when_g2_does_not_learn():
    finding = groups.g2_usable_but_poor(g2_results(0.52, around(0.70, 0.005, SEEDS)))
    assert {finding.judge(a, b)[0] for a, b in itertools.product(DIRECTIONS, repeat=2)} == {FAILS}


@pytest.mark.parametrize(("gain", "expected"), [(0.052, HOLDS), (0.048, FAILS)])
def test_g2_is_usable_only_more_than_five_points_above_its_start(gain, expected):
    assert verdict(groups.g2_usable_but_poor(g2_results(0.5 + gain, around(0.70, 0.005, SEEDS)))) == expected


def test_g2_end_to_end_per_sample_gap_beyond_or_within_noise():
    assert verdict(groups.g2_usable_but_poor(g2_results(0.70, around(0.75, 0.005, SEEDS)))) == HOLDS
    assert verdict(groups.g2_usable_but_poor(g2_results(0.70, around(0.75, 0.15, SEEDS)))) == PARTLY


# --- remedy ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("cell_id", "words"), REMEDY_CELLS)
def test_remedy_judge(cell_id, words):
    finding = groups.remedy(cell_id, words)(shipped(REMEDIES))
    assert [c.metric for c in finding.deciding] == [ACC, "eval_max_drawdown"]
    for acc_dir, dd_dir in itertools.product(DIRECTIONS, repeat=2):
        if acc_dir == "higher" or (acc_dir == "same" and dd_dir == "lower"):
            expected = HOLDS
        else:
            expected = PARTLY if dd_dir == "lower" else FAILS
        assert finding.judge(acc_dir, dd_dir)[0] == expected


def remedy_results(cell_id: str, accuracy: list[float], drawdown: list[float]) -> dict:
    results = set_cells(shipped(REMEDIES), REMEDIES, ACC, {"g2": around(0.74, 0.0005, SEEDS), cell_id: accuracy})
    return set_cells(results, REMEDIES, "eval_max_drawdown", {"g2": around(0.03, 0.002, SEEDS), cell_id: drawdown})


@pytest.mark.parametrize(("cell_id", "words"), REMEDY_CELLS)
def test_remedy_end_to_end(cell_id, words):
    rule = groups.remedy(cell_id, words)
    steady, shaky = around(0.005, 0.002, SEEDS), around(0.03, 0.002, SEEDS)
    assert verdict(rule(remedy_results(cell_id, around(0.80, 0.005, SEEDS), shaky))) == HOLDS
    assert verdict(rule(remedy_results(cell_id, around(0.74, 0.005, SEEDS), steady))) == HOLDS
    assert verdict(rule(remedy_results(cell_id, around(0.70, 0.005, SEEDS), steady))) == PARTLY
    assert verdict(rule(remedy_results(cell_id, around(0.70, 0.005, SEEDS), around(0.005, 0.05, SEEDS)))) == FAILS  # fall within noise


def test_remedy_an_accuracy_gain_counts_only_beyond_one_point():
    rule = groups.remedy("g2-ema", "an EMA baseline")
    same_fall = around(0.03, 0.002, SEEDS)
    assert verdict(rule(remedy_results("g2-ema", around(0.74 + 1.2 * SMALL_EFFECT, 0.0005, SEEDS), same_fall))) == HOLDS
    assert verdict(rule(remedy_results("g2-ema", around(0.74 + 0.8 * SMALL_EFFECT, 0.0005, SEEDS), same_fall))) == FAILS


def test_cell_lr_reads_a_cells_own_lr_else_the_defaults():
    results = shipped(REMEDIES)
    assert groups.cell_lr(results, REMEDIES, "g2-lr3e-5") == pytest.approx(3e-5)
    assert groups.cell_lr(results, REMEDIES, "g2") == results[REMEDIES]["train_defaults"]["lr"]
