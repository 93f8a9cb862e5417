"""TrainConfig: every knob of a run, each with its default and one line of help.

The command line's flags are these names with '-' for '_' (``python -m grpo_lab train --help`` prints
the help lines). The allowed range of each knob is checked outside the algorithm, by
``grpo_lab.checks.config_rules.validate_config``, before a run starts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


def knob(default: object, help: str) -> Any:
    """A TrainConfig field: its default and one line of help (shown by ``python -m grpo_lab train --help``)."""
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """Every knob of a run. The command line's flags are these names with '-' for '_', and each
    knob's help text (``field.metadata["help"]``) is that flag's ``--help`` line."""

    task: str = knob(
        "2d+",
        "problems: '{digits}d{ops}', digits 1-5, ops from '+-*' (e.g. '2d+', '1d+-*'), or '{digits}d+w' worked addition (e.g. '3d+w'); "
        "the references read every task to 3 digits, 'long' to 5, 'practice' 3d+w",
    )
    reference: str = knob(
        "default",
        "starting policy and KL anchor: 'default' (~50% accurate), 'sparse' (~30%), 'weak' (<15%), 'long' (5d+, ~28%), 'practice' (3d+w, ~19%), "
        "or a .pt path",
    )
    group_size: int = knob(8, "G, responses sampled per prompt (GRPO's group)")
    prompts_per_step: int = knob(16, "P, prompts per training step; a step samples P*G responses")
    prompt_pool: int = knob(
        0, "0: fresh problems every step; N: one fixed pool of N problems (seeded, never the eval set's) revisited epoch after epoch"
    )
    baseline: str = knob("zscore", "none | mean | zscore | rloo | ema (core/advantages.py) | critic (core/critic.py) | mc_value (core/mc_value.py)")
    std_eps: float = knob(1e-4, "epsilon in the z-score's denominator (TRL 1e-4, verl 1e-6, OpenRLHF 1e-9)")
    std_scope: str = knob("group", "std over each group, or over the whole batch ('batch', TRL scale_rewards='batch')")
    std_ddof: int = knob(1, "1: Bessel's correction (TRL, verl); 0: population std")
    eps_mode: str = knob("add", "'add': std + eps (TRL, verl); 'clamp': max(std, eps) (the card's formula)")
    ema_decay: float = knob(0.9, "decay of the global moving-average baseline for baseline='ema'")
    kl_coef: float = knob(0.0, "beta, weight of the k3 KL to the reference (TRL default 0.0; DeepSeekMath 0.04)")
    clip_eps: float = knob(0.2, "PPO ratio clip: the ratio is clipped to [1 - clip_eps, 1 + clip_eps]")
    inner_epochs: int = knob(1, "optimiser passes over each batch (TRL num_iterations, CleanRL update_epochs); >1 makes the clip matter")
    policy_minibatches: int = knob(
        1,
        "shuffled minibatches of whole groups per policy pass, one optimiser step each (CleanRL num_minibatches): inner_epochs x this updates a step",
    )
    critic_schedule: str = knob(
        "own",
        "'own': critic_epochs x critic_minibatches critic updates a step; 'policy': the policy's inner_epochs x policy_minibatches (verl, OpenRLHF)",
    )
    mc_rollouts: int = knob(4, "rollouts from each answer prefix that estimate V(s_t) for baseline='mc_value' (VinePPO)")
    lr: float = knob(1e-4, "Adam learning rate of the policy")
    critic_lr: float = knob(
        3e-4,
        "Adam learning rate of the critic (baseline='critic' only); CleanRL's 2.5e-4. `sweep critic-fit`: 1e-4 and 3e-4 fit best, 1e-3 and 3e-3 worse",
    )
    critic_epochs: int = knob(4, "passes of the critic over each batch (CleanRL's update_epochs); the critic needs many more updates than the policy")
    critic_minibatches: int = knob(4, "shuffled minibatches per critic pass, one Adam step each: epochs x minibatches critic updates per step")
    value_clip: float = knob(0.0, "PPO's clipped value loss: V moves at most this far from its sampling-time value per batch; 0 = off")
    critic_trunk: str = knob(
        "separate",
        "'separate': the critic is its own copy of the reference; 'shared': a value head on the policy's hidden states, trained with it "
        "(policy loss + vf_coef x value loss, one optimiser, the policy's lr and schedule)",
    )
    vf_coef: float = knob(0.5, "weight of the value loss in the joint loss of critic_trunk='shared' (CleanRL's vf_coef 0.5)")
    critic_lambda: float = knob(-1.0, "lambda of the critic's return targets (VAPO: 1.0, the Monte-Carlo return); -1 = the same as gae_lambda")
    critic_warmup_steps: int = knob(
        0,
        "VAPO's value pretraining: steps fitting the critic to the starting policy's responses before the first policy update "
        "(counted in samples); 0 = off",
    )
    max_grad_norm: float = knob(1.0, "gradient norm clip before each optimiser step (TRL default 1.0)")
    steps: int = knob(150, "training steps")
    temperature: float = knob(1.0, "sampling temperature of the responses (evaluation is greedy)")
    reward: str = knob("exact", "'exact': 1 if the answer is right else 0; 'partial': the share of its characters in place (units digit first)")
    reward_offset: float = knob(0.0, "simulated reward-model bias added to every reward")
    reward_scale: float = knob(1.0, "simulated reward-model scale multiplying every reward")
    reward_noise: float = knob(0.0, "std of Gaussian noise added to every reward")
    hard_reward_scale: float = knob(
        1.0, "extra scale on the rewards of 'hard' problems (task.is_hard: the units carry, borrow or overflow): per-prompt scales differ"
    )
    loss_agg: str = knob("seq_mean", "seq_mean (GRPO) | token_mean (DAPO) | token_sum_norm (Dr. GRPO)")
    skip_zero_std_groups: bool = knob(
        False,
        "drop groups whose answers are all right or all wrong (correctness of zero std), without refilling: the filter half of DAPO's dynamic sampling",
    )
    dynamic_sampling_batches: int = knob(
        0,
        "DAPO's dynamic sampling: sample up to this many extra batches of P prompts and refill the batch with groups of right and wrong answers (0 = off)",
    )
    micro_batch_size: int = knob(0, "responses per backward pass (gradient accumulation); 0 = the whole batch")
    gae_lambda: float = knob(0.95, "GAE's lambda of the advantages for baseline='critic' (gamma is 1: one reward per response)")
    eval_every: int = knob(10, "steps between greedy evaluations on the held-out set (0: only first and last)")
    probe_every: int = knob(10, "steps between gradient-noise probes (grad_var, grad_snr); 0 = never")
    seed: int = knob(0, "seeds sampling, problems, reward noise and the critic's initialisation")
    device: str = knob("auto", "'auto' (CUDA, then MPS, then CPU), 'cpu', 'cuda' or 'mps'")

    @property
    def samples_per_step(self) -> int:
        """Responses sampled per step, P x G (before dynamic sampling's extra draws)."""
        return self.prompts_per_step * self.group_size

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        """A TrainConfig from {knob: value}; unknown knobs (or a non-dict) raise one ValueError naming them."""
        if not isinstance(values, dict):
            raise ValueError(f"TrainConfig.from_dict needs a dict of knob values, got a {type(values).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(repr(key) for key in values if key not in known)
        if unknown:
            raise ValueError(f"unknown TrainConfig field(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return cls(**values)
