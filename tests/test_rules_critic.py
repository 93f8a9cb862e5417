"""The critic claims' rules (grpo_lab/experiments/rules/critic.py) on both sides of every line they draw: each judge on
the directions that decide it, each threshold just above and just below, and each rule end to end on per-seed values
clearly beyond, or clearly within, noise (shipped results with chosen per-seed values: tests/synthetic_results.py)."""

from __future__ import annotations

import itertools

import pytest
from synthetic_results import around, drop_metric, set_values, shipped

from grpo_lab.experiments.findings import ACC, FAILS, HOLDS, PARTLY, SMALL_EFFECT, UNTESTED
from grpo_lab.experiments.rules import critic

DIRECTIONS = ("higher", "lower", "same")
SEEDS = 8  # at least every shipped cell's seeds, so set_values replaces them all
GP, FIT, SMALL, SHAPE = "grpo-vs-ppo", "critic-fit", "small-group-remedies", "batch-shape"


def verdict(finding) -> str:
    return finding.judge(*(c.direction() for c in finding.deciding))[0]


def tight(mean: float) -> list[float]:
    return around(mean, abs(mean) * 1e-3 + 1e-3, SEEDS)


def put(results: dict, name: str, metric: str, values: dict) -> dict:
    """Set ``metric`` of several cells of experiment ``name``: {cell id: per-seed values}."""
    for cell_id, cell_values in values.items():
        set_values(results, name, cell_id, metric, cell_values)
    return results


# --- critic_costs: critic parameters > 0.5 x policy parameters ----------------------------------------------


def test_critic_costs_line_at_half_the_policy():
    results = shipped(GP)
    policy = critic.cell_summary(results, GP, "grpo", "policy_parameters")["mean"]
    for critic_params, expected in ((0.5 * policy + 1, HOLDS), (0.5 * policy, PARTLY), (0.5 * policy - 1, PARTLY)):
        set_values(results, GP, "ppo-g8", "critic_parameters", [critic_params] * SEEDS)
        finding = critic.critic_costs(results)
        assert finding.deciding == ()
        assert verdict(finding) == expected, critic_params


def test_critic_costs_time_per_step_never_decides():
    results = shipped(GP)
    put(results, GP, "time_per_step_s", {"grpo": tight(0.1), "ppo-g8": tight(0.1)})
    before = critic.critic_costs(results)
    put(results, GP, "time_per_step_s", {"ppo-g8": tight(0.5)})
    after = critic.critic_costs(results)
    assert before.auxiliary[0].direction() == "same" and after.auxiliary[0].direction() == "higher"
    assert verdict(after) == verdict(before)


# --- tradeoff_crossover ---------------------------------------------------------------------------------------


def expected_tradeoff(time_dir: str, samples_dir: str, control_samples: str, control_time: str, late: str) -> str:
    if {time_dir, samples_dir} == {"lower", "higher"}:  # a crossover
        control_costs_more = "higher" in (control_samples, control_time)
        return HOLDS if time_dir == "lower" and control_costs_more else PARTLY
    return PARTLY if samples_dir == "higher" or late == "higher" else FAILS


def test_tradeoff_judge_on_every_direction():
    finding = critic.tradeoff_crossover(shipped(GP))
    assert [(c.label.split(" vs ")[0], c.metric) for c in finding.deciding] == [
        ("GRPO", "time_to_target_s"),
        ("GRPO", "samples_to_target"),
        ("EMA control", "samples_to_target"),
        ("EMA control", "time_to_target_s"),
        ("PPO", ACC),
    ]
    for directions in itertools.product(DIRECTIONS, repeat=5):
        assert finding.judge(*directions)[0] == expected_tradeoff(*directions), directions


def crossover_results() -> dict:
    """GRPO 2 s faster to the target, PPO 1500 responses fewer; the control costlier than PPO in responses."""
    results = shipped(GP)
    put(results, GP, "time_to_target_s", {"grpo": tight(1.0), "ppo": tight(3.0), "ema": tight(0.5)})
    put(results, GP, "samples_to_target", {"grpo": tight(3000), "ppo": tight(1500), "ema": tight(4000)})
    return put(results, GP, ACC, {"grpo": tight(0.8), "ppo": tight(0.8)})


def test_tradeoff_end_to_end_crossover_from_the_comparisons():
    results = crossover_results()
    finding = critic.tradeoff_crossover(results)
    verdict_words, explanation = finding.judge(*(c.direction() for c in finding.deciding))
    assert verdict_words == HOLDS
    crossover = f"{(3.0 - 1.0) / (3000 - 1500):.2g}"  # (PPO's s - GRPO's) / (GRPO's responses - PPO's)
    assert crossover in explanation and f"-{crossover}" not in explanation
    put(results, GP, "samples_to_target", {"ema": tight(1500)})  # the control as cheap as PPO: the batch shape did it
    assert verdict(critic.tradeoff_crossover(results)) == PARTLY


