"""The card's claims: each claim, the experiments that test it, the rule that turns the measured numbers into a
finding (grpo_lab/experiments/rules/), and the judging of the whole table (``verdict_table``).

Judging, in order (data/results/claims.md states it for a reader):
1. every claim's rule runs once per regime and returns its finding: the numbers, the comparisons that decide it
   and a judge from their directions to a verdict (findings.py);
2. false discovery control: the deciding comparisons of the whole table (every claim, every regime) share one
   Benjamini-Hochberg level at ALPHA (stats.bh_level); a comparison counts when its p (Welch's t, or the rank test
   where seeds never reached a target) is at most that level (its q-value at most ALPHA) and it exceeds the claim's
   minimum effect; a comparison of two cells identical seed by seed (stats.Comparison.identical: an invariance that
   holds by construction) tests nothing and stays out of the family, with no q-value;
3. power: a "does not hold" whose deciding comparisons all found nothing becomes "not detected (could detect >= X)"
   when some of them could not have detected the claimed effect (Claim.claimed_effect; by default
   CLAIMED_RELATIVE_EFFECT of the compared means), X in the metric's unit;
4. near the line: the verdict is asked again with each deciding comparison near its line (stats.NEAR_LINE) on the
   line's other side; a verdict that changes is marked;
5. replication: where a replication of the claim's experiments exists (``sweep NAME --replicate``, seeds declared in
   catalog.REPLICATION_SEED_BASE), its rule is judged at the same level, and the verdict replicated when it agrees.
Auxiliary comparisons are quoted in words only: they never decide, never enter the false discovery control.
Every number a finding quotes is read from a result file: claims.md is regenerated, never edited
(``python -m grpo_lab sweep claims``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .catalog import DEFAULT_REGIME, REGIMES, MissingCellError, experiments_in, left_out_in, only_in_words
from .findings import CLAIMED_RELATIVE_EFFECT, FAILS, HOLDS, NOT_DETECTED, PARTLY, UNTESTED, VERDICTS, Finding, metric_unit, number_text, untested
from .rules import baselines, critic, groups, sigma
from .stats import ALPHA, Comparison, bh_level, q_values

__all__ = ["CLAIMS", "FAILS", "HOLDS", "NOT_DETECTED", "PARTLY", "UNTESTED", "VERDICTS", "Claim", "Verdict", "verdict_table"]

REPLICATED = "replicated"


@dataclass(frozen=True)
class Claim:
    """source: where on the card (or in the literature); card: its words; claim: in English;
    evaluate(results) -> Finding, or None with ``reason`` for a claim no experiment can test."""

    key: str
    source: str
    card: str
    claim: str
    experiments: tuple[str, ...]
    evaluate: Callable[[dict], Finding] | None = None
    reason: str = ""
    claimed_effect: float | None = None  # the smallest difference the claim predicts, in the compared metric's units
    regimes: tuple[str, ...] = ()  # the only regimes where it can be measured (none: every regime); ``reason`` says why elsewhere


@dataclass(frozen=True)
class Verdict:
    """A claim judged in one regime: its finding (numbers and comparisons), the verdict and its plain words, the level
    the table judged at, each deciding comparison's q-value, what the seeds could detect (a NOT_DETECTED verdict: the
    largest detectable difference above the claimed effect, in words with its unit), whether it hangs on a comparison
    near its line, and its replication: REPLICATED, the verdict fresh seeds gave instead, or None (not run)."""

    claim: Claim
    regime: str
    finding: Finding
    verdict: str
    explanation: str
    level: float
    q: tuple[float | None, ...] = ()  # each deciding comparison's q-value (None: identical cells, not tested)
    detectable: tuple[float, str] | None = None  # (value in its unit, the unit's words): (1.1, 'accuracy points')
    near_line: bool = False
    replication: str | None = None

    @property
    def evidence(self) -> str:
        return self.finding.evidence

    @property
    def verdict_text(self) -> str:
        """'not detected (could detect ≥ 1.1 accuracy points)' carries its power; the other verdicts are their words."""
        if self.verdict != NOT_DETECTED or self.detectable is None:
            return self.verdict
        value, unit = self.detectable
        return f"{self.verdict} (could detect ≥ {number_text(value)} {unit})"

    @property
    def replication_text(self) -> str:
        """'replicated', 'not replicated (fresh seeds: partly)', 'not run' or '—' (nothing to replicate)."""
        if self.verdict == UNTESTED:
            return "—"
        if self.replication is None:
            return "not run"
        return REPLICATED if self.replication == REPLICATED else f"not replicated (fresh seeds: {self.replication})"

    @property
    def course_text(self) -> str:
        """The verdict as the course quotes it: a 'holds here' that fresh seeds did not confirm says so."""
        if self.verdict == HOLDS and self.replication != REPLICATED:
            return f"{self.verdict_text} (not yet replicated)" if self.replication is None else f"{self.verdict_text} (did not replicate)"
        return self.verdict_text + (" (near the line)" if self.near_line else "")


def finding_in(claim: Claim, results: dict, regime: str = DEFAULT_REGIME) -> Finding:
    """The claim's finding from {name: result} of ``regime``: 'not tested', saying why, when the claim cannot be measured
    there, a result it needs is missing, or a (--fast) result lacks a cell its rule compares."""
    if claim.evaluate is None:
        return untested("—", claim.reason)
    if claim.regimes and regime not in claim.regimes:
        return untested("—", claim.reason)
    skipped = [name for name in claim.experiments if name not in experiments_in(regime)]
    if skipped:
        return untested("—", "; ".join(only_in_words(name).replace(name, f"`{name}`", 1) for name in skipped))
    missing = [name for name in claim.experiments if name not in results]
    if missing:
        flag = f" --regime {regime}" if regime != DEFAULT_REGIME else ""
        return untested("not run yet: " + ", ".join(f"`python -m grpo_lab sweep {name}{flag}`" for name in missing))
    try:
        return claim.evaluate(results)
    # a --fast grid leaves out cells that some claims compare; a cell id the catalog lacks (a typo) is an
    # UnknownCellError, no KeyError, and is raised: a typo never reads as "not tested"
    except KeyError as error:
        if isinstance(error, MissingCellError) and left_out_in(error.name, error.cell_id, regime):
            return untested("—", REGIMES[regime].why_leaves_out)
        return untested(f"needs a cell this result does not have ({error.args[0]}); run the full sweep")
    except (TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as error:  # a damaged result that passed the schema
        remake = "; ".join(f"`python -m grpo_lab sweep {name}`" for name in claim.experiments)
        return untested(f"a result it needs holds values its rule cannot read ({type(error).__name__}); remake it with {remake}")


def claimed_effect(claim: Claim, comparison: Comparison) -> float:
    return claim.claimed_effect if claim.claimed_effect is not None else CLAIMED_RELATIVE_EFFECT * comparison.scale


def judged(claim: Claim, finding: Finding, level: float, directions: tuple[str, ...] | None = None) -> tuple[str, str, tuple[float, str] | None]:
    """(verdict, explanation, detectable) of a finding at ``level``, for the given directions of its deciding
    comparisons (default: their own at that level). A FAILS whose deciding comparisons all found nothing, some
    without the power to see the claimed effect, becomes NOT_DETECTED with the largest such detectable difference."""
    directions = tuple(c.direction(level) for c in finding.deciding) if directions is None else directions
    verdict, explanation = finding.judge(*directions)
    if verdict != FAILS or not finding.deciding or any(d != "same" for d in directions):
        return verdict, explanation, None
    underpowered = [c for c in finding.deciding if c.detectable(level) > claimed_effect(claim, c)]
    if not underpowered:
        return verdict, explanation, None
    widest = max(underpowered, key=lambda c: c.detectable(level) / max(claimed_effect(claim, c), 1e-12))
    unit, factor = metric_unit(widest.metric)
    return NOT_DETECTED, explanation, (widest.detectable(level) * factor, unit)


def flipped(direction: str, comparison: Comparison) -> str:
    """The direction a comparison would have on the other side of its line."""
    if direction != "same":
        return "same"
    return "higher" if comparison.difference > 0 else "lower"


def judge_finding(claim: Claim, finding: Finding, regime: str, level: float, q: tuple[float | None, ...], replication: str | None) -> Verdict:
    """The Verdict of one finding at the table's level, with its near-the-line mark (module docstring, step 4)."""
    verdict, explanation, detectable = judged(claim, finding, level)
    directions = tuple(c.direction(level) for c in finding.deciding)
    near_line = any(
        judged(claim, finding, level, directions[:i] + (flipped(directions[i], c),) + directions[i + 1 :])[0] != verdict
        for i, c in enumerate(finding.deciding)
        if c.near_line(level)
    )
    return Verdict(claim, regime, finding, verdict, explanation, level, q, detectable, near_line, replication)


