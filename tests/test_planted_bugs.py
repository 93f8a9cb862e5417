"""Planted bugs: each wiring bug below is installed by patching a function of grpo_lab.core (a
wrapper or a replacement, never an edit of the source text, so reformatting the code cannot undo
it), and the behaviour tests named for it (test_wiring.py) must pass on the real code and fail
under the bug."""

import dataclasses
import inspect

import pytest
import test_wiring as wiring
import torch

import grpo_lab.core.advantages as core_advantages
import grpo_lab.core.critic as critic
import grpo_lab.core.loop as loop
import grpo_lab.core.probes as probes
from grpo_lab.task import RewardModel


def kl_against_the_current_policy(monkeypatch):
    """The KL's reference log-probs come from the policy being trained, not the frozen reference (KL always 0)."""
    train_step = loop.train_step
    monkeypatch.setattr(
        loop, "train_step", lambda config, state, *rest: train_step(config, dataclasses.replace(state, reference=state.policy), *rest)
    )


def inner_epochs_ignored(monkeypatch):
    """One optimiser pass per batch whatever inner_epochs says."""
    update_policy = loop.update_policy
    monkeypatch.setattr(loop, "update_policy", lambda config, *rest: update_policy(dataclasses.replace(config, inner_epochs=1), *rest))


def gradients_zeroed_once_per_batch(monkeypatch):
    """zero_grad outside the inner loop: the gradients pile up across the passes and minibatches."""
    update_policy = loop.update_policy

    def piling_up(config, state, *rest):
        state.optimizer.zero_grad(set_to_none=True)
        with pytest.MonkeyPatch.context() as inside:
            inside.setattr(state.optimizer, "zero_grad", lambda set_to_none=True: None)
            return update_policy(config, state, *rest)

    monkeypatch.setattr(loop, "update_policy", piling_up)


def gae_gamma_and_lambda_swapped(monkeypatch):
    """The GAE of the loop and of the critic gets gamma and lambda in each other's place."""
    for module in (loop, critic):
        gae = module.gae
        monkeypatch.setattr(module, "gae", lambda rewards, values, mask, gamma, lam, gae=gae: gae(rewards, values, mask, lam, gamma))


def whitening_removed(monkeypatch):
    """The critic's GAE advantages are used raw, not whitened over the batch's tokens."""
    monkeypatch.setattr(loop, "whiten", lambda advantages, mask, *rest: advantages * mask)


def clip_ratio_per_response(monkeypatch):
    """clip_ratio is the count of clipped tokens divided by the responses of a pass, not by the tokens."""
    update_policy = loop.update_policy

    def per_response(config, state, batch, *rest):
        metrics = update_policy(config, state, batch, *rest)
        clipped_tokens = metrics["clip_ratio"] * config.inner_epochs * float(batch.mask.sum())  # every pass sees every row once
        return {**metrics, "clip_ratio": clipped_tokens / len(batch)}

    monkeypatch.setattr(loop, "update_policy", per_response)


def probe_statistics(rescale):
    """A planted bug in the gradient-noise probe: ``rescale(noise, K)`` turns its right statistics into wrong ones."""

    def plant(monkeypatch):
        gradient_noise = probes.gradient_noise
        monkeypatch.setattr(probes, "gradient_noise", lambda share_gradients: rescale(gradient_noise(share_gradients), len(share_gradients)))

    return plant


# grad_var the variance of one share's gradient, not of their mean: K times larger, grad_snr K times smaller
probe_variance_without_1_over_k = probe_statistics(lambda noise, K: {**noise, "grad_var": noise["grad_var"] * K, "grad_snr": noise["grad_snr"] / K})
# the variance without Bessel's correction: biased low by (K - 1) / K
probe_variance_ddof_0 = probe_statistics(
    lambda noise, K: {**noise, "grad_var": noise["grad_var"] * (K - 1) / K, "grad_snr": noise["grad_snr"] * K / (K - 1)}
)
# grad_snr as a ratio of norms (a square root) instead of ||g||^2 / grad_var
probe_snr_square_root = probe_statistics(lambda noise, K: {**noise, "grad_snr": noise["grad_snr"] ** 0.5})


