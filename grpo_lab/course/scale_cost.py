"""Memory and time of one PPO step and one GRPO step of a 0.5B-72B model on real GPUs, counted on paper.

The toy's step times answer nothing at scale (3-4-token answers, a critic with 16 Adam steps a step); this
counts bytes and FLOPs. Both methods sample the same ``prompts_per_step x group_size`` answers; PPO adds a
trained critic (DeepSeekMath, arXiv 2402.03300 §4.1: a value model of the policy's size is a large memory
and compute burden) and its forward and update passes. Two knobs follow DeepSpeed-Chat's scripts: LoRA on the policy
(``lora_rank``) and generating from the trained weights instead of an inference engine's copy (``engine_copy``).
Assumed: no CPU offload (verl and OpenRLHF offer it);
stages run one after another; decoding is a roofline (the slower of streaming bytes and doing FLOPs); all
answers are equally long, so the long tail that keeps decoding going is missing: generation is a lower bound.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, replace

from ..errors import ConfigError

GB = 1e9


@dataclass(frozen=True)
class GPU:
    """name; memory_gb; bf16_flops: dense bf16 tensor-core FLOP/s; bandwidth: memory bytes/s."""

    name: str
    memory_gb: float
    bf16_flops: float
    bandwidth: float


GPUS = {  # NVIDIA datasheets: H100 SXM, H200 SXM, A100 80GB and 40GB SXM (dense figures; the sparse ones are 2x)
    "H100": GPU("H100 SXM 80GB", 80, 989e12, 3.35e12),
    "H200": GPU("H200 SXM 141GB", 141, 989e12, 4.8e12),
    "A100": GPU("A100 SXM 80GB", 80, 312e12, 2.039e12),
    "A100-40GB": GPU("A100 SXM 40GB", 40, 312e12, 1.555e12),
}
MFU = 0.4  # assumed share of peak FLOP/s reached by training and prefill (PaLM reports 46.2% MFU, arXiv 2204.02311)
MBU = 0.5  # assumed share of peak memory bandwidth reached by decoding
USABLE_MEMORY = 0.9  # share of a GPU's memory the step may fill: vLLM's default gpu_memory_utilization

TRAINED_BYTES = 16  # per parameter: bf16 weights and grads, fp32 master weights and Adam's two moments (ZeRO, arXiv 1910.02054 §3.1)
FROZEN_BYTES = 2  # per parameter: bf16 weights of a frozen model (reference, reward model, the inference engine's copy)
FORWARD_FLOPS = 2  # per parameter and token, forward only (Kaplan et al., arXiv 2001.08361 §2.1)
TRAIN_FLOPS = 8  # per parameter and token: forward + backward = 6 (Kaplan) + one recomputed forward (Korthikanti et al., arXiv 2205.05198)
FROZEN_TRAIN_FLOPS = 6  # the same through frozen weights (LoRA): the backward pass computes no weight gradients, 2 of its 4
LORA_MATRICES = 7  # adapted linear layers in each layer: q, k, v, o and the MLP's gate, up and down projections
ADAM_BYTES = 28  # per parameter and optimizer step: read the 14 bytes of grads, master weights and moments, write 14 (the same state)
MICRO_BATCH_TOKENS = 8192  # assumed tokens per GPU per forward/backward (e.g. verl's micro-batch of 4 sequences of 2048 tokens)
ENGINE_WEIGHT_SHARE = 0.5  # assumed: the inference engine uses tensor parallelism until its weights fill at most half a GPU

# Qwen2.5 (arXiv 2412.15115, Table 1: layers, KV heads; hidden size, head size and vocabulary from the released config.json):
# (billions of parameters, layers, hidden size, KV heads, head size). A size in between takes the nearest row's shape.
ARCHITECTURES = (
    (0.5, 24, 896, 2, 64),
    (1.5, 28, 1536, 2, 128),
    (3, 36, 2048, 2, 128),
    (7, 28, 3584, 4, 128),
    (14, 48, 5120, 8, 128),
    (32, 64, 5120, 8, 128),
    (72, 80, 8192, 8, 128),
)
VOCAB = 152_064


def shape_of(params_b: float) -> tuple[int, int, int, int]:
    """(layers, hidden size, KV heads, head size) of the Qwen2.5 model nearest in size (on a log scale)."""
    return min(ARCHITECTURES, key=lambda row: abs(math.log(row[0] / params_b)))[1:]


def kv_bytes_per_token(params_b: float) -> float:
    """Keys and values of one token in every layer, bf16: 2 x layers x KV heads x head size x 2 bytes."""
    layers, _, kv_heads, head_size = shape_of(params_b)
    return 2 * layers * kv_heads * head_size * 2


def activation_gb(params_b: float) -> float:
    """Activations of one micro-batch on one GPU with full recomputation (Korthikanti et al., arXiv 2205.05198):
    each layer's bf16 input kept (2·s·h bytes), one layer's 34·s·h recomputed (flash attention: no s² term),
    and the fp32 logits (4·s·vocab bytes), for s = MICRO_BATCH_TOKENS."""
    layers, hidden, _, _ = shape_of(params_b)
    return MICRO_BATCH_TOKENS * (2 * hidden * layers + 34 * hidden + 4 * VOCAB) / GB


def training_state_gb(params_b: float) -> float:
    """Weights, grads and Adam of a trained model before activations: 16 bytes a parameter (7B -> 112 GB)."""
    return TRAINED_BYTES * params_b


def lora_params_b(params_b: float, rank: int) -> float:
    """Billions of LoRA parameters of rank ``rank`` on every adapted matrix of every layer (Hu et al., arXiv 2106.09685:
    r x (d_in + d_out) a matrix), each matrix taken as hidden x hidden (the MLP's wider ones make this a lower bound)."""
    layers, hidden, _, _ = shape_of(params_b)
    return layers * LORA_MATRICES * rank * 2 * hidden / GB


@dataclass(frozen=True)
class ScaleSetup:
    """One RL step of an LLM on a cluster; sizes in billions of parameters."""

    model_b: float = 7.0  # the policy's size
    prompt_tokens: int = 512
    answer_tokens: int = 1024  # every answer's length: the number of decoding steps
    group_size: int = 8  # answers per prompt (G); PPO samples the same answers, so the two differ only by the critic
    prompts_per_step: int = 64
    critic_b: float | None = None  # None: the policy's size, as DeepSeekMath §4.1 describes PPO's value model
    reward_model_b: float = 0.0  # 0: a rule-based verifier (RLVR); otherwise a frozen reward model
    critic_epochs: int = 1  # passes of the critic over the batch (verl's and OpenRLHF's default: the policy's)
    critic_minibatches: int = 4  # Adam steps per pass
    policy_epochs: int = 1
    policy_minibatches: int = 4
    colocated: bool = True  # True: every model on every GPU (verl's hybrid engine); False: the critic on its own GPUs (OpenRLHF)
    lora_rank: int = 0  # 0: the policy trained in full; r: frozen policy weights with LoRA adapters of rank r (DeepSpeed-Chat's 13B-66B: 128)
    engine_copy: bool = True  # True: generation from an inference engine's own copy of the weights (vLLM in verl, OpenRLHF, TRL); False: from the trained weights (DeepSpeed-Chat's Hybrid Engine)
    gpus: int = 8
    gpu: str = "H100"


WHOLE_LIMITS = {"prompt_tokens": 65536, "answer_tokens": 65536, "group_size": 256, "prompts_per_step": 8192, "gpus": 4096}
WHOLE_LIMITS |= {"critic_epochs": 16, "critic_minibatches": 256, "policy_epochs": 16, "policy_minibatches": 256}  # knob: largest (smallest: 1)
SIZE_RANGE = "a number of billions from 0.5 to 72"


def check_setup(setup: ScaleSetup) -> None:
    """One ConfigError naming the first knob out of range."""
    for knob, largest in WHOLE_LIMITS.items():
        value = getattr(setup, knob)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= largest:
            raise ConfigError(knob, value, f"a whole number from 1 to {largest}")
    sizes = (
        ("model_b", setup.model_b, False, SIZE_RANGE),
        ("critic_b", setup.critic_b, setup.critic_b is None, f"None (the policy's size) or {SIZE_RANGE}"),
        ("reward_model_b", setup.reward_model_b, setup.reward_model_b == 0, f"0 (a rule-based verifier) or {SIZE_RANGE}"),
    )
    for knob, value, default, allowed in sizes:
        if isinstance(value, bool) or not (default or (isinstance(value, (int, float)) and 0.5 <= value <= 72)):
            raise ConfigError(knob, value, allowed)
    if not isinstance(setup.gpu, str) or setup.gpu not in GPUS:
        raise ConfigError("gpu", setup.gpu, f"one of {', '.join(GPUS)}")
    if not isinstance(setup.colocated, bool):
        raise ConfigError("colocated", setup.colocated, "True (every model on every GPU) or False (the critic on GPUs of its own)")
    if not isinstance(setup.engine_copy, bool):
        raise ConfigError(
            "engine_copy", setup.engine_copy, "True (an inference engine's copy of the weights) or False (generate from the trained weights)"
        )
    if isinstance(setup.lora_rank, bool) or not isinstance(setup.lora_rank, int) or not 0 <= setup.lora_rank <= 1024:
        raise ConfigError("lora_rank", setup.lora_rank, "0 (full-parameter training) or a LoRA rank from 1 to 1024")
    if not setup.colocated and setup.gpus < 2:
        raise ConfigError("gpus", setup.gpus, "2 or more when colocated=False (the critic needs GPUs of its own)")


@dataclass(frozen=True)
class StepCost:
    """method; resident_gb: weights, grads and optimizer states of every model, all GPUs together (the inference
    engine's copy once for each tensor-parallel group: 1/tp of it on each actor GPU); min_gpus: the fewest GPUs it fits on (None: no number of these
    GPUs holds it, when the engine's share and one micro-batch's activations alone fill a GPU); per_gpu_gb: resident share plus KV cache or activations, whichever is larger, on the
    fullest GPU; fits; waves: generation rounds the KV cache allows; seconds: wall time by stage (empty if it does not fit)."""

    method: str
    resident_gb: float
    min_gpus: int | None
    per_gpu_gb: float
    fits: bool
    waves: int
    seconds: dict[str, float]

    @property
    def step_seconds(self) -> float:
        return sum(self.seconds.values()) if self.fits else math.nan

    @property
    def generation_share(self) -> float:
        return self.seconds["generation"] / self.step_seconds if self.fits else math.nan


def engine_tp(policy_b: float, gpu: GPU) -> int:
    """Tensor-parallel GPUs of the inference engine: a power of 2, until its weights fill at most ENGINE_WEIGHT_SHARE of a GPU."""
    return 2 ** max(math.ceil(math.log2(FROZEN_BYTES * policy_b / (ENGINE_WEIGHT_SHARE * gpu.memory_gb))), 0)


def gpus_to_fit(sharded_gb: float, activations_gb: float, usable_gb: float, engine_gb: float = 0.0, tp: int = 1) -> int | None:
    """The fewest GPUs n on which a share of ``sharded_gb`` (ZeRO-3 / FSDP), the inference engine's weights
    (``engine_gb`` whole on each group of min(tp, n) GPUs) and one micro-batch's activations fit; None if no n does."""
    room = usable_gb - activations_gb - engine_gb / tp  # per GPU, once n reaches tp
    if room <= 0:
        return None
    n = 1
    while sharded_gb / n + engine_gb / min(tp, n) + activations_gb > usable_gb:
        n += 1
    return n


def step_cost(setup: ScaleSetup, method: str) -> StepCost:
    """Memory and time of one step of ``method`` ("PPO" or "GRPO") for ``setup``."""
    check_setup(setup)
    if method not in ("PPO", "GRPO"):
        raise ConfigError("method", method, "PPO or GRPO")
    gpu, policy, critic = GPUS[setup.gpu], setup.model_b, (setup.critic_b or setup.model_b) if method == "PPO" else 0.0
    usable, flops, bandwidth = USABLE_MEMORY * gpu.memory_gb, MFU * gpu.bf16_flops, MBU * gpu.bandwidth
    # the actor side, sharded over its GPUs: the trained policy, the reference and the reward model (and, colocated, the
    # critic); with LoRA the policy's weights are frozen and only the adapters train. The inference engine's copy of the
    # policy is not sharded that way: each of its tensor-parallel groups holds it whole, and it stays on the GPUs all step
    adapters = lora_params_b(policy, setup.lora_rank) if setup.lora_rank else 0.0
    policy_gb = FROZEN_BYTES * policy + training_state_gb(adapters) if setup.lora_rank else training_state_gb(policy)
    actor_side_gb = policy_gb + FROZEN_BYTES * (policy + setup.reward_model_b)
    engine_gb, tp_needed = (FROZEN_BYTES * policy if setup.engine_copy else 0.0), engine_tp(policy, gpu)
    critic_side_gb, actor_act, critic_act = training_state_gb(critic), activation_gb(policy), activation_gb(critic) if critic else 0.0
    apart = not setup.colocated and critic > 0
    if apart:  # split the GPUs in proportion to each side's FLOPs a token, each side given at least the GPUs it needs to fit
        actor_min = gpus_to_fit(actor_side_gb, actor_act, usable, engine_gb, tp_needed)
        critic_min = gpus_to_fit(critic_side_gb, critic_act, usable)
        policy_train = setup.policy_epochs * (FROZEN_TRAIN_FLOPS if setup.lora_rank else TRAIN_FLOPS) * policy
        actor_work = FORWARD_FLOPS * (2 * policy + setup.reward_model_b) + policy_train  # scoring and update; generation waits either way
        critic_work = FORWARD_FLOPS * critic + setup.critic_epochs * TRAIN_FLOPS * critic
        critic_gpus = max(round(setup.gpus * critic_work / (actor_work + critic_work)), critic_min or 1)
        critic_gpus = max(min(critic_gpus, setup.gpus - (actor_min or 1)), 1)
        actor_gpus = setup.gpus - critic_gpus
        min_gpus = actor_min + critic_min if actor_min is not None and critic_min is not None else None
        critic_peak_gb = critic_side_gb / critic_gpus + critic_act
    else:  # the critic shares every GPU and trains in its own turn
        actor_gpus = critic_gpus = setup.gpus
        actor_side_gb, critic_side_gb, actor_act = actor_side_gb + critic_side_gb, 0.0, max(actor_act, critic_act)
        min_gpus = gpus_to_fit(actor_side_gb, actor_act, usable, engine_gb, tp_needed)
        critic_peak_gb = 0.0
    tp = min(tp_needed, actor_gpus)  # the engine's tensor-parallel GPUs
    answers = setup.prompts_per_step * setup.group_size
    kv_needed_gb = answers * (setup.prompt_tokens + setup.answer_tokens) * kv_bytes_per_token(policy) / GB
    actor_resident_gb = actor_side_gb / actor_gpus + engine_gb / tp  # on each actor GPU
    kv_room_gb = usable - actor_resident_gb  # per actor GPU: the inference engine fills what the resident models leave
    actor_peak_gb = actor_resident_gb + max(min(kv_needed_gb / actor_gpus, kv_room_gb), actor_act)
    fits = actor_peak_gb <= usable and critic_peak_gb <= usable
    resident_gb = actor_side_gb + critic_side_gb + engine_gb * actor_gpus / tp  # 1/tp of an engine copy on every actor GPU
    if not fits:
        return StepCost(method, resident_gb, min_gpus, max(actor_peak_gb, critic_peak_gb), False, 0, {})

    waves = math.ceil(kv_needed_gb / (kv_room_gb * actor_gpus))  # rounds of decoding when the KV cache cannot hold every answer
    running = answers / waves / actor_gpus  # answers decoded together, per GPU
    context = setup.prompt_tokens + setup.answer_tokens / 2  # average tokens of keys and values read per answer and step
    # one decoding step streams each GPU's share of the weights and its answers' KV cache, and does 2N FLOPs per answer
    decode_step = max(
        (FROZEN_BYTES * policy * GB / tp + running * context * kv_bytes_per_token(policy)) / bandwidth, running * FORWARD_FLOPS * policy * GB / flops
    )
    prefill = FORWARD_FLOPS * policy * GB * answers * setup.prompt_tokens / (actor_gpus * flops)
    tokens = answers * (setup.prompt_tokens + setup.answer_tokens)

    def compute_s(flops_per_token_and_param: float, params_b: float, gpus: int) -> float:
        return flops_per_token_and_param * params_b * GB * tokens / (gpus * flops)

    def update_s(params_b: float, epochs: int, minibatches: int, gpus: int, trained_b: float | None = None) -> float:
        """``trained_b``: the parameters Adam updates when they are not all of them (LoRA's adapters)."""
        train_flops = TRAIN_FLOPS if trained_b is None else FROZEN_TRAIN_FLOPS
        adam_s = epochs * minibatches * ADAM_BYTES * (params_b if trained_b is None else trained_b) * GB / (gpus * bandwidth)
        return epochs * compute_s(train_flops, params_b, gpus) + adam_s

    # scoring: the policy's log-probs before the update (verl and TRL recompute them), the reference's, the reward model's
    scoring = compute_s(FORWARD_FLOPS, 2 * policy + setup.reward_model_b, actor_gpus)
    policy_update = update_s(policy, setup.policy_epochs, setup.policy_minibatches, actor_gpus, adapters if setup.lora_rank else None)
    critic_forward = compute_s(FORWARD_FLOPS, critic, critic_gpus)
    critic_update = update_s(critic, setup.critic_epochs, setup.critic_minibatches, critic_gpus) if critic else 0.0
    if not apart:
        critic_s = critic_forward + critic_update
    else:  # on its own GPUs the critic runs beside the actor's scoring and update; only what outlasts them adds time
        critic_s = max(critic_forward - scoring, 0.0) + max(critic_update - policy_update, 0.0)
    generation = prefill + waves * setup.answer_tokens * decode_step
    seconds = {"generation": generation, "scoring": scoring, "policy update": policy_update, "critic": critic_s}
    return StepCost(method, resident_gb, min_gpus, max(actor_peak_gb, critic_peak_gb), True, waves, seconds)


def compare_steps(setup: ScaleSetup) -> dict[str, StepCost]:
    """{"PPO": cost, "GRPO": cost} of one step on the same cluster."""
    return {method: step_cost(setup, method) for method in ("PPO", "GRPO")}


def cost_table(setup: ScaleSetup) -> str:
    """The comparison as a plain-text table: memory, step time and where the time goes."""
    costs = compare_steps(setup).values()

    def row(label: str, text, always: bool = False) -> list[str]:
        return [label, *(text(cost) if always or cost.fits else "does not fit" for cost in costs)]

    rows = [
        ["", *(cost.method for cost in costs)],
        row("resident models, all GPUs (GB)", lambda cost: f"{cost.resident_gb:,.0f}", always=True),
        row(f"fewest {GPUS[setup.gpu].name} that fit", lambda cost: "none" if cost.min_gpus is None else str(cost.min_gpus), always=True),
        row(f"fullest of {setup.gpus} GPUs (GB)", lambda cost: f"{cost.per_gpu_gb:.0f}" + ("" if cost.fits else " (too full)"), always=True),
        row("step time", lambda cost: f"{cost.step_seconds:.1f} s"),
    ]
    for stage in ("generation", "scoring", "policy update", "critic"):
        rows.append(row(f"  {stage}", lambda cost, stage=stage: f"{cost.seconds[stage]:.1f} s ({cost.seconds[stage] / cost.step_seconds:.0%})"))
    widths = [max(len(cells[column]) for cells in rows) for column in range(3)]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip() for cells in rows)


