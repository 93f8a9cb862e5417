"""PPO's critic: GAE, whitening and the value loss against hand-computed values; a critic that
trains every parameter; and (a learning test) a critic that learns V at a fixed policy."""

import pytest
import torch

from grpo_lab import TrainConfig, train
from grpo_lab.checks.checkpoints import load_reference_policy
from grpo_lab.core.critic import ValueModel, answer_values, explained_variance, gae, update_critic, value_loss, whiten
from grpo_lab.core.model import decode, sample
from grpo_lab.task import ProblemSampler, RewardModel, Task, eval_batch

# two responses: the first 3 answer tokens long, the second 2 (its third column is padding)
MASK = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])


def test_gae_matches_the_hand_computed_recursion():
    rewards = torch.tensor([1.0, 1.0])
    values = torch.tensor([[0.5, 0.6, 0.7], [0.2, 0.3, 9.0]])  # 9.0 sits on padding: it must not leak in
    advantages, returns = gae(rewards, values, MASK, gamma=1.0, lam=0.5)
    # row 0: deltas 0.6-0.5, 0.7-0.6, 1-0.7 -> A2 = 0.3, A1 = 0.1 + 0.5*0.3, A0 = 0.1 + 0.5*A1
    # row 1: the episode ends at column 1, so V after it is 0, not the padding's 9.0 -> A1 = 1 - 0.3, A0 = 0.1 + 0.5*A1
    expected_advantages = torch.tensor([[0.225, 0.25, 0.3], [0.45, 0.7, 0.0]])
    assert torch.allclose(advantages, expected_advantages, atol=1e-6)
    # returns = advantages + values (the critic's target), 0 on padding
    assert torch.allclose(returns, torch.tensor([[0.725, 0.85, 1.0], [0.65, 1.0, 0.0]]), atol=1e-6)


def test_gae_with_lambda_one_gives_the_monte_carlo_return():
    values = torch.tensor([[0.5, 0.6, 0.7], [0.2, 0.3, 0.0]])
    _, returns = gae(torch.tensor([1.0, 0.0]), values, MASK, gamma=1.0, lam=1.0)
    assert torch.allclose(returns, torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]), atol=1e-6)


def test_whiten_centres_and_scales_over_answer_tokens_only():
    advantages = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 100.0]])  # 100 is padding
    # over the five answer tokens: mean 3, population variance (4 + 1 + 0 + 1 + 4) / 5 = 2
    expected = torch.tensor([[-2.0, -1.0, 0.0], [1.0, 2.0, 0.0]]) / 2**0.5
    assert torch.allclose(whiten(advantages, MASK), expected, atol=1e-6)


def test_value_loss_is_masked_and_its_clip_keeps_the_larger_error():
    values = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 7.0]])
    returns = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.5, 0.0]])
    # unclipped squared errors 1, 0, 1, 0.25, 0 over the five answer tokens (padding ignored)
    assert value_loss(values, returns, MASK).item() == pytest.approx(2.25 / 5)
    old = torch.zeros_like(values)
    # clip 0.2: V may move 0.2 from 0 -> moved values 0.2, 0, 0, 0.2, 0.2; errors 0.04, 0, 1, 0.64, 0.09;
    # the larger of clipped and unclipped per token: 1, 0, 1, 0.64, 0.09
    assert value_loss(values, returns, MASK, old, value_clip=0.2).item() == pytest.approx(2.73 / 5)


def test_explained_variance_is_one_for_a_perfect_critic_and_zero_for_a_constant():
    returns = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    assert explained_variance(returns, returns, MASK) == pytest.approx(1.0)
    assert explained_variance(torch.full_like(returns, 3.0), returns, MASK) == pytest.approx(0.0, abs=1e-6)


def test_explained_variance_counts_only_masked_entries_and_is_nan_with_nothing_to_explain():
    import math

    returns = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    values = returns.clone()
    values[1, 2] = 9.0  # a wrong value on padding: not counted
    assert explained_variance(values, returns, MASK) == pytest.approx(1.0)
    # no mask: every entry counts. residual [0, 1, 0, 1]: variance 0.25; targets: mean 3, variance (4 + 0 + 0 + 4) / 4 = 2
    predictions, targets = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 3.0, 3.0, 5.0])
    assert explained_variance(predictions, targets) == pytest.approx(1 - 0.25 / 2)
    assert math.isnan(explained_variance(predictions, torch.full((4,), 0.5)))  # Var(targets) = 0