def test_tradeoff_end_to_end_a_time_gap_within_noise_is_no_crossover():
    results = crossover_results()
    put(results, GP, "time_to_target_s", {"grpo": around(2.5, 1.0, SEEDS)})  # 0.5 s faster, spread 1 s
    assert verdict(critic.tradeoff_crossover(results)) == PARTLY  # PPO still needs fewer responses
    put(results, GP, "samples_to_target", {"grpo": tight(1500)})
    assert verdict(critic.tradeoff_crossover(results)) == FAILS
    put(results, GP, ACC, {"ppo": tight(0.85)})  # PPO ends higher at equal samples
    assert verdict(critic.tradeoff_crossover(results)) == PARTLY


def test_tradeoff_seeds_that_never_reached_the_target_count():
    """Half of GRPO's seeds reach the target fast, half never: by its reached seeds it needs fewer responses than PPO;
    with the unreached ones last it is no better."""
    results = crossover_results()
    put(results, GP, "samples_to_target", {"grpo": [1000.0] * 4 + [None] * 4})
    responses = critic.tradeoff_crossover(results).deciding[1]
    assert responses.test == "rank" and responses.reached == (4, SEEDS)
    assert responses.direction() == "same"


# --- critic_without_groups: PPO learns (> start + 0.05), not below GRPO, above the EMA control once or reused ---------


def learning_results(ppo_late: float, control_gap: float = 0.05) -> dict:
    """PPO (once and reused) and GRPO at ``ppo_late`` from a start of 0.5; the EMA control on PPO's batch (once and
    reused) ``control_gap`` below PPO."""
    results = shipped(GP)
    put(results, GP, "initial_eval_accuracy", {"ppo": [0.5] * SEEDS})
    put(results, GP, ACC, {"ppo": tight(ppo_late), "grpo": tight(ppo_late), "ppo-reuse": tight(ppo_late)})
    return put(results, GP, ACC, {"ema": tight(ppo_late - control_gap), "ema-reuse": tight(ppo_late - control_gap)})


def test_critic_without_groups_learning_line():
    assert verdict(critic.critic_without_groups(learning_results(0.553))) == HOLDS
    assert verdict(critic.critic_without_groups(learning_results(0.547))) == FAILS


def test_critic_without_groups_decides_on_grpo_then_the_control_once_and_reused():
    results = learning_results(0.7)
    put(results, GP, ACC, {"ppo": tight(0.7), "grpo": tight(0.61), "ema": tight(0.66), "ppo-reuse": tight(0.8), "ema-reuse": tight(0.72)})
    finding = critic.critic_without_groups(results)
    assert [c.metric for c in finding.deciding] == [ACC] * 3
    # PPO - GRPO, PPO - EMA (one pass), reused PPO - reused EMA
    assert [c.difference for c in finding.deciding] == pytest.approx([0.09, 0.04, 0.08])
    assert [c.difference for c in finding.auxiliary] == pytest.approx([0.1, 0.06])  # what reuse gains, with and without a critic


def test_critic_without_groups_judge():
    for ppo_late, learns in ((0.6, True), (0.52, False)):
        finding = critic.critic_without_groups(learning_results(ppo_late))
        for grpo_dir, ema_dir, ema_reuse_dir in itertools.product(DIRECTIONS, repeat=3):
            critic_adds = "higher" in (ema_dir, ema_reuse_dir)
            expected = (HOLDS if grpo_dir != "lower" and critic_adds else PARTLY) if learns else FAILS
            assert finding.judge(grpo_dir, ema_dir, ema_reuse_dir)[0] == expected, (ppo_late, grpo_dir, ema_dir, ema_reuse_dir)


def test_critic_without_groups_end_to_end():
    results = learning_results(0.7)
    put(results, GP, ACC, {"grpo": tight(0.75)})  # GRPO 5 points ahead, tight
    assert verdict(critic.critic_without_groups(results)) == PARTLY
    put(results, GP, ACC, {"grpo": around(0.75, 0.15, SEEDS)})  # the same gap, 15 points of spread
    assert verdict(critic.critic_without_groups(results)) == HOLDS
    put(results, GP, ACC, {"ema": around(0.65, 0.15, SEEDS), "ema-reuse": around(0.65, 0.15, SEEDS)})  # PPO's lead within noise
    assert verdict(critic.critic_without_groups(results)) == PARTLY
    put(results, GP, ACC, {"ema": tight(0.75), "ema-reuse": tight(0.75)})  # the control ahead of PPO
    assert verdict(critic.critic_without_groups(results)) == PARTLY


