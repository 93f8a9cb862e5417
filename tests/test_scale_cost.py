"""The scale cost model: published configurations it must land near, how its numbers move, and its errors."""

from __future__ import annotations

import html
from dataclasses import replace

import pytest

from grpo_lab.course.scale_cost import (
    GPUS,
    ScaleSetup,
    compare_steps,
    cost_table,
    engine_tp,
    lora_params_b,
    scale_cost_widget,
    step_cost,
    training_state_gb,
)
from grpo_lab.errors import ConfigError

FACTOR = 3  # "the published order of magnitude": off by more than this (a 10x error certainly) fails


def near(estimate: float, published: float) -> bool:
    return published / FACTOR <= estimate <= published * FACTOR


# -- published configurations -------------------------------------------------------------------------------


def test_mixed_precision_adam_needs_what_zero_reports():
    """ZeRO (arXiv 1910.02054 §3.1): a 1.5B-parameter GPT-2 needs at least 24 GB for its model states;
    the same 16 bytes a parameter make a 7B critic about 112 GB before activations."""
    assert near(training_state_gb(1.5), 24)
    costs = compare_steps(ScaleSetup(model_b=7, gpus=16))
    assert near(costs["PPO"].resident_gb - costs["GRPO"].resident_gb, 112)


DEEPSPEED_CHAT_LORA = 128  # --actor_lora_dim of DeepSpeed-Chat's OPT-13B, 30B and 66B step-3 scripts (its 6.7B trains in full)


def deepspeed_chat(model_b: float, gpu: str, **knobs) -> ScaleSetup:
    """DeepSpeed-Chat's step 3 (DeepSpeedExamples, training_scripts/opt/single_node and multi_node): an OPT actor with an
    OPT-350M reward model and critic (modelled at this model's smallest size, 0.5B), 256-token prompts and answers,
    generation from the trained weights (--enable_hybrid_engine), LoRA of rank 128 on the 13B-66B actors."""
    setup = ScaleSetup(model_b=model_b, critic_b=0.5, reward_model_b=0.5, gpu=gpu, gpus=8, prompt_tokens=256, answer_tokens=256)
    return replace(setup, **{"lora_rank": 0 if model_b < 10 else DEEPSPEED_CHAT_LORA, "engine_copy": False, **knobs})


@pytest.mark.parametrize(
    ("model_b", "gpu"), [(6.7, "A100-40GB"), (13, "A100-40GB"), (30, "A100-40GB"), (6.7, "A100"), (13, "A100"), (30, "A100"), (66, "A100")]
)
def test_ppo_fits_on_the_node_deepspeed_chat_trained_it_on(model_b, gpu):
    """A second, independent publication, and PPO with its critic: DeepSpeed-Chat (DeepSpeed's blog, 2023, Table 1)
    trains OPT actors from 6.7B to 66B on one node of 8 A100s, 40 GB or 80 GB."""
    assert step_cost(deepspeed_chat(model_b, gpu), "PPO").fits


@pytest.mark.parametrize(("model_b", "gpu"), [(6.7, "A100-40GB"), (13, "A100-40GB"), (30, "A100-40GB"), (66, "A100")])
def test_ppo_needs_about_the_one_node_deepspeed_chat_trained_it_on(model_b, gpu):
    """Where the node was the smallest published home of a size (every 40 GB row, and OPT-66B, which no 40 GB node
    holds), the model's fewest GPUs must land within a factor of 3 of its 8."""
    assert near(step_cost(deepspeed_chat(model_b, gpu), "PPO").min_gpus, 8)


def test_ppo_does_not_fit_where_deepspeed_chat_could_not_train_it():
    """The same table's one empty cell: OPT-66B on one node of 8 A100-40GB ("NA"), even with LoRA and the Hybrid Engine.
    Trained in full and with an inference engine's copy of the weights, as verl does, OPT-30B does not fit there either."""
    assert not step_cost(deepspeed_chat(66, "A100-40GB"), "PPO").fits
    assert not step_cost(deepspeed_chat(30, "A100-40GB", lora_rank=0, engine_copy=True), "PPO").fits


