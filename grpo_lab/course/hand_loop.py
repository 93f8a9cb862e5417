"""The GRPO loop in the learner's hands (notebook 02b): a short training loop around a step the
learner writes, and the check that this step reproduces ``train()`` on the same seed.

The learner's step has the signature

    grpo_step(policy, optimizer, problems, reward_model, generator, config) -> (rewards [P, G], loss)

and does one GRPO step: sample G answers to each of P fresh problems, score them, turn the
rewards into advantages and the loss, one optimiser step. Everything it is handed is built by the
trainer's own ``start_run``, so that with the same seed the same problems are drawn, the same
answers are sampled and the same Adam state is updated as in ``train()``. The step covers GRPO as
the trainer runs it by default (z-score, one pass per batch, so the ratio is 1 and the clip never
acts); the knobs it does not implement must keep their defaults (``HAND_STEP_DEFAULTS``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..checks.config_rules import validate_config
from ..core.config import TrainConfig
from ..errors import ConfigError
from ..task import Task, eval_accuracy
from ..trainer import start_run, train
from .exercises import FAIL, NOT_ATTEMPTED, PASS, verdict

# the knobs a hand-written step of about 40 lines does not implement, and the value it assumes
HAND_STEP_DEFAULTS = {
    "baseline": "zscore",
    "std_scope": "group",
    "std_ddof": 1,
    "eps_mode": "add",
    "kl_coef": 0.0,
    "inner_epochs": 1,
    "loss_agg": "seq_mean",
    "reward": "exact",
    "reward_noise": 0.0,
    "hard_reward_scale": 1.0,
    "skip_zero_std_groups": False,
    "dynamic_sampling_batches": 0,
    "micro_batch_size": 0,
    "probe_every": 0,
}
EXERCISE = "02b_grpo_step"
MATCH_STEPS = 3  # steps the checker compares: enough for sampling to depend on the updated policy
PARAMETER_ATOL = 1e-5  # float32 rounding of the same sums taken in another order, after a few Adam steps

UPDATE_HINT = (
    "z-score each group's rewards (std with Bessel's correction, plus std_eps); the loss is the mean over answers of each "
    "answer's token mean of -A; clip the gradient norm to config.max_grad_norm, then make one optimizer.step()"
)

GRPOStep = Callable[..., tuple[torch.Tensor, float]]


def hand_config(**knobs: object) -> TrainConfig:
    """A validated TrainConfig with the knobs a hand-written step assumes (``HAND_STEP_DEFAULTS``)
    and ``knobs`` (steps, seed, group_size, prompts_per_step, lr, ...). A knob the hand-written step
    does not implement, set to another value, raises one ConfigError naming it."""
    for name, value in knobs.items():
        if name in HAND_STEP_DEFAULTS and value != HAND_STEP_DEFAULTS[name]:
            raise ConfigError(name, value, f"the hand-written step implements only {name}={HAND_STEP_DEFAULTS[name]!r}; use train() for others")
    return validate_config(TrainConfig(**{**HAND_STEP_DEFAULTS, "device": "cpu", **knobs}))


def train_by_hand(grpo_step: GRPOStep, config: TrainConfig) -> tuple[list[dict], torch.nn.Module]:
    """Run ``config.steps`` calls of the learner's ``grpo_step`` on the trainer's own starting state,
    evaluating greedily on the held-out set at step 0, every ``config.eval_every`` steps and at the
    end, as ``train()`` does. Returns (history: one dict per step with step, reward, loss and, where
    evaluated, eval_accuracy; the trained policy)."""
    state, problems = start_run(config)
    task = Task.parse(config.task)
    history = [{"step": 0, "eval_accuracy": eval_accuracy(state.policy, task)}]
    for step in range(1, config.steps + 1):
        rewards, loss = grpo_step(state.policy, state.optimizer, problems, state.reward_model, state.sampling_generator, config)
        record = {"step": step, "reward": float(rewards.float().mean()), "loss": float(loss)}
        if (config.eval_every and step % config.eval_every == 0) or step == config.steps:
            record["eval_accuracy"] = eval_accuracy(state.policy, task)
        history.append(record)
    state.policy.eval()
    return history, state.policy


def compare_with_train(grpo_step: GRPOStep, config: TrainConfig) -> dict:
    """Run ``grpo_step`` by hand and ``train(config)``: {"reward_steps_equal": the steps whose mean
    reward is identical, "loss_abs_diff_max", "parameter_abs_diff_max": after the last step,
    "steps"}. Equal rewards mean the same answers were sampled (the RNG was used in the same order)."""
    mine, my_policy = train_by_hand(grpo_step, config)
    theirs = train(config)
    pairs = list(zip(mine[1:], theirs.history[1:]))
    parameter_diff = max(float((a - b).abs().max()) for a, b in zip(my_policy.state_dict().values(), theirs.policy.state_dict().values()))
    return {
        "steps": config.steps,
        "reward_steps_equal": sum(a["reward"] == b["reward"] for a, b in pairs),
        "loss_abs_diff_max": max(abs(a["loss"] - b["loss"]) for a, b in pairs),
        "parameter_abs_diff_max": parameter_diff,
    }


def check_grpo_step(grpo_step: GRPOStep, steps: int = MATCH_STEPS) -> None:
    """Exercise 02b: the learner's step, run for ``steps`` steps from the reference policy, must sample
    the same answers as ``train()`` (same seed) and end at the same parameters within PARAMETER_ATOL."""
    config = hand_config(steps=steps, seed=0, eval_every=0, group_size=8, prompts_per_step=8)
    try:
        comparison = compare_with_train(grpo_step, config)
    except NotImplementedError:
        return verdict(EXERCISE, NOT_ATTEMPTED, "the cell above still raises NotImplementedError; replace it with your code")
    except Exception as error:  # a learner's bug: a verdict, not a traceback
        return verdict(EXERCISE, FAIL, f"running it raised {type(error).__name__}: {error}")
    if comparison["reward_steps_equal"] != steps:
        first = comparison["reward_steps_equal"] + 1
        hint = (
            "draw the problems first, then sample the answers with the generator you are given"
            if first == 1
            else f"step {first - 1}'s update differs from train()'s, so the policy that sampled step {first} differs. {UPDATE_HINT}"
        )
        return verdict(EXERCISE, FAIL, f"step {first}'s rewards differ from train()'s: different answers were sampled. Hint: {hint}")
    if comparison["parameter_abs_diff_max"] > PARAMETER_ATOL:
        return verdict(
            EXERCISE,
            FAIL,
            f"same answers, but after {steps} steps the parameters differ from train()'s by up to {comparison['parameter_abs_diff_max']:.2g} "
            f"(allowed {PARAMETER_ATOL:g}). Hint: {UPDATE_HINT}",
        )
    return verdict(
        EXERCISE,
        PASS,
        f"{steps} steps: the same answers as train() at every step, largest parameter difference {comparison['parameter_abs_diff_max']:.1g}",
    )
