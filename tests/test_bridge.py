"""The TRL bridge: knob mapping, exact model copy, parity with TRL's own code, and a TRL smoke run.

Parity is checked through TRL's own code paths, not a re-typed formula: advantages come out of
``GRPOTrainer._generate_and_score_completions`` (with a reward function that returns the rewards
we choose), and the loss, KL, entropy, clip ratio and gradients out of ``GRPOTrainer._compute_loss``
on the same completions and log-probs that our ``policy_loss_terms`` sees.

Everything needs the ``trl`` extra (CI installs it); without it these tests are skipped, except the
check that ``import grpo_lab`` does not need it.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from dataclasses import fields

import pytest
import torch

from grpo_lab import TrainConfig, compute_advantages, load_reference_policy
from grpo_lab.core.losses import aggregate, policy_loss_terms
from grpo_lab.core.model import EOS_ID, PAD_ID, decode, encode, sample, token_logprobs
from grpo_lab.task import ProblemSampler, RewardModel, Task, eval_accuracy, eval_batch

TASK = Task.parse("2d+")


@pytest.fixture(scope="module")
def bridge():
    pytest.importorskip("trl", reason="the TRL bridge needs the extra: pip install -e '.[trl]'")
    from grpo_lab import bridge

    return bridge


@pytest.fixture(scope="module")
def reference():
    return load_reference_policy("default")


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_grpo_lab_imports_without_the_trl_extra():
    """``import grpo_lab`` must not pull in TRL; importing the bridge without it says how to get it."""
    code = (
        "import sys, grpo_lab; assert not {'trl', 'transformers', 'datasets'} & set(sys.modules), 'grpo_lab imported the extra'\n"
        "sys.modules['trl'] = None\n"
        "try:\n    import grpo_lab.bridge\nexcept ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'pip install -e ".[trl]"' in result.stdout


# --- the knob mapping ---------------------------------------------------------------------------


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_default_config_maps_to_the_same_grpo(bridge):
    grpo = bridge.to_grpo_config(TrainConfig())
    assert (grpo.num_generations, grpo.per_device_train_batch_size, grpo.gradient_accumulation_steps) == (8, 128, 1)
    assert grpo.generation_batch_size == 128  # 16 prompts x 8 completions per step, as ours
    assert (grpo.scale_rewards, grpo.epsilon, grpo.beta) == ("group", 0.2, 0.0)
    assert (grpo.num_iterations, grpo.loss_type, grpo.learning_rate, grpo.max_steps) == (1, "grpo", 1e-4, 150)
    assert (grpo.max_grad_norm, grpo.temperature, grpo.max_completion_length) == (1.0, 1.0, TASK.max_answer_length)
    assert grpo.lr_scheduler_type == "constant" and grpo.use_bias_correction_kl is False and grpo.bf16 is False
    assert grpo.gradient_checkpointing is False


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"std_scope": "batch"}, {"scale_rewards": "batch"}),
        ({"baseline": "mean"}, {"scale_rewards": "none"}),
        ({"baseline": "mean", "std_eps": 0.0, "std_ddof": 0, "eps_mode": "clamp"}, {"scale_rewards": "none"}),  # unused by 'mean'
        ({"loss_agg": "token_mean"}, {"loss_type": "dapo"}),
        ({"loss_agg": "token_sum_norm"}, {"loss_type": "dr_grpo"}),
        ({"kl_coef": 0.04, "clip_eps": 0.1}, {"beta": 0.04, "epsilon": 0.1}),
        ({"inner_epochs": 2, "steps": 30}, {"num_iterations": 2, "max_steps": 60}),
        ({"micro_batch_size": 32}, {"per_device_train_batch_size": 32, "gradient_accumulation_steps": 4, "generation_batch_size": 128}),
        ({"micro_batch_size": 512}, {"per_device_train_batch_size": 128, "gradient_accumulation_steps": 1}),
        (
            {"group_size": 4, "prompts_per_step": 8, "lr": 3e-4, "temperature": 0.7, "seed": 3},
            {"num_generations": 4, "per_device_train_batch_size": 32, "learning_rate": 3e-4, "temperature": 0.7, "seed": 3},
        ),
        ({"task": "1d*"}, {"max_completion_length": Task.parse("1d*").max_answer_length}),
    ],
)
def test_knobs_map_to_grpo_config(bridge, changes, expected):
    grpo = bridge.to_grpo_config(TrainConfig(**changes))
    assert {name: getattr(grpo, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("changes", "knob"),
    [
        ({"baseline": "none"}, "baseline"),
        ({"baseline": "rloo"}, "baseline"),
        ({"baseline": "ema"}, "baseline"),
        ({"baseline": "critic", "group_size": 1}, "baseline"),
        ({"baseline": "mc_value", "group_size": 1}, "baseline"),
        ({"policy_minibatches": 4}, "policy_minibatches"),
        ({"std_eps": 1e-6}, "std_eps"),
        ({"std_ddof": 0}, "std_ddof"),
        ({"eps_mode": "clamp"}, "eps_mode"),
        ({"skip_zero_std_groups": True}, "skip_zero_std_groups"),
        ({"dynamic_sampling_batches": 4}, "dynamic_sampling_batches"),
        ({"micro_batch_size": 48}, "micro_batch_size"),
        ({"prompt_pool": 256}, "prompt_pool"),
    ],
)
def test_unmapped_knobs_raise_one_line_naming_the_knob(bridge, changes, knob):
    with pytest.raises(ValueError) as error:
        bridge.to_grpo_config(TrainConfig(**changes))
    message = str(error.value)
    assert message.startswith(f"{knob}=") and "no TRL equivalent" in message and "\n" not in message


def test_every_unmapped_entry_is_reachable(bridge):
    """Each row of the documented UNMAPPED table is hit by the configs of the test above."""
    knobs = {entry.knob for entry in bridge.UNMAPPED}
    assert knobs == {
        "baseline",
        "policy_minibatches",
        "std_eps",
        "std_ddof",
        "eps_mode",
        "skip_zero_std_groups",
        "dynamic_sampling_batches",
        "micro_batch_size",
        "prompt_pool",
    }


def test_every_train_config_knob_is_mapped_or_listed(bridge):
    """A knob added to TrainConfig must be placed in KNOB_MAP, UNMAPPED or NOT_SENT, never dropped silently."""
    named = {name for row in bridge.KNOB_MAP for name in re.findall(r"[a-z_]+", row[0])}
    named |= {entry.knob for entry in bridge.UNMAPPED} | set(bridge.NOT_SENT)
    assert {field.name for field in fields(TrainConfig)} - named == set()


def test_dataset_and_reward_function_are_our_task_and_reward(bridge):
    dataset = bridge.task_dataset("2d+", size=64, seed=3)
    batch = ProblemSampler(TASK, 3).sample(64)
    assert dataset.column_names == ["prompt", "answer", "hard"]
    assert dataset["prompt"] == batch.texts and dataset["answer"] == batch.answers and dataset["hard"] == batch.hard.tolist()
    completions = [answer if index % 3 else "0" for index, answer in enumerate(batch.answers)]
    reward = bridge.reward_function("partial", offset=0.5, scale=2.0, noise=0.1, seed=3, hard_scale=0.1)
    theirs = torch.tensor(reward(dataset["prompt"], completions, dataset["answer"], dataset["hard"]))
    ours, _ = RewardModel("partial", 0.5, 2.0, 0.1, 3)(completions, batch.answers)
    ours = torch.where(batch.hard, ours * 0.1, ours)  # as train() applies hard_reward_scale
    assert torch.allclose(theirs, ours)


def test_the_reward_function_scores_a_worked_answer_by_its_final_result_as_train_does(bridge):
    """The practice regime's worked answers: the steps are never checked, only the text after the last '='."""
    worked = Task.parse("3d+w")
    dataset = bridge.task_dataset(worked, size=8, seed=5)
    batch = ProblemSampler(worked, 5).sample(8)
    right = [worked.target(int(p[1:4]), "+", int(p[5:8])) for p in dataset["prompt"]]  # '=453+411=' -> '3+1=045+1+0=064+4+0=08=864'
    assert [answer.rpartition("=")[2] for answer in right] == dataset["answer"]
    wrong_steps = [("1" if answer[0] == "0" else "0") + answer[1:] for answer in right]  # the first step's first digit changed
    wrong_result = [answer[:-1] + str((int(answer[-1]) + 1) % 10) for answer in right]
    reward = bridge.reward_function()
    answers = dataset["answer"]
    assert reward(dataset["prompt"], right, answers, dataset["hard"]) == [1.0] * 8
    assert reward(dataset["prompt"], wrong_steps, answers, dataset["hard"]) == [1.0] * 8  # wrong steps, right result: rewarded
    assert reward(dataset["prompt"], wrong_result, answers, dataset["hard"]) == [0.0] * 8  # right steps, wrong result: not
    # the same rewards train() gives the same responses, token for token
    for completions in (right, wrong_steps, wrong_result):
        tokens = torch.tensor([encode(c) + [EOS_ID] + [PAD_ID] * (worked.max_answer_length - len(c) - 1) for c in completions])
        ours, _ = RewardModel().score(batch.prompts, tokens)
        assert reward(dataset["prompt"], completions, answers, dataset["hard"]) == ours.tolist()