@pytest.mark.parametrize("control", ["ema", "ema-reuse"])
@pytest.mark.parametrize(("lead", "expected"), [(SMALL_EFFECT * 1.2, HOLDS), (SMALL_EFFECT * 0.8, PARTLY)])
def test_critic_without_groups_smallest_lead_over_the_control_that_counts(control, lead, expected):
    results = learning_results(0.7, control_gap=0.0)  # the control level with PPO, once and reused
    assert verdict(critic.critic_without_groups(results)) == PARTLY
    put(results, GP, ACC, {control: tight(0.7 - lead)})
    assert verdict(critic.critic_without_groups(results)) == expected


def test_critic_without_groups_reuse_gains_never_decide():
    results = learning_results(0.7)
    before = critic.critic_without_groups(results)
    put(results, GP, ACC, {"ppo-reuse": tight(0.8), "ema-reuse": tight(0.75)})  # both gain 10 points from reuse, same gap
    after = critic.critic_without_groups(results)
    assert [c.direction() for c in before.auxiliary] == ["same", "same"]
    assert [c.direction() for c in after.auxiliary] == ["higher", "higher"]
    assert [c.direction() for c in after.deciding] == [c.direction() for c in before.deciding]
    assert verdict(after) == verdict(before) == HOLDS


# --- grpo_stability -------------------------------------------------------------------------------------------------


def test_stability_judge():
    finding = critic.grpo_stability(shipped(GP, SMALL))
    for enough, scarce in itertools.product(DIRECTIONS, repeat=2):
        stable, noisier = enough != "higher", scarce == "lower"
        expected = HOLDS if stable and noisier else PARTLY if stable or noisier else FAILS
        assert finding.judge(enough, scarce)[0] == expected


def test_stability_end_to_end():
    results = shipped(GP, SMALL)
    put(results, GP, "eval_max_drawdown", {"grpo": tight(0.05), "ppo": tight(0.05)})
    put(results, GP, ACC, {"ppo-32prompts": tight(0.8)})
    set_values(results, SMALL, "g2", ACC, tight(0.7))
    assert verdict(critic.grpo_stability(results)) == HOLDS
    set_values(results, SMALL, "g2", ACC, around(0.7, 0.2, SEEDS))  # the same gap within noise
    assert verdict(critic.grpo_stability(results)) == PARTLY
    put(results, GP, "eval_max_drawdown", {"grpo": tight(0.15)})  # GRPO falls back more at 128 responses
    assert verdict(critic.grpo_stability(results)) == FAILS


# --- group_baseline_in_ppo -------------------------------------------------------------------------------------------


def test_group_baseline_in_ppo_judge_and_end_to_end():
    results = shipped(GP)
    finding = critic.group_baseline_in_ppo(results)
    assert [finding.judge(d)[0] for d in DIRECTIONS] == [FAILS, HOLDS, FAILS]
    put(results, GP, ACC, {"grpo": tight(0.75), "ppo-g8": tight(0.8)})
    assert verdict(critic.group_baseline_in_ppo(results)) == HOLDS
    put(results, GP, ACC, {"grpo": around(0.75, 0.15, SEEDS)})
    assert verdict(critic.group_baseline_in_ppo(results)) == FAILS


def test_group_baseline_in_ppo_monte_carlo_arm_never_decides():
    results = put(shipped(GP), GP, ACC, {"grpo": tight(0.75), "ppo-g8": tight(0.8), "mc-value": tight(0.8), "ppo-reuse": tight(0.8)})
    before = critic.group_baseline_in_ppo(results)
    put(results, GP, ACC, {"mc-value": tight(0.9)})
    after = critic.group_baseline_in_ppo(results)
    assert before.auxiliary[0].direction() == "same" and after.auxiliary[0].direction() == "higher"
    assert verdict(after) == verdict(before) == HOLDS


# --- long_text_ppo: the critic against a learner without one on the same batch shape and reuse ------------------------

AUC = "eval_accuracy_auc"
# (critic cell, critic-free cell) in the order they decide, each in late accuracy then AUC
LONG_PAIRS = (("ppo-reuse", "ema-reuse"), ("ppo", "ema"), ("ppo-g8", "grpo"))


def long_results(critic_mean: float = 0.4, free_mean: float = 0.35) -> dict:
    """Long-answer grpo-vs-ppo: every critic cell of LONG_PAIRS at ``critic_mean``, every critic-free one at ``free_mean``,
    in late accuracy and AUC."""
    results = shipped(GP, regime="long-answer")
    for metric in (ACC, AUC):
        for critic_id, free_id in LONG_PAIRS:
            put(results, GP, metric, {critic_id: tight(critic_mean), free_id: tight(free_mean)})
    return results


