"""The baseline claims' rules (rules/baselines.py) on both sides of every line they draw: each judge on the
directions that decide it, and each rule end to end on per-seed values clearly beyond, or clearly within, noise."""

from __future__ import annotations

import itertools

import pytest
from synthetic_results import around, set_values, shipped

from grpo_lab.experiments.findings import ACC, FAILS, HOLDS, PARTLY
from grpo_lab.experiments.rules import baselines

DIRECTIONS = ("higher", "lower", "same")


def verdict(finding) -> str:
    return finding.judge(*(c.direction() for c in finding.deciding))[0]


@pytest.fixture(scope="module")
def offset_results():
    return shipped("offset-and-scale")


def test_offset_judge_holds_only_when_centred_runs_ignore_the_offset_and_none_loses():
    finding = baselines.offset_removed(shipped("offset-and-scale"))
    assert len(finding.deciding) == 3
    for mean_dir, zscore_dir, none_dir in itertools.product(DIRECTIONS, repeat=3):
        invariant = mean_dir == zscore_dir == "same"
        expected = HOLDS if invariant and none_dir == "lower" else PARTLY if invariant else FAILS
        assert finding.judge(mean_dir, zscore_dir, none_dir)[0] == expected


def test_offset_end_to_end_an_offset_that_moves_zscore_is_not_invariant():
    results = shipped("offset-and-scale")
    largest = max(c["axes"]["reward_offset"] for c in results["offset-and-scale"]["cells"])
    for baseline, value in (("mean", 0.78), ("zscore", 0.78), ("none", 0.70)):
        set_values(results, "offset-and-scale", f"{baseline}-offset{largest:g}", ACC, around(value, 0.005, 4))
        set_values(results, "offset-and-scale", f"{baseline}-offset0", ACC, around(0.78, 0.005, 4))
    assert verdict(baselines.offset_removed(results)) == HOLDS
    set_values(results, "offset-and-scale", f"zscore-offset{largest:g}", ACC, around(0.70, 0.005, 4))  # 8 points lower, tight
    assert verdict(baselines.offset_removed(results)) == FAILS


def test_scale_judge():
    finding = baselines.scales_unified(shipped("offset-and-scale"))
    for zscore_dir, mean_dir in itertools.product(DIRECTIONS, repeat=2):
        expected = HOLDS if zscore_dir == "same" and mean_dir == "lower" else PARTLY if zscore_dir == "same" else FAILS
        assert finding.judge(zscore_dir, mean_dir)[0] == expected


def test_scale_end_to_end_a_noisy_drop_is_within_noise_a_tight_one_is_not():
    results = shipped("offset-and-scale")
    metric = "hard_eval_accuracy"
    for baseline in ("zscore", "mean"):
        set_values(results, "offset-and-scale", f"{baseline}-offset0", metric, around(0.60, 0.01, 4))
        set_values(results, "offset-and-scale", f"{baseline}-hard-x0.1", metric, around(0.60, 0.01, 4))
    assert verdict(baselines.scales_unified(results)) == PARTLY  # mean not hurt
    set_values(results, "offset-and-scale", "mean-hard-x0.1", metric, around(0.50, 0.01, 4))
    assert verdict(baselines.scales_unified(results)) == HOLDS
    set_values(results, "offset-and-scale", "mean-hard-x0.1", metric, around(0.50, 0.15, 4))  # the same drop, 15x the spread
    assert verdict(baselines.scales_unified(results)) == PARTLY


def test_variance_judge_counts_the_cells_where_zscore_raises_the_snr():
    finding = baselines.zscore_lowers_variance(shipped("variance"))
    k = len(finding.deciding)
    assert k >= 2
    majority = k // 2 + 1
    assert finding.judge(*(["higher"] * majority + ["same"] * (k - majority)))[0] == HOLDS
    half = k // 2  # not more than half: partly
    assert finding.judge(*(["higher"] * half + ["lower"] * (k - half)))[0] == PARTLY
    assert finding.judge(*(["higher"] + ["same"] * (k - 1)))[0] == PARTLY
    assert finding.judge(*(["lower"] * k))[0] == FAILS
    assert finding.judge(*(["same"] * k))[0] == FAILS


def test_variance_deciding_comparisons_are_zscore_against_mean_at_g4_and_above():
    results = shipped("variance")
    finding = baselines.zscore_lowers_variance(results)
    cells = [c for c in results["variance"]["cells"] if c["axes"]["group_size"] >= 4]
    assert len(finding.deciding) == len(cells)
    assert all(c.metric == "net_snr.zscore" for c in finding.deciding)
    for cell in cells:
        set_values(results, "variance", cell["id"], "net_snr.zscore", around(2.0, 0.01, 3))
        set_values(results, "variance", cell["id"], "net_snr.mean", around(1.0, 0.01, 3))
    assert verdict(baselines.zscore_lowers_variance(results)) == HOLDS


def test_std_essential_judge_and_its_five_point_line():
    results = shipped("offset-and-scale", "difficulty-bias")
    pairs = (("offset-and-scale", "zscore-offset0", "mean-offset0"), ("difficulty-bias", "train-zscore", "train-mean"))
    for gap, expected in ((0.049, PARTLY), (0.051, HOLDS)):
        for name, z_id, m_id in pairs:
            seeds = len(results[name]["cells"][0]["per_seed"])
            set_values(results, name, z_id, ACC, around(0.70 + gap, 0.001, seeds))
            set_values(results, name, m_id, ACC, around(0.70, 0.001, seeds))
        assert verdict(baselines.std_essential(results)) == expected, gap
    finding = baselines.std_essential(results)
    assert finding.judge("higher", "same")[0] == PARTLY and finding.judge("same", "higher")[0] == PARTLY
    assert finding.judge("same", "same")[0] == FAILS and finding.judge("lower", "lower")[0] == FAILS


def test_difficulty_judge():
    finding = baselines.difficulty_bias(shipped("difficulty-bias"))
    assert len(finding.deciding) == 2
    for a, b in itertools.product(DIRECTIONS, repeat=2):
        up = (a == "higher") + (b == "higher")
        assert finding.judge(a, b)[0] == (HOLDS if up == 2 else PARTLY if up == 1 else FAILS)


def test_auxiliary_comparisons_never_decide():
    """Moving an auxiliary comparison across its line leaves every verdict as it was."""
    results = shipped("offset-and-scale")
    before = verdict(baselines.scales_unified(results))
    set_values(results, "offset-and-scale", "zscore-offset0", ACC, around(0.95, 0.001, 4))  # zscore vs mean (auxiliary)
    after = baselines.scales_unified(results)
    assert verdict(after) == before and after.auxiliary[0].direction() == "higher"