def verdict_table(by_regime: dict[str, dict], replications: dict[str, dict] | None = None) -> dict[str, list[Verdict]]:
    """{regime: [Verdict of each claim, in CLAIMS' order]} from {regime: {name: result}} and, where replications were
    run, {regime: {name: replication result}}: every rule run once per regime, one false-discovery level over all
    deciding comparisons of the table (module docstring)."""
    findings = {regime: [finding_in(claim, results, regime) for claim in CLAIMS] for regime, results in by_regime.items()}
    # the family: every deciding comparison that tests something (one of identical cells holds by construction)
    tested = [c for per_regime in findings.values() for finding in per_regime for c in finding.deciding if not c.identical]
    p_values = [c.p_value for c in tested]
    level = bh_level(p_values, ALPHA)
    q_of = iter(q_values(p_values))
    table = {}
    for regime, per_regime in findings.items():
        fresh = (replications or {}).get(regime) or {}
        verdicts = []
        for claim, finding in zip(CLAIMS, per_regime):
            q = tuple(None if c.identical else next(q_of) for c in finding.deciding)
            replication = None
            if claim.evaluate is not None and claim.experiments and all(name in fresh for name in claim.experiments):
                again = judged(claim, finding_in(claim, fresh, regime), level)[0]
                replication = None if again == UNTESTED else again
            main = judge_finding(claim, finding, regime, level, q, None)
            if replication is not None:
                replication = REPLICATED if replication == main.verdict else replication
            verdicts.append(replace(main, replication=replication))
        table[regime] = verdicts
    return table