def test_long_text_decides_on_the_matched_pairs_only():
    results = shipped(GP, regime="long-answer")
    accuracy = {"ppo-reuse": 0.5, "ema-reuse": 0.41, "ppo": 0.45, "ema": 0.43, "ppo-g8": 0.4, "grpo": 0.37}
    auc = {"ppo-reuse": 0.3, "ema-reuse": 0.28, "ppo": 0.33, "ema": 0.27, "ppo-g8": 0.2, "grpo": 0.19}
    for metric, means in ((ACC, accuracy), (AUC, auc)):
        put(results, GP, metric, {cell_id: tight(mean) for cell_id, mean in means.items()})
    finding = critic.long_text_ppo(results)
    assert [c.metric for c in finding.deciding] == [ACC, AUC] * 3
    assert [c.difference for c in finding.deciding] == pytest.approx([0.09, 0.02, 0.02, 0.06, 0.03, 0.01])


def test_long_text_judge():
    finding = critic.long_text_ppo(long_results())
    assert len(finding.deciding) == 6
    for directions in itertools.product(DIRECTIONS, repeat=6):
        ahead = directions.count("higher")
        assert finding.judge(*directions)[0] == (HOLDS if ahead == 6 else PARTLY if ahead else FAILS), directions


def test_long_text_end_to_end():
    results = long_results()
    assert verdict(critic.long_text_ppo(results)) == HOLDS
    put(results, GP, AUC, {"grpo": around(0.35, 0.15, SEEDS)})  # one yardstick within noise
    assert verdict(critic.long_text_ppo(results)) == PARTLY
    assert verdict(critic.long_text_ppo(long_results(0.35, 0.35))) == FAILS
    assert verdict(critic.long_text_ppo(long_results(0.35, 0.4))) == FAILS


@pytest.mark.parametrize(("lead", "expected"), [(SMALL_EFFECT * 1.2, HOLDS), (SMALL_EFFECT * 0.8, PARTLY)])
def test_long_text_smallest_lead_that_counts(lead, expected):
    results = put(long_results(), GP, ACC, {"ppo-g8": tight(0.35 + lead)})
    assert verdict(critic.long_text_ppo(results)) == expected


def test_long_text_comparisons_across_batch_shapes_never_decide():
    """GRPO reused (16 prompts) is matched with no critic cell; GRPO once is compared only with the critic at its own
    shape: far ahead of PPO at 128 prompts, neither changes the verdict."""
    results = long_results()
    for metric in (ACC, AUC):
        put(results, GP, metric, {"grpo-reuse": tight(0.35)})
    before = critic.long_text_ppo(results)
    for metric in (ACC, AUC):
        put(results, GP, metric, {"grpo-reuse": tight(0.9), "ppo-g8": tight(0.95), "grpo": tight(0.9)})
    after = critic.long_text_ppo(results)
    assert [c.direction() for c in after.deciding] == [c.direction() for c in before.deciding] == ["higher"] * 6
    assert verdict(after) == verdict(before) == HOLDS


# --- no_free_lunch ------------------------------------------------------------------------------------------------------


def test_no_free_lunch_judge():
    finding = critic.no_free_lunch(shipped(GP))
    assert [c.metric for c in finding.deciding] == [ACC, "samples_to_target", "time_to_target_s"] * 2
    grpo_wins = ("higher", "lower", "lower")  # GRPO wins on higher accuracy, fewer responses, fewer seconds

    def trade_off(directions: tuple[str, ...]) -> bool:
        won = {"GRPO" if d == win else "PPO" for d, win in zip(directions, grpo_wins) if d != "same"}
        return won == {"GRPO", "PPO"}

    for directions in itertools.product(DIRECTIONS, repeat=6):
        expected = HOLDS if trade_off(directions[:3]) and trade_off(directions[3:]) else PARTLY
        assert finding.judge(*directions)[0] == expected, directions


def test_no_free_lunch_end_to_end():
    results = shipped(GP)
    for grpo_id, ppo_id in (("grpo", "ppo"), ("grpo-reuse", "ppo-reuse")):
        put(results, GP, ACC, {grpo_id: tight(0.75), ppo_id: tight(0.8)})  # PPO ends higher
        put(results, GP, "samples_to_target", {grpo_id: tight(2000), ppo_id: tight(2000)})
        put(results, GP, "time_to_target_s", {grpo_id: tight(1.0), ppo_id: tight(2.0)})  # GRPO gets there sooner
    assert verdict(critic.no_free_lunch(results)) == HOLDS
    put(results, GP, "time_to_target_s", {"grpo-reuse": around(1.0, 2.0, SEEDS)})  # the reused pair's time gap within noise
    assert verdict(critic.no_free_lunch(results)) == PARTLY