def sampled_batch(policy, rows: int = 32, seed: int = 0):
    task = Task.parse("2d+")
    batch = ProblemSampler(task, seed).sample(rows)
    answers, mask = sample(policy, batch.prompts, task.max_answer_length, 1.0, torch.Generator().manual_seed(seed))
    rewards, _ = RewardModel()([decode(row) for row in answers], batch.answers)
    return batch.prompts, answers, mask, rewards


def test_every_critic_parameter_gets_a_gradient_and_changes_after_an_update():
    # built as train() builds it: from a reference frozen as the KL anchor
    reference = load_reference_policy("default")
    reference.requires_grad_(False)
    critic = ValueModel(reference)
    parameters = dict(critic.named_parameters())
    assert all(p.requires_grad for p in parameters.values())
    assert critic.num_trainable_parameters() == sum(p.numel() for p in parameters.values()) > 100_000
    before = {name: p.detach().clone() for name, p in parameters.items()}
    prompts, answers, mask, rewards = sampled_batch(reference)
    with torch.no_grad():
        old_values = answer_values(critic, prompts, answers)
    _, returns = gae(rewards, old_values, mask)
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
    out = update_critic(
        critic,
        optimizer,
        prompts,
        answers,
        mask,
        returns,
        old_values,
        TrainConfig(baseline="critic", group_size=1, critic_epochs=1, critic_minibatches=1, value_clip=0.0, max_grad_norm=1.0),
        generator=torch.Generator().manual_seed(0),
    )
    assert out["critic_updates"] == 1
    no_gradient = [name for name, p in parameters.items() if p.grad is None or not p.grad.abs().sum() > 0]
    unchanged = [name for name, p in parameters.items() if torch.equal(p.detach(), before[name])]
    assert not no_gradient, f"no gradient reached {no_gradient}"
    assert not unchanged, f"not updated: {unchanged}"
    assert all(not p.requires_grad for p in reference.parameters())  # the reference stays frozen


def test_update_critic_runs_epochs_times_minibatches_steps():
    reference = load_reference_policy("default")
    critic = ValueModel(reference)
    prompts, answers, mask, rewards = sampled_batch(reference, rows=30)
    old_values = torch.zeros_like(mask)
    _, returns = gae(rewards, old_values, mask)
    out = update_critic(
        critic,
        torch.optim.Adam(critic.parameters(), lr=1e-3),
        prompts,
        answers,
        mask,
        returns,
        old_values,
        TrainConfig(baseline="critic", group_size=1, critic_epochs=3, critic_minibatches=4, value_clip=0.2, max_grad_norm=1.0),
        generator=torch.Generator().manual_seed(0),
    )
    assert out["critic_updates"] == 12 and out["value_loss"] > 0


def test_a_ppo_run_logs_the_critic_and_is_deterministic():
    config = dict(baseline="critic", group_size=1, prompts_per_step=16, steps=3, eval_every=0, probe_every=0, critic_epochs=2, critic_minibatches=2)
    first, second = train(TrainConfig(**config)), train(TrainConfig(**config))
    assert first.status == "finished"
    assert all(record["critic_updates"] == 4 for record in first.history[1:])
    strip = [{k: v for k, v in r.items() if k != "wall_time"} for r in first.history]
    assert strip == [{k: v for k, v in r.items() if k != "wall_time"} for r in second.history]


@pytest.mark.learning
def test_a_critic_learns_v_at_a_fixed_policy_with_the_documented_updates():
    """The default critic (critic_lr 3e-4, 4 epochs x 4 minibatches) on 96 fresh batches of 128 of the
    reference's rollouts: 1536 updates. It fits its training batches (explained variance over answer
    tokens 0.087 for seed 0 in `sweep critic-fit`, 1 thread) and gains on fresh ones from its untrained
    start (-0.028 -> 0.018), but slowly: held-out it stays near a constant's 0 (0.012 +- 0.012 over 4 seeds),
    the course's "a critic is slow to learn"."""
    from grpo_lab.experiments.catalog import critic_fit_grid
    from grpo_lab.experiments.measures import critic_fit_unit

    cell = next(c for c in critic_fit_grid(fast=False) if c["id"] == "reference-fresh")
    unit = critic_fit_unit(cell["config"], seed=0)
    metrics, held_out = unit["metrics"], unit["series"]["ev_token"]
    assert metrics["critic_updates"] == 1536
    assert metrics["train_ev_token"] > 0.05
    assert held_out[-1] > held_out[0] + 0.02
    # and a group of 64 samples is a better V(prompt) than the critic: the course's point
    assert metrics["group_ev.G=64"] > metrics["critic_ev_prompt"] + 0.02


