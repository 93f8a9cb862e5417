"""The drill's model answers (30 seconds and 60 seconds, English and Chinese), its follow-ups and its
reading list (notebooks 06).

Every sentence of a model answer carries the numbers it rests on as ``Number``s (drill.py), read from
the result files when the answer is shown, so the answer stays true when the results are regenerated;
``claims`` names the claims of experiments/claims.py whose verdicts back it. Length limits: a
30-second answer is at most 80 English words or 150 Chinese characters (about 160 words or 300
characters a minute, a calm speaking pace), a 60-second answer twice that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .drill import ACC, GRPO, Number, cached_results, findings, quoted_number

LENGTHS = ("30s", "60s")
LANGUAGES = ("en", "zh")
LIMITS = {("30s", "en"): 80, ("60s", "en"): 160, ("30s", "zh"): 150, ("60s", "zh"): 300}  # words / Chinese characters
SECONDS = {"30s": 30, "60s": 60}


@dataclass(frozen=True)
class Sentence:
    """text: with {0}, {1}, ... where its numbers go (spoken form: the seed mean, rounded);
    numbers: what fills them; claims: the claims whose verdicts back the sentence."""

    text: str
    numbers: tuple[Number, ...] = ()
    claims: tuple[str, ...] = ()


# --- the numbers the answers quote (labels in Chinese and English) ----------------------------------------

POLICY_SIZE = Number("策略参数量", "grpo-vs-ppo", GRPO, "policy_parameters", english="policy parameters")
OFFSET_MEAN = Number("mean，偏移 5", "offset-and-scale", "mean, offset 5", ACC, english="late accuracy, mean, offset 5")
NO_OFFSET_MEAN = Number("mean，无偏移", "offset-and-scale", "mean, offset 0", ACC, english="late accuracy, mean, offset 0")
OFFSET_NONE = Number("none，偏移 5", "offset-and-scale", "none, offset 5", ACC, english="late accuracy, no baseline, offset 5")
TIED_G8 = Number(
    "G = 8 奖励全相同的组",
    "group-size",
    "equal prompts, G=8",
    "frac_reward_zero_std",
    percent=True,
    english="share of G=8 groups with all-equal rewards",
)
HARD_Z = Number(
    "zscore，难题奖励 ×0.1 后难题准确率",
    "offset-and-scale",
    "zscore, hard x0.1",
    "hard_eval_accuracy",
    english="hard-problem accuracy, zscore, hard rewards x0.1",
)
HARD_Z_PLAIN = Number(
    "zscore，原尺度", "offset-and-scale", "zscore, offset 0", "hard_eval_accuracy", english="hard-problem accuracy, zscore, original scale"
)
HARD_MEAN = Number(
    "mean，难题奖励 ×0.1 后难题准确率",
    "offset-and-scale",
    "mean, hard x0.1",
    "hard_eval_accuracy",
    english="hard-problem accuracy, mean, hard rewards x0.1",
)
WEIGHT_Z = Number(
    "8 个中 1 个对的组相对均衡组的梯度，zscore",
    "difficulty-bias",
    "group weights at the reference policy",
    "weight_vs_middle.zscore.k=1",
    english="gradient of a 1-of-8-right group relative to a balanced one, zscore",
)
WEIGHT_MEAN = Number("mean", "difficulty-bias", "group weights at the reference policy", "weight_vs_middle.mean.k=1", english="the same, mean")
MEMORY_SMALL = Number(
    "16 个 prompt × G = 2 的激活内存（MB）",
    "batch-blowup",
    "16 prompts x G=2",
    "saved_activations_mb",
    english="activation memory (MB), 16 prompts x G=2",
)
MEMORY_LARGE = Number(
    "16 个 prompt × G = 128", "batch-blowup", "16 prompts x G=128", "saved_activations_mb", english="activation memory (MB), 16 prompts x G=128"
)
PAIR_G2 = Number("同 prompt 数，G = 2 后期准确率", "group-size", "equal prompts, G=2", ACC, english="late accuracy, equal prompts, G=2")
PAIR_G16 = Number("G = 16", "group-size", "equal prompts, G=16", ACC, english="late accuracy, equal prompts, G=16")
NOISE_SHARE = Number(
    "带噪奖励、ε = 0 时无信号组占 |优势| 的份额",
    "sigma-to-zero",
    "noisy, eps=0, add",
    "probe_no_signal_share",
    percent=True,
    english="share of |advantage| on no-signal groups, noisy rewards, eps=0",
)

ANSWERS: dict[tuple[str, str], tuple[Sentence, ...]] = {
    ("30s", "en"): (
        Sentence(
            "GRPO drops PPO's critic, a second network the policy's size ({0} parameters here): each of G answers "
            "to a prompt gets (reward − group mean) / group std as its advantage.",
            (POLICY_SIZE,),
            ("no-params",),
        ),
        Sentence(
            "The mean is a sampled value of the prompt, so a +5 reward offset cancels: {0} accuracy, as without it ({1}); no baseline fell to {2}.",
            (OFFSET_MEAN, NO_OFFSET_MEAN, OFFSET_NONE),
            ("offset",),
        ),
        Sentence("The price is samples: groups that agree ({0} at G = 8) teach nothing.", (TIED_G8,), ("g-at-least-8", "batch-blowup")),
        Sentence("Verifiable rewards favour GRPO; costly samples can favour a critic.", (), ("tradeoff",)),
    ),
    ("60s", "en"): (
        Sentence(
            "GRPO drops PPO's critic, a second network the policy's size ({0} parameters here): each of G answers "
            "to a prompt gets (reward − group mean) / group std as its advantage.",
            (POLICY_SIZE,),
            ("no-params",),
        ),
        Sentence(
            "The mean is a Monte-Carlo value of the prompt, so the gradient stays unbiased and offsets cancel: "
            "with +5 on every reward, {0} accuracy, as without it ({1}); no baseline fell to {2}.",
            (OFFSET_MEAN, NO_OFFSET_MEAN, OFFSET_NONE),
            ("offset",),
        ),
        Sentence(
            "Dividing by σ puts prompts on one scale (hard prompts' rewards x0.1: z-score kept {0} hard accuracy, "
            "mean-only fell to {1}) but re-weights them by difficulty: a 1-of-8 group pulls {2} of a balanced one, {3} without σ.",
            (HARD_Z, HARD_MEAN, WEIGHT_Z, WEIGHT_MEAN),
            ("scale", "difficulty"),
        ),
        Sentence(
            "The costs: memory grows with prompts × G ({0} MB at G = 128, {1} at G = 2), agreeing groups teach nothing "
            "({2} at G = 8), and each answer gets one advantage, no per-token credit.",
            (MEMORY_LARGE, MEMORY_SMALL, TIED_G8),
            ("batch-blowup", "g-at-least-8", "group-in-ppo"),
        ),
        Sentence("Even G = 2 works, as a pairwise comparison: {0} vs {1} at G = 16.", (PAIR_G2, PAIR_G16), ("two-grpo",)),
        Sentence("Verifiable rewards favour GRPO; costly samples or long answers can favour a critic.", (), ("tradeoff",)),
    ),
    ("30s", "zh"): (
        Sentence(
            "GRPO 去掉了 PPO 的 Critic（与策略同样大的网络，这里 {0} 个参数）：每个 prompt 采样 G 个回答，优势 =（奖励 − 组均值）/ 组标准差。",
            (POLICY_SIZE,),
            ("no-params",),
        ),
        Sentence(
            "组均值是 prompt 价值的采样估计，奖励整体加 5 也被抵消：准确率 {0}，不加时 {1}；不减基线则降到 {2}。",
            (OFFSET_MEAN, NO_OFFSET_MEAN, OFFSET_NONE),
            ("offset",),
        ),
        Sentence("代价是样本：答案全一致的组（G = 8 时占 {0}）学不到东西。", (TIED_G8,), ("g-at-least-8", "batch-blowup")),
        Sentence("奖励可验证时选 GRPO；采样昂贵时 Critic 可能更划算。", (), ("tradeoff",)),
    ),
    ("60s", "zh"): (
        Sentence(
            "GRPO 去掉了 PPO 的 Critic（与策略同样大的网络，这里 {0} 个参数）：每个 prompt 采样 G 个回答，优势 =（奖励 − 组均值）/ 组标准差。",
            (POLICY_SIZE,),
            ("no-params",),
        ),
        Sentence(
            "组均值是 prompt 价值的蒙特卡洛估计，所以梯度无偏、偏移被抵消：奖励整体加 5，准确率 {0}，不加时 {1}；不减基线则降到 {2}。",
            (OFFSET_MEAN, NO_OFFSET_MEAN, OFFSET_NONE),
            ("offset",),
        ),
        Sentence(
            "除以 σ 统一了尺度（难题奖励 ×0.1 时 zscore 的难题准确率 {0}，只减均值降到 {1}），但也按难度重新加权："
            "8 个中 1 个对的组，拉力是均衡组的 {2}，不除 σ 时 {3}。",
            (HARD_Z, HARD_MEAN, WEIGHT_Z, WEIGHT_MEAN),
            ("scale", "difficulty"),
        ),
        Sentence(
            "代价：内存随 prompt 数 × G 增长（G = 128 时 {0} MB，G = 2 时 {1}）；答案全一致的组（G = 8 时占 {2}）学不到东西；"
            "每个回答只有一个优势，没有逐 token 的信用分配。",
            (MEMORY_LARGE, MEMORY_SMALL, TIED_G8),
            ("batch-blowup", "g-at-least-8", "group-in-ppo"),
        ),
        Sentence("G = 2 也能用，它是成对比较：准确率 {0}，G = 16 为 {1}。", (PAIR_G2, PAIR_G16), ("two-grpo",)),
        Sentence("奖励可验证时选 GRPO；采样昂贵或回答很长时 Critic 可能更划算。", (), ("tradeoff",)),
    ),
}
CUES = {
    "en": "What GRPO computes · why the group mean works (a number) · what it costs (a number) · when to choose it",
    "zh": "GRPO 算什么 · 组均值为什么有效（一个数字）· 代价是什么（一个数字）· 什么时候选它",
}


def check_choice(length: str, language: str) -> None:
    if length not in LENGTHS:
        raise ValueError(f"length={length!r} is not valid: choose one of {', '.join(LENGTHS)}")
    if language not in LANGUAGES:
        raise ValueError(f"language={language!r} is not valid: choose one of {', '.join(LANGUAGES)}")


def spoken_number(number: Number, results: dict) -> str:
    """A number as one says it: the seed mean, rounded ('0.77', '25%', '103k'); '?' when absent."""
    from ..experiments.claims import stat

    try:
        mean = stat(results, number.experiment, number.cell, number.metric)["mean"]
    except KeyError:
        return "?"
    if mean is None:
        return "?"
    if number.percent:
        return f"{100 * mean:.0f}%"
    if abs(mean) >= 1000:
        return f"{mean / 1000:.0f}k"
    return f"{mean:.0f}" if abs(mean) >= 100 else f"{mean:.2g}"


def model_answer(length: str = "30s", language: str = "en", results: dict | None = None) -> list[str]:
    """The answer's sentences with their numbers read from ``results`` (default: the cached results)."""
    check_choice(length, language)
    results = cached_results() if results is None else results
    return [sentence.text.format(*(spoken_number(n, results) for n in sentence.numbers)) for sentence in ANSWERS[(length, language)]]


