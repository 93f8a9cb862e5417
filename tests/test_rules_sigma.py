"""The σ-near-zero rules (grpo_lab/experiments/rules/sigma.py) on both sides of every line they draw, on shipped results
with chosen per-seed values (tests/synthetic_results.py)."""

from __future__ import annotations

import math

import pytest
from synthetic_results import around, drop_metric, set_values, shipped

from grpo_lab.experiments.findings import ACC, FAILS, HOLDS, PARTLY, SMALL_EFFECT, UNTESTED
from grpo_lab.experiments.rules.sigma import DAPO_SETTINGS, DROPPED, dapo_cells, dapo_filter, dapo_refill, epsilon_fixes, sigma_explodes

NAME = "sigma-to-zero"
PREFIXES = [prefix for _, prefix in DAPO_SETTINGS]


def verdict(finding) -> str:
    return finding.judge(*[c.direction() for c in finding.deciding])[0]


def same_three(value: float | None) -> list[float | None]:
    return [value] * 3


# --- sigma_explodes: largest |advantage| > 10 x bound, failed mean > 0, share at eps 0 > 10 x share at eps 0.1 --------


def quiet_sigma() -> dict:
    """No run stopped on 0/0 and the same no-signal share at eps=0 and eps=0.1: only the largest advantage can decide."""
    results = shipped(NAME)
    set_values(results, NAME, "exact-eps0-add", "failed", same_three(0.0))
    for cell_id in ("noisy-eps0-add", "noisy-eps0.1-add"):
        set_values(results, NAME, cell_id, "probe_no_signal_share", same_three(0.1))
    return results


def ten_bounds(results: dict) -> float:
    G = results[NAME]["train_defaults"]["group_size"]
    return 10 * (G - 1) / math.sqrt(G)


def test_sigma_explodes_is_decided_by_facts_not_comparisons():
    finding = sigma_explodes(quiet_sigma())
    assert finding.deciding == () and finding.auxiliary == ()
    assert verdict(finding) == FAILS


@pytest.mark.parametrize(("factor", "expected"), [(1.01, HOLDS), (0.99, FAILS)])
def test_sigma_explodes_largest_advantage_line(factor, expected):
    results = quiet_sigma()
    set_values(results, NAME, "exact-eps1e-08-add", "adv_abs_max", same_three(factor * ten_bounds(results)))
    assert verdict(sigma_explodes(results)) == expected


@pytest.mark.parametrize(("failed", "expected"), [([0.0, 0.0, 1.0], PARTLY), ([0.0, 0.0, 0.0], FAILS)])
def test_sigma_explodes_runs_stopped_on_nan_line(failed, expected):
    results = quiet_sigma()
    set_values(results, NAME, "exact-eps0-add", "failed", failed)
    assert verdict(sigma_explodes(results)) == expected


def test_sigma_explodes_explosion_outranks_the_partial_signs():
    results = quiet_sigma()
    set_values(results, NAME, "exact-eps0-add", "failed", same_three(1.0))
    set_values(results, NAME, "noisy-eps0-add", "probe_no_signal_share", same_three(0.5))
    set_values(results, NAME, "noisy-eps0.1-add", "probe_no_signal_share", same_three(0.01))
    assert verdict(sigma_explodes(results)) == PARTLY
    set_values(results, NAME, "exact-eps1e-08-add", "adv_abs_max", same_three(2 * ten_bounds(results)))
    assert verdict(sigma_explodes(results)) == HOLDS


@pytest.mark.parametrize(
    ("share_eps0", "share_eps01", "expected"),
    [(0.101, 0.01, PARTLY), (0.099, 0.01, FAILS), (0.01, 0.101, FAILS), (None, 0.01, FAILS)],
)
def test_sigma_explodes_noise_amplified_line(share_eps0, share_eps01, expected):
    results = quiet_sigma()
    set_values(results, NAME, "noisy-eps0-add", "probe_no_signal_share", same_three(share_eps0))
    set_values(results, NAME, "noisy-eps0.1-add", "probe_no_signal_share", same_three(share_eps01))
    assert verdict(sigma_explodes(results)) == expected