@pytest.mark.learning
def test_the_fixed_pool_is_the_first_of_the_fresh_batches_and_critics_of_a_seed_share_their_samples():
    """critic-fit samples a policy's responses, and their Monte-Carlo values, once per seed (measures.critic_fit_samples,
    critic_fit_mc_values): the fixed pool is the fresh stream's first batch, so the two critics agree after that batch and
    differ later."""
    from grpo_lab.experiments.catalog import critic_fit_grid
    from grpo_lab.experiments.measures import critic_fit_mc_values, critic_fit_samples, critic_fit_unit

    cells = {c["id"]: c["config"] for c in critic_fit_grid(fast=True)}
    critic_fit_samples.cache_clear()
    critic_fit_mc_values.cache_clear()
    fresh = critic_fit_unit(cells["reference-fresh"], seed=0)
    fixed = critic_fit_unit(cells["reference-fixed-pool"], seed=0)
    assert critic_fit_samples.cache_info().misses == 1 and critic_fit_mc_values.cache_info().misses == 1
    assert fresh["series"]["updates"][1] == fixed["series"]["updates"][1] == 16  # one batch, 16 updates
    assert fresh["series"]["ev_prompt"][1] == fixed["series"]["ev_prompt"][1]
    assert fresh["series"]["ev_prompt"][-1] != fixed["series"]["ev_prompt"][-1]
    assert fresh["metrics"]["oracle_ev"] == fixed["metrics"]["oracle_ev"]
    assert fresh["metrics"]["oracle_ev_token"] == fixed["metrics"]["oracle_ev_token"]


@pytest.mark.learning
def test_a_critic_trained_on_one_pool_of_rollouts_overfits():
    """The same critic trained again and again on one batch of 128 rollouts: after 512 updates it fits
    that batch and is worse than a constant on fresh ones (measured: train 0.99+, held out -0.55)."""
    from grpo_lab.experiments.catalog import critic_fit_grid
    from grpo_lab.experiments.measures import critic_fit_unit

    cell = next(c for c in critic_fit_grid(fast=False) if c["id"] == "reference-fixed-pool")
    metrics = critic_fit_unit({**cell["config"], "batches": 32}, seed=0)["metrics"]
    assert metrics["train_ev_token"] > 0.5
    assert metrics["critic_ev_token"] < -0.2


# --- the critic variants (critic_lambda, critic_warmup_steps, critic_trunk) and the token-level ceiling -----------------


def parameters_of(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in module.named_parameters()}


def ppo_by_hand(config: TrainConfig, steps: int) -> tuple[torch.nn.Module, torch.nn.Module]:
    """PPO as it ran before the variants, from the loop's parts: a separate critic copied from the reference (its head
    drawn as ``trainer.start_run`` draws it), GAE with gae_lambda for advantages and returns alike, the critic's own
    Adam after each policy update, no warm-up. Returns (policy, critic) after ``steps`` steps."""
    from grpo_lab import trainer
    from grpo_lab.core import loop

    state, problems = trainer.start_run(config)
    torch.manual_seed(config.seed)
    critic = ValueModel(load_reference_policy(config.reference))
    critic_optimizer = torch.optim.Adam(critic.parameters(), lr=config.critic_lr, fused=True)
    for _ in range(steps):
        groups, _ = loop.sample_and_score(config, state, problems)
        longest = int(groups["mask"].sum(dim=1).max())
        prompts, answers, mask = groups["prompts"], groups["answers"][:, :longest], groups["mask"][:, :longest]
        with torch.no_grad():
            values = answer_values(critic, prompts, answers)
        advantages, returns = gae(groups["rewards"].reshape(-1), values, mask, 1.0, config.gae_lambda)
        loop.update_policy(config, state, loop.Rollout(prompts, answers, mask, whiten(advantages, mask)), 0.0)
        update_critic(critic, critic_optimizer, prompts, answers, mask, returns, values, config, state.critic_shuffle)
    return state.policy, critic


def test_a_default_ppo_run_is_the_run_before_the_variants():
    from grpo_lab import trainer
    from grpo_lab.core import loop

    config = TrainConfig(
        baseline="critic", group_size=2, prompts_per_step=8, steps=3, eval_every=0, probe_every=0, seed=5, critic_epochs=2, critic_minibatches=2
    )
    hand_policy, hand_critic = ppo_by_hand(config, steps=3)
    state, problems = trainer.start_run(config)
    _, status, _ = loop.run(config, state, problems, eval_batch(Task.parse(config.task)))
    assert status == "finished"
    for run_model, hand_model in ((state.policy, hand_policy), (state.value_model, hand_critic)):
        run_parameters, hand_parameters = parameters_of(run_model), parameters_of(hand_model)
        assert run_parameters.keys() == hand_parameters.keys()
        assert all(torch.equal(run_parameters[name], hand_parameters[name]) for name in run_parameters)