POLICY_SIZED = "as policy"  # the critic slider's first stop: critic_b None, the policy's size whatever it is


def scale_cost_widget(setup: ScaleSetup | None = None):
    """Sliders for model size, answer length, G, prompts per step, the critic's size and update schedule, GPUs,
    placement, LoRA and where generation reads the weights from, over the PPO/GRPO table."""
    import ipywidgets as widgets

    setup = setup or ScaleSetup()
    controls = {
        "model_b": widgets.SelectionSlider(options=[0.5, 1.5, 3, 7, 14, 32, 72], value=setup.model_b, description="model (B)"),
        "answer_tokens": widgets.SelectionSlider(options=[2**k for k in range(6, 16)], value=setup.answer_tokens, description="answer tokens"),
        "group_size": widgets.SelectionSlider(options=[1, 2, 4, 8, 16, 32, 64], value=setup.group_size, description="G"),
        "prompts_per_step": widgets.SelectionSlider(options=[2**k for k in range(3, 11)], value=setup.prompts_per_step, description="prompts"),
        "critic_b": widgets.SelectionSlider(
            options=[POLICY_SIZED, *(0.5, 1.5, 3, 7, 14, 32, 72)], value=setup.critic_b or POLICY_SIZED, description="critic (B)"
        ),
        "critic_epochs": widgets.SelectionSlider(options=[1, 2, 4], value=setup.critic_epochs, description="critic epochs"),
        "critic_minibatches": widgets.SelectionSlider(
            options=[1, 2, 4, 8, 16], value=setup.critic_minibatches, description="critic Adam steps/epoch"
        ),
        "gpus": widgets.SelectionSlider(options=[2**k for k in range(1, 10)], value=setup.gpus, description="GPUs"),
        "colocated": widgets.ToggleButtons(options=[("colocated", True), ("critic apart", False)], value=setup.colocated),
        "lora_rank": widgets.ToggleButtons(options=[("policy trained in full", 0), ("LoRA, rank 128", 128)], value=setup.lora_rank),
        "engine_copy": widgets.ToggleButtons(options=[("engine's own copy", True), ("trained weights", False)], value=setup.engine_copy),
    }
    for control in controls.values():  # "critic Adam steps/epoch" is wider than the default description
        control.style.description_width = "150px"
    table = widgets.HTML()

    def redraw(_change=None) -> None:
        values = {knob: control.value for knob, control in controls.items()}
        chosen = replace(setup, **{**values, "critic_b": None if values["critic_b"] == POLICY_SIZED else values["critic_b"]})
        table.value = f"<pre>{html.escape(cost_table(chosen))}</pre>"

    for control in controls.values():
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([*controls.values(), table])