# --- the same tokens and the same model ---------------------------------------------------------


def test_char_tokenizer_uses_our_token_ids(bridge):
    tokenizer = bridge.char_tokenizer()
    texts = eval_batch(TASK).texts
    assert tokenizer(texts)["input_ids"] == [encode(text) for text in texts]
    answer_ids = encode("123") + [tokenizer.eos_token_id, tokenizer.pad_token_id]
    assert tokenizer.decode(answer_ids, skip_special_tokens=True) == decode(answer_ids) == "123"


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_gpt2_copy_has_our_size_and_our_log_probs(bridge, reference):
    model = bridge.gpt2_from_tiny(reference)
    assert abs(model.num_parameters() - reference.num_parameters()) <= reference.config.vocab_size  # only the folded output bias
    prompts = eval_batch(TASK).prompts[:64]
    answers, _ = sample(reference, prompts, TASK.max_answer_length, 1.0, torch.Generator().manual_seed(0))
    ours = token_logprobs(reference, prompts, answers)
    with torch.no_grad():
        logits = model(torch.cat([prompts, answers], dim=1)).logits[:, prompts.shape[1] - 1 : -1]
    theirs = torch.log_softmax(logits, dim=-1).gather(-1, answers[:, :, None]).squeeze(-1)
    assert torch.allclose(ours, theirs, atol=1e-4), float((ours - theirs).abs().max())
    back = bridge.tiny_from_gpt2(model)
    assert torch.allclose(token_logprobs(back, prompts, answers), ours, atol=1e-4)
    assert eval_accuracy(back, TASK) == eval_accuracy(reference, TASK)