def spoken_length(text: str, language: str) -> int:
    """English: words (tokens with a letter or digit). Chinese: Han characters, plus one for each run of
    Latin letters or digits (a term such as GRPO or a number such as 0.77 is said as one word);
    punctuation and spaces are not said and do not count."""
    if language == "en":
        return sum(1 for token in text.split() if re.search(r"[A-Za-z0-9]", token))
    return len(re.findall(r"[\u4e00-\u9fff]", text)) + len(re.findall(r"[A-Za-z0-9][A-Za-z0-9.%'-]*", text))


def answer_evidence(length: str = "30s", language: str = "en", results: dict | None = None) -> list[str]:
    """For each sentence: its numbers as mean ± std (n = seeds) and the verdicts of the claims behind it."""
    from .drill import VERDICTS_ZH

    check_choice(length, language)
    results = cached_results() if results is None else results
    lines = []
    for index, sentence in enumerate(ANSWERS[(length, language)], 1):
        numbers = "; ".join(quoted_number(number, results, language) for number in sentence.numbers)
        verdicts = ", ".join(
            f"[{claim.key}] " + (finding.verdict if language == "en" else VERDICTS_ZH[finding.verdict])
            for claim, finding in findings(list(sentence.claims), results)
        )
        lines.append(f"{index}. " + (numbers + ("; " if numbers else "") if numbers else "") + verdicts)
    return lines


