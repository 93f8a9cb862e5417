"""The ten named experiments: what each varies (its grid of cells) in full and in --fast mode.

A cell is ``{"id", "label", "axes", "config"}``: ``id`` is its stable short name, distinct within its
experiment, what result files, claims, figures, the course and the tests key on; ``label`` is its
display words, looked up by ``cell_label`` and never stored in a result, so rewording one touches no
result; ``axes`` names what varies (for plots and tables), ``config`` is everything a unit needs
besides the seed (``config["kind"]`` picks the unit in measures.py; ``config["train"]`` holds
TrainConfig overrides). Fast mode keeps every experiment's shape but with fewer steps, cells and
seeds, so CI can run every one.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from ..core.config import TrainConfig
from ..pretrain import LONG_TASK, PRACTICE_TASK

TARGET_ACCURACY = 0.7  # held-out accuracy that counts as "reached" (the reference starts at 0.51)
BASELINES = ("none", "mean", "rloo", "zscore", "ema")
NOISY_REWARD = 1e-3  # std of the simulated reward-model noise of the 'noisy' reward: tiny, as rounding jitter
DAPO_REFILL_BATCHES = 4  # dynamic sampling: at most this many extra draws of P prompts per step to refill the batch
# Declared before any replication was run: a replication (sweep NAME --replicate) measures seeds
# REPLICATION_SEED_BASE .. REPLICATION_SEED_BASE+n-1, disjoint from the main run's seeds 0..n-1.
REPLICATION_SEED_BASE = 1000


@dataclass(frozen=True)
class Experiment:
    """name: the sweep's name; question: what it measures, in one line; grid(fast) -> cells;
    fast_seeds: seeds per cell of the --fast grid (the full grid's: SEEDS); fresh_process: run each unit in a new process
    (memory measurements); derive(cells) -> experiment-specific keys added to the result;
    only_in: the regimes it runs in (empty: every regime), and why_only: why no others.
    replicated: the cells a replication runs (empty: every cell), for a large grid whose claims read only a few of its
    cells (``sweep NAME --replicate`` re-measures what decides a verdict, not the rest).
    shares(config, seed) -> a key: units with equal keys reuse inputs a worker process caches, so they run one after
    another in one worker (None: each unit on its own)."""

    name: str
    question: str
    grid: Callable[[bool], list[dict]]
    fast_seeds: int = 2
    fresh_process: bool = False
    derive: Callable[[list[dict]], dict] | None = None
    only_in: tuple[str, ...] = ()
    why_only: str = ""
    replicated: tuple[str, ...] = ()
    shares: Callable[[dict, int], Hashable] | None = None


def cell(cell_id: str, label: str, axes: dict, kind: str = "train", **config: Any) -> dict:
    return {"id": cell_id, "label": label, "axes": axes, "config": {"kind": kind, **config}}


def training(steps: int, eval_every: int = 10, **overrides: Any) -> dict:
    """TrainConfig overrides for an experiment's run: no gradient probe (the variance experiment
    measures that), evaluation every ``eval_every`` steps."""
    return {"steps": steps, "eval_every": eval_every, "probe_every": 0, **overrides}


def mean_of(cells: list[dict], cell_id: str, metric: str) -> float | None:
    """A cell's seed-mean of one metric, or None."""
    found = next((c for c in cells if c["id"] == cell_id), None)
    return found["summary"].get(metric, {}).get("mean") if found else None


# --- 1. variance ---------------------------------------------------------------------------------------


def variance_grid(fast: bool) -> list[dict]:
    sizes = (2, 8, 32) if fast else (2, 4, 8, 16, 32, 64)
    settings = dict(
        half_trained_steps=20 if fast else 75,
        prompts=8 if fast else 16,
        batches=2 if fast else 4,
        ema_warmup=3 if fast else 10,
        baselines=list(BASELINES),
        reference_prompts=64 if fast else 1024,
        reference_group_size=16,
    )
    return [
        cell(f"{policy}-g{G}", f"{policy}, G={G}", {"policy": policy, "group_size": G}, "variance", policy=policy, group_size=G, **settings)
        for policy in ("reference", "half-trained")
        for G in sizes
    ]


# --- 2. offset-and-scale ---------------------------------------------------------------------------------


def offset_and_scale_grid(fast: bool) -> list[dict]:
    steps = 15 if fast else 100
    cells = [
        cell(
            f"{baseline}-offset{offset:g}",
            f"{baseline}, offset {offset:g}",
            {"baseline": baseline, "reward_offset": offset, "hard_reward_scale": 1.0},
            train=training(steps, baseline=baseline, reward_offset=float(offset)),
            target=TARGET_ACCURACY,
            by_difficulty=True,
        )
        for offset in ((0, 5) if fast else (0, 1, 5))
        for baseline in ("none", "mean", "zscore")
    ]
    cells += [
        cell(
            f"{baseline}-hard-x0.1",
            f"{baseline}, hard x0.1",
            {"baseline": baseline, "reward_offset": 0.0, "hard_reward_scale": 0.1},
            train=training(steps, baseline=baseline, hard_reward_scale=0.1),
            target=TARGET_ACCURACY,
            by_difficulty=True,
        )
        for baseline in ("none", "mean", "zscore")
    ]
    return cells


# --- 3. group-size ---------------------------------------------------------------------------------------

