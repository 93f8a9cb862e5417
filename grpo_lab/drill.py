"""The interview drill's evidence and quiz (notebooks 06, English and Chinese).

The drill's statements rest on the card's claims as ``experiments/claims.py`` measures them (the
same verdicts as data/results/claims.md). ``print_findings(keys, language)`` prints, for the claims
a section cites, the verdict, the numbers and the notebook that teaches it; ``quiz(language)``
builds the self-check quiz.
"""

from __future__ import annotations

import os

# where the course teaches each claim of experiments/claims.py (key -> notebook and section)
CLAIM_NOTEBOOKS = {
    "offset": "01 §4", "scale": "02 §2", "variance": "01 §3", "no-params": "05 §1", "g-at-least-8": "04 §1",
    "small-g-noisy": "04 §1", "g4-oscillates": "04 §1", "sigma-explodes": "04 §2", "epsilon": "04 §2", "dapo-filter": "04 §2",
    "batch-blowup": "04 §3", "tradeoff": "05 §4", "critic-per-response": "05 §3", "g2-usable": "04 §4", "g2-ema": "04 §4",
    "g2-kl": "04 §4", "g2-lr": "04 §4", "stability": "05 §3", "group-in-ppo": "05 §2", "not-no-value": "05 §2",
    "no-free-lunch": "05 §3", "std-essential": "02 §2, §4", "difficulty": "02 §4", "faster-30": "05 §3", "log-returns": "04 §1",
    "two-grpo": "04 §1, §4", "long-text": "05 §4", "batchnorm": "02 §3",
}
VERDICTS_ZH = {"holds here": "在此成立", "partly": "部分成立", "does not hold here": "在此不成立", "not tested": "未测试"}


def results_folder():
    """data/results/, or the folder named by GRPO_LAB_RESULTS_DIR."""
    from pathlib import Path

    from .course import RESULTS_DIR_ENV
    from .experiments.runner import RESULTS_DIR

    folder = os.environ.get(RESULTS_DIR_ENV)
    return Path(folder) if folder else RESULTS_DIR


def claims_audit() -> str:
    """The text of claims.md, the card's claims with their verdicts (``python -m grpo_lab sweep claims``)."""
    path = results_folder() / "claims.md"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: make it with `python -m grpo_lab sweep claims`")
    return path.read_text()


def findings(keys: list[str] | None = None) -> list[tuple]:
    """(claim, finding) for the claims with these keys (all when None), in the order given, from
    the cached results (data/results/, or the folder in GRPO_LAB_RESULTS_DIR)."""
    from .experiments.claims import CLAIMS, available_results, evaluate_claim

    by_key = {claim.key: claim for claim in CLAIMS}
    unknown = [key for key in keys or [] if key not in by_key]
    if unknown:
        raise ValueError(f"claim key(s) {', '.join(unknown)} not valid: choose from {', '.join(by_key)}")
    results = available_results(results_folder())
    return [(by_key[key], evaluate_claim(by_key[key], results)) for key in (keys or list(by_key))]


def print_findings(keys: list[str] | None = None, language: str = "en") -> None:
    """For each claim: its verdict, where the course teaches it, the card's words and the numbers."""
    labels = {"en": ("taught in", "card", "measured", "in plain words"), "zh": ("对应笔记本", "英文表述", "实测", "解读（英文）")}[language]
    for claim, finding in findings(keys):
        if language == "zh":  # the card's own words first; the measurements are written in English
            title = claim.card if claim.card != "—" else claim.claim
            print(f"[{claim.key}] {title}  ->  {VERDICTS_ZH.get(finding.verdict, finding.verdict)}")
            print(f"    {labels[0]}: {CLAIM_NOTEBOOKS.get(claim.key, '-')};  {labels[1]}: {claim.claim}")
        else:
            print(f"[{claim.key}] {claim.claim}  ->  {finding.verdict.upper()}")
            print(f"    {labels[0]}: {CLAIM_NOTEBOOKS.get(claim.key, '-')};  {labels[1]}: {claim.card}")
        print(f"    {labels[2]}: {finding.evidence}")
        if finding.explanation:
            print(f"    {labels[3]}: {finding.explanation}")


