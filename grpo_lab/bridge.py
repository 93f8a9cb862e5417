"""From toy to TRL: the same experiment in Hugging Face TRL's ``GRPOTrainer``, knob by knob.

Needs the optional extra: ``pip install -e ".[trl]"`` (``import grpo_lab`` works without it).

What this module gives TRL, all built locally (nothing is downloaded):

- ``task_dataset``: the toy problems as a ``datasets.Dataset`` with ``prompt`` and ``answer`` columns;
- ``reward_function``: our reward (and its simulated distortions) with TRL's signature
  ``f(prompts, completions, answer, hard, **kwargs) -> list[float]``;
- ``char_tokenizer``: a character-level tokenizer over ``task.VOCAB`` (token ids equal ours);
- ``gpt2_config`` / ``gpt2_from_tiny``: a GPT-2 model of the same size as our TinyTransformer,
  and an exact copy of one of our policies in it (same log-probs up to float rounding), so TRL
  starts from the very policy our trainer starts from; ``tiny_from_gpt2`` goes back;
- ``to_grpo_config``: our ``TrainConfig`` as a ``trl.GRPOConfig`` (the table ``KNOB_MAP``);
  knobs TRL cannot express raise one clear ``ValueError`` (the table ``UNMAPPED``);
- ``make_trainer``: all of the above put together into a ready ``GRPOTrainer``;
- ``trl_history``: TRL's log as a list of per-step dicts under our metric names.
"""

from __future__ import annotations

import os

# Everything here is built locally: never let transformers, datasets or the hub reach the network.
for _variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ.setdefault(_variable, "1")

import secrets  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import weakref  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, fields  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402

try:
    import datasets
    import transformers
    import trl
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(f'grpo_lab.bridge needs the optional TRL extra ({error.name} is missing): pip install -e ".[trl]"') from None

from .checks.checkpoints import load_reference_policy  # noqa: E402
from .checks.config_rules import validate_config  # noqa: E402
from .core.config import TrainConfig  # noqa: E402
from .core.model import EOS, EOS_ID, PAD, PAD_ID, VOCAB, PolicyConfig, TinyTransformer  # noqa: E402
from .task import (  # noqa: E402
    WORK_MARK,
    ProblemSampler,
    RewardModel,
    Task,
    eval_accuracy,
    final_result,
)

TRL_STD_EPS = 1e-4  # TRL divides by (std + 1e-4), a constant in its code, not a setting
LOSS_TYPES = {"seq_mean": "grpo", "token_mean": "dapo", "token_sum_norm": "dr_grpo"}  # our loss_agg -> TRL loss_type

# (our knob, where it goes in TRL, note). The rows of the notebook's mapping table.
KNOB_MAP: list[tuple[str, str, str]] = [
    ("group_size", "GRPOConfig.num_generations", "TRL needs at least 2"),
    ("prompts_per_step", "GRPOConfig.per_device_train_batch_size", "TRL counts completions, not prompts: P x G (one process)"),
    ("micro_batch_size", "per_device_train_batch_size + gradient_accumulation_steps", "must divide P x G; 0 = no accumulation"),
    ("baseline='zscore'", "GRPOConfig.scale_rewards='group' or 'batch'", "from std_scope"),
    ("baseline='mean'", "GRPOConfig.scale_rewards='none'", "Dr. GRPO: centre, do not scale"),
    ("std_scope", "GRPOConfig.scale_rewards", "'group' -> 'group', 'batch' -> 'batch' (group mean, batch std in both)"),
    ("std_eps", "(fixed 1e-4 in TRL's code)", "only 1e-4 maps"),
    ("std_ddof", "(fixed: Bessel, ddof 1)", "only 1 maps"),
    ("eps_mode", "(fixed: std + eps)", "only 'add' maps"),
    ("clip_eps", "GRPOConfig.epsilon", "epsilon_high defaults to the same value"),
    ("kl_coef", "GRPOConfig.beta", "with use_bias_correction_kl=False: our k3 term is not weighted by the ratio"),
    ("inner_epochs", "GRPOConfig.num_iterations", "TRL's max_steps counts optimiser steps: steps x inner_epochs"),
    ("loss_agg", "GRPOConfig.loss_type", "seq_mean -> 'grpo', token_mean -> 'dapo', token_sum_norm -> 'dr_grpo'"),
    ("lr", "GRPOConfig.learning_rate", "with lr_scheduler_type='constant' (TRL's default decays linearly)"),
    ("max_grad_norm", "GRPOConfig.max_grad_norm", ""),
    ("steps", "GRPOConfig.max_steps", "x inner_epochs"),
    ("temperature", "GRPOConfig.temperature", "TRL also divides the logits by it when scoring log-probs; same at 1.0"),
    ("seed", "GRPOConfig.seed", "same seed, different random streams: runs are not step-for-step identical"),
    ("device", "GRPOConfig.use_cpu", "'cpu' -> use_cpu=True; accelerate picks the GPU otherwise"),
    ("task", "the dataset (task_dataset) + GRPOConfig.max_completion_length", "max_completion_length = the task's longest answer"),
    ("reference", "the model (gpt2_from_tiny)", "an exact GPT-2 copy of the reference policy"),
    (
        "reward, reward_offset, reward_scale, reward_noise, hard_reward_scale",
        "the reward function (reward_function)",
        "our RewardModel behind TRL's signature; the dataset's 'hard' column marks the problems hard_reward_scale scales",
    ),
    ("eval_every", "a callback (HeldOutAccuracyCallback)", "greedy accuracy on our held-out set"),
]