def print_answer(length: str = "30s", language: str = "en") -> None:
    """The model answer, its length against the limit, and the evidence behind each sentence."""
    results = cached_results()
    sentences = model_answer(length, language, results)
    text = " ".join(sentences) if language == "en" else "".join(sentences)
    size = spoken_length(text, language)
    unit = "words" if language == "en" else "字"
    print(text)
    print(f"\n({size} {unit}, limit {LIMITS[(length, language)]})" if language == "en" else f"\n（{size} 字，上限 {LIMITS[(length, language)]}）")
    print("\nThe numbers behind each sentence, and the verdicts of its claims:" if language == "en" else "\n每句话背后的数字，以及对应论断的结论：")
    for line in answer_evidence(length, language, results):
        print("  " + line)


def say_it_aloud(length: str = "30s", language: str = "en"):
    """The timed rehearsal widget for this answer: the cues, a countdown, then the model answer."""
    from .timed_answer import TimedAnswer

    check_choice(length, language)
    return TimedAnswer(CUES[language], model_answer(length, language), SECONDS[length], language)


# --- follow-ups ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FollowUp:
    """An interview follow-up: question and short answer in both languages, the paper, and where the
    course shows it (or what it does not show)."""

    key: str
    question: dict[str, str]
    answer: dict[str, str]
    paper: str
    where: dict[str, str]