# --- advantages through TRL's own code path -----------------------------------------------------


def reward_sets() -> dict[str, torch.Tensor]:
    """[16, 8] reward tensors: exact 0/1 with all-equal groups; partial credit; a biased, slightly
    noisy reward model (near-equal rewards: tiny std, where the epsilon matters)."""
    generator = torch.Generator().manual_seed(0)
    binary = (torch.rand(16, 8, generator=generator) < 0.5).float()
    binary[0], binary[1] = 0.0, 1.0
    partial = torch.randint(0, 4, (16, 8), generator=generator).float() / 3
    near_equal = 5.0 + 1e-3 * torch.randn(16, 8, generator=generator)
    near_equal[2] = 5.0
    return {"binary": binary, "partial": partial, "near_equal": near_equal}


def given_reward(prompts, completions, given_reward, **kwargs):
    """A TRL reward function that returns the reward stored in each example: the reward tensor is ours to choose."""
    return given_reward


@pytest.mark.parametrize("rewards_name", ["binary", "partial", "near_equal"])
@pytest.mark.parametrize(("baseline", "std_scope"), [("zscore", "group"), ("zscore", "batch"), ("mean", "group")])
def test_advantages_equal_trl_for_each_scaling_mode(bridge, reference, tmp_path, baseline, std_scope, rewards_name):
    import trl

    rewards = reward_sets()[rewards_name]
    config = TrainConfig(baseline=baseline, std_scope=std_scope, device="cpu")
    trainer = trl.GRPOTrainer(
        model=bridge.gpt2_from_tiny(reference),
        reward_funcs=given_reward,
        args=bridge.to_grpo_config(config, tmp_path),
        train_dataset=bridge.task_dataset(size=16),
        processing_class=bridge.char_tokenizer(),
    )
    trainer.model.train()
    prompts = eval_batch(TASK).texts[:16]
    # TRL's sampler repeats each prompt G times in a row: a group is G consecutive examples
    examples = [{"prompt": prompts[p], "given_reward": float(rewards[p, i])} for p in range(16) for i in range(8)]
    theirs = trainer._generate_and_score_completions(examples)["advantages"].view(16, 8)
    ours = compute_advantages(rewards, config.baseline, config.std_eps, config.std_scope, config.std_ddof, config.eps_mode)
    assert torch.allclose(ours, theirs, rtol=1e-5, atol=1e-5), float((ours - theirs).abs().max())
    if std_scope == "group":  # TRL's frac_reward_zero_std is per group only when it scales per group
        zero_std = float((rewards.std(dim=1, correction=0) == 0).float().mean())
        assert trainer._metrics["train"]["frac_reward_zero_std"][-1] == pytest.approx(zero_std)