# Settings that have no knob on our side; to_grpo_config fixes them so that TRL computes what we compute.
FIXED_TRL_SETTINGS: dict[str, object] = {
    "lr_scheduler_type": "constant",  # our Adam keeps its learning rate
    "use_bias_correction_kl": False,  # our loss adds kl_coef * k3, not kl_coef * ratio * k3
    "bf16": False,  # our tiny model trains in float32
    "top_k": 0,  # sample from the full distribution, as ours does
    "top_p": 1.0,
    "report_to": "none",
    "save_strategy": "no",
    "logging_steps": 1,
    "disable_tqdm": True,
}


@dataclass(frozen=True)
class Unmapped:
    """A knob value TRL's GRPOTrainer cannot express, and why."""

    knob: str
    values: str  # which values, in words
    reason: str
    applies: Callable[[TrainConfig], bool]


def _zscore(config: TrainConfig) -> bool:
    return config.baseline == "zscore"


UNMAPPED: list[Unmapped] = [
    Unmapped("baseline", "'none'", "GRPOTrainer always subtracts the group mean", lambda c: c.baseline == "none"),
    Unmapped("baseline", "'rloo'", "GRPOTrainer has no leave-one-out baseline (TRL's separate RLOOTrainer has)", lambda c: c.baseline == "rloo"),
    Unmapped("baseline", "'ema'", "TRL has no moving-average baseline across steps", lambda c: c.baseline == "ema"),
    Unmapped("baseline", "'critic'", "GRPOTrainer has no value model (that is PPO)", lambda c: c.baseline == "critic"),
    Unmapped("baseline", "'mc_value'", "GRPOTrainer has no per-prefix value rollouts (that is VinePPO)", lambda c: c.baseline == "mc_value"),
    Unmapped(
        "policy_minibatches",
        "> 1",
        "not mapped: TRL's nearest is steps_per_generation (one generation, several optimiser steps on slices of it)",
        lambda c: c.policy_minibatches > 1,
    ),
    Unmapped(
        "std_eps",
        "anything but 1e-4 (with zscore)",
        "TRL's epsilon is the constant 1e-4 in its code",
        lambda c: _zscore(c) and c.std_eps != TRL_STD_EPS,
    ),
    Unmapped("std_ddof", "0 (with zscore)", "TRL's std always uses Bessel's correction (ddof 1)", lambda c: _zscore(c) and c.std_ddof != 1),
    Unmapped(
        "eps_mode", "'clamp' (with zscore)", "TRL divides by std + 1e-4; it has no max(std, eps) form", lambda c: _zscore(c) and c.eps_mode != "add"
    ),
    Unmapped(
        "prompt_pool",
        "> 0",
        "the bridge's dataset (task_dataset) holds fresh problems for every step; a finite pool would be a dataset of that many problems trained for epochs",
        lambda c: c.prompt_pool > 0,
    ),
    Unmapped(
        "skip_zero_std_groups",
        "True",
        "GRPOTrainer has no dynamic-sampling filter: zero-std groups stay in the batch with advantage 0",
        lambda c: c.skip_zero_std_groups,
    ),
    Unmapped(
        "dynamic_sampling_batches",
        "> 0",
        "GRPOTrainer has no dynamic sampling (over-sample and refill the batch with groups "
        "whose rewards differ); verl's DAPO recipe has it (filter_groups, max_num_gen_batches)",
        lambda c: c.dynamic_sampling_batches > 0,
    ),
    Unmapped(
        "micro_batch_size",
        "one that does not divide prompts_per_step x group_size",
        "TRL splits the generation batch into equal micro-batches",
        lambda c: 0 < c.micro_batch_size < c.samples_per_step and c.samples_per_step % c.micro_batch_size != 0,
    ),
]