# --- epsilon_fixes: failed == 0 at the smallest eps; share there < 0.5 x share at eps 0; accuracy auxiliary -----------


def epsilon_results(failed: list[float], share_tiny: float, share_zero: float = 0.2) -> dict:
    results = shipped(NAME)
    set_values(results, NAME, "exact-eps1e-08-add", "failed", failed)
    set_values(results, NAME, "noisy-eps1e-08-add", "probe_no_signal_share", same_three(share_tiny))
    set_values(results, NAME, "noisy-eps0-add", "probe_no_signal_share", same_three(share_zero))
    return results


@pytest.mark.parametrize(("share_tiny", "expected"), [(0.099, HOLDS), (0.101, PARTLY)])
def test_epsilon_fixes_noise_damped_line(share_tiny, expected):
    finding = epsilon_fixes(epsilon_results(same_three(0.0), share_tiny))
    assert finding.deciding == ()
    assert verdict(finding) == expected


@pytest.mark.parametrize("share_tiny", [0.05, 0.15])
def test_epsilon_fixes_fails_when_a_run_still_stops(share_tiny):
    assert verdict(epsilon_fixes(epsilon_results([0.0, 0.0, 1.0], share_tiny))) == FAILS


def test_epsilon_fixes_no_noise_at_eps0_means_nothing_to_damp():
    assert verdict(epsilon_fixes(epsilon_results(same_three(0.0), 0.0, share_zero=0.0))) == PARTLY


@pytest.mark.parametrize(("tiny_acc", "direction"), [(0.6, "lower"), (0.8, "same")])
def test_epsilon_fixes_accuracy_is_auxiliary(tiny_acc, direction):
    results = epsilon_results(same_three(0.0), 0.05)
    set_values(results, NAME, "noisy-eps1e-08-add", ACC, around(tiny_acc, 0.01, 5))
    set_values(results, NAME, "noisy-eps0.1-add", ACC, around(0.8, 0.01, 5))
    finding = epsilon_fixes(results)
    assert [c.direction() for c in finding.auxiliary] == [direction]
    assert verdict(finding) == HOLDS


# --- dapo_filter / dapo_refill: per setting where the filter fired, late accuracy with the variant against the plain run -


def settled(variant: str, treated: dict | None = None, spread: float = 0.001, n: int = 5, fired: dict | None = None) -> dict:
    """Every setting's plain and ``variant`` cells at 0.75 ± spread; treated: {id prefix: the variant's mean} to move;
    fired: {id prefix: the plain run's per-seed share of groups all right or all wrong (n values)}, 0.2 in every seed
    where not given (the filter fires in every setting)."""
    results = shipped(NAME)
    for prefix in PREFIXES:
        plain = f"{prefix}-eps0.0001-add"
        set_values(results, NAME, plain, ACC, around(0.75, spread, n))
        set_values(results, NAME, plain, DROPPED, (fired or {}).get(prefix, [0.2] * n))
        set_values(results, NAME, f"{prefix}-{variant}", ACC, around((treated or {}).get(prefix, 0.75), spread, n))
    return results


def test_dapo_filter_judge():
    judge = dapo_filter(settled("filter")).judge
    assert judge("same", "same", "same", "same")[0] == FAILS
    assert judge("lower", "lower", "lower", "lower")[0] == FAILS
    assert judge("same", "same", "same", "higher")[0] == HOLDS
    assert judge("higher", "lower", "lower", "lower")[0] == HOLDS


def test_dapo_refill_judge():
    judge = dapo_refill(settled("refill")).judge
    assert judge("same", "same", "same", "same")[0] == FAILS
    assert judge("lower", "same", "same", "same")[0] == FAILS
    assert judge("same", "higher", "same", "same")[0] == HOLDS
    assert judge("higher", "higher", "higher", "higher")[0] == HOLDS
    assert judge("higher", "same", "lower", "same")[0] == PARTLY