def tied_groups_centred_plainly_in_the_batch_scope(monkeypatch):
    """With std_scope='batch', a group of equal rewards is centred plainly (rounding noise, not exactly 0)."""
    compute_advantages = core_advantages.compute_advantages

    def plain_in_batch_scope(rewards, baseline="zscore", std_eps=1e-4, std_scope="group", *rest):
        with pytest.MonkeyPatch.context() as inside:
            if std_scope == "batch":
                inside.setattr(core_advantages, "equal_groups", lambda rewards: torch.zeros(len(rewards), dtype=torch.bool))
            return compute_advantages(rewards, baseline, std_eps, std_scope, *rest)

    monkeypatch.setattr(core_advantages, "compute_advantages", plain_in_batch_scope)


def batch_without_spread_keeps_its_rounding_std(monkeypatch):
    """With std_scope='batch', a batch of all-equal rewards keeps the rounding-noise std of its plain
    computation instead of 0: its (exactly 0) centred rewards over that std + eps are 0, not 0/0 = NaN at eps 0."""
    compute_advantages = core_advantages.compute_advantages

    def rounding_std(rewards, baseline="zscore", std_eps=1e-4, std_scope="group", std_ddof=1, eps_mode="add", *rest):
        advantages = compute_advantages(rewards, baseline, std_eps, std_scope, std_ddof, eps_mode, *rest)
        if baseline != "zscore" or std_scope != "batch" or not (rewards == rewards.reshape(-1)[0]).all():
            return advantages
        std = core_advantages.group_std(rewards, std_scope, std_ddof)  # one rounding step, not 0
        return torch.zeros_like(rewards) / (std + std_eps if eps_mode == "add" else std.clamp(min=std_eps))

    monkeypatch.setattr(core_advantages, "compute_advantages", rounding_std)