# Our knobs that change nothing in TRL's training and are left out of the GRPOConfig.
NOT_SENT: dict[str, str] = {
    "probe_every": "gradient-noise probes (grad_var, grad_snr) are ours; TRL has no equivalent",
    "ema_decay": "only used by baseline='ema', which does not map",
    "gae_lambda": "only used by baseline='critic', which does not map",
    "critic_lr": "only used by baseline='critic', which does not map",
    "critic_epochs": "only used by baseline='critic', which does not map",
    "critic_minibatches": "only used by baseline='critic', which does not map",
    "value_clip": "only used by baseline='critic', which does not map",
    "critic_schedule": "only used by baseline='critic', which does not map",
    "mc_rollouts": "only used by baseline='mc_value', which does not map",
    "critic_warmup_steps": "only used by baseline='critic', which does not map",
    "critic_lambda": "only used by baseline='critic', which does not map",
    "critic_trunk": "only used by baseline='critic', which does not map",
    "vf_coef": "only used by baseline='critic', which does not map",
}

# TRL knobs we do not have, with what they do; the course's loop stays without them on purpose.
TRL_ONLY: dict[str, str] = {
    "epsilon_high": "a separate upper clip bound (DAPO's clip-higher, 0.28)",
    "delta": "two-sided clipping of the ratio (INTELLECT-2)",
    "importance_sampling_level='sequence'": "one ratio per sequence (GSPO)",
    "loss_type='bnpo', 'cispo', 'sapo', 'luspo', 'vespo'": "further loss aggregations and clipping schemes",
    "mask_truncated_completions": "drop completions that hit max_completion_length from the loss (DAPO)",
    "top_entropy_quantile": "train only on the highest-entropy tokens",
    "entropy_coef, use_adaptive_entropy": "an entropy bonus",
    "sync_ref_model": "move the KL anchor towards the policy every few steps (TR-DPO)",
    "reward_weights, multi_objective_aggregation": "several reward functions and how to combine them",
    "use_vllm, vllm_mode": "fast generation with vLLM, colocated or as a server",
    "steps_per_generation, generation_batch_size": "generate once for several optimiser steps, each training on a slice",
    "top_p, top_k, min_p, repetition_penalty": "sampling filters",
    "off_policy_mask_threshold": "mask off-policy sequences with negative advantage (DeepSeek-V3.2)",
}


def unmapped_reasons(config: TrainConfig) -> list[str]:
    """One line per knob of ``config`` that TRL cannot express (empty when everything maps)."""
    return [f"{entry.knob}={getattr(config, entry.knob)!r} has no TRL equivalent: {entry.reason}" for entry in UNMAPPED if entry.applies(config)]


def unmade_temporary_folder() -> Path:
    """A fresh name in the temporary folder for TRL's output_dir, not made: a GRPOConfig alone
    writes nothing there, so making it would leave an empty 'grpo-lab-trl-*' folder per call
    (``make_trainer`` makes it, and removes it with the trainer)."""
    return Path(tempfile.gettempdir()) / f"grpo-lab-trl-{os.getpid()}-{secrets.token_hex(4)}"