@pytest.mark.parametrize(
    ("model_b", "published_gpus"),
    [(7.6, 2), (14.7, 4), (72, 32)],  # Qwen2-7B, Qwen2.5-Coder-14B, Qwen2-72B
)
def test_grpo_needs_about_the_gpus_verl_lists(model_b, published_gpus):
    """verl's "Hardware Resource Needed for RL" (docs/perf/device_tuning.rst, 06/2025): full-parameter GRPO at its
    minimum on 80 GB H800s: 7B on 2, 14B on 4, 70B on 32 (with CPU offload; this model keeps everything on the
    GPUs). The setup is verl's 14B script's: 1024 prompts of 1024 tokens, 5 answers of 1024 tokens."""
    setup = ScaleSetup(model_b=model_b, prompt_tokens=1024, answer_tokens=1024, group_size=5, prompts_per_step=1024, gpus=64)
    assert near(step_cost(setup, "GRPO").min_gpus, published_gpus)


def test_generation_takes_most_of_a_long_answer_step_as_openrlhf_reports():
    """OpenRLHF's README: about 80% of RLHF training time goes to generating samples (setup not given). With
    reasoning-length answers this lower bound on generation (no long tail) is within a factor of 2 of it."""
    cost = step_cost(ScaleSetup(model_b=7, answer_tokens=16384), "GRPO")
    assert 0.4 <= cost.generation_share <= 1


def test_the_shares_the_scale_cost_follow_up_quotes_are_the_models():
    """The drill's follow-up on cost at scale (text/follow_ups.json, "scale-cost") quotes this model: generation about a
    quarter of a 7B PPO step at 1,024-token answers and over half at 16k; the critic about a third, then a fifth."""
    short, long = (step_cost(ScaleSetup(model_b=7, answer_tokens=tokens), "PPO") for tokens in (1024, 16384))
    assert 0.2 <= short.generation_share <= 0.3 and long.generation_share > 0.5
    assert 0.28 <= short.seconds["critic"] / short.step_seconds <= 0.4
    assert 0.15 <= long.seconds["critic"] / long.step_seconds <= 0.25


# -- behaviour ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("critic_b", [1.5, 7, 32])
def test_removing_the_critic_saves_its_training_state(critic_b):
    costs = compare_steps(ScaleSetup(model_b=7, critic_b=critic_b, gpus=32))
    assert costs["PPO"].resident_gb - costs["GRPO"].resident_gb == pytest.approx(training_state_gb(critic_b))
    assert costs["PPO"].step_seconds > costs["GRPO"].step_seconds
    assert costs["GRPO"].seconds["critic"] == 0


@pytest.mark.parametrize("model_b", [7, 32])
def test_ppo_needs_more_gpus_than_grpo(model_b):
    costs = compare_steps(ScaleSetup(model_b=model_b))
    assert costs["PPO"].min_gpus > costs["GRPO"].min_gpus


@pytest.mark.parametrize("method", ["PPO", "GRPO"])
def test_longer_answers_take_longer_and_generation_takes_a_growing_share(method):
    costs = [step_cost(ScaleSetup(answer_tokens=tokens), method) for tokens in (128, 512, 2048, 8192, 32768)]
    times = [cost.step_seconds for cost in costs]
    shares = [cost.generation_share for cost in costs]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert shares == sorted(shares) and shares[-1] > 2 * shares[0]


def test_each_decoding_step_reads_a_longer_kv_cache_as_answers_grow():
    short, long = (step_cost(ScaleSetup(answer_tokens=tokens), "GRPO") for tokens in (2048, 8192))
    assert short.waves == long.waves == 1
    assert long.seconds["generation"] / 8192 > 1.3 * short.seconds["generation"] / 2048