EQUAL_PROMPTS, EQUAL_SAMPLES = 8, 128  # prompts per step in one regime, responses per step in the other


def group_size_grid(fast: bool) -> list[dict]:
    sizes = (2, 8, 32) if fast else (2, 4, 8, 16, 32, 64)
    steps, prompts, samples = (30, 4, 64) if fast else (100, EQUAL_PROMPTS, EQUAL_SAMPLES)
    cells = []
    for regime in ("equal prompts", "equal samples"):
        for G in sizes:
            P = prompts if regime == "equal prompts" else samples // G
            cells.append(
                cell(
                    f"{regime.replace(' ', '-')}-g{G}",
                    f"{regime}, G={G}",
                    {"regime": regime, "group_size": G, "prompts_per_step": P},
                    train=training(steps, eval_every=5, group_size=G, prompts_per_step=P),
                    target=TARGET_ACCURACY,
                )
            )
    # 2-GRPO's reading of "12.5% of the rollouts" as a budget: every prompt visited as often as by G=16,
    # with 8x the prompts per batch (so a step has G=16's rollouts and a less noisy gradient) and 1/8 of the steps
    cells.append(
        cell(
            "2grpo-protocol",
            "2-GRPO protocol: G=2, 8x prompts, 1/8 of the steps",
            {"regime": "2-GRPO protocol", "group_size": 2, "prompts_per_step": 8 * prompts},
            train=training(math.ceil(steps / 8), eval_every=2, group_size=2, prompts_per_step=8 * prompts),
            target=TARGET_ACCURACY,
        )
    )
    return cells


def group_size_derive(cells: list[dict]) -> dict:
    """The 2-GRPO comparison (G=2 vs G=16 at equal prompts: 12.5% of the rollouts) and the gain of
    each doubling of G at equal prompts."""
    sizes = sorted({c["axes"]["group_size"] for c in cells})
    late = {G: mean_of(cells, f"equal-prompts-g{G}", "late_eval_accuracy") for G in sizes}
    start = statistics.fmean(s["metrics"]["initial_eval_accuracy"] for c in cells for s in c["per_seed"])
    derived: dict = {
        "initial_eval_accuracy": start,
        "gain_per_doubling_equal_prompts": {
            f"{a}->{b}": late[b] - late[a] for a, b in zip(sizes, sizes[1:]) if late[a] is not None and late[b] is not None
        },
    }
    small, large = 2, 16 if 16 in sizes else max(sizes)
    if late.get(small) is not None and late.get(large):
        derived["two_vs_large"] = {
            "small_G": small,
            "large_G": large,
            "rollout_fraction": small / large,
            "accuracy_ratio": late[small] / late[large],
            "gain_ratio": (late[small] - start) / (late[large] - start) if late[large] > start else None,
        }
    return derived


# --- 4. sigma-to-zero ------------------------------------------------------------------------------------

REWARDS = {"exact": {"reward": "exact"}, "partial": {"reward": "partial"}, "noisy": {"reward": "exact", "reward_noise": NOISY_REWARD}}


def sigma_to_zero_grid(fast: bool) -> list[dict]:
    steps = 15 if fast else 60
    epsilons = (0.0, 1e-4, 1e-1) if fast else (0.0, 1e-8, 1e-6, 1e-4, 1e-2, 1e-1)
    cells = []
    for reward, reward_overrides in REWARDS.items():
        for eps in epsilons:
            for mode in ("add", "clamp"):
                if mode == "clamp" and (eps == 0 or fast and eps < max(epsilons)):  # max(std, 0) = std + 0: the same run
                    continue
                cells.append(
                    cell(
                        f"{reward}-eps{eps:g}-{mode}",
                        f"{reward}, eps={eps:g}, {mode}",
                        {"reward": reward, "std_eps": eps, "eps_mode": mode, "filter": False},
                        train=training(steps, std_eps=eps, eps_mode=mode, **reward_overrides),
                        target=TARGET_ACCURACY,
                        advantage_probe=True,
                    )
                )
        cells.append(
            cell(
                f"{reward}-filter",
                f"{reward}, eps=0.0001, add, zero-std filter",
                {"reward": reward, "std_eps": 1e-4, "eps_mode": "add", "filter": True},
                train=training(steps, skip_zero_std_groups=True, **reward_overrides),
                target=TARGET_ACCURACY,
                advantage_probe=True,
            )
        )
        cells.append(
            cell(
                f"{reward}-refill",
                f"{reward}, eps=0.0001, add, dynamic sampling",
                {"reward": reward, "std_eps": 1e-4, "eps_mode": "add", "filter": "refill"},
                train=training(steps, dynamic_sampling_batches=DAPO_REFILL_BATCHES, **reward_overrides),
                target=TARGET_ACCURACY,
                advantage_probe=True,
            )
        )
    # DAPO's setting: a policy that gets most groups all wrong (the weak reference), where dropping
    # tied groups leaves few and refilling has the most to find
    for cell_id, label, overrides in (
        ("weak-eps0.0001-add", "", {}),
        ("weak-filter", ", zero-std filter", {"skip_zero_std_groups": True}),
        ("weak-refill", ", dynamic sampling", {"dynamic_sampling_batches": DAPO_REFILL_BATCHES}),
    ):
        cells.append(
            cell(
                cell_id,
                f"weak reference, exact, eps=0.0001, add{label}",
                {
                    "reward": "exact",
                    "std_eps": 1e-4,
                    "eps_mode": "add",
                    "reference": "weak",
                    "filter": {"": False, ", zero-std filter": True}.get(label, "refill"),
                },
                train=training(steps, reference="weak", **overrides),
                target=TARGET_ACCURACY,
                advantage_probe=True,
            )
        )
    return cells