def to_grpo_config(config: TrainConfig, output_dir: str | Path | None = None, **overrides: Any) -> trl.GRPOConfig:
    """Our knobs as a ``trl.GRPOConfig`` (see ``KNOB_MAP``). A knob TRL cannot express raises one
    ValueError naming it (see ``UNMAPPED``). ``overrides`` are passed to GRPOConfig last."""
    validate_config(config)
    problems = unmapped_reasons(config)
    if problems:
        raise ValueError(problems[0])
    task = Task.parse(config.task)
    batch = config.samples_per_step  # completions per step
    micro = min(config.micro_batch_size or batch, batch)  # as ours: a micro-batch larger than the batch is the batch
    settings = dict(FIXED_TRL_SETTINGS)
    settings.update(
        output_dir=str(output_dir or unmade_temporary_folder()),
        num_generations=config.group_size,
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=batch // micro,
        scale_rewards=config.std_scope if config.baseline == "zscore" else "none",
        epsilon=config.clip_eps,
        beta=config.kl_coef,
        num_iterations=config.inner_epochs,
        loss_type=LOSS_TYPES[config.loss_agg],
        learning_rate=config.lr,
        max_grad_norm=config.max_grad_norm,
        max_steps=config.steps * config.inner_epochs,
        temperature=config.temperature,
        max_completion_length=task.max_answer_length,
        seed=config.seed,
        use_cpu=config.device == "cpu",
    )
    # nothing to save by recomputing activations at this size; transformers 5 renamed the switch
    known = {field.name for field in fields(trl.GRPOConfig)}
    settings["activation_checkpointing" if "activation_checkpointing" in known else "gradient_checkpointing"] = False
    settings.update(overrides)
    return trl.GRPOConfig(**settings)


def task_dataset(task: str | Task = "2d+", size: int = 1024, seed: int = 0) -> datasets.Dataset:
    """``size`` training problems (never from the held-out set) as a Dataset with columns
    ``prompt`` (``"07+35="``), ``answer`` (``"42"``) and ``hard`` (``task.is_hard``: a carry)."""
    task = Task.parse(task) if isinstance(task, str) else task
    batch = ProblemSampler(task, seed).sample(size)
    return datasets.Dataset.from_dict({"prompt": batch.texts, "answer": batch.answers, "hard": batch.hard.tolist()})


def reward_function(
    kind: str = "exact", offset: float = 0.0, scale: float = 1.0, noise: float = 0.0, seed: int = 0, hard_scale: float = 1.0
) -> Callable:
    """Our (possibly distorted) reward model with TRL's reward-function signature:
    ``task_reward(prompts, completions, answer, hard, **kwargs) -> list[float]``, one reward per
    completion; ``hard_scale`` multiplies the rewards of hard problems (RewardModel, as in train()); a
    worked prompt (``"=347+586="``, the practice regime's task) has only its completion's final result scored.
    TRL passes the dataset's columns by name and logs the mean as ``rewards/task_reward/mean``."""
    reward_model = RewardModel(kind, offset, scale, noise, seed, hard_scale)

    def task_reward(prompts: list[str], completions: list[str], answer: list[str], hard: list[bool] | None = None, **kwargs) -> list[float]:
        # a worked prompt (it starts with WORK_MARK) has only the final result of its completion scored, as in train()
        worked = [prompt.startswith(WORK_MARK) for prompt in prompts]
        responses = [final_result(completion, w) for completion, w in zip(completions, worked)]
        results = [final_result(right, w) for right, w in zip(answer, worked)]
        rewards, _ = reward_model(responses, results, None if hard is None else torch.tensor(hard, dtype=torch.bool))
        return rewards.tolist()

    return task_reward


def char_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """One token per character over ``task.VOCAB``, with our ids (``<pad>`` 0, ``<eos>`` 1); no special
    tokens are added, prompts are left-padded as TRL expects, and decoding joins characters with nothing."""
    backend = Tokenizer(models.WordLevel({token: index for index, token in enumerate(VOCAB)}, unk_token=PAD))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, pad_token=PAD, eos_token=EOS, padding_side="left")


def gpt2_config(policy_config: PolicyConfig | None = None) -> transformers.GPT2Config:
    """A GPT-2 of the TinyTransformer's shape (default: ``PolicyConfig()``): same width, depth, heads,
    vocabulary and context, exact GELU, no dropout, an output layer of its own (not tied to the embedding)."""
    policy_config = policy_config or PolicyConfig()
    return transformers.GPT2Config(
        vocab_size=policy_config.vocab_size,
        n_positions=policy_config.max_len,
        n_embd=policy_config.d_model,
        n_layer=policy_config.n_layers,
        n_head=policy_config.n_heads,
        n_inner=4 * policy_config.d_model,
        activation_function="gelu",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        layer_norm_epsilon=1e-5,
        tie_word_embeddings=False,
        bos_token_id=EOS_ID,
        eos_token_id=EOS_ID,
        pad_token_id=PAD_ID,
    )