def with_argument(function, name: str, value):
    """``function`` with its argument ``name`` replaced by ``value(the arguments it was given)``."""
    signature = inspect.signature(function)

    def replaced(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.arguments[name] = value(bound.arguments)
        return function(*bound.args, **bound.kwargs)

    return replaced


def value_rollouts_left_out_of_the_samples(monkeypatch):
    """The Monte-Carlo rollouts are reported under a name ``run`` does not add to ``samples``."""
    train_step = loop.train_step

    def renamed(*args):
        record, batch = train_step(*args)
        if "value_rollouts" in record:
            record["mc_rollouts_sampled"] = record.pop("value_rollouts")
        return record, batch

    monkeypatch.setattr(loop, "train_step", renamed)


def monte_carlo_gae_with_lambda_095(monkeypatch):
    """The GAE over Monte-Carlo values runs at lambda 0.95 (the critic's default), not 0."""
    for module in (loop, critic):
        monkeypatch.setattr(module, "gae", with_argument(module.gae, "lam", lambda given: 0.95 if given["lam"] == 0 else given["lam"]))


def value_rollouts_at_temperature_one(monkeypatch):
    """The Monte-Carlo rollouts are sampled at temperature 1 whatever the policy's sampling temperature."""
    monkeypatch.setattr(loop, "mc_prefix_values", with_argument(loop.mc_prefix_values, "temperature", lambda given: 1.0))


def critic_epochs_and_minibatches_swapped(monkeypatch):
    """The critic's schedule hands back (minibatches, epochs): the same number of updates, the wrong passes."""
    schedule = critic.critic_updates_schedule
    monkeypatch.setattr(critic, "critic_updates_schedule", lambda settings: schedule(settings)[::-1])


def critic_updates_reported_as_epochs_times_minibatches(monkeypatch):
    """critic_updates is epochs x minibatches even when the batch has fewer rows than minibatches."""
    update_critic = critic.update_critic

    def as_configured(*args, **kwargs):
        settings = inspect.signature(update_critic).bind(*args, **kwargs).arguments["settings"]
        epochs, minibatches = critic.critic_updates_schedule(settings)
        return {**update_critic(*args, **kwargs), "critic_updates": epochs * minibatches}

    monkeypatch.setattr(critic, "update_critic", as_configured)


def refill_one_group_short(monkeypatch):
    """Dynamic sampling's batch ends one group short of P when it had found P groups with a spread."""
    sample_and_score = loop.sample_and_score

    def one_short(config, *rest):
        batch, sampled = sample_and_score(config, *rest)
        P, G = config.prompts_per_step, config.group_size
        if config.dynamic_sampling_batches and len(batch["rewards"]) == P:
            batch = {key: value[: P - 1] if key in loop.PER_GROUP_KEYS else value[: (P - 1) * G] for key, value in batch.items()}
        return batch, sampled

    monkeypatch.setattr(loop, "sample_and_score", one_short)


def std_scope_dropped(monkeypatch):
    """The loop calls compute_advantages without the config's std_scope: always the group's std."""
    monkeypatch.setattr(loop, "compute_advantages", with_argument(loop.compute_advantages, "std_scope", lambda given: "group"))


def reward_noise_seeded_by_a_constant(monkeypatch):
    """The reward model's noise is seeded by 0 whatever the run's seed."""
    for_config = RewardModel.for_config
    monkeypatch.setattr(RewardModel, "for_config", classmethod(lambda cls, config, seed: for_config(config, 0)))


def heldout_explained_variance(change):
    """A planted bug in the explained variance's call: ``change(predictions, targets, mask)`` -> the arguments it gets instead."""

    def plant(monkeypatch):
        explained_variance = loop.explained_variance
        monkeypatch.setattr(
            loop, "explained_variance", lambda predictions, targets, mask=None: explained_variance(*change(predictions, targets, mask))
        )

    return plant


# the padding counted: V there against a target of 0
heldout_ev_counts_the_padding = heldout_explained_variance(lambda predictions, targets, mask: (predictions, targets, None))
# V taken for the target and the rewards for the prediction
heldout_ev_arguments_swapped = heldout_explained_variance(lambda predictions, targets, mask: (targets, predictions, mask))


def old_logprobs_dropped(monkeypatch):
    """The batch reaches the policy's passes without the sampling policy's log-probs: the ratio is always 1."""
    update_policy = loop.update_policy
    monkeypatch.setattr(
        loop, "update_policy", lambda config, state, batch, *rest: update_policy(config, state, dataclasses.replace(batch, old_logprobs=None), *rest)
    )


def old_logprobs_recomputed_per_minibatch(monkeypatch):
    """Each minibatch's old log-probs come from the policy as it is at that minibatch, not the sampling policy's."""
    accumulate_gradients = loop.accumulate_gradients

    def recomputed(policy, batch, *rest):
        with torch.no_grad():
            current = loop.token_logprobs(policy, batch.prompts, batch.answers)
        return accumulate_gradients(policy, dataclasses.replace(batch, old_logprobs=current), *rest)

    monkeypatch.setattr(loop, "accumulate_gradients", recomputed)


def first_order_for_every_pass(monkeypatch):
    """The minibatches of every pass over a batch are those of its first pass, in the same order."""
    update_policy, minibatch_rows = loop.update_policy, loop.minibatch_rows

    def reused_order(*args):
        orders = []

        def first_order(*rows_args):
            if not orders:
                orders.append(minibatch_rows(*rows_args))
            return orders[0]

        with pytest.MonkeyPatch.context() as inside:
            inside.setattr(loop, "minibatch_rows", first_order)
            return update_policy(*args)

    monkeypatch.setattr(loop, "update_policy", reused_order)


def refill_cases(monkeypatch):
    for script, extra_batches, groups in [(["sss0", "1ss1"], 3, 4), (["s000", "0s00", "00s0", "000s"], 3, 4)]:
        wiring.test_dynamic_sampling_refills_up_to_p_groups_with_a_spread(script, extra_batches, groups)


def fresh_gradients_of_two_inner_epochs(monkeypatch):
    wiring.test_k_inner_epochs_make_k_optimiser_steps_each_from_a_fresh_gradient(2, wiring.record_optimiser_steps(monkeypatch))


# each planted bug, by name: how to plant it, and the behaviour tests that must catch it (each a function of a monkeypatch)
PLANTED_BUGS = {
    "kl-reference-from-current-policy": (
        kl_against_the_current_policy,
        [lambda _: wiring.test_the_kl_is_measured_against_the_frozen_reference_once_the_policy_has_moved()],
    ),
    "inner-epochs-ignored": (inner_epochs_ignored, [fresh_gradients_of_two_inner_epochs]),
    "zero-grad-outside-the-inner-loop": (gradients_zeroed_once_per_batch, [fresh_gradients_of_two_inner_epochs]),
    "gae-gamma-and-lambda-swapped": (
        gae_gamma_and_lambda_swapped,
        [wiring.test_the_critic_advantages_are_gae_with_gamma_one_and_the_configured_lambda],
    ),
    "gae-whitening-removed": (whitening_removed, [lambda _: wiring.test_the_critic_advantages_are_whitened_over_the_batch_tokens()]),
    "clip-ratio-per-response": (clip_ratio_per_response, [lambda _: wiring.test_clip_ratio_is_a_fraction_of_tokens()]),
    "probe-variance-without-1-over-k": (
        probe_variance_without_1_over_k,
        [
            lambda _: wiring.test_the_gradient_noise_probe_on_hand_computed_gradients(),
            lambda _: wiring.test_the_gradient_noise_probe_recovers_a_known_variance(),
        ],
    ),
    "probe-variance-ddof-0": (
        probe_variance_ddof_0,
        [
            lambda _: wiring.test_the_gradient_noise_probe_on_hand_computed_gradients(),
            lambda _: wiring.test_the_gradient_noise_probe_recovers_a_known_variance(),
        ],
    ),
    # with 8 shares and a small signal grad_snr is about 1, where its square root is too: only the hand-computed case sees it
    "probe-snr-square-root": (probe_snr_square_root, [lambda _: wiring.test_the_gradient_noise_probe_on_hand_computed_gradients()]),
    "batch-scope-tied-groups-not-zeroed": (
        tied_groups_centred_plainly_in_the_batch_scope,
        [lambda _: wiring.test_a_tied_group_is_exactly_zero_in_the_batch_scope_too()],
    ),
    "batch-scope-no-spread-std-not-zeroed": (
        batch_without_spread_keeps_its_rounding_std,
        [lambda _: wiring.test_a_batch_without_any_spread_is_exactly_zero_with_eps_and_nan_without()],
    ),
    "mc-value-rollouts-left-out-of-samples": (
        value_rollouts_left_out_of_the_samples,
        [wiring.test_the_samples_count_every_generated_response_the_value_rollouts_included],
    ),
    "mc-value-gae-lambda-not-zero": (monte_carlo_gae_with_lambda_095, [wiring.test_the_monte_carlo_advantages_are_gae_with_lambda_zero]),
    "mc-value-rollouts-at-temperature-one": (
        value_rollouts_at_temperature_one,
        [wiring.test_the_value_rollouts_are_sampled_at_the_policys_sampling_temperature],
    ),
    "critic-epochs-and-minibatches-swapped": (
        critic_epochs_and_minibatches_swapped,
        [wiring.test_the_critic_makes_its_epochs_passes_each_of_its_minibatches],
    ),
    "critic-updates-not-the-steps-taken": (
        critic_updates_reported_as_epochs_times_minibatches,
        [lambda monkeypatch: wiring.test_the_critic_reports_the_optimiser_steps_it_took(monkeypatch, 3)],
    ),
    "dynamic-sampling-one-group-short": (refill_one_group_short, [lambda monkeypatch: refill_cases(monkeypatch)]),
    "std-scope-dropped": (std_scope_dropped, [lambda _: wiring.test_the_trainer_scales_the_advantages_with_the_configured_std_scope()]),
    "reward-noise-not-seeded-by-the-run": (reward_noise_seeded_by_a_constant, [lambda _: wiring.test_the_reward_noise_is_seeded_by_the_runs_seed()]),
    "heldout-ev-counts-padding": (
        heldout_ev_counts_the_padding,
        [lambda _: wiring.test_the_held_out_explained_variance_compares_v_with_each_responses_reward()],
    ),
    "heldout-ev-arguments-swapped": (
        heldout_ev_arguments_swapped,
        [lambda _: wiring.test_the_held_out_explained_variance_compares_v_with_each_responses_reward()],
    ),
    "old-logprobs-dropped": (
        old_logprobs_dropped,
        [lambda _: wiring.test_one_pass_of_several_minibatches_takes_the_ratio_against_the_sampling_policy()],
    ),
    "old-logprobs-recomputed-per-minibatch": (
        old_logprobs_recomputed_per_minibatch,
        [lambda _: wiring.test_one_pass_of_several_minibatches_takes_the_ratio_against_the_sampling_policy()],
    ),
    "minibatch-order-reused-across-passes": (first_order_for_every_pass, [wiring.test_every_pass_draws_a_fresh_order_of_whole_groups]),
}
CASES = {f"{name}-{index}": (plant, behaviour) for name, (plant, behaviours) in PLANTED_BUGS.items() for index, behaviour in enumerate(behaviours)}


@pytest.mark.parametrize("case", CASES)
def test_the_behaviour_test_passes_on_the_code_and_fails_under_the_planted_bug(case):
    plant, behaviour = CASES[case]
    with pytest.MonkeyPatch.context() as clean:
        behaviour(clean)
    with pytest.MonkeyPatch.context() as planted:
        plant(planted)
        with pytest.raises(AssertionError):
            behaviour(planted)