# --- 5. small-group-remedies -----------------------------------------------------------------------------


def small_group_grid(fast: bool) -> list[dict]:
    steps = 30 if fast else 150
    variants = {  # id: (label, TrainConfig overrides)
        "g2": ("G=2", {"group_size": 2}),
        "g2-ema": ("G=2 + EMA baseline", {"group_size": 2, "baseline": "ema"}),
        "g2-kl0.04": ("G=2 + KL 0.04", {"group_size": 2, "kl_coef": 0.04}),
        "g2-lr3e-5": ("G=2 + lr 3e-5", {"group_size": 2, "lr": 3e-5}),
        "g2-64prompts": ("G=2, 64 prompts (G=8's samples)", {"group_size": 2, "prompts_per_step": 64}),
        "g8": ("G=8", {"group_size": 8}),
    }
    return [
        cell(cell_id, label, {"variant": cell_id}, train=training(steps, **overrides), target=TARGET_ACCURACY)
        for cell_id, (label, overrides) in variants.items()
    ]


# --- 6. batch-blowup -------------------------------------------------------------------------------------


def blowup_grid(fast: bool) -> list[dict]:
    shapes = (
        ((16, 2, 0), (32, 16, 0), (32, 16, 64))
        if fast
        else ((16, 2, 0), (16, 8, 0), (16, 32, 0), (16, 128, 0), (64, 16, 0), (64, 16, 256), (64, 16, 64), (64, 16, 16))
    )
    return [
        cell(
            f"p{P}-g{G}" + (f"-micro{micro}" if micro else ""),
            f"{P} prompts x G={G}" + (f", micro-batch {micro}" if micro else ""),
            {"prompts_per_step": P, "group_size": G, "micro_batch_size": micro},
            "blowup",
            train=training(3 if fast else 4, eval_every=0, prompts_per_step=P, group_size=G, micro_batch_size=micro),
        )
        for P, G, micro in shapes
    ]


def blowup_derive(cells: list[dict]) -> dict:
    """Micro-batching's promise, checked: the same step-1 gradient norm as the whole batch (same
    seed, same samples), with less activation memory."""
    full = {(c["axes"]["prompts_per_step"], c["axes"]["group_size"]): c for c in cells if c["axes"]["micro_batch_size"] == 0}
    checks = []
    for c in cells:
        reference = full.get((c["axes"]["prompts_per_step"], c["axes"]["group_size"]))
        if c["axes"]["micro_batch_size"] == 0 or reference is None:
            continue
        pairs = [(a["metrics"], b["metrics"]) for a in c["per_seed"] for b in reference["per_seed"] if a["seed"] == b["seed"]]
        checks.append(
            {
                "id": c["id"],
                "max_rel_grad_norm_diff": max(abs(a["first_grad_norm"] - b["first_grad_norm"]) / b["first_grad_norm"] for a, b in pairs),
                "activation_ratio": c["summary"]["saved_activations_mb"]["mean"] / reference["summary"]["saved_activations_mb"]["mean"],
                "time_ratio": c["summary"]["time_per_step_s"]["mean"] / reference["summary"]["time_per_step_s"]["mean"],
            }
        )
    return {"micro_batch_checks": checks}


# --- 7. grpo-vs-ppo --------------------------------------------------------------------------------------

NOISY_REWARD_STD = 0.5  # the card's "reward variance is large": Gaussian noise of std 0.5 on a 0/1 reward
# PPO as practitioners run it: each batch reused for REUSE_EPOCHS passes of REUSE_MINIBATCHES minibatches
# (CleanRL's defaults, update_epochs 4 x num_minibatches 4), so the ratio leaves 1 and the clip acts
REUSE_EPOCHS, REUSE_MINIBATCHES = 4, 4
REUSE = {"inner_epochs": REUSE_EPOCHS, "policy_minibatches": REUSE_MINIBATCHES}
REUSE_WORDS = f"{REUSE_EPOCHS} epochs x {REUSE_MINIBATCHES} minibatches"
# verl's default (ppo_epochs 1, several mini-batches) with the critic on the actor's schedule: 4 updates
# each a step, instead of the critic's own 16 against the policy's 1
VERL_MINIBATCHES = 4
PPO_SHAPE = {"group_size": 1, "prompts_per_step": 128}  # PPO's batch: one answer to each of 128 prompts, GRPO's 128 responses