# TinyTransformer name -> GPT-2 name, per block; GPT-2's Conv1D stores Linear weights transposed
_BLOCK_NAMES = {"norm1": "ln_1", "norm2": "ln_2", "qkv": "attn.c_attn", "proj": "attn.c_proj", "mlp.0": "mlp.c_fc", "mlp.2": "mlp.c_proj"}
_CONV1D = ("qkv", "proj", "mlp.0", "mlp.2")


def _name_pairs(policy_config: PolicyConfig) -> list[tuple[str, str, bool]]:
    """(TinyTransformer parameter, GPT-2 parameter, transposed) for every parameter but the output layer's."""
    pairs = [
        ("token_embedding.weight", "transformer.wte.weight", False),
        ("position_embedding.weight", "transformer.wpe.weight", False),
        ("norm.weight", "transformer.ln_f.weight", False),
        ("norm.bias", "transformer.ln_f.bias", False),
        ("head.weight", "lm_head.weight", False),
    ]
    for layer in range(policy_config.n_layers):
        for ours, theirs in _BLOCK_NAMES.items():
            for kind in ("weight", "bias"):
                pairs.append((f"blocks.{layer}.{ours}.{kind}", f"transformer.h.{layer}.{theirs}.{kind}", ours in _CONV1D and kind == "weight"))
    return pairs


def gpt2_from_tiny(policy: TinyTransformer) -> transformers.GPT2LMHeadModel:
    """An exact GPT-2 copy of one of our policies: the same next-token distribution for every input.

    GPT-2's output layer has no bias, ours has one (b). Logits are W (LN(x) + c) in GPT-2's form, so
    we shift the final LayerNorm's bias by c, the solution of W c = b: W is [V, D] with V < D and full
    rank, so the solution is exact (up to float rounding).
    """
    state = {name: tensor.detach().cpu() for name, tensor in policy.state_dict().items()}
    head_weight, head_bias = state["head.weight"].double(), state["head.bias"].double()
    shift = torch.linalg.lstsq(head_weight, head_bias[:, None]).solution[:, 0]
    if not torch.allclose(head_weight @ shift, head_bias, atol=1e-6):
        raise ValueError("the policy's output bias cannot be folded into GPT-2's final LayerNorm (its output weight is rank-deficient)")
    converted = {theirs: (state[ours].T if transposed else state[ours]).contiguous() for ours, theirs, transposed in _name_pairs(policy.config)}
    converted["transformer.ln_f.bias"] = (state["norm.bias"].double() + shift).float()
    model = transformers.GPT2LMHeadModel(gpt2_config(policy.config))
    model.load_state_dict(converted, strict=True)
    return model.eval()


def tiny_from_gpt2(model: transformers.GPT2LMHeadModel) -> TinyTransformer:
    """The inverse of ``gpt2_from_tiny`` (output bias 0): lets our own functions, e.g.
    ``task.eval_accuracy`` and ``core.model.token_logprobs``, score a model TRL trained."""
    config = model.config
    policy = TinyTransformer(
        PolicyConfig(vocab_size=config.vocab_size, max_len=config.n_positions, d_model=config.n_embd, n_layers=config.n_layer, n_heads=config.n_head)
    )
    theirs_state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
    state = {
        ours: (theirs_state[theirs].T if transposed else theirs_state[theirs]).contiguous() for ours, theirs, transposed in _name_pairs(policy.config)
    }
    state["head.bias"] = torch.zeros(config.vocab_size)
    policy.load_state_dict(state, strict=True)
    return policy.eval()