FOLLOW_UPS = (
    FollowUp(
        "length-bias",
        {
            "en": "GRPO averages each answer's token losses (1/|o|). What does that do?",
            "zh": "GRPO 对每个回答的 token 损失取平均（1/|o|），这会带来什么？",
        },
        {
            "en": "It weighs a token by 1/length of its answer, so a long wrong answer is penalised less per token than a short one: "
            "the length bias Dr. GRPO reports (wrong answers grow longer). Fixes: DAPO averages over all tokens of the batch; "
            "Dr. GRPO divides the token sum by a constant.",
            "zh": "每个 token 的权重是 1/回答长度，长的错误回答每个 token 受的惩罚比短的轻：这就是 Dr. GRPO 指出的长度偏差（错误回答越来越长）。"
            "修正：DAPO 对整个 batch 的所有 token 取平均；Dr. GRPO 用常数去除 token 之和。",
        },
        "Dr. GRPO, arXiv 2503.20783; DAPO, arXiv 2503.14476",
        {
            "en": "`loss_agg` (`seq_mean`, `token_mean`, `token_sum_norm`), 02 §4; with 3-4 token answers the effect is small here",
            "zh": "`loss_agg`（`seq_mean`、`token_mean`、`token_sum_norm`），02 §4；本课程回答只有 3-4 个 token，影响很小",
        },
    ),
    FollowUp(
        "k3-gradient",
        {
            "en": "k3 is an unbiased estimate of KL(π‖π_ref). Is its gradient, used as a loss, the gradient of that KL?",
            "zh": "k3 是 KL(π‖π_ref) 的无偏估计。把它当损失时，它的梯度是这个 KL 的梯度吗？",
        },
        {
            "en": "No. The value is unbiased only because the tokens are sampled from π; differentiating k3 on fixed samples ignores "
            "that the sampling distribution moves. Per token, ∇k3 = (1 − π_ref/π)∇log π, whose expectation under π is the "
            "gradient of KL(π_ref‖π), the reverse KL, not of KL(π‖π_ref). Close to the reference the two agree to first order.",
            "zh": "不是。k3 的值无偏，是因为 token 从 π 中采样；在固定样本上对 k3 求导，忽略了采样分布本身也在变。每个 token 上 "
            "∇k3 = (1 − π_ref/π)∇log π，它在 π 下的期望是 KL(π_ref‖π)（反向 KL）的梯度，而不是 KL(π‖π_ref) 的。"
            "离参考策略很近时，两者一阶相同。",
        },
        'Schulman, "Approximating KL Divergence" (blog, 2020); DeepSeekMath, arXiv 2402.03300 (eq. 4)',
        {
            "en": "02 §1 (exercise: k3, then the whole loss); the gradient difference itself is not measured in the course",
            "zh": "02 §1（练习：k3，以及完整的损失）；梯度上的差别本课程没有测量",
        },
    ),
    FollowUp(
        "ratio-and-clip",
        {"en": "When does PPO's ratio differ from 1, and what does the clip do then?", "zh": "PPO 的比率什么时候不等于 1？那时裁剪起什么作用？"},
        {
            "en": "Only when a batch is reused: with inner_epochs = 1 the policy that sampled is the one updated, ρ = 1 and the clip never acts. "
            "With several epochs (TRL num_iterations) ρ drifts; the min with the clipped term stops a token's push once ρ leaves "
            "[1−ε, 1+ε] in the direction its advantage wants. clip_ratio logs how often.",
            "zh": "只有在同一个 batch 被重复使用时：inner_epochs = 1 时采样的策略就是被更新的策略，ρ = 1，裁剪从不生效。"
            "多个 epoch（TRL 的 num_iterations）时 ρ 会偏离 1；一旦 ρ 朝优势推动的方向离开 [1−ε, 1+ε]，取 min 就停止对该 token 的推动。"
            "clip_ratio 记录发生的比例。",
        },
        "PPO, arXiv 1707.06347; The 37 Implementation Details of PPO (ICLR blog track, 2022)",
        {
            "en": "02 §1 (the clip figure); the lab (03) with inner_epochs > 1 and the clip_ratio curve",
            "zh": "02 §1（裁剪的图）；实验台（03）中把 inner_epochs 调到 1 以上，看 clip_ratio 曲线",
        },
    ),
    FollowUp(
        "entropy-collapse",
        {"en": "Entropy collapses during GRPO training. Why, and what does DAPO change?", "zh": "GRPO 训练中熵坍缩了。为什么？DAPO 做了什么改动？"},
        {
            "en": "The symmetric clip caps how far a rare token's probability can rise in one update (1+ε times a small π_old) but lets "
            "likely tokens grow, so exploration dies. DAPO's clip-higher decouples the bounds (ε_low 0.2, ε_high 0.28) so rare "
            "good tokens can grow; it also refills batches with groups that have reward spread (dynamic sampling).",
            "zh": "对称的裁剪限制了低概率 token 一次更新能升多少（1+ε 乘以很小的 π_old），高概率 token 却可以继续增长，于是探索消失。"
            "DAPO 的 clip-higher 把上下界分开（ε_low 0.2，ε_high 0.28），让少见的好 token 能升上来；它还用有奖励差异的组补满 batch（动态采样）。",
        },
        "DAPO, arXiv 2503.14476",
        {
            "en": "the `entropy` metric in the lab (03); clip-higher is not implemented in the course",
            "zh": "实验台（03）中的 `entropy` 指标；本课程没有实现 clip-higher",
        },
    ),
    FollowUp(
        "critic-free-g1",
        {"en": "With G = 1 there is no group. What critic-free options remain?", "zh": "G = 1 时没有组。还有哪些不用 Critic 的做法？"},
        {
            "en": "RLOO needs G ≥ 2 (the mean of the other answers); ReMax uses the reward of the greedy answer as the baseline (one extra "
            "greedy sample per prompt); REINFORCE++ normalises advantages over the whole batch instead of the group, so it works at "
            "G = 1; a moving-average (EMA) baseline is the simplest global one.",
            "zh": "RLOO 需要 G ≥ 2（其他回答的均值）；ReMax 用贪心解码答案的奖励做基线（每个 prompt 多一次贪心采样）；"
            "REINFORCE++ 在整个 batch 上而不是组内归一化优势，所以 G = 1 也能用；滑动平均（EMA）基线是最简单的全局基线。",
        },
        "RLOO, arXiv 2402.14740; ReMax, arXiv 2310.10505; REINFORCE++, arXiv 2501.03262",
        {
            "en": "baselines `rloo` and `ema` (02 §3, 04 §4); the critic-free control at G = 1 in 05 [critic-per-response]; ReMax and "
            "REINFORCE++ are not implemented",
            "zh": "基线 `rloo` 和 `ema`（02 §3、04 §4）；05 中 G = 1 的无 Critic 对照 [critic-per-response]；ReMax 和 REINFORCE++ 未实现",
        },
    ),
    FollowUp(
        "std-difficulty",
        {
            "en": "Why does dividing by the group std bias which prompts the model learns from?",
            "zh": "为什么除以组内标准差会改变模型从哪些 prompt 学习？",
        },
        {
            "en": "For 0/1 rewards the group std is about √(p(1−p)), so a prompt's gradient is multiplied by ≈ 1/√(p(1−p)): largest for "
            "prompts almost always right or almost always wrong. The expected update is no longer the policy gradient of the "
            "average reward but a difficulty-weighted one (Dr. GRPO); mean-only or batch std removes it.",
            "zh": "对 0/1 奖励，组内标准差约为 √(p(1−p))，所以一个 prompt 的梯度被乘上 ≈ 1/√(p(1−p))：几乎全对或几乎全错的 prompt 权重最大。"
            "期望更新不再是平均奖励的策略梯度，而是按难度加权的版本（Dr. GRPO）；只减均值或用 batch 标准差可以去掉它。",
        },
        "Dr. GRPO, arXiv 2503.20783; REINFORCE++, arXiv 2501.03262 (batch normalisation)",
        {
            "en": "02 §4 (the U-shaped curve and [difficulty]); exercise 04_zscore_weight derives the weight",
            "zh": "02 §4（U 形曲线和 [difficulty]）；练习 04_zscore_weight 推导这个权重",
        },
    ),
)