def grpo_vs_ppo_grid(fast: bool) -> list[dict]:
    steps = 20 if fast else 150
    variants = {  # id: (label, TrainConfig overrides)
        "grpo": ("GRPO (zscore, G=8, 16 prompts)", {}),
        "ppo": ("PPO critic (G=1, 128 prompts)", {"baseline": "critic", **PPO_SHAPE}),
        "ppo-g8": ("PPO critic (G=8, 16 prompts)", {"baseline": "critic"}),
        # the samples per step of G=2 x 16 prompts (small-group-remedies)
        "ppo-32prompts": ("PPO critic (G=1, 32 prompts)", {"baseline": "critic", "group_size": 1, "prompts_per_step": 32}),
        # the control: is it the critic, or just any baseline at G=1?
        "ema": ("EMA baseline, no critic (G=1, 128 prompts)", {"baseline": "ema", **PPO_SHAPE}),
        "grpo-noisy": (f"GRPO (zscore, G=8, 16 prompts), reward noise {NOISY_REWARD_STD:g}", {"reward_noise": NOISY_REWARD_STD}),
        "ppo-noisy": (
            f"PPO critic (G=1, 128 prompts), reward noise {NOISY_REWARD_STD:g}",
            {"baseline": "critic", **PPO_SHAPE, "reward_noise": NOISY_REWARD_STD},
        ),
        "ppo-reuse": (f"PPO critic, {REUSE_WORDS} (G=1, 128 prompts)", {"baseline": "critic", **PPO_SHAPE, **REUSE}),
        f"ppo-verl-1x{VERL_MINIBATCHES}": (
            f"PPO critic, verl schedule: 1 epoch x {VERL_MINIBATCHES} minibatches for policy and critic (G=1, 128 prompts)",
            {"baseline": "critic", **PPO_SHAPE, "policy_minibatches": VERL_MINIBATCHES, "critic_schedule": "policy"},
        ),
        "grpo-reuse": (f"GRPO (zscore, G=8, 16 prompts), {REUSE_WORDS}", REUSE),
        # the control of the largest gap: PPO's batch and reuse with no critic (is it the critic, or the reuse?)
        "ema-reuse": (f"EMA baseline, no critic, {REUSE_WORDS} (G=1, 128 prompts)", {"baseline": "ema", **PPO_SHAPE, **REUSE}),
        # an unbiased V: the best a value baseline could give
        "mc-value": (f"Monte-Carlo value (VinePPO), {REUSE_WORDS} (G=1, 128 prompts)", {"baseline": "mc_value", **PPO_SHAPE, **REUSE}),
    }
    return [
        cell(cell_id, label, {"variant": cell_id}, train=training(steps, eval_every=5, **overrides), target=TARGET_ACCURACY)
        for cell_id, (label, overrides) in variants.items()
    ]


