"""Planted bugs: each wiring bug below is installed by patching a function of grpo_lab.core (a
wrapper or a replacement, never an edit of the source text, so reformatting the code cannot undo
it), and the behaviour tests named for it (test_wiring.py) must pass on the real code and fail
under the bug."""

import dataclasses

import pytest
import test_wiring as wiring
import torch

import grpo_lab.core.advantages as core_advantages
import grpo_lab.core.loop as loop
import grpo_lab.core.probes as probes


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
    """The loop's GAE gets gamma and lambda in each other's place."""
    gae = loop.gae
    monkeypatch.setattr(loop, "gae", lambda rewards, values, mask, gamma, lam: gae(rewards, values, mask, lam, gamma))


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