# --- the loss, the k3 KL and the gradient through TRL's _compute_loss ---------------------------


def trl_inputs(prompts, answers, mask, ref_logprobs, advantages) -> dict:
    """Our batch in the form GRPOTrainer's compute_loss reads."""
    return {
        "prompt_ids": prompts,
        "prompt_mask": torch.ones_like(prompts),
        "completion_ids": answers,
        "completion_mask": mask.long(),
        "advantages": advantages,
        "num_items_in_batch": mask.sum(),
        "ref_per_token_logps": ref_logprobs,
    }


def loss_inputs(reference, off_policy: bool):
    """Completions sampled from the reference, a perturbed copy as KL anchor, and (off_policy) old
    log-probs that differ from the current ones so that the ratio is clipped. Tensors [B, La]."""
    generator = torch.Generator().manual_seed(1)
    prompts = eval_batch(TASK).prompts[:32].repeat_interleave(4, dim=0)
    answers, mask = sample(reference, prompts, TASK.max_answer_length, 1.0, generator)
    anchor = copy.deepcopy(reference)
    with torch.no_grad():
        for parameter in anchor.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator))
        ref_logprobs = token_logprobs(anchor, prompts, answers)
        old_logprobs = token_logprobs(reference, prompts, answers) + 0.3 * torch.randn(answers.shape, generator=generator) if off_policy else None
    advantages = torch.randn(len(prompts), generator=generator)
    return prompts, answers, mask, old_logprobs, ref_logprobs, advantages


SKIPPED_GRADIENTS = {"lm_head.weight", "transformer.ln_f.bias"}  # the output layer differs by design (folded bias)


def our_gradients_by_gpt2_name(bridge, policy) -> dict[str, torch.Tensor]:
    """Our policy's gradients under GPT-2's parameter names (transposed where GPT-2 stores them so)."""
    grads = {name: parameter.grad for name, parameter in policy.named_parameters()}
    return {
        theirs: (grads[ours].T if transposed else grads[ours])
        for ours, theirs, transposed in bridge._name_pairs(policy.config)
        if theirs not in SKIPPED_GRADIENTS
    }