# --- group_mean_is_a_value: above a constant, >= 0.8 x oracle, rising with G --------------------------------------------


def value_results(largest_mean: float, spread: float = 0.001, dip: float = 0.0) -> tuple[dict, list[int]]:
    """Oracle EV 0.5; group EV rising with G up to ``largest_mean`` at the largest G; ``dip``: the second-largest G's
    EV above the largest's by this much (0: equal)."""
    results = shipped(FIT)
    sizes = sorted(int(key.split("=")[1]) for key in results[FIT]["cells"][0]["summary"] if key.startswith("group_ev."))
    set_values(results, FIT, "reference-fresh", "oracle_ev", tight(0.5))
    for index, G in enumerate(sizes[:-2]):
        set_values(results, FIT, "reference-fresh", f"group_ev.G={G}", tight(-0.5 + 0.1 * index))
    set_values(results, FIT, "reference-fresh", f"group_ev.G={sizes[-2]}", around(largest_mean + dip, spread, SEEDS))
    set_values(results, FIT, "reference-fresh", f"group_ev.G={sizes[-1]}", around(largest_mean, spread, SEEDS))
    return results, sizes


def test_group_mean_oracle_line():
    assert verdict(critic.group_mean_is_a_value(value_results(0.401)[0])) == HOLDS
    assert verdict(critic.group_mean_is_a_value(value_results(0.399)[0])) == PARTLY  # rises, not near the oracle


def test_group_mean_rising_line():
    assert verdict(critic.group_mean_is_a_value(value_results(0.45, dip=0.0)[0])) == HOLDS  # equal counts as rising
    assert verdict(critic.group_mean_is_a_value(value_results(0.45, dip=0.002)[0])) == PARTLY
    assert verdict(critic.group_mean_is_a_value(value_results(0.399, dip=0.002)[0])) == FAILS


def test_group_mean_against_a_constant_with_as_many_seeds():
    results, sizes = value_results(0.45)
    finding = critic.group_mean_is_a_value(results)
    assert finding.deciding[0].n == (SEEDS, SEEDS)
    assert [finding.judge(d)[0] for d in DIRECTIONS] == [HOLDS, PARTLY, PARTLY]
    noisy, _ = value_results(0.45, spread=0.8)  # a mean of 0.45 within noise of zero
    assert verdict(critic.group_mean_is_a_value(noisy)) == PARTLY


# --- critic_over_under_fits: fresh token EV < 0.5 x the token ceiling (without one: best prompt EV < 0.5 x oracle); ---
# --- pool train - held > 0.2 and held < 0 -------------------------------------------------------------------------------


def fit_results(best: float, pool_train: float, pool_held: float, fresh_held: float = 0.1, token_ceiling: float | None = None) -> dict:
    """Prompt level: oracle 0.6, the best held-out V(prompt) ``best``; token level: the fresh critic's held-out EV
    ``fresh_held`` against Monte-Carlo values of the same states ``token_ceiling`` (None: a result made before that
    ceiling was measured); the fixed pool's training and held-out token EV."""
    results = shipped(FIT)
    set_values(results, FIT, "reference-fresh", "oracle_ev", tight(0.6))
    set_values(results, FIT, "reference-fresh", "best_critic_ev_prompt", [best] * SEEDS)
    set_values(results, FIT, "reference-fresh", "critic_ev_token", [fresh_held] * SEEDS)
    if token_ceiling is None:
        drop_metric(results, FIT, "reference-fresh", "oracle_ev_token")
    else:
        set_values(results, FIT, "reference-fresh", "oracle_ev_token", [token_ceiling] * SEEDS)
    set_values(results, FIT, "reference-fixed-pool", "train_ev_token", [pool_train] * SEEDS)
    return set_values(results, FIT, "reference-fixed-pool", "critic_ev_token", [pool_held] * SEEDS)


@pytest.mark.parametrize(
    ("best", "pool_train", "pool_held", "expected"),
    [
        (0.29, 0.5, -0.1, HOLDS),
        (0.31, 0.5, -0.1, PARTLY),  # no longer under half the oracle
        (0.29, 0.103, -0.1, HOLDS),  # gap 0.203
        (0.29, 0.097, -0.1, PARTLY),  # gap 0.197
        (0.29, 0.5, 0.002, PARTLY),  # held out above a constant
        (0.31, 0.097, -0.1, FAILS),
    ],
)
def test_critic_fit_lines_without_the_token_ceiling(best, pool_train, pool_held, expected):
    """A result without oracle_ev_token: under-fitting at the prompt level, whatever the fresh critic's token EV (0.1)."""
    finding = critic.critic_over_under_fits(fit_results(best, pool_train, pool_held))
    assert finding.deciding == ()
    assert verdict(finding) == expected