def grpo_vs_ppo_derive(cells: list[dict]) -> dict:
    """Cost to reach the target if each response also costs ``c`` seconds to generate:
    time_to_target + c * samples_to_target. The crossover c* is where the means of GRPO and the G=1 critic cost the
    same, when their means differ in opposite directions (a point estimate for the figure; whether the difference is
    beyond noise is claim 13's rule, rules/critic.py, which compares the seeds). Also the accuracy at equal
    wall time: the last evaluation within the shortest run's total time."""

    def summary(cell_id: str, metric: str) -> dict:
        return next(c for c in cells if c["id"] == cell_id)["summary"][metric]

    (grpo_time, grpo_samples), (ppo_time, ppo_samples) = (
        (summary(cell_id, "time_to_target_s")["mean"], summary(cell_id, "samples_to_target")["mean"]) for cell_id in ("grpo", "ppo")
    )
    derived: dict = {"crossover_s_per_response": None}
    if None not in (grpo_time, grpo_samples, ppo_time, ppo_samples) and (ppo_time - grpo_time) * (grpo_samples - ppo_samples) > 0:
        derived["crossover_s_per_response"] = (ppo_time - grpo_time) / (grpo_samples - ppo_samples)
    shortest = min(s["metrics"]["wall_time_s"] for c in cells for s in c["per_seed"])
    derived["equal_wall_time_s"] = shortest
    derived["accuracy_at_equal_wall_time"] = {}
    for c in cells:
        values = []
        for s in c["per_seed"]:
            within = [a for t, a in zip(s["series"]["eval_wall_time"], s["series"]["eval_accuracy"]) if t <= shortest]
            values.append(within[-1])
        derived["accuracy_at_equal_wall_time"][c["id"]] = {
            "mean": statistics.fmean(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "n": len(values),
        }
    return derived


# --- 8. batch-shape --------------------------------------------------------------------------------------

BATCH_RESPONSES = 128  # responses per step in every cell: prompts x G
SHAPE_PROMPTS = (16, 32, 64, 128)  # prompts per step; G = BATCH_RESPONSES / prompts
SHAPE_BASELINES = ("ema", "mean", "zscore", "rloo", "critic", "mc_value")
MC_VALUE_PROMPTS = (16, 128)  # the Monte-Carlo value costs 4 rollouts per answer prefix: measured at the two ends only
SHAPE_REUSE = {"once": ("one pass", {}), "reuse": (REUSE_WORDS, REUSE)}
# the cells claim 32 (rules.critic.shape_not_critic) reads: the learned critic and the critic-free moving average at the
# fewest and the most prompts per step, in each reuse setting, and its auxiliary z-score cell; a replication runs these
SHAPE_CLAIM_CELLS = tuple(
    f"{baseline}-p{P}-{reuse}" for reuse in SHAPE_REUSE for baseline in ("critic", "ema") for P in (min(SHAPE_PROMPTS), max(SHAPE_PROMPTS))
) + (f"zscore-p{min(SHAPE_PROMPTS)}-once",)


def batch_shape_grid(fast: bool) -> list[dict]:
    """Every baseline at every batch shape of BATCH_RESPONSES responses a step, trained on once and with PPO's reuse:
    which matters, the baseline or how the responses are spread over prompts? A group baseline needs G >= 2.
    A cell sets only the knobs that differ from TrainConfig's defaults, so a cell that is also a grpo-vs-ppo cell has
    the same config and ``sweep all`` runs it once (runner.run_experiment's ``done``)."""
    steps = 10 if fast else 150
    prompts = (16, 128) if fast else SHAPE_PROMPTS
    baselines = ("ema", "zscore", "critic") if fast else SHAPE_BASELINES
    defaults = TrainConfig()
    cells = []
    for reuse, (reuse_words, reuse_overrides) in SHAPE_REUSE.items():
        for baseline in baselines:
            for P in prompts:
                G = BATCH_RESPONSES // P
                if (G < 2 and baseline in ("mean", "zscore", "rloo")) or (baseline == "mc_value" and P not in MC_VALUE_PROMPTS):
                    continue
                overrides = {"baseline": baseline, "group_size": G, "prompts_per_step": P, **reuse_overrides}
                overrides = {knob: value for knob, value in overrides.items() if getattr(defaults, knob) != value}
                cells.append(
                    cell(
                        f"{baseline.replace('_', '-')}-p{P}-{reuse}",
                        f"{baseline}, {P} prompts x G={G}, {reuse_words}",
                        {"baseline": baseline, "prompts_per_step": P, "group_size": G, "reuse": reuse},
                        train=training(steps, eval_every=5, **overrides),
                        target=TARGET_ACCURACY,
                    )
                )
    return cells


# --- 9. critic-fit ---------------------------------------------------------------------------------------

CRITIC_GROUP_SIZES = (2, 4, 8, 16, 32, 64)
CRITIC_LRS = (1e-4, 3e-4, 1e-3, 3e-3)


def critic_fit_shares(config: dict, seed: int) -> tuple[str, int]:
    """The cells of one fixed policy and seed read the same samples and Monte-Carlo values (measures.critic_fit_samples,
    critic_fit_mc_values), which cost most of a unit (about 17 minutes of one core in the practice regime, where the
    token-level ceiling rolls out 27 prefixes of 1,200 answers 128 times; a unit that finds them cached, about 23 s)."""
    return config["policy"], seed


def critic_fit_grid(fast: bool) -> list[dict]:
    """The default critic on the reference and on a half-trained policy, with fresh rollouts every
    batch (as in a PPO run) and with one fixed pool of rollouts (to show over-fitting); the
    reference with fresh rollouts at other learning rates and with the clipped value loss; and the
    variants practitioners use (axis ``variant``, on their cells only): VAPO's critic_lambda 1 and a
    value head on the policy's trunk on the reference, VAPO's warm-up (the first half of the cell's
    batches, from the reference) before the half-trained policy's batches. Every cell reports both
    ceilings, V(prompt) and V(s_t) from many samples (measures.critic_fit_unit)."""
    settings = dict(
        half_trained_steps=20 if fast else 75,
        batches=8 if fast else 96,
        prompts_per_batch=64 if fast else 128,
        targets_per_prompt=2 if fast else 4,
        oracle_samples=32 if fast else 128,
        group_sizes=[G for G in CRITIC_GROUP_SIZES if G <= (32 if fast else 64)],
    )

    def critic_cell(cell_id: str, label: str, policy: str = "reference", data: str = "fresh", variant: str | None = None, **critic) -> dict:
        shared = critic.get("critic_trunk") == "shared"  # a shared trunk trains at the policy's lr
        axes = {
            "policy": policy,
            "data": data,
            "critic_lr": TrainConfig().lr if shared else critic.get("critic_lr", TrainConfig().critic_lr),
            "value_clip": critic.get("value_clip", 0.0),
        }
        if variant is not None:
            axes["variant"] = variant
        return cell(cell_id, label, axes, "critic_fit", policy=policy, data=data, critic=critic, **settings)

    cells = [critic_cell(f"{policy}-fresh", f"{policy}, fresh rollouts", policy) for policy in ("reference", "half-trained")]
    cells.append(critic_cell("reference-fixed-pool", "reference, one fixed pool of rollouts", data="fixed"))
    cells += [critic_cell(f"reference-lr{lr:g}", f"reference, critic_lr {lr:g}", critic_lr=lr) for lr in CRITIC_LRS if lr != TrainConfig().critic_lr]
    cells.append(critic_cell("reference-value-clip0.2", "reference, value_clip 0.2", value_clip=0.2))
    cells.append(critic_cell("reference-critic-lambda1", "reference, critic_lambda 1 (VAPO)", variant="critic_lambda 1", critic_lambda=1.0))
    cells.append(critic_cell("reference-shared-trunk", "reference, value head on the policy's trunk", variant="shared trunk", critic_trunk="shared"))
    warmup = settings["batches"] // 2
    cells.append(
        critic_cell(
            "half-trained-warmup",
            "half-trained, its critic first fitted on half as many batches of the reference's (VAPO's warm-up)",
            "half-trained",
            variant="warm-up",
            critic_warmup_steps=warmup,
        )
    )
    return cells


# --- 10. difficulty-bias ----------------------------------------------------------------------------------


def difficulty_grid(fast: bool) -> list[dict]:
    steps = 30 if fast else 150
    weights = dict(
        half_trained_steps=20 if fast else 75, group_size=8, prompts=32 if fast else 64, batches=1 if fast else 2, baselines=["mean", "zscore"]
    )
    cells = [
        cell(
            f"weights-{policy}",
            f"group weights at the {policy} policy",
            {"part": "weights", "policy": policy},
            "difficulty_weights",
            policy=policy,
            **weights,
        )
        for policy in ("reference", "half-trained")
    ]
    cells += [
        cell(
            f"train-{baseline}",
            f"train with {baseline}",
            {"part": "training", "baseline": baseline},
            train=training(steps, baseline=baseline),
            target=TARGET_ACCURACY,
            by_difficulty=True,
        )
        for baseline in ("zscore", "mean")
    ]
    return cells


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment("variance", "policy-gradient SNR and cosine to a large-batch gradient at a fixed policy, per baseline and G", variance_grid),
        Experiment("offset-and-scale", "a global reward offset and a 0.1 scale on hard prompts: none vs mean vs zscore", offset_and_scale_grid),
        Experiment("group-size", "G from 2 to 64 at equal prompts per step and at equal samples per step", group_size_grid, derive=group_size_derive),
        Experiment("sigma-to-zero", "std_eps, add vs clamp and the zero-std filter under exact, partial and noisy rewards", sigma_to_zero_grid),
        Experiment("small-group-remedies", "G=2 with an EMA baseline, a KL penalty or a lower learning rate, against G=8", small_group_grid),
        Experiment(
            "batch-blowup",
            "time per step and memory against prompts x G, and with micro-batches",
            blowup_grid,
            fresh_process=True,
            derive=blowup_derive,
            only_in=("gentle",),
            why_only="time and memory per step depend on the batch's shape (prompts x G, micro-batches), not on the lr "
            "or the starting policy; its 4 steps never leave the start",
        ),
        Experiment(
            "grpo-vs-ppo",
            "GRPO against PPO's critic at equal samples, equal wall time and a cost per response",
            grpo_vs_ppo_grid,
            derive=grpo_vs_ppo_derive,
        ),
        Experiment(
            "batch-shape",
            "each baseline at 16, 32, 64 and 128 prompts per step (128 responses a step), trained on once and reused 4 x 4",
            batch_shape_grid,
            only_in=("gentle", "practice"),
            replicated=SHAPE_CLAIM_CELLS,
            why_only="its 38 cells are measured where the course's answer is read, the default regime and the one practitioners "
            "train in (issue 38), within `sweep all`'s time budget",
        ),
        Experiment(
            "critic-fit",
            "how many updates PPO's critic needs to predict V at a fixed policy, against a group mean of G samples",
            critic_fit_grid,
            shares=critic_fit_shares,
        ),
        Experiment("difficulty-bias", "how much z-scoring re-weights too-easy and too-hard prompts, and what it does to learning", difficulty_grid),
    )
}