@pytest.mark.parametrize("off_policy", [False, True], ids=["on_policy", "clipped"])
@pytest.mark.parametrize("kl_coef", [0.0, 0.04])
@pytest.mark.parametrize("loss_agg", ["seq_mean", "token_mean", "token_sum_norm"])
def test_loss_kl_and_gradient_equal_trl(bridge, reference, tmp_path, loss_agg, kl_coef, off_policy):
    config = TrainConfig(loss_agg=loss_agg, kl_coef=kl_coef, inner_epochs=2 if off_policy else 1, device="cpu")
    trainer = bridge.make_trainer(config, tmp_path)
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1  # set by Trainer's loop; we call the loss outside it
    prompts, answers, mask, old_logprobs, ref_logprobs, advantages = loss_inputs(reference, off_policy)
    inputs = trl_inputs(prompts, answers, mask, ref_logprobs, advantages)
    if old_logprobs is not None:
        inputs["old_per_token_logps"] = old_logprobs
    theirs_loss = trainer._compute_loss(trainer.model, inputs)
    theirs_loss.backward()
    metrics = {name: values[-1] for name, values in trainer._metrics["train"].items()}

    policy = copy.deepcopy(reference).train()
    per_token, diagnostics = policy_loss_terms(
        policy, prompts, answers, mask, old_logprobs, ref_logprobs if kl_coef > 0 else None, advantages[:, None] * mask, config
    )
    ours_loss = aggregate(per_token, mask, loss_agg, len(prompts), float(mask.sum()), TASK.max_answer_length)
    ours_loss.backward()
    tokens = float(mask.sum())

    assert float(ours_loss.detach()) == pytest.approx(float(theirs_loss.detach()), rel=1e-4, abs=1e-6)
    assert float((diagnostics["entropy"] * mask).sum()) / tokens == pytest.approx(metrics["entropy"], rel=1e-4)
    assert float((diagnostics["clipped"] * mask).sum()) / tokens == pytest.approx(metrics["clip_ratio/region_mean"], abs=1e-6)
    if off_policy:
        assert metrics["clip_ratio/region_mean"] > 0  # the case really exercises the clip
    if kl_coef > 0:  # our k3 estimate, token by token on the same log-probs, averaged as TRL logs it
        assert float((diagnostics["kl"] * mask).sum()) / tokens == pytest.approx(metrics["kl"], rel=1e-4)
        assert metrics["kl"] > 1e-3
    ours_grads = our_gradients_by_gpt2_name(bridge, policy)
    for name, parameter in trainer.model.named_parameters():
        if name not in SKIPPED_GRADIENTS:
            assert torch.allclose(ours_grads[name], parameter.grad, rtol=1e-3, atol=1e-6), name


def test_trl_bias_corrected_kl_would_change_the_gradient(bridge, reference, tmp_path):
    """Why to_grpo_config sets use_bias_correction_kl=False: TRL's default multiplies the k3 term by
    the ratio, which is 1 in value on-policy but not in gradient, so the update differs from ours."""
    config = TrainConfig(kl_coef=0.04, device="cpu")
    grads = {}
    for corrected in (False, True):
        trainer = bridge.make_trainer(config, tmp_path / str(corrected), use_bias_correction_kl=corrected)
        trainer.model.train()
        trainer.current_gradient_accumulation_steps = 1
        prompts, answers, mask, _, ref_logprobs, advantages = loss_inputs(reference, off_policy=False)
        inputs = trl_inputs(prompts, answers, mask, ref_logprobs, advantages)
        trainer._compute_loss(trainer.model, inputs).backward()
        grads[corrected] = trainer.model.transformer.wte.weight.grad.clone()
    assert not torch.allclose(grads[False], grads[True], rtol=1e-3, atol=1e-6)


# --- a few real TRL steps -----------------------------------------------------------------------


def test_trl_smoke_run_from_our_reference(bridge, reference, tmp_path):
    """Two TRL steps with the tiny GPT-2 on the CPU: the metrics we compare are logged and sane,
    the start is our reference (same held-out accuracy) and the weights move."""
    config = TrainConfig(steps=2, kl_coef=0.04, device="cpu")
    accuracy = bridge.HeldOutAccuracyCallback(config.task, every=2)
    trainer = bridge.make_trainer(config, tmp_path, callbacks=[accuracy])
    before = trainer.model.transformer.wte.weight.detach().clone()
    trainer.train()
    history = bridge.trl_history(trainer)
    assert [record["step"] for record in history] == [1, 2]
    for record in history:
        assert 0 <= record["reward"] <= 1 and 0 <= record["frac_reward_zero_std"] <= 1 and record["reward_std"] >= 0
        assert record["kl"] >= 0 and record["clip_ratio"] == 0  # one pass per batch: the ratio is exactly 1
    assert history[1]["kl"] > 0  # after one update the policy has left the reference
    assert accuracy.records[0]["eval_accuracy"] == eval_accuracy(reference, TASK)
    assert [record["step"] for record in accuracy.records] == [0, 2]
    merged = bridge.trl_history(trainer, accuracy)  # held-out accuracy joins TRL's log, step 0 as a record of its own
    assert [(record["step"], record.get("eval_accuracy")) for record in merged] == [
        (0, accuracy.records[0]["eval_accuracy"]),
        (1, None),
        (2, accuracy.records[1]["eval_accuracy"]),
    ]
    assert not torch.equal(before, trainer.model.transformer.wte.weight.detach())