class GivenValues(torch.nn.Module):
    """A stand-in critic whose V(s_t) for the answer tokens are ``values`` [B, La] (``answer_values`` reads them back)."""

    def __init__(self, values: torch.Tensor, prompt_length: int):
        super().__init__()
        self.values, self.prompt_length = values, prompt_length

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(tokens.shape)
        out[:, self.prompt_length - 1 :] = self.values
        return out


@pytest.mark.parametrize("critic_lambda", [1.0, -1.0])
def test_the_critics_returns_take_critic_lambda_and_the_advantages_gae_lambda(critic_lambda):
    from types import SimpleNamespace

    from grpo_lab.core.loop import value_advantages

    values = torch.tensor([[0.5, 0.6, 0.7], [0.2, 0.3, 0.0]])
    prompts, answers = torch.zeros(2, 2, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long)
    state = SimpleNamespace(value_model=GivenValues(values, prompt_length=2), device=torch.device("cpu"))
    config = TrainConfig(baseline="critic", group_size=1, gae_lambda=0.0, critic_lambda=critic_lambda)
    advantages, seen_values, returns = value_advantages(config, state, prompts, answers, MASK, torch.tensor([[1.0], [0.0]]), {})
    # the actor's lambda 0: A_t = r_t + V(s_t+1) - V(s_t), V after the last answer token 0 -> row 0: 0.1, 0.1, 1 - 0.7; row 1: 0.1, 0 - 0.3
    by_hand = torch.tensor([[0.1, 0.1, 0.3], [0.1, -0.3, 0.0]])
    assert torch.allclose(advantages, whiten(by_hand, MASK), atol=1e-6)
    assert torch.equal(seen_values, values * MASK)
    if critic_lambda == 1.0:  # VAPO's critic: the Monte-Carlo return, the response's reward at each of its tokens
        assert torch.allclose(returns, torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]), atol=1e-6)
    else:  # -1: the critic follows gae_lambda (0): returns = A + V = r_t + V(s_t+1)
        assert torch.allclose(returns, torch.tensor([[0.6, 0.7, 1.0], [0.3, 0.0, 0.0]]), atol=1e-6)


def test_the_critic_warm_up_fits_the_critic_and_not_the_policy_before_step_one(monkeypatch):
    from grpo_lab import trainer
    from grpo_lab.core import loop

    P, warmup = 8, 2
    config = TrainConfig(
        baseline="critic", group_size=1, prompts_per_step=P, steps=1, eval_every=0, probe_every=0, critic_warmup_steps=warmup, critic_epochs=1
    )
    state, problems = trainer.start_run(config)
    policy_at_start, critic_at_start = parameters_of(state.policy), parameters_of(state.value_model)
    at_step_one = {}
    train_step = loop.train_step

    def first_step(config, state, problems, step):
        at_step_one.update(policy=parameters_of(state.policy), critic=parameters_of(state.value_model))
        return train_step(config, state, problems, step)

    monkeypatch.setattr(loop, "train_step", first_step)
    history, status, _ = loop.run(config, state, problems, eval_batch(Task.parse(config.task)))
    assert status == "finished"
    assert all(torch.equal(at_step_one["policy"][name], p) for name, p in policy_at_start.items())
    assert all(not torch.equal(at_step_one["critic"][name], p) for name, p in critic_at_start.items())
    # the warm-up's responses count in samples, from step 0 on
    assert history[0]["samples"] == warmup * P
    assert history[1]["samples"] == warmup * P + P


def test_a_shared_value_head_reads_the_policys_hidden_states():
    from grpo_lab import trainer

    state, _ = trainer.start_run(TrainConfig(baseline="critic", group_size=1, critic_trunk="shared"))
    policy, critic = state.policy, state.value_model
    trunk = {id(p) for name, p in policy.named_parameters() if not name.startswith("head.")}
    assert {id(p) for p in critic.trunk.parameters()} == trunk  # the very tensors, not a copy
    assert state.value_optimizer is None and {id(p) for p in critic.value_head.parameters()} <= {id(p) for p in state.parameters}
    tokens = torch.randint(2, 16, (4, 9))
    with torch.no_grad():  # the hidden states V reads are those the policy's logits come from
        assert torch.allclose(policy.head(critic.trunk(tokens)), policy(tokens), atol=1e-6)
        before = critic(tokens)
        policy.blocks[0].mlp[0].weight.add_(0.1)
        assert not torch.allclose(critic(tokens), before)