class UnknownCellError(LookupError):
    """A cell id that the experiment's catalog does not have (a typo): raised, never read as "not tested"
    (claims.evaluate_claim marks a claim untested only for a catalog cell that a --fast result leaves out)."""


class MissingCellError(KeyError):
    """A catalog cell that a result lacks (a --fast grid has fewer cells; a regime may leave some out): ``name``, ``cell_id``."""

    def __init__(self, message: str, name: str, cell_id: str):
        super().__init__(message)
        self.name, self.cell_id = name, cell_id


@functools.cache
def cell_labels(name: str) -> dict[str, str]:
    """{cell id: display label} of experiment ``name``, over its full grid and its fast one."""
    return {c["id"]: c["label"] for fast in (False, True) for c in EXPERIMENTS[name].grid(fast)}


def cell_label(name: str, cell_id: str) -> str:
    """The display label of experiment ``name``'s cell ``cell_id``; UnknownCellError for an id it does not have."""
    labels = cell_labels(name)
    if cell_id not in labels:
        raise UnknownCellError(f"experiment {name!r} has no cell id {cell_id!r}: its cell ids are {', '.join(labels)}")
    return labels[cell_id]


def result_cell(result: dict, cell_id: str) -> dict:
    """The cell ``cell_id`` of an experiment result (runner's schema). UnknownCellError for an id the
    experiment's catalog does not have; MissingCellError (a KeyError), naming the ids there are, for a catalog cell
    the result lacks (a --fast grid has fewer cells; a regime may leave some out)."""
    cell_label(result["name"], cell_id)
    for found in result["cells"]:
        if found["id"] == cell_id:
            return found
    message = f"{result['name']}: this result has no cell {cell_id!r}; its cells are {', '.join(c['id'] for c in result['cells'])}"
    raise MissingCellError(message, result["name"], cell_id)


# --- regimes ---------------------------------------------------------------------------------------------