def question(prompt: str, options: list[str], answer: int, why: list[str], source: str):
    from .widgets import Question

    return Question(prompt, options, answer, why, source)


def quiz_questions(language: str = "en") -> list:
    """The drill's self-check questions, in English or Chinese (the same questions)."""
    if language == "zh":
        return [
            question("为什么减去组内均值不会让策略梯度产生偏差？",
                     ["只要基线不依赖于被采样的答案，E[∇log π · b] = 0；组内均值包含了答案自身的奖励，只会把梯度整体缩小 (G-1)/G 倍",
                      "因为组内均值总是 0", "因为除以 σ 抵消了它", "它确实有严重偏差，所以 PPO 更好"], 0,
                     ["对：基线“免费”的条件是不依赖于该答案；均值的唯一“偏差”是一个对所有 prompt 相同的常数因子。",
                      "不对：奖励的均值一般不是 0。", "不对：无偏性来自 E[∇log π] = 0，与 σ 无关；除以 σ 反而会按 prompt 重新加权。",
                      "不对：常数倍的缩小会被学习率吸收，不改变方向。"], "01 §2, 02 §3"),
            question("奖励模型给每个回答都加了 +5。哪种做法受影响最大？",
                     ["不减基线（REINFORCE）", "减组内均值", "z-score（GRPO）", "RLOO"], 0,
                     ["对：期望梯度不变，但噪声随偏移的平方增长；见 01 的方差图和 E1。",
                      "不对：组内均值会把偏移减掉。", "不对：z-score 先减均值，偏移被完全抵消。", "不对：留一均值同样抵消偏移。"], "01 §3-4"),
            question("G = 8，用 Bessel 校正的 z-score（ε → 0），单个优势 |A| 最大可能是多少？",
                     ["1", "(G-1)/√G ≈ 2.47", "8", "σ → 0 时无上界"], 1,
                     ["不对：一个正确答案配 7 个错误答案就超过 1。", "对：Samuelson 不等式；z-score 有界。",
                      "不对：远小于 G。", "不对：这正是“优势爆炸”的误解；爆炸的是噪声的权重，而不是数值大小。"], "04 §2"),
            question("一组 8 个回答全对，std_eps = 1e-4。它们的优势是？",
                     ["全部恰好为 0", "±1", "因为 σ → 0 而巨大", "NaN"], 0,
                     ["对：分子 r_i - μ 恰好为 0，分母是 ε > 0。没有信号，也没有爆炸。",
                      "不对：没有任何差异可以标准化。", "不对：分子也是 0。", "不对：只有 ε = 0 时才是 0/0。"], "04 §2"),
            question("“σ → 0”真正危险的情形是？",
                     ["组内奖励只差一点点噪声（部分得分、带噪的奖励模型），而 ε 比噪声还小", "所有回答都对", "G 很大",
                      "使用了 KL 惩罚"], 0,
                     ["对：微小的差异被除以微小的 σ，噪声变成了满幅的优势；ε 应该高于奖励的无意义抖动。",
                      "不对：那是恰好为 0 的情形，ε > 0 时优势为 0。", "不对：G 越大，σ 的估计越稳定。", "不对：KL 与 σ 无关。"], "04 §2"),
            question("G = 2、奖励为 0/1 时，GRPO（Bessel 校正）的优势只可能是？",
                     ["±0.707 或 0", "±1 或 0", "任意实数", "总是 0"], 0,
                     ["对：一对一错时是 ±1/√2，其余为 0：这是一个成对比较（2-GRPO 的论点）。",
                      "不对：那是不做 Bessel 校正（除以 G）的结果。", "不对：只有两个值可以比较。", "不对：一对一错时不为 0。"], "02 §3, 04 §4"),
            question("用 PPO 的语言说，GRPO 的组内均值估计的是什么？",
                     ["V(s₀)：这个 prompt 的价值", "每个 token 的 V(s_t)", "到参考策略的 KL", "Q(s, a)"], 0,
                     ["对：G 个回答的平均奖励就是 prompt 价值的蒙特卡洛估计；因此放进 PPO 会失去逐 token 的信用分配（追问 3）。",
                      "不对：那需要 Critic；组内基线只在 t = 0 有值。", "不对：KL 是另一个项。", "不对：它不依赖于具体动作。"], "05 §2"),
            question("在 GRPO 中使用梯度累积（micro-batch）会改变什么？",
                     ["只改变内存，不改变梯度", "梯度", "采样数", "学习率"], 0,
                     ["对：各个 micro-batch 的损失按整个 batch 归一化后相加，梯度与整 batch 相同；见 04 的实测。",
                      "不对：实测梯度范数相同（只差浮点误差）。", "不对：采样在反向传播之前就完成了。", "不对：学习率不变。"], "04 §3"),
            question("什么时候一个学习出来的 Critic 值得它的成本？",
                     ["每个回答的采样很贵（例如每个要几秒）时", "奖励是 0/1 时", "回答很短时", "永远不值得"], 0,
                     ["对：GRPO 用更多样本换掉 Critic；样本越贵，这笔交易越不划算。见 05 的交叉点。",
                      "不对：可验证的 0/1 奖励恰恰是 GRPO 的主场。", "不对：回答越短，逐 token 信用越没用。",
                      "不对：这是一种权衡，没有绝对的好坏。"], "05 §4"),
            question("Dr. GRPO 反对除以 σ 的理由是？",
                     ["它按难度重新加权 prompt：几乎全对或几乎全错的 prompt 被放大", "它让梯度有偏到相反方向", "它太慢",
                      "它需要 Critic"], 0,
                     ["对：一个 prompt 的梯度乘上了 1/σ，σ 在 p 接近 0 或 1 时最小；见 02 的 U 形曲线和 E3。",
                      "不对：方向只是被重新加权，不是反向。", "不对：计算量可以忽略。", "不对：z-score 与 Critic 无关。"], "02 §4"),
        ]
    return [
        question("Why does subtracting the group mean not bias the policy gradient?",
                 ["E[∇log π · b] = 0 for any b that does not depend on the sampled answer; the group mean includes the answer's own reward, which only shrinks the gradient by (G-1)/G",
                  "Because the group mean is always 0", "Because dividing by σ cancels it", "It does bias it badly, which is why PPO is better"], 0,
                 ["Right: a baseline is free when it does not depend on the answer; the mean's only 'bias' is one constant factor for every prompt.",
                  "No: the mean reward is generally not 0.", "No: unbiasedness comes from E[∇log π] = 0, not from σ; dividing by σ re-weights prompts.",
                  "No: a constant shrink is absorbed by the learning rate; the direction is unchanged."], "01 §2, 02 §3"),
        question("A reward model adds +5 to every reward. Which is hurt most?",
                 ["No baseline (REINFORCE)", "Group mean", "z-score (GRPO)", "RLOO"], 0,
                 ["Right: the expected gradient is unchanged but its noise grows like the offset squared; see 01's variance figure and E1.",
                  "No: the group mean subtracts the offset.", "No: the z-score subtracts the mean first, so the offset cancels.",
                  "No: the leave-one-out mean cancels it too."], "01 §3-4"),
        question("G = 8, z-score with Bessel's std, ε → 0: how large can one |advantage| be?",
                 ["1", "(G-1)/√G ≈ 2.47", "8", "Unbounded as σ → 0"], 1,
                 ["No: one right answer among 7 wrong ones already exceeds 1.", "Right: Samuelson's inequality; z-scores are bounded.",
                  "No: far below G.", "No: that is the 'exploding advantage' myth; what explodes is the weight of noise, not the size."], "04 §2"),
        question("All 8 answers of a group are right and std_eps = 1e-4. Their advantages are:",
                 ["exactly 0", "±1", "huge, because σ → 0", "NaN"], 0,
                 ["Right: the numerators r_i - μ are exactly 0 and the denominator is ε > 0. No signal, no explosion.",
                  "No: there is no difference to normalise.", "No: the numerators are 0 too.", "No: only with ε = 0 is it 0/0."], "04 §2"),
        question("When is 'σ → 0' really dangerous?",
                 ["When a group's rewards differ only by tiny noise (partial credit, a noisy reward model) and ε is below the noise",
                  "When every answer is right", "When G is large", "When a KL penalty is used"], 0,
                 ["Right: tiny differences divided by a tiny σ become full-size advantages; ε should sit above the reward's meaningless jitter.",
                  "No: that is the exact-zero case, and ε > 0 makes its advantages 0.", "No: a larger G estimates σ better.",
                  "No: the KL term has nothing to do with σ."], "04 §2"),
        question("With G = 2 and 0/1 rewards, GRPO's advantages (Bessel's std) can only be:",
                 ["±0.707 or 0", "±1 or 0", "any real number", "always 0"], 0,
                 ["Right: ±1/√2 when one is right and one wrong, else 0: a pairwise comparison (the 2-GRPO argument).",
                  "No: that is the population std (dividing by G).", "No: two rewards leave only one comparison.",
                  "No: a right/wrong pair gives non-zero advantages."], "02 §3, 04 §4"),
        question("In PPO's terms, what does GRPO's group mean estimate?",
                 ["V(s₀), the value of the prompt", "V(s_t) at every token", "the KL to the reference", "Q(s, a)"], 0,
                 ["Right: the mean reward of G answers is a Monte-Carlo estimate of the prompt's value; inside PPO it would lose the per-token credit (follow-up 3).",
                  "No: that needs a critic; the group baseline exists only at t = 0.", "No: the KL is a separate term.",
                  "No: it does not depend on the action."], "05 §2"),
        question("Gradient accumulation (micro-batches) in GRPO changes:",
                 ["memory, not the gradient", "the gradient", "the number of samples", "the learning rate"], 0,
                 ["Right: the micro-batches' losses are normalised by the whole batch and add up to the same gradient; measured in 04.",
                  "No: the measured gradient norm is the same up to float rounding.", "No: sampling happens before the backward pass.",
                  "No: the learning rate is untouched."], "04 §3"),
        question("When is a learned critic worth its cost?",
                 ["When each response is expensive to sample (seconds each)", "When rewards are 0/1", "When answers are short", "Never"], 0,
                 ["Right: GRPO buys 'no critic' with samples; the dearer a sample, the worse the deal. See 05's crossover.",
                  "No: verifiable 0/1 rewards are GRPO's home ground.", "No: the shorter the answer, the less per-token credit helps.",
                  "No: it is a trade-off, not a ranking."], "05 §4"),
        question("Dr. GRPO's argument against dividing by σ:",
                 ["It re-weights prompts by difficulty: nearly-all-right and nearly-all-wrong prompts are amplified",
                  "It biases the gradient to the opposite direction", "It is slow", "It needs a critic"], 0,
                 ["Right: each prompt's gradient is multiplied by 1/σ, which is largest when p is near 0 or 1; see 02's U-shaped curve and E3.",
                  "No: the direction is re-weighted, not reversed.", "No: its cost is negligible.", "No: the z-score has nothing to do with a critic."], "02 §4"),
    ]


def quiz(language: str = "en"):
    """The drill's quiz as a widget: choosing an answer shows at once whether it is right and why."""
    from .widgets import Quiz

    return Quiz(quiz_questions(language), language)