@pytest.mark.parametrize(
    ("fresh_held", "best", "pool_train", "expected"),
    [
        (0.399, 0.59, 0.5, HOLDS),  # just below half the token ceiling (0.8): under-fits, though near the prompt oracle
        (0.401, 0.01, 0.5, PARTLY),  # just above it: does not, though far below the prompt oracle
        (0.399, 0.59, 0.097, PARTLY),
        (0.401, 0.01, 0.097, FAILS),
    ],
)
def test_critic_fit_under_fitting_at_the_token_level(fresh_held, best, pool_train, expected):
    finding = critic.critic_over_under_fits(fit_results(best, pool_train, -0.1, fresh_held, token_ceiling=0.8))
    assert finding.deciding == ()
    assert verdict(finding) == expected


def test_critic_fit_token_ceiling_missing_in_every_seed_falls_back_to_the_prompt_level():
    results = fit_results(0.31, 0.097, -0.1, fresh_held=0.1, token_ceiling=0.8)
    assert verdict(critic.critic_over_under_fits(results)) == PARTLY  # 0.1 < 0.4: under-fits at the token level
    set_values(results, FIT, "reference-fresh", "oracle_ev_token", [None] * SEEDS)
    assert verdict(critic.critic_over_under_fits(results)) == FAILS  # 0.31 > 0.3: not at the prompt level


# --- critic_wins_on_noisy_rewards: noisy gap > exact gap + SMALL_EFFECT ---------------------------------------------------


def noisy_results(noisy_gap: float, exact_gap: float = 0.05, spread: float = 0.001) -> dict:
    results = shipped(GP)
    return put(
        results,
        GP,
        ACC,
        {
            "grpo-noisy": tight(0.7),
            "ppo-noisy": around(0.7 + noisy_gap, spread, SEEDS),
            "grpo": tight(0.7),
            "ppo": tight(0.7 + exact_gap),
        },
    )


def test_noisy_rewards_gap_line():
    assert verdict(critic.critic_wins_on_noisy_rewards(noisy_results(0.062))) == HOLDS
    assert verdict(critic.critic_wins_on_noisy_rewards(noisy_results(0.058))) == PARTLY


def test_noisy_rewards_judge():
    wide, narrow = critic.critic_wins_on_noisy_rewards(noisy_results(0.1)), critic.critic_wins_on_noisy_rewards(noisy_results(0.05))
    assert [wide.judge("higher", d)[0] for d in DIRECTIONS] == [HOLDS, HOLDS, HOLDS]
    assert [narrow.judge("higher", d)[0] for d in DIRECTIONS] == [PARTLY, HOLDS, HOLDS]
    for finding, noisy_dir, exact_dir in itertools.product((wide, narrow), ("lower", "same"), DIRECTIONS):
        assert finding.judge(noisy_dir, exact_dir)[0] == FAILS


def test_noisy_rewards_end_to_end():
    assert verdict(critic.critic_wins_on_noisy_rewards(noisy_results(0.1, exact_gap=0.0))) == HOLDS
    assert verdict(critic.critic_wins_on_noisy_rewards(noisy_results(0.1, exact_gap=0.0, spread=0.2))) == FAILS


# --- faster_than_ppo: GRPO fewer responses beyond noise and speedup >= 0.2 in every pair -----------------------------------


def speed_results(grpo: list, ppo: list) -> dict:
    """Both pairs of PPO_PAIRS with these responses to the target."""
    results = shipped(GP)
    for _, grpo_id, ppo_id in critic.PPO_PAIRS:
        put(results, GP, "samples_to_target", {grpo_id: grpo, ppo_id: ppo})
    return results


def test_faster_speedup_line():
    assert verdict(critic.faster_than_ppo(speed_results(tight(1000), tight(1210)))) == HOLDS
    assert verdict(critic.faster_than_ppo(speed_results(tight(1000), tight(1190)))) == PARTLY


def test_faster_judge():
    fast = critic.faster_than_ppo(speed_results(tight(1000), tight(1500)))
    assert fast.judge("lower", "lower")[0] == HOLDS
    for directions in (("lower", "same"), ("same", "lower"), ("same", "same"), ("higher", "higher")):
        assert fast.judge(*directions)[0] == PARTLY  # a positive speedup, not beyond noise in every pair
    slow = critic.faster_than_ppo(speed_results(tight(1500), tight(1000)))
    for directions in (("same", "same"), ("higher", "higher"), ("higher", "same")):
        assert slow.judge(*directions)[0] == FAILS
    assert slow.judge("lower", "same")[0] == PARTLY  # fewer beyond noise once unreached seeds count