LR_SCAN = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)  # the learning rates the regime rule chooses from
LR_SCAN_STEPS, LR_SCAN_SEEDS = 150, 2
REGIME_RULE = (
    "Fixed before any claim was measured in a new regime, and blind to the claims: one scan of the default "
    f"config (TrainConfig(), {LR_SCAN_STEPS} steps, {LR_SCAN_SEEDS} seeds) over lr in {', '.join(f'{lr:g}' for lr in LR_SCAN)} "
    "(`python scripts/regime_lr_scan.py`, data/results/regimes/lr-scan.json). "
    "gentle: today's defaults (lr 1e-4, default.pt, 51% greedy); the scan's best late accuracy is also at 1e-4, so a 'tuned' regime would be this one. "
    "large-step: the largest lr of the scan at which every seed still ends above its start (late accuracy > initial), "
    "so learning goes on but large falls are possible. "
    "sparse: the gentle lr from sparse.pt, the first 20-step checkpoint of the default pretraining recipe at or above 20% greedy accuracy (0.297). "
    "long-answer: the gentle lr on 5-digit addition (answers of 6-7 tokens with EOS, against 3-4 for 2 digits) from long.pt, "
    "the first 500-step checkpoint of the long pretraining recipe at or above 20% greedy accuracy "
    "(`python scripts/long_reference_scan.py`, data/results/regimes/long-reference-scan.json). "
    "practice (a rule of its own, docs/practice-regime.md, committed before anything was trained in it): the gentle lr on "
    "3-digit addition with worked answers (27-28 tokens, only the final result rewarded), training prompts from one fixed "
    "pool of 256 revisited epoch after epoch, from practice.pt, the first 10-step checkpoint of its recipe at or above 10%."
)


@dataclass(frozen=True)
class Regime:
    """A named set of TrainConfig values every experiment can run in (``sweep NAME --regime R``).
    train: TrainConfig overrides under every cell's own (a cell that sets a knob keeps its value: e.g.
    sigma-to-zero's weak-reference cells stay on weak.pt, small-group-remedies' 'lr 3e-5' stays 3e-5);
    why: its line of REGIME_RULE; leaves_out: baselines whose cells it does not run (every other cell of every
    experiment runs), why_leaves_out: why, in words a claim can print."""

    name: str
    train: dict
    why: str
    leaves_out: tuple[str, ...] = ()
    why_leaves_out: str = ""


def scan_runs_by_lr(scan: dict) -> dict[float, list[dict]]:
    """lr-scan.json's runs grouped by lr. scan: {"runs": [{"lr", "seed", "initial_eval_accuracy", "late_eval_accuracy", ...}]}."""
    by_lr: dict[float, list[dict]] = {}
    for run in scan["runs"]:
        by_lr.setdefault(run["lr"], []).append(run)
    return by_lr


def best_lr(scan: dict) -> float:
    """The scan's lr with the highest mean late accuracy."""
    by_lr = scan_runs_by_lr(scan)
    return max(by_lr, key=lambda lr: statistics.fmean(run["late_eval_accuracy"] for run in by_lr[lr]))


def large_step_lr(scan: dict) -> float:
    """The largest lr of the scan at which every seed ends above its start (late > initial accuracy)."""
    by_lr = scan_runs_by_lr(scan)
    return max(lr for lr, runs in by_lr.items() if all(run["late_eval_accuracy"] > run["initial_eval_accuracy"] for run in runs))


# what best_lr and large_step_lr give on data/results/regimes/lr-scan.json (tests/test_experiments.py checks the file still says so)
BEST_LR, LARGE_STEP_LR = 1e-4, 1e-3
LONG_START = 0.277  # long.pt's greedy accuracy on the 5d+ eval set (its metadata; tests/test_regimes.py checks)
REGIMES: dict[str, Regime] = {
    r.name: r
    for r in (
        Regime("gentle", {}, "today's defaults, lr 1e-4 from default.pt: the results in data/results/ outside regimes/ are this regime's"),
        Regime(
            "large-step",
            {"lr": LARGE_STEP_LR},
            f"lr {LARGE_STEP_LR:g}, the largest lr of the scan at which the default config still learns",
        ),
        Regime("sparse", {"lr": BEST_LR, "reference": "sparse"}, f"lr {BEST_LR:g} from sparse.pt, a 30%-accurate start"),
        Regime(
            "long-answer",
            {"lr": BEST_LR, "reference": "long", "task": LONG_TASK},
            f"lr {BEST_LR:g} on {LONG_TASK} (6-7 token answers) from long.pt, a {LONG_START:.0%}-accurate start",
        ),
        Regime(
            "practice",
            {"lr": BEST_LR, "reference": "practice", "task": PRACTICE_TASK, "prompt_pool": 256, "steps": 150},
            f"lr {BEST_LR:g} on {PRACTICE_TASK} (worked answers of 27-28 tokens, only the final result rewarded) from practice.pt, "
            "the first 10-step checkpoint at or above 10% greedy accuracy, and prompts from one fixed pool of 256 revisited "
            "epoch after epoch (docs/practice-regime.md)",
            leaves_out=("mc_value",),
            why_leaves_out="the practice regime leaves out the Monte-Carlo value cells: each 28-token answer needs 27 prefixes x 4 "
            "rollouts, 6.3 s a step against GRPO's 0.23 (about 950 s a unit, 2.1 h a cell at 8 seeds on 2 cores), beyond the "
            "time budget of `sweep all` (docs/practice-regime.md, section 5)",
        ),
    )
}
DEFAULT_REGIME = "gentle"