# --- the table: every claim, in claims.md's order -----------------------------------------------------

CLAIMS: list[Claim] = [
    Claim(
        "offset",
        "standard answer",
        "消除奖励偏移：组内均值 μ 能自动减去这个偏移",
        "Subtracting the group mean removes a global reward-model offset.",
        ("offset-and-scale",),
        baselines.offset_removed,
    ),
    Claim(
        "scale",
        "standard answer",
        "除以 σ … 让不同 prompt 的奖励尺度统一",
        "Dividing by σ unifies reward scales that differ between prompts.",
        ("offset-and-scale",),
        baselines.scales_unified,
    ),
    Claim(
        "variance",
        "standard answer",
        "降低方差：除以 σ 相当于做了 Z-score 标准化 … 防止训练不稳定",
        "Dividing by σ (z-scoring) lowers the gradient's variance.",
        ("variance",),
        baselines.zscore_lowers_variance,
    ),
    Claim(
        "no-params",
        "standard answer",
        "无参数、无训练：Critic 需要额外训练一个价值网络（通常和 Policy 同规模）",
        "The group baseline has no parameters; a critic is a second policy-sized network to train.",
        ("grpo-vs-ppo",),
        critic.critic_costs,
    ),
    Claim(
        "g-at-least-8",
        "trade-off / follow-up 1",
        "每个 prompt 必须采样足够多的 response（通常 ≥ 8）… 建议采样数至少 4-8",
        "Each prompt needs enough responses, usually G ≥ 8.",
        ("group-size",),
        groups.group_size_needed,
    ),
    Claim(
        "small-g-noisy",
        "trade-off",
        "采样数太少（比如 2-4 个）… 优势函数噪声增加，反而可能拖慢收敛",
        "With G = 2-4 the baseline is noisy and convergence slows.",
        ("group-size", "variance"),
        groups.small_groups_noisier,
    ),
    Claim(
        "g4-oscillates",
        "pitfall 1",
        "采样数设为 4，结果奖励曲线剧烈震荡 … 将采样数提升到 16",
        "G = 4 makes the reward curve oscillate; G = 16 fixes it.",
        ("group-size",),
        groups.g4_oscillates,
    ),
    Claim(
        "sigma-explodes",
        "pitfall 2",
        "σ 趋近于 0，导致优势函数爆炸",
        "When σ goes to 0 the advantages explode.",
        ("sigma-to-zero",),
        sigma.sigma_explodes,
    ),
    Claim(
        "epsilon",
        "pitfall 2",
        "在 σ 上加一个小的 epsilon（如 1e-8），或使用 max(σ, epsilon)",
        "A small epsilon (1e-8) added to σ, or max(σ, ε), fixes it.",
        ("sigma-to-zero",),
        sigma.epsilon_fixes,
    ),
    Claim(
        "dapo-filter",
        "literature (DAPO)",
        "—",
        "Dropping groups whose answers are all right or all wrong, without refilling the batch (the filter half of DAPO's dynamic sampling), helps.",
        ("sigma-to-zero",),
        sigma.dapo_filter,
    ),
    Claim(
        "dapo-refill",
        "literature (DAPO)",
        "—",
        "DAPO's dynamic sampling (over-sample and refill the batch with groups of right and wrong answers) helps.",
        ("sigma-to-zero",),
        sigma.dapo_refill,
    ),
    Claim(
        "batch-blowup",
        "pitfall 3",
        "有效 batch size 膨胀 … 使用梯度累积或分布式采样，避免 OOM",
        "prompts x G inflates the batch; gradient accumulation bounds memory.",
        ("batch-blowup",),
        groups.blowup_and_accumulation,
    ),
    Claim(
        "tradeoff",
        "trade-off / summary",
        "采样成本高 … GRPO 的采样开销可能超过训练 Critic 的收益",
        "When responses are expensive, PPO's critic beats GRPO's extra sampling (a crossover).",
        ("grpo-vs-ppo",),
        critic.tradeoff_crossover,
    ),
    Claim(
        "critic-per-response",
        "trade-off",
        "Critic 的优势是每个 response 都能得到一个基线，不需要依赖组内采样",
        "A critic gives every response a baseline without groups (G = 1 works).",
        ("grpo-vs-ppo",),
        critic.critic_without_groups,
    ),
    Claim(
        "critic-fits",
        "standard answer",
        "Critic … 且容易过拟合或欠拟合",
        "A critic easily over- or under-fits.",
        ("critic-fit",),
        critic.critic_over_under_fits,
    ),
    Claim(
        "noisy-rewards",
        "summary / common mistake 2",
        "在采样成本高或奖励方差大的任务中，PPO + Critic 更优",
        "When rewards are noisy (high reward variance), PPO with a critic does better.",
        ("grpo-vs-ppo",),
        critic.critic_wins_on_noisy_rewards,
    ),
    Claim(
        "g2-usable",
        "follow-up 1",
        "采样数 2 … 能用但效果差 … 优势函数几乎被噪声主导",
        "G = 2 works, but poorly.",
        ("small-group-remedies",),
        groups.g2_usable_but_poor,
    ),
    Claim(
        "g2-ema",
        "follow-up 1 (remedy 1)",
        "引入全局基线 … 类似 EMA",
        "For G = 2, a global EMA baseline helps.",
        ("small-group-remedies",),
        groups.remedy("g2-ema", "an EMA baseline"),
    ),
    Claim(
        "g2-kl",
        "follow-up 1 (remedy 2)",
        "使用 KL 惩罚项作为正则化",
        "For G = 2, a KL penalty helps.",
        ("small-group-remedies",),
        groups.remedy("g2-kl0.04", "KL 0.04"),
    ),
    Claim(
        "g2-lr",
        "follow-up 1 (remedy 3)",
        "降低学习率，让模型对噪声更鲁棒",
        "For G = 2, a lower learning rate helps.",
        ("small-group-remedies",),
        groups.remedy("g2-lr3e-5", "lr 3e-5 (from {base_lr})"),
    ),
    Claim(
        "stability",
        "follow-up 2",
        "GRPO 在采样数足够时更稳定 … 采样数不足时，GRPO 的噪声比 Critic 的偏差更致命",
        "With enough samples GRPO is at least as stable as PPO; with few, PPO is better.",
        ("grpo-vs-ppo", "small-group-remedies"),
        critic.grpo_stability,
    ),
    Claim(
        "group-in-ppo",
        "follow-up 3",
        "在 PPO 里用组内基线 … 意义不大 … 得不偿失",
        "Replacing PPO's critic by the group baseline gains little and loses GAE.",
        ("grpo-vs-ppo",),
        critic.group_baseline_in_ppo,
    ),
    Claim(
        "not-no-value",
        "common mistake 1",
        "不是'不需要价值函数'，而是用另一种方式估计基线",
        "GRPO still estimates a baseline (a value), just from samples: the group mean is a Monte-Carlo V(prompt).",
        ("critic-fit",),
        critic.group_mean_is_a_value,
    ),
    Claim(
        "no-free-lunch",
        "common mistake 2",
        "没有绝对的好坏，只有 trade-off",
        "Neither GRPO nor PPO is better on every measure.",
        ("grpo-vs-ppo",),
        critic.no_free_lunch,
    ),
    Claim(
        "std-essential",
        "common mistake 3",
        "只用均值相当于只做中心化，不做缩放，效果差很多",
        "Mean-only (no σ) works much worse.",
        ("offset-and-scale", "difficulty-bias"),
        baselines.std_essential,
    ),
    Claim(
        "difficulty",
        "literature (Dr. GRPO)",
        "—",
        "Dividing by σ over-weights too-easy and too-hard prompts.",
        ("difficulty-bias",),
        baselines.difficulty_bias,
    ),
    Claim(
        "faster-30",
        "resume line",
        "GRPO 在数学任务上收敛快 30%",
        "GRPO converges ~30% faster than PPO on math.",
        ("grpo-vs-ppo",),
        critic.faster_than_ppo,
    ),
    Claim(
        "log-returns",
        "resume line",
        "采样数对性能的影响呈对数关系，从 4 到 16 提升明显，再往上边际递减",
        "Gains from G are logarithmic: 4 → 16 helps clearly, beyond that diminishing.",
        ("group-size",),
        groups.logarithmic_returns,
    ),
    Claim(
        "two-grpo",
        "literature (2-GRPO)",
        "—",
        "G = 2 reaches ~97.6% of G = 16 with 12.5% of the rollouts (arXiv 2510.00977).",
        ("group-size",),
        groups.two_grpo,
    ),
    Claim(
        "long-text",
        "trade-off / summary",
        "在对话生成或长文本任务中 … PPO + Critic 仍不可替代；PPO 在对话任务上更鲁棒",
        "For dialogue and long text, PPO with a critic is irreplaceable / more robust.",
        ("grpo-vs-ppo",),
        critic.long_text_ppo,
        "answers are 3-4 tokens in this regime: measured where answers are long, the long-answer (6-7 tokens) and practice (27-28) regimes",
        regimes=("long-answer", "practice"),
    ),
    Claim(
        "batchnorm",
        "resume line",
        "GRPO 的组内基线就像 batch normalization",
        "The group baseline is like batch normalisation.",
        (),
        None,
        "an analogy, not a measurable claim",
    ),
    Claim(
        "shape-not-critic",
        "the course's answer (05c)",
        "—",
        "At equal responses per step, how they are spread over prompts matters more than whether the baseline is a critic.",
        ("batch-shape",),
        critic.shape_not_critic,
    ),
]