def test_faster_end_to_end_a_speedup_within_noise_does_not_hold():
    assert verdict(critic.faster_than_ppo(speed_results(tight(1000), tight(1500)))) == HOLDS
    assert verdict(critic.faster_than_ppo(speed_results(around(1000, 800, SEEDS), tight(1500)))) == PARTLY


def test_faster_unreached_seeds_count():
    """Half of GRPO's seeds reach the target in 500 responses and half never: a speedup of 1.0 on the reached
    seeds, but not fewer responses once the others count."""
    finding = critic.faster_than_ppo(speed_results([500.0] * 4 + [None] * 4, tight(1000)))
    assert all(c.test == "rank" and c.direction() == "same" for c in finding.deciding)
    assert verdict(finding) == PARTLY


def test_faster_not_tested_when_no_learner_reached_the_target():
    finding = critic.faster_than_ppo(speed_results([None] * SEEDS, [None] * SEEDS))
    assert verdict(finding) == UNTESTED


# --- shape_not_critic: some shape comparison differs, no critic comparison higher ---------------------------------------

REUSE_SETTINGS = ("once", "reuse")


def expected_shape(*directions: str) -> str:
    shape_matters, critic_wins = any(d != "same" for d in directions[:4]), "higher" in directions[4:]
    return HOLDS if shape_matters and not critic_wins else PARTLY if shape_matters else FAILS


def shape_results(shape_gap: float, critic_gap: float, spread: float = 0.0) -> dict:
    """Late accuracy on the batch-shape grid, once and reused: the EMA baseline at 0.6 with 16 prompts x 8 and at
    0.6 + ``shape_gap`` with 128 x 1, the critic ``critic_gap`` above it at each; ``spread``: every cell's std over
    seeds (0: tight)."""
    results = shipped(SHAPE)
    for reuse in REUSE_SETTINGS:
        for prompts, ema in ((16, 0.6), (128, 0.6 + shape_gap)):
            for baseline, mean in (("ema", ema), ("critic", ema + critic_gap)):
                put(results, SHAPE, ACC, {f"{baseline}-p{prompts}-{reuse}": around(mean, spread, SEEDS) if spread else tight(mean)})
    return results


def test_shape_not_critic_decides_on_four_shape_then_four_critic_comparisons():
    results = shipped(SHAPE)
    means = {  # (baseline, prompts, reuse): late accuracy
        ("ema", 16, "once"): 0.6, ("ema", 128, "once"): 0.7, ("critic", 16, "once"): 0.62, ("critic", 128, "once"): 0.66,
        ("ema", 16, "reuse"): 0.55, ("ema", 128, "reuse"): 0.73, ("critic", 16, "reuse"): 0.58, ("critic", 128, "reuse"): 0.64,
    }  # fmt: skip
    put(results, SHAPE, ACC, {f"{b}-p{P}-{reuse}": tight(mean) for (b, P, reuse), mean in means.items()})
    put(results, SHAPE, ACC, {"zscore-p16-once": tight(0.5)})
    finding = critic.shape_not_critic(results)
    assert [c.metric for c in finding.deciding] == [ACC] * 8
    # 128 prompts - 16 for the critic then EMA, once then reused; the critic - EMA at 16 then 128, once then reused
    assert [c.difference for c in finding.deciding] == pytest.approx([0.04, 0.1, 0.06, 0.18, 0.02, -0.04, 0.03, -0.09])
    assert [c.difference for c in finding.auxiliary] == pytest.approx([0.12])  # the critic against z-score at 16 prompts


def test_shape_not_critic_judge():
    finding = critic.shape_not_critic(shape_results(0.05, 0.0))
    for directions in itertools.product(DIRECTIONS, repeat=8):
        assert finding.judge(*directions)[0] == expected_shape(*directions), directions


@pytest.mark.parametrize(
    ("shape_gap", "critic_gap", "expected"),
    [
        (0.05, 0.0, HOLDS),  # the shape matters, the critic does not
        (-0.05, 0.0, HOLDS),  # fewer prompts better: the shape matters all the same
        (0.05, -0.05, HOLDS),  # the critic behind the EMA baseline is no win for it
        (0.0, 0.05, FAILS),  # the critic matters, the shape does not
        (0.05, 0.05, PARTLY),  # both
        (0.0, 0.0, FAILS),  # neither: nothing beyond noise (the table's power step may read it 'not detected')
    ],
)
def test_shape_not_critic_each_verdict_end_to_end(shape_gap, critic_gap, expected):
    assert verdict(critic.shape_not_critic(shape_results(shape_gap, critic_gap))) == expected