class HeldOutAccuracyCallback(transformers.TrainerCallback):
    """Greedy accuracy of the model TRL is training on our held-out set, every ``every`` optimiser
    steps (and before the first). ``records``: list of {"step", "eval_accuracy", "seconds"}
    (seconds: how long the evaluation itself took, so timings can leave it out)."""

    def __init__(self, task: str = "2d+", every: int = 10):
        self.task, self.every = Task.parse(task), every
        self.records: list[dict] = []

    def evaluate(self, model: transformers.GPT2LMHeadModel, step: int) -> None:
        started = time.perf_counter()
        accuracy = eval_accuracy(tiny_from_gpt2(model), self.task)
        self.records.append({"step": step, "eval_accuracy": accuracy, "seconds": time.perf_counter() - started})

    def on_train_begin(
        self,
        args: transformers.TrainingArguments,
        state: transformers.TrainerState,
        control: transformers.TrainerControl,
        model: transformers.GPT2LMHeadModel | None = None,
        **kwargs: Any,
    ) -> None:
        self.evaluate(model, 0)

    def on_step_end(
        self,
        args: transformers.TrainingArguments,
        state: transformers.TrainerState,
        control: transformers.TrainerControl,
        model: transformers.GPT2LMHeadModel | None = None,
        **kwargs: Any,
    ) -> None:
        if self.every and (state.global_step % self.every == 0 or state.global_step == state.max_steps):
            self.evaluate(model, state.global_step)


def make_trainer(config: TrainConfig, output_dir: str | Path | None = None, callbacks: list | None = None, **overrides: Any) -> trl.GRPOTrainer:
    """A ready ``trl.GRPOTrainer`` for ``config``: the task's problems, our reward function, an exact
    GPT-2 copy of the reference policy, the character tokenizer and ``to_grpo_config(config)``.

    The starting model is written to ``output_dir/initial_policy``: TRL builds its KL reference
    (when kl_coef > 0) by loading the policy's own path. Without an ``output_dir`` that folder is a
    fresh one in the temporary folder, removed when the trainer is garbage-collected (or at exit).
    """
    grpo_config = to_grpo_config(config, output_dir, **overrides)
    temporary = None if output_dir else grpo_config.output_dir
    model = gpt2_from_tiny(load_reference_policy(config.reference))
    initial = Path(grpo_config.output_dir) / "initial_policy"
    model.save_pretrained(initial)
    model.config._name_or_path = str(initial)
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=reward_function(
            config.reward, config.reward_offset, config.reward_scale, config.reward_noise, config.seed, config.hard_reward_scale
        ),
        args=grpo_config,
        train_dataset=task_dataset(config.task, config.steps * config.prompts_per_step, config.seed),
        processing_class=char_tokenizer(),
        callbacks=callbacks,
    )
    trainer.remove_callback(transformers.PrinterCallback)  # keep notebooks and benchmarks quiet; the log stays in state
    if temporary is not None:
        weakref.finalize(trainer, shutil.rmtree, temporary, True)
    return trainer


# TRL's logged name -> ours. Same name, same meaning, except reward_std: TRL's is the std of all
# rewards of the batch, ours the mean of the within-group stds (see notebook 07).
TRL_METRIC_NAMES = {
    "reward": "reward",
    "reward_std": "reward_std",
    "frac_reward_zero_std": "frac_reward_zero_std",
    "kl": "kl",
    "clip_ratio/region_mean": "clip_ratio",
    "entropy": "entropy",
    "grad_norm": "grad_norm",
    "loss": "loss",
    "step_time": "step_time",
}


def trl_history(trainer: trl.GRPOTrainer, held_out: HeldOutAccuracyCallback | None = None) -> list[dict]:
    """TRL's per-step log (``trainer.state.log_history``) as per-step dicts under our names
    (``TRL_METRIC_NAMES``); the run summary TRL appends at the end is left out. With ``held_out``,
    its evaluations are merged in as ``eval_accuracy`` (step 0: a record of its own, as in our history)."""
    history = []
    for entry in trainer.state.log_history:
        if "train_runtime" in entry:
            continue
        record = {"step": entry["step"]}
        record.update({ours: float(entry[theirs]) for theirs, ours in TRL_METRIC_NAMES.items() if theirs in entry})
        history.append(record)
    by_step = {record["step"]: record for record in history}
    for evaluation in held_out.records if held_out is not None else []:
        if evaluation["step"] not in by_step:
            by_step[evaluation["step"]] = {"step": evaluation["step"]}
            history.append(by_step[evaluation["step"]])
        by_step[evaluation["step"]]["eval_accuracy"] = evaluation["eval_accuracy"]
    return sorted(history, key=lambda record: record["step"])