def test_the_critics_memory_leaves_less_room_for_the_kv_cache():
    """On a tight cluster PPO's resident critic shrinks the KV cache, so generation needs more rounds."""
    costs = compare_steps(ScaleSetup(model_b=7, gpus=5, prompts_per_step=256, answer_tokens=4096))
    assert costs["PPO"].waves > costs["GRPO"].waves
    assert costs["PPO"].seconds["generation"] > costs["GRPO"].seconds["generation"]


def test_critic_epochs_cost_time_and_extra_adam_steps_little():
    """Each epoch re-reads every token; an extra minibatch is one more optimizer step over the weights."""
    base = ScaleSetup(model_b=7)
    ppo = step_cost(base, "PPO").step_seconds
    assert step_cost(replace(base, critic_epochs=4), "PPO").step_seconds > 1.5 * ppo
    assert step_cost(replace(base, critic_minibatches=16), "PPO").step_seconds < 1.05 * ppo
    assert step_cost(replace(base, critic_epochs=4), "GRPO").step_seconds == step_cost(base, "GRPO").step_seconds


@pytest.mark.parametrize("colocated", [True, False])
@pytest.mark.parametrize("method", ["PPO", "GRPO"])
@pytest.mark.parametrize("model_b", [0.5, 7, 32, 72])
def test_the_fewest_gpus_that_fit_is_exact(model_b, method, colocated):
    setup = ScaleSetup(model_b=model_b, colocated=colocated, gpus=2)
    fewest = step_cost(setup, method).min_gpus
    assert step_cost(replace(setup, gpus=max(fewest, 2)), method).fits
    if fewest > 2:
        assert not step_cost(replace(setup, gpus=fewest - 1), method).fits
        assert step_cost(replace(setup, gpus=fewest - 1), method).seconds == {}


def test_more_gpus_lower_the_memory_per_gpu_and_the_step_time():
    small, large = (step_cost(ScaleSetup(model_b=32, gpus=gpus), "PPO") for gpus in (64, 128))
    assert large.per_gpu_gb < small.per_gpu_gb and large.step_seconds < small.step_seconds


def test_a_critic_apart_leaves_grpo_alone_and_moves_ppos_time_from_the_critic_to_generation():
    together, apart = (compare_steps(ScaleSetup(model_b=32, gpus=64, colocated=colocated)) for colocated in (True, False))
    assert apart["GRPO"].seconds == together["GRPO"].seconds
    assert apart["PPO"].seconds["critic"] < together["PPO"].seconds["critic"]
    assert apart["PPO"].seconds["generation"] > together["PPO"].seconds["generation"]  # the critic's GPUs wait