def test_shape_not_critic_effects_within_noise_do_not_count():
    assert verdict(critic.shape_not_critic(shape_results(0.05, 0.0, spread=0.15))) == FAILS
    assert verdict(critic.shape_not_critic(shape_results(0.0, 0.05, spread=0.15))) == FAILS


@pytest.mark.parametrize(("gap", "expected"), [(SMALL_EFFECT * 1.2, HOLDS), (SMALL_EFFECT * 0.8, FAILS)])
def test_shape_not_critic_smallest_shape_effect_that_counts(gap, expected):
    results = shape_results(0.0, 0.0)
    put(results, SHAPE, ACC, {"ema-p128-reuse": tight(0.6 + gap), "critic-p128-reuse": tight(0.6 + gap)})  # one setting's shape only
    assert verdict(critic.shape_not_critic(results)) == expected


@pytest.mark.parametrize(("shape_gap", "lead", "expected"), [(0.05, 1.2, PARTLY), (0.05, 0.8, HOLDS), (0.0, 1.2, FAILS), (0.0, 0.8, FAILS)])
def test_shape_not_critic_smallest_critic_lead_that_counts(shape_gap, lead, expected):
    """The critic ahead in one pass only, at both shapes (ahead at one shape alone would also make a shape effect)."""
    gain = lead * SMALL_EFFECT
    results = put(
        shape_results(shape_gap, 0.0), SHAPE, ACC, {"critic-p16-once": tight(0.6 + gain), "critic-p128-once": tight(0.6 + shape_gap + gain)}
    )
    assert verdict(critic.shape_not_critic(results)) == expected


def test_shape_not_critic_other_shapes_and_baselines_never_decide():
    """The middle shapes (32 and 64 prompts), the group baselines and the Monte-Carlo value: far ahead, no verdict moves;
    z-score at 16 prompts is quoted only."""
    for shape_gap, critic_gap in ((0.05, 0.0), (0.0, 0.05), (0.0, 0.0)):
        results = shape_results(shape_gap, critic_gap)
        put(results, SHAPE, ACC, {"zscore-p16-once": tight(0.6 + critic_gap)})
        before = critic.shape_not_critic(results)
        deciding_cells = {f"{b}-p{P}-{reuse}" for b in ("ema", "critic") for P in (16, 128) for reuse in REUSE_SETTINGS}
        others = [c["id"] for c in results[SHAPE]["cells"] if c["id"] not in deciding_cells]
        assert {"critic-p32-once", "ema-p64-reuse", "zscore-p16-once", "rloo-p16-reuse", "mc-value-p128-once"} <= set(others)
        put(results, SHAPE, ACC, {cell_id: tight(0.95) for cell_id in others})
        after = critic.shape_not_critic(results)
        assert before.auxiliary[0].direction() == "same" and after.auxiliary[0].direction() == "lower"
        assert [c.direction() for c in after.deciding] == [c.direction() for c in before.deciding]
        assert verdict(after) == verdict(before)


def test_a_batch_shape_replication_runs_exactly_the_cells_claim_32_reads():
    """`sweep batch-shape --replicate` runs only SHAPE_CLAIM_CELLS (catalog.grid_in): the rule judges a result cut to
    them as it judges the whole grid, and fails loudly (a missing cell) when any one of them is gone."""
    from grpo_lab.experiments.catalog import SHAPE_CLAIM_CELLS, MissingCellError, grid_in

    assert {c["id"] for c in grid_in(SHAPE, "practice", replicate=True)} == set(SHAPE_CLAIM_CELLS)
    assert {c["id"] for c in grid_in(SHAPE, "practice")} > set(SHAPE_CLAIM_CELLS)
    whole = shipped(SHAPE)

    def cut_to(ids) -> dict:
        kept = [c for c in whole[SHAPE]["cells"] if c["id"] in ids]
        return {SHAPE: {**whole[SHAPE], "cells": kept, "grid": [g for g in whole[SHAPE]["grid"] if g["id"] in ids]}}

    full, cut = critic.shape_not_critic(whole), critic.shape_not_critic(cut_to(SHAPE_CLAIM_CELLS))
    assert cut.evidence == full.evidence
    assert [(c.label, c.difference, c.p_value) for c in cut.deciding + cut.auxiliary] == [
        (c.label, c.difference, c.p_value) for c in full.deciding + full.auxiliary
    ]
    for gone in SHAPE_CLAIM_CELLS:
        with pytest.raises(MissingCellError):
            critic.shape_not_critic(cut_to(set(SHAPE_CLAIM_CELLS) - {gone}))