# Seeds per cell, by a written power calculation (scripts/seed_plan.py -> data/results/seed-plan.json, tests check the
# two agree): in each regime, the most any deciding comparison of the experiment's claims needs to detect its claimed
# effect at the table's false-discovery level (from the pilot results), at least 8 where the course's answer quotes the
# experiment, and within MIN_SEEDS..MAX_SEEDS: fewer cannot let a rank test reach the level; more do not fit `sweep all`
# in its time budget (a comparison that needs more says so in its verdict: "not detected (could detect >= X)").
MIN_SEEDS, MAX_SEEDS = 4, 8
SEEDS: dict[str, dict[str, int]] = {
    "gentle": {
        "batch-blowup": 4,
        "batch-shape": 8,
        "critic-fit": 4,
        "difficulty-bias": 4,
        "group-size": 8,
        "grpo-vs-ppo": 8,
        "offset-and-scale": 8,
        "sigma-to-zero": 5,
        "small-group-remedies": 6,
        "variance": 4,
    },
    "large-step": {
        "critic-fit": 4,
        "difficulty-bias": 5,
        "group-size": 8,
        "grpo-vs-ppo": 4,
        "offset-and-scale": 8,
        "sigma-to-zero": 4,
        "small-group-remedies": 8,
        "variance": 5,
    },
    "sparse": {
        "critic-fit": 4,
        "difficulty-bias": 4,
        "group-size": 6,
        "grpo-vs-ppo": 6,
        "offset-and-scale": 4,
        "sigma-to-zero": 4,
        "small-group-remedies": 4,
        "variance": 5,
    },
    "long-answer": {
        "critic-fit": 4,
        "difficulty-bias": 8,
        "group-size": 8,
        "grpo-vs-ppo": 8,
        "offset-and-scale": 8,
        "sigma-to-zero": 8,
        "small-group-remedies": 7,
        "variance": 5,
    },
    "practice": {
        "batch-shape": 8,
        "critic-fit": 4,
        "difficulty-bias": 4,
        "group-size": 4,
        "grpo-vs-ppo": 8,
        "offset-and-scale": 4,
        "sigma-to-zero": 4,
        "small-group-remedies": 4,
        "variance": 4,
    },
}


def grid_in(name: str, regime: str, fast: bool = False, replicate: bool = False) -> list[dict]:
    """Experiment ``name``'s cells that run in ``regime``: its grid less the cells of a baseline the regime leaves out,
    and, for a replication of an experiment that names its ``replicated`` cells, only those."""
    left_out, spec = REGIMES[regime].leaves_out, EXPERIMENTS[name]
    return [
        c
        for c in spec.grid(fast)
        if c["config"].get("train", {}).get("baseline") not in left_out and (not replicate or not spec.replicated or c["id"] in spec.replicated)
    ]


def left_out_in(name: str, cell_id: str, regime: str) -> bool:
    """Whether ``regime`` leaves out the cell ``cell_id`` of experiment ``name`` (a cell of a baseline it does not run)."""
    every = {c["id"] for fast in (False, True) for c in EXPERIMENTS[name].grid(fast)}
    kept = {c["id"] for fast in (False, True) for c in grid_in(name, regime, fast)}
    return cell_id in every - kept


def default_seeds(name: str, regime: str = DEFAULT_REGIME) -> int:
    """The seeds per cell of experiment ``name``'s full grid in ``regime`` (SEEDS)."""
    return SEEDS[regime][name]


def experiments_in(regime: str) -> list[str]:
    """The experiments measured in ``regime``: those that run in every regime, and those that run in some (``only_in``) that include it."""
    return [name for name, experiment in EXPERIMENTS.items() if not experiment.only_in or regime in experiment.only_in]


def only_in_words(name: str) -> str:
    """'`batch-blowup` runs in the gentle regime only: why' for an experiment that runs in some regimes only."""
    regimes = EXPERIMENTS[name].only_in
    where = f"the {regimes[0]} regime" if len(regimes) == 1 else f"the {', '.join(regimes[:-1])} and {regimes[-1]} regimes"
    return f"{name} runs in {where} only: {EXPERIMENTS[name].why_only}"


REFERENCE_KNOBS = ("reference", "task")  # what a fixed-policy measure of the reference reads from a regime


def in_regime(config: dict, regime: str) -> dict:
    """A cell's config in ``regime``: the regime's TrainConfig values under the cell's own ``train``
    overrides (a cell that sets its own reference also keeps its own task); a fixed-policy unit (no ``train``)
    gets them as ``regime_train`` (its policy's reference and task, the half-trained policy's lr). The gentle regime leaves the config as it is (cached results stay valid).

    A unit that measures the reference policy itself reads only the regime's ``reference`` and
    ``task``: the lr would only train it. Where the regime sets neither (large-step), the config is
    the gentle one, so ``sweep all`` runs it once for both (``runner.run_experiment``'s ``done``)."""
    values = REGIMES[regime].train
    if "train" in config:
        if "reference" in config["train"]:  # a cell's own start keeps its own task too (weak.pt reads 2-digit addition)
            values = {knob: value for knob, value in values.items() if knob != "task"}
        return {**config, "train": {**values, **config["train"]}} if values else config
    if config.get("policy") == "reference":
        values = {knob: value for knob, value in values.items() if knob in REFERENCE_KNOBS}
    return {**config, "regime_train": dict(values)} if values else config