def test_lora_and_generating_from_the_trained_weights_save_what_they_should():
    """LoRA keeps the policy's weights frozen (2 bytes a parameter) and trains only its adapters; generating from the
    trained weights drops the inference engine's copy (2 bytes a parameter). Both leave the critic's cost alone."""
    base = ScaleSetup(model_b=32, gpus=64)
    full, lora = (compare_steps(replace(base, lora_rank=rank)) for rank in (0, 64))
    adapters = lora_params_b(32, 64)
    assert 0 < adapters < 0.02 * 32
    for method in ("PPO", "GRPO"):
        assert full[method].resident_gb - lora[method].resident_gb == pytest.approx(training_state_gb(32) - 2 * 32 - training_state_gb(adapters))
        assert lora[method].seconds["policy update"] < full[method].seconds["policy update"]
    assert lora["PPO"].resident_gb - lora["GRPO"].resident_gb == pytest.approx(training_state_gb(32))  # the critic is trained in full
    copy, no_copy = (step_cost(replace(base, engine_copy=engine_copy), "GRPO") for engine_copy in (True, False))
    tp = engine_tp(32, GPUS["H100"])  # each tensor-parallel group of the engine holds the policy's bf16 weights whole
    assert 1 < tp < base.gpus
    assert copy.resident_gb - no_copy.resident_gb == pytest.approx(2 * 32 * base.gpus // tp)
    assert copy.per_gpu_gb - no_copy.per_gpu_gb == pytest.approx(2 * 32 / tp)


def test_the_engines_copy_is_whole_on_each_tensor_parallel_group_not_sharded_over_all_gpus():
    """A 7B engine fits on one GPU (tp = 1): every GPU holds its 14 GB, however many GPUs there are, so doubling the
    GPUs halves the sharded training state but not that."""
    assert engine_tp(7, GPUS["H100"]) == 1
    eight, sixteen = (step_cost(ScaleSetup(model_b=7, gpus=gpus, answer_tokens=128, prompts_per_step=8), "GRPO") for gpus in (8, 16))
    sharded = training_state_gb(7) + 2 * 7  # the policy's training state and the reference, spread over the GPUs
    activations = eight.per_gpu_gb - sharded / 8 - 2 * 7
    assert activations > 0
    assert sixteen.per_gpu_gb == pytest.approx(sharded / 16 + 2 * 7 + activations)


def test_the_widget_redraws_the_table_when_a_slider_moves():
    widget = scale_cost_widget()
    *controls, table = widget.children
    assert "PPO" in table.value and "GRPO" in table.value
    before = table.value
    controls[0].value = 32  # the model size
    assert table.value != before
    assert html.escape(cost_table(ScaleSetup(model_b=32))) in table.value
    by_description = {control.description: control for control in controls if hasattr(control, "description")}
    by_description["critic (B)"].value = 7  # a 7B critic beside the 32B policy
    by_description["critic epochs"].value = 2
    assert html.escape(cost_table(ScaleSetup(model_b=32, critic_b=7, critic_epochs=2))) in table.value
    by_first_option = {control.options[0]: control for control in controls if hasattr(control, "options")}
    by_first_option[("policy trained in full", 0)].value = 128
    by_first_option[("engine's own copy", True)].value = False
    assert html.escape(cost_table(ScaleSetup(model_b=32, critic_b=7, critic_epochs=2, lora_rank=128, engine_copy=False))) in table.value


# -- bad input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("knob", "value"),
    [
        ("model_b", 100),
        ("model_b", 0.1),
        ("model_b", float("nan")),
        ("model_b", True),
        ("critic_b", 0.0),
        ("reward_model_b", 0.2),
        ("answer_tokens", 0),
        ("group_size", 1.5),
        ("prompts_per_step", -4),
        ("critic_epochs", 0),
        ("gpus", 0),
        ("gpu", "V100"),
        ("colocated", "no"),
        ("lora_rank", -1),
        ("lora_rank", 8.0),
        ("engine_copy", 0),
    ],
)
def test_a_bad_knob_is_one_line_naming_it_and_its_value(knob, value):
    with pytest.raises(ConfigError) as caught:
        step_cost(replace(ScaleSetup(), **{knob: value}), "PPO")
    assert caught.value.knob == knob
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{knob}={value!r} is not valid: ")


def test_a_critic_apart_needs_two_gpus_and_the_method_must_be_known():
    with pytest.raises(ConfigError, match=r"^gpus=1 "):
        step_cost(ScaleSetup(gpus=1, colocated=False), "PPO")
    with pytest.raises(ConfigError, match=r"^method='DPO' "):
        step_cost(ScaleSetup(), "DPO")


def test_a_setup_no_number_of_gpus_holds_says_so():
    """72B on 40 GB GPUs: the engine's share of the weights (tensor-parallel over 8) and one micro-batch's activations
    fill a GPU before any training state is added, so more GPUs never help (the model shards neither)."""
    setup = ScaleSetup(model_b=72, gpu="A100-40GB", gpus=4096)
    cost = step_cost(setup, "GRPO")
    assert cost.min_gpus is None and not cost.fits
    assert "none" in cost_table(setup).splitlines()[2]