@pytest.mark.parametrize("rule", [dapo_filter, dapo_refill])
@pytest.mark.parametrize(("gain", "expected"), [(SMALL_EFFECT * 1.2, HOLDS), (SMALL_EFFECT * 0.8, FAILS)])
def test_dapo_smallest_gain_that_counts(rule, gain, expected):
    variant = "filter" if rule is dapo_filter else "refill"
    finding = rule(settled(variant, {"partial": 0.75 + gain}))
    assert [c.direction() for c in finding.deciding] == ["same", "higher" if expected == HOLDS else "same", "same", "same"]
    assert verdict(finding) == expected


@pytest.mark.parametrize(("loss", "expected"), [(SMALL_EFFECT * 1.2, PARTLY), (SMALL_EFFECT * 0.8, HOLDS)])
def test_dapo_refill_smallest_loss_that_counts(loss, expected):
    results = settled("refill", {"exact": 0.8, "noisy": 0.75 - loss})
    assert verdict(dapo_refill(results)) == expected


@pytest.mark.parametrize("rule", [dapo_filter, dapo_refill])
@pytest.mark.parametrize(("treated", "spread", "n", "expected"), [(0.85, 0.02, 5, HOLDS), (0.77, 0.05, 3, FAILS)])
def test_dapo_gain_beyond_noise_or_within_it(rule, treated, spread, n, expected):
    variant = "filter" if rule is dapo_filter else "refill"
    assert verdict(rule(settled(variant, {"weak": treated}, spread, n))) == expected


@pytest.mark.parametrize("rule", [dapo_filter, dapo_refill])
def test_dapo_clear_loss_never_holds(rule):
    variant = "filter" if rule is dapo_filter else "refill"
    finding = rule(settled(variant, {"exact": 0.65}, 0.02))
    assert [c.direction() for c in finding.deciding][0] == "lower"
    assert verdict(finding) == FAILS


@pytest.mark.parametrize(("variant", "rule"), [("filter", dapo_filter), ("refill", dapo_refill)])
def test_dapo_leaves_out_a_setting_whose_filter_never_fired(variant, rule):
    """partial: no group all right or all wrong in any seed of the plain run (whatever the variant's own run logged),
    so its clear gain cannot decide; noisy: such groups in one seed, rarely, so the same gain there decides."""
    n = 3
    results = settled(variant, {"partial": 0.9}, n=n, fired={"partial": [0.0] * n, "noisy": [0.0, 0.0, 0.001]})
    set_values(results, NAME, f"partial-{variant}", DROPPED, [0.3] * n)
    assert [setting for setting, _, _ in dapo_cells(results, variant)] == [words for words, prefix in DAPO_SETTINGS if prefix != "partial"]
    finding = rule(results)
    assert [c.direction() for c in finding.deciding] == ["same"] * 3
    assert verdict(finding) == FAILS
    set_values(results, NAME, f"noisy-{variant}", ACC, around(0.9, 0.001, n))
    assert verdict(rule(results)) == HOLDS


@pytest.mark.parametrize(("variant", "rule"), [("filter", dapo_filter), ("refill", dapo_refill)])
def test_dapo_not_tested_on_a_result_without_the_share_dropped(variant, rule):
    results = settled(variant, {"exact": 0.9})  # a clear gain
    assert verdict(rule(results)) == HOLDS
    for prefix in PREFIXES:
        drop_metric(results, NAME, f"{prefix}-eps0.0001-add", DROPPED)
    assert dapo_cells(results, variant) == []
    finding = rule(results)
    assert (finding.deciding, verdict(finding)) == ((), UNTESTED)


@pytest.mark.parametrize(("variant", "rule"), [("filter", dapo_filter), ("refill", dapo_refill)])
def test_dapo_settings_the_result_lacks(variant, rule):
    results = settled(variant)
    results[NAME]["cells"] = [c for c in results[NAME]["cells"] if not c["id"].startswith("weak-")]
    assert [setting for setting, _, _ in dapo_cells(results, variant)] == [words for words, prefix in DAPO_SETTINGS if prefix != "weak"]
    assert len(rule(results).deciding) == 3
    results[NAME]["cells"] = [c for c in results[NAME]["cells"] if not c["id"].endswith(f"-{variant}")]
    finding = rule(results)
    assert (finding.deciding, verdict(finding)) == ((), UNTESTED)