def test_a_shared_trunks_policy_gradient_includes_vf_coef_times_the_value_loss_gradient():
    from grpo_lab import trainer
    from grpo_lab.core import loop

    vf_coef = 0.25
    config = TrainConfig(baseline="critic", group_size=1, critic_trunk="shared", vf_coef=vf_coef, max_grad_norm=1e9, micro_batch_size=8)
    state, _ = trainer.start_run(config)
    policy, critic = state.policy, state.value_model
    state.optimizer = torch.optim.SGD(state.parameters, lr=0.0)  # keeps the gradients of update_policy's one step, moves nothing
    prompts, answers, mask, rewards = sampled_batch(policy, rows=24)
    with torch.no_grad():
        old_values = answer_values(critic, prompts, answers)
    returns = rewards[:, None] * mask
    advantages = whiten(torch.randn(mask.shape, generator=torch.Generator().manual_seed(1)), mask)
    metrics = loop.update_policy(config, state, loop.Rollout(prompts, answers, mask, advantages, returns=returns, old_values=old_values), 0.0)

    def gradients() -> dict[str, torch.Tensor]:  # every parameter's .grad (0 where none arrived), the trunk's under both names
        named = [*critic.named_parameters(), *((f"policy.{name}", p) for name, p in policy.named_parameters())]
        return {name: torch.zeros_like(p) if p.grad is None else p.grad.clone() for name, p in named}

    joint = gradients()
    state.optimizer.zero_grad(set_to_none=True)
    loop.accumulate_gradients(policy, loop.Rollout(prompts, answers, mask, advantages), config, state.max_len)
    policy_part = gradients()
    state.optimizer.zero_grad(set_to_none=True)
    value_loss(answer_values(critic, prompts, answers), returns, mask, old_values).backward()
    value_part = gradients()
    for name in joint:
        assert torch.allclose(joint[name], policy_part[name] + vf_coef * value_part[name], atol=1e-6), name
    assert value_part["value_head.weight"].abs().sum() > 0 and value_part["trunk.blocks.0.qkv.weight"].abs().sum() > 0
    assert metrics["critic_updates"] == 1 and metrics["value_loss"] == pytest.approx(float(value_loss(old_values, returns, mask)), rel=1e-5)


def test_a_run_with_a_shared_trunk_trains_its_value_head_in_the_policys_steps():
    from grpo_lab import trainer
    from grpo_lab.core import loop

    config = TrainConfig(baseline="critic", group_size=1, prompts_per_step=8, steps=2, eval_every=0, probe_every=0, critic_trunk="shared")
    state, problems = trainer.start_run(config)
    head = parameters_of(state.value_model.value_head)
    history, status, _ = loop.run(config, state, problems, eval_batch(Task.parse(config.task)))
    assert status == "finished"
    assert all(record["critic_updates"] == record["policy_updates"] == 1 and record["value_loss"] > 0 for record in history[1:])
    assert all(not torch.equal(p, head[name]) for name, p in parameters_of(state.value_model.value_head).items())


@pytest.fixture
def sharp_reference(monkeypatch):
    """critic-fit's fixed policy replaced by the reference with its logits x 10^4: sampling at temperature 1 is then
    greedy, so each response is the only continuation of each of its prefixes. The samples' caches are emptied
    before and after."""
    from grpo_lab.experiments import measures

    policy = load_reference_policy("default")
    with torch.no_grad():
        policy.head.weight.mul_(1e4)
        policy.head.bias.mul_(1e4)
    for cached in (measures.critic_fit_samples, measures.critic_fit_mc_values):
        cached.cache_clear()
    monkeypatch.setattr(measures, "fixed_policy", lambda *args: policy)
    yield
    for cached in (measures.critic_fit_samples, measures.critic_fit_mc_values):
        cached.cache_clear()


def test_the_token_level_ceiling_is_the_critics_ceiling_where_v_is_exact(sharp_reference):
    """With a deterministic policy the true V(s_t) of a response's prefix is that response's reward, so Monte-Carlo
    values explain all of the targets' variance (1, which no critic exceeds) while the critic explains less."""
    from grpo_lab.experiments.measures import critic_fit_unit

    config = dict(
        policy="reference", half_trained_steps=0, batches=2, prompts_per_batch=16, data="fresh", critic={},
        targets_per_prompt=2, oracle_samples=2, group_sizes=[2],
    )  # fmt: skip
    metrics = critic_fit_unit(config, seed=0)["metrics"]
    assert 0.1 < metrics["reward"] < 0.9  # the targets' rewards vary: there is something to explain
    assert metrics["oracle_ev_token"] == pytest.approx(1.0)
    assert metrics["critic_ev_token"] < metrics["oracle_ev_token"]