def follow_ups_markdown(language: str = "en") -> str:
    """The follow-ups as markdown: question, short answer, paper, where the course shows it."""
    check_choice("30s", language)
    labels = {"en": ("Answer", "Paper", "In the course"), "zh": ("回答", "论文", "课程中")}[language]
    blocks = []
    for number, item in enumerate(FOLLOW_UPS, 1):
        blocks.append(
            f"**{number}. {item.question[language]}**\n\n- *{labels[0]}:* {item.answer[language]}\n"
            f"- *{labels[1]}:* {item.paper}\n- *{labels[2]}:* {item.where[language]}"
        )
    return "\n\n".join(blocks)


# --- reading list ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """A paper or post, checked against its arXiv page or site: title, where, why (en, zh)."""

    title: str
    where: str
    why: dict[str, str]


READING = (
    Reading(
        "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models (Shao et al., 2024)",
        "arXiv 2402.03300",
        {"en": "introduces GRPO (§4); eq. 3 is the objective of notebook 02", "zh": "提出 GRPO（第 4 节）；公式 3 就是笔记本 02 的目标函数"},
    ),
    Reading(
        "Proximal Policy Optimization Algorithms (Schulman et al., 2017)",
        "arXiv 1707.06347",
        {"en": "the clipped ratio GRPO keeps", "zh": "GRPO 保留的裁剪比率"},
    ),
    Reading(
        "High-Dimensional Continuous Control Using Generalized Advantage Estimation (Schulman et al., 2015)",
        "arXiv 1506.02438",
        {"en": "GAE, what a critic gives PPO per token (notebook 05)", "zh": "GAE：Critic 为 PPO 提供的逐 token 优势（笔记本 05）"},
    ),
    Reading(
        "Back to Basics: Revisiting REINFORCE Style Optimization for Learning from Human Feedback in LLMs (Ahmadian et al., 2024)",
        "arXiv 2402.14740 (ACL 2024)",
        {"en": "RLOO; most of PPO's machinery is unnecessary for LLM fine-tuning", "zh": "RLOO；PPO 的许多组件在 LLM 微调中并不必要"},
    ),
    Reading(
        "Understanding R1-Zero-Like Training: A Critical Perspective (Liu et al., 2025)",
        "arXiv 2503.20783",
        {"en": "Dr. GRPO: the length and difficulty biases of 1/|o| and 1/std", "zh": "Dr. GRPO：1/|o| 和 1/std 带来的长度与难度偏差"},
    ),
    Reading(
        "DAPO: An Open-Source LLM Reinforcement Learning System at Scale (Yu et al., 2025)",
        "arXiv 2503.14476",
        {"en": "clip-higher, dynamic sampling, token-level loss, overlong shaping", "zh": "clip-higher、动态采样、token 级损失、超长惩罚"},
    ),
    Reading(
        "It Takes Two: Your GRPO Is Secretly DPO (Wu et al., 2025)",
        "arXiv 2510.00977",
        {
            "en": "2-GRPO: G = 2 as contrastive learning; 97.6% of 16-GRPO in v1 of the abstract, 98.1% in v2",
            "zh": "2-GRPO：把 G = 2 看成对比学习；摘要 v1 写 16-GRPO 的 97.6%，v2 写 98.1%",
        },
    ),
    Reading(
        "The 37 Implementation Details of Proximal Policy Optimization (Huang et al., ICLR Blog Track, 2022)",
        "iclr-blog-track.github.io/2022/03/25/ppo-implementation-details",
        {
            "en": "what a working PPO actually does (the course's critic follows CleanRL)",
            "zh": "一个能用的 PPO 实际做了什么（本课程的 Critic 按 CleanRL 实现）",
        },
    ),
)
CARD_READING = (  # (the card's title, what we found)
    (
        "DeepSeek-Math: Pushing the Limits of Mathematical Reasoning with GRPO",
        {
            "en": "exists under a different title: DeepSeekMath, arXiv 2402.03300 (above)",
            "zh": "存在，但标题不同：DeepSeekMath，arXiv 2402.03300（见上）",
        },
    ),
    ("Proximal Policy Optimization Algorithms", {"en": "found: arXiv 1707.06347 (above)", "zh": "找到：arXiv 1707.06347（见上）"}),
    (
        "The 37 Implementation Details of GRPO",
        {"en": "not found; the post with this name is about PPO (above)", "zh": "没有找到；同名的博客讲的是 PPO（见上）"},
    ),
    ("Understanding the Trade-off between Sampling Efficiency and Baseline Variance in RL", {"en": "not found", "zh": "没有找到"}),
    ("GRPO vs PPO: A Practical Guide for LLM Training", {"en": "not found", "zh": "没有找到"}),
)


def reading_list_markdown(language: str = "en") -> str:
    """The verified reading list, then the card's own list with what was found for each title."""
    check_choice("30s", language)
    lines = [f"- *{item.title}*, {item.where}: {item.why[language]}" for item in READING]
    lines.append("\n" + ("The card's reading list, checked:" if language == "en" else "卡片上的延伸阅读，逐条核对："))
    lines += [f"- “{title}”: {found[language]}" for title, found in CARD_READING]
    return "\n".join(lines)
