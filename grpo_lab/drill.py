"""The interview drill's evidence and quiz (notebooks 06, English and Chinese).

The drill's statements rest on the card's claims as ``experiments/claims.py`` measures them (the
same verdicts as data/results/claims.md). ``print_findings(keys, language)`` prints, for the claims
a section cites, the verdict, where the course teaches it and the numbers: in English the evidence and
explanation of claims.md; in Chinese how the claim is tested (``CLAIMS_ZH``) and its key numbers, read
from the same result files. ``quiz(language)`` builds the self-check quiz.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# where the course teaches each claim of experiments/claims.py (key -> notebook and section)
CLAIM_NOTEBOOKS = {
    "offset": "01 §4",
    "scale": "02 §2",
    "variance": "01 §3",
    "no-params": "05 §1",
    "g-at-least-8": "04 §1",
    "small-g-noisy": "04 §1",
    "g4-oscillates": "04 §1",
    "sigma-explodes": "04 §2",
    "epsilon": "04 §2",
    "dapo-filter": "04 §2",
    "dapo-refill": "04 §2",
    "batch-blowup": "04 §3",
    "tradeoff": "05 §4",
    "critic-per-response": "05 §3",
    "g2-usable": "04 §4",
    "g2-ema": "04 §4",
    "g2-kl": "04 §4",
    "g2-lr": "04 §4",
    "stability": "05 §3",
    "group-in-ppo": "05 §2",
    "not-no-value": "05 §2b",
    "no-free-lunch": "05 §3",
    "std-essential": "02 §2, §4",
    "difficulty": "02 §4",
    "faster-30": "05 §3",
    "log-returns": "04 §1",
    "two-grpo": "04 §1, §4",
    "long-text": "05 §4",
    "batchnorm": "02 §3",
    "critic-fits": "05 §2b",
    "noisy-rewards": "05 §3",
}
VERDICTS_ZH = {"holds here": "在此成立", "partly": "部分成立", "does not hold here": "在此不成立", "not tested": "未测试"}


# --- the claims in Chinese --------------------------------------------------------------------------------

ACC = "late_eval_accuracy"
GRPO, PPO = "GRPO (zscore, G=8, 16 prompts)", "PPO critic (G=1, 128 prompts)"  # experiments/catalog.py's labels
PPO_SAME_BATCHES, PPO_SMALL, EMA_G1 = "PPO critic (G=8, 16 prompts)", "PPO critic (G=1, 32 prompts)", "EMA baseline, no critic (G=1, 128 prompts)"
GRPO_NOISY, PPO_NOISY = f"{GRPO}, reward noise 0.5", f"{PPO}, reward noise 0.5"
FRESH, POOL = "reference, fresh rollouts", "reference, one fixed pool of rollouts"  # critic-fit's cells


@dataclass(frozen=True)
class Number:
    """One number the drill quotes: a metric of one cell of one experiment, as mean ± std over seeds."""

    label: str  # in Chinese
    experiment: str
    cell: str
    metric: str
    percent: bool = False
    english: str = ""  # the label in English, for the numbers the English drill quotes


@dataclass(frozen=True)
class ClaimZh:
    """how: how the claim is tested and what the verdict rule asks, in Chinese (for an untested claim: why);
    numbers: its key numbers; title: for claims not on the card (their card text is '—')."""

    how: str
    numbers: tuple[Number, ...] = ()
    title: str = ""


def remedy_zh(label: str) -> ClaimZh:
    return ClaimZh(
        "与不加补救的 G = 2 比较后期准确率和最大回落（留出集准确率从此前最好值跌下的最大幅度）。成立：准确率更高，或准确率持平而回落更小；"
        "部分成立：回落更小但准确率没有更高（更稳，但同样步数内学得更少）。",
        (
            Number("G = 2 后期准确率", "small-group-remedies", "G=2", ACC),
            Number("加补救后", "small-group-remedies", label, ACC),
            Number("G = 2 最大回落", "small-group-remedies", "G=2", "eval_max_drawdown"),
            Number("加补救后", "small-group-remedies", label, "eval_max_drawdown"),
        ),
    )


CLAIMS_ZH = {
    "offset": ClaimZh(
        "给每个奖励加上一个全局偏移，比较后期留出集准确率（训练最后 20% 步数的平均）。成立：减去组内均值（mean、zscore）时有无偏移结果相同，"
        "不减基线（none）时偏移让准确率下降。",
        (
            Number("none，无偏移", "offset-and-scale", "none, offset 0", ACC),
            Number("none，偏移 5", "offset-and-scale", "none, offset 5", ACC),
            Number("mean，无偏移", "offset-and-scale", "mean, offset 0", ACC),
            Number("mean，偏移 5", "offset-and-scale", "mean, offset 5", ACC),
            Number("zscore，偏移 5", "offset-and-scale", "zscore, offset 5", ACC),
        ),
    ),
    "scale": ClaimZh(
        "把难题（需要进位）的奖励缩小为 0.1 倍，比较难题上的准确率。成立：zscore 不受影响（除以 σ 抵消了尺度），而 mean 下降。",
        (
            Number("mean，原尺度", "offset-and-scale", "mean, offset 0", "hard_eval_accuracy"),
            Number("mean，难题奖励 ×0.1", "offset-and-scale", "mean, hard x0.1", "hard_eval_accuracy"),
            Number("zscore，原尺度", "offset-and-scale", "zscore, offset 0", "hard_eval_accuracy"),
            Number("zscore，难题奖励 ×0.1", "offset-and-scale", "zscore, hard x0.1", "hard_eval_accuracy"),
        ),
    ),
    "variance": ClaimZh(
        "在固定策略上对同一批奖励套用各个基线，测量一批梯度的净信噪比（net_snr：扣除了噪声本身的贡献，纯噪声读数为 0；训练中记录的 grad_snr 不扣除，纯噪声读数约为 1，平均而言 grad_snr = net_snr + 1）。原始方差不是合适的尺度：z-score 后的优势是单位尺度，梯度更大，方差自然更大。"
        "成立：zscore 的 SNR 在多数 (策略, G ≥ 4) 组合上明显高于 mean。同时对照不减基线（none）：在 0/1 奖励、没有偏移时，减均值本身也未必提高 SNR。",
        (
            Number("参考策略 G = 8，净 SNR none", "variance", "reference, G=8", "net_snr.none"),
            Number("净 SNR mean", "variance", "reference, G=8", "net_snr.mean"),
            Number("净 SNR zscore", "variance", "reference, G=8", "net_snr.zscore"),
            Number("原始方差 mean", "variance", "reference, G=8", "grad_var.mean"),
            Number("原始方差 zscore", "variance", "reference, G=8", "grad_var.zscore"),
        ),
    ),
    "no-params": ClaimZh(
        "数 Critic 要训练的参数量和每步的 Critic 更新次数，并在同样的 batch 上比较每步耗时。成立：Critic 的参数量超过策略的一半（组内基线没有参数）。",
        (
            Number("Critic 参数量", "grpo-vs-ppo", PPO_SAME_BATCHES, "critic_parameters"),
            Number("策略参数量", "grpo-vs-ppo", GRPO, "policy_parameters"),
            Number("每步秒数 GRPO", "grpo-vs-ppo", GRPO, "time_per_step_s"),
            Number("PPO", "grpo-vs-ppo", PPO_SAME_BATCHES, "time_per_step_s"),
        ),
    ),
    "g-at-least-8": ClaimZh(
        "每步回答总数相同（G × prompt 数固定）时，比较 G = 2、4、8 的后期准确率。成立：G = 2 和 G = 4 都明显不如 G = 8。",
        (
            Number("G = 2", "group-size", "equal samples, G=2", ACC),
            Number("G = 4", "group-size", "equal samples, G=4", ACC),
            Number("G = 8", "group-size", "equal samples, G=8", ACC),
        ),
    ),
    "small-g-noisy": ClaimZh(
        "两种比较：prompt 数相同（G 小则每步样本少）时达到目标准确率所需的步数；回答数相同时所需的回答数。成立：两种比较下 G = 2-4 都比 G = 8 慢；"
        "只在前一种下更慢为部分成立。另看 G = 2 的组中奖励全相同（优势为 0，没有信号也没有噪声）的比例。",
        (
            Number("同 prompt 数，达标步数 G = 2", "group-size", "equal prompts, G=2", "steps_to_target"),
            Number("G = 8", "group-size", "equal prompts, G=8", "steps_to_target"),
            Number("同回答数，达标回答数 G = 2", "group-size", "equal samples, G=2", "samples_to_target"),
            Number("G = 8", "group-size", "equal samples, G=8", "samples_to_target"),
            Number("G = 2 奖励全相同的组", "group-size", "equal prompts, G=2", "frac_reward_zero_std", percent=True),
        ),
    ),
    "g4-oscillates": ClaimZh(
        "比较 G = 4 与 G = 16 的最大回落（留出集准确率从此前最好值跌下的最大幅度）。成立：在 prompt 数相同和回答数相同两种设置下，G = 4 的回落都明显更大。",
        (
            Number("同 prompt 数 G = 4", "group-size", "equal prompts, G=4", "eval_max_drawdown"),
            Number("G = 16", "group-size", "equal prompts, G=16", "eval_max_drawdown"),
            Number("同回答数 G = 4", "group-size", "equal samples, G=4", "eval_max_drawdown"),
            Number("G = 16", "group-size", "equal samples, G=16", "eval_max_drawdown"),
        ),
    ),
    "sigma-explodes": ClaimZh(
        "记录训练中 |优势| 的最大值，与 z-score 的理论上界 (G-1)/√G 比较；再看 ε = 0 时奖励全相同的组的 0/0，以及带噪奖励下“没有对错差异的组”占 |优势| 的份额。"
        "成立：|优势| 超过上界 10 倍以上（真正的爆炸）；只有 0/0 或噪声被放大时为部分成立。",
        (
            Number("最大 |优势|，精确奖励 ε = 1e-4", "sigma-to-zero", "exact, eps=0.0001, add", "adv_abs_max"),
            Number("部分得分奖励 ε = 1e-8", "sigma-to-zero", "partial, eps=1e-08, add", "adv_abs_max"),
            Number("ε = 0 时因 0/0 停止的运行", "sigma-to-zero", "exact, eps=0, add", "failed", percent=True),
            Number("带噪奖励，无信号组的份额 ε = 0", "sigma-to-zero", "noisy, eps=0, add", "probe_no_signal_share"),
            Number("ε = 0.1", "sigma-to-zero", "noisy, eps=0.1, add", "probe_no_signal_share"),
        ),
    ),
    "epsilon": ClaimZh(
        "看 ε = 1e-8 能否消除 0/0，能否压住带噪奖励被放大的噪声（无信号组占 |优势| 的份额）。成立：两者都做到；只消除 0/0 为部分成立。",
        (
            Number("ε = 1e-8 时失败的运行", "sigma-to-zero", "exact, eps=1e-08, add", "failed", percent=True),
            Number("无信号组的份额 ε = 0", "sigma-to-zero", "noisy, eps=0, add", "probe_no_signal_share"),
            Number("ε = 1e-8", "sigma-to-zero", "noisy, eps=1e-08, add", "probe_no_signal_share"),
            Number("ε = 0.1", "sigma-to-zero", "noisy, eps=0.1, add", "probe_no_signal_share"),
            Number("带噪奖励后期准确率 ε = 1e-8", "sigma-to-zero", "noisy, eps=1e-08, add", ACC),
            Number("ε = 0.1", "sigma-to-zero", "noisy, eps=0.1, add", ACC),
        ),
    ),
    "dapo-filter": ClaimZh(
        "在三种奖励（精确、部分得分、带噪）以及弱参考策略下，比较加与不加零方差过滤（丢弃奖励全相同的组，但不补充）的后期准确率。"
        "成立：至少一种设置下过滤后明显更好。ε > 0 时这些组的优势本来就是 0，只丢弃不补充只改变损失的归一化；DAPO 还会重新采样补满 batch，见 [dapo-refill]。",
        (
            Number("精确奖励，奖励全相同的组", "sigma-to-zero", "exact, eps=0.0001, add", "frac_reward_zero_std", percent=True),
            Number("不过滤", "sigma-to-zero", "exact, eps=0.0001, add", ACC),
            Number("过滤", "sigma-to-zero", "exact, eps=0.0001, add, zero-std filter", ACC),
            Number("带噪奖励，不过滤", "sigma-to-zero", "noisy, eps=0.0001, add", ACC),
            Number("过滤", "sigma-to-zero", "noisy, eps=0.0001, add, zero-std filter", ACC),
        ),
        title="只丢弃奖励全相同的组、不补充 batch（DAPO 动态采样的过滤部分）有帮助",
    ),
    "dapo-refill": ClaimZh(
        "DAPO 的动态采样：丢弃奖励全相同的组，再从新抽的 prompt 中采样，用有奖励差异的组补满 batch（每步最多多抽 4 批）。"
        "在同样的步数下与不做动态采样比较后期准确率，并记下多采了多少回答。成立：在某些设置下更好、且没有设置更差；有好有坏为部分成立。",
        (
            Number("弱参考策略，奖励全相同的组", "sigma-to-zero", "weak reference, exact, eps=0.0001, add", "frac_reward_zero_std", percent=True),
            Number("不做动态采样", "sigma-to-zero", "weak reference, exact, eps=0.0001, add", ACC),
            Number("动态采样", "sigma-to-zero", "weak reference, exact, eps=0.0001, add, dynamic sampling", ACC),
            Number("采样的回答数（不做）", "sigma-to-zero", "weak reference, exact, eps=0.0001, add", "samples"),
            Number("（动态采样）", "sigma-to-zero", "weak reference, exact, eps=0.0001, add, dynamic sampling", "samples"),
        ),
        title="DAPO 的动态采样（多采样，用有奖励差异的组补满 batch）有帮助",
    ),
    "batch-blowup": ClaimZh(
        "测量 batch（prompt 数 × G 个回答）变大时反向传播要保存的激活内存和每步耗时，以及梯度累积（micro-batch）后的梯度与内存。"
        "成立：内存随回答数近似线性增长，累积后梯度不变（相对差 < 1e-4），且 micro-batch 的内存不到整批的一半。",
        (
            Number("激活内存 MB，16 × G=2", "batch-blowup", "16 prompts x G=2", "saved_activations_mb"),
            Number("16 × G=128", "batch-blowup", "16 prompts x G=128", "saved_activations_mb"),
            Number("64 × G=16 整批", "batch-blowup", "64 prompts x G=16", "saved_activations_mb"),
            Number("micro-batch 16", "batch-blowup", "64 prompts x G=16, micro-batch 16", "saved_activations_mb"),
            Number("每步秒数，整批", "batch-blowup", "64 prompts x G=16", "time_per_step_s"),
            Number("micro-batch 16", "batch-blowup", "64 prompts x G=16, micro-batch 16", "time_per_step_s"),
        ),
    ),
    "tradeoff": ClaimZh(
        "把达到目标准确率的成本记为 墙钟时间 + c × 回答数（c 为模拟的每个回答的生成秒数），看 GRPO 与 PPO 谁更便宜、有没有交叉点。"
        "成立：生成便宜时 GRPO 更省、贵时 PPO 更省，而且不用 Critic 的对照（同样 batch 形状的 EMA 基线）不比 PPO 省；"
        "有交叉点但对照一样省（省下来的不是 Critic 的功劳），或没有交叉点但 PPO 在相同样本下准确率更高，为部分成立。",
        (
            Number("达标回答数 GRPO", "grpo-vs-ppo", GRPO, "samples_to_target"),
            Number("PPO", "grpo-vs-ppo", PPO, "samples_to_target"),
            Number("达标秒数 GRPO", "grpo-vs-ppo", GRPO, "time_to_target_s"),
            Number("PPO", "grpo-vs-ppo", PPO, "time_to_target_s"),
            Number("相同样本下后期准确率 GRPO", "grpo-vs-ppo", GRPO, ACC),
            Number("PPO", "grpo-vs-ppo", PPO, ACC),
            Number("无 Critic 对照（EMA，G = 1）达标回答数", "grpo-vs-ppo", EMA_G1, "samples_to_target"),
            Number("达标秒数", "grpo-vs-ppo", EMA_G1, "time_to_target_s"),
        ),
    ),
    "critic-per-response": ClaimZh(
        "PPO 每个 prompt 只采 1 个回答（G = 1），由 Critic 给出基线。成立：它能学（比起始准确率高 5 个百分点以上），且不差于相同样本下的 GRPO。"
        "对照：不用 Critic、只用滑动平均（EMA）基线的 G = 1；以及 Critic 的解释方差（≤ 0 表示它不比常数强）。",
        (
            Number("后期准确率 PPO（G = 1）", "grpo-vs-ppo", PPO, ACC),
            Number("GRPO（G = 8）", "grpo-vs-ppo", GRPO, ACC),
            Number("EMA 基线（G = 1，无 Critic）", "grpo-vs-ppo", EMA_G1, ACC),
            Number("Critic 的解释方差", "grpo-vs-ppo", PPO, "late_explained_variance"),
        ),
    ),
    "g2-usable": ClaimZh(
        "比较 G = 2（16 个 prompt）、G = 8（16 个 prompt）和 G = 2（64 个 prompt，每步样本数与 G = 8 相同）的后期准确率。"
        "成立：G = 2 能学，但在相同样本下仍不如 G = 8；只在每步样本更少时不如 G = 8 为部分成立。",
        (
            Number("G = 2 × 16", "small-group-remedies", "G=2", ACC),
            Number("G = 8 × 16", "small-group-remedies", "G=8", ACC),
            Number("G = 2 × 64", "small-group-remedies", "G=2, 64 prompts (G=8's samples)", ACC),
        ),
    ),
    "g2-ema": remedy_zh("G=2 + EMA baseline"),
    "g2-kl": remedy_zh("G=2 + KL 0.04"),
    "g2-lr": remedy_zh("G=2 + lr 3e-5"),
    "stability": ClaimZh(
        "样本充足时（每步 128 个回答），比较 GRPO（G = 8）与 PPO（G = 1）的最大回落；样本稀少时（每步 32 个回答），比较 GRPO（G = 2）与 PPO（G = 1）的后期准确率。"
        "成立：前者 GRPO 的回落不大于 PPO，后者 GRPO 更差。",
        (
            Number("128 个回答，最大回落 GRPO", "grpo-vs-ppo", GRPO, "eval_max_drawdown"),
            Number("PPO", "grpo-vs-ppo", PPO, "eval_max_drawdown"),
            Number("32 个回答，后期准确率 GRPO", "small-group-remedies", "G=2", ACC),
            Number("PPO", "grpo-vs-ppo", PPO_SMALL, ACC),
        ),
    ),
    "group-in-ppo": ClaimZh(
        "在完全相同的 batch（G = 8，16 个 prompt，同一个 PPO 裁剪损失）上，把 Critic + GAE 换成组内基线（这正是 GRPO）。"
        "成立（卡片说“得不偿失”）：组内基线明显更差。本任务的回答只有 3-4 个 token、奖励在结尾，GAE 可分配的时序信用很少。",
        (Number("组内基线（GRPO）", "grpo-vs-ppo", GRPO, ACC), Number("Critic + GAE", "grpo-vs-ppo", PPO_SAME_BATCHES, ACC)),
    ),
    "not-no-value": ClaimZh(
        "把组内 G 个回答的平均奖励当作 V(prompt) 的估计，在新采样的留出回答上测它的解释方差（EV），与已知真实价值的 Critic（oracle，每个 prompt 128 个样本）"
        "和训练中的 Critic 比较。成立：G 最大时明显高于 0、达到 oracle 的 80% 以上，且随 G 单调上升。",
        (
            Number("组内均值 G = 2", "critic-fit", FRESH, "group_ev.G=2"),
            Number("G = 8", "critic-fit", FRESH, "group_ev.G=8"),
            Number("G = 64", "critic-fit", FRESH, "group_ev.G=64"),
            Number("oracle", "critic-fit", FRESH, "oracle_ev"),
            Number("训练后的 Critic", "critic-fit", FRESH, "critic_ev_prompt"),
        ),
    ),
    "critic-fits": ClaimZh(
        "在固定的参考策略上训练 Critic，测它在新回答上的留出解释方差。欠拟合：每批都是新样本时，最好的 EV 仍不到 oracle 的一半；"
        "过拟合：在同一池 128 个回答上反复训练，训练集 EV 远高于留出集、且留出集 EV < 0。两者都出现为成立，只出现一个为部分成立。",
        (
            Number("新样本：最好的留出 EV", "critic-fit", FRESH, "best_critic_ev_prompt"),
            Number("oracle", "critic-fit", FRESH, "oracle_ev"),
            Number("固定样本池：训练集 EV", "critic-fit", POOL, "train_ev_token"),
            Number("留出 EV", "critic-fit", POOL, "critic_ev_token"),
        ),
        title="Critic 容易过拟合或欠拟合",
    ),
    "noisy-rewards": ClaimZh(
        "每步 128 个回答，给 0/1 奖励加上标准差 0.5 的高斯噪声，比较 PPO（G = 1，Critic）与 GRPO（G = 8）的后期准确率，并与精确奖励下的差距对比。"
        "成立：有噪声时 PPO 明显更好，且领先幅度大于精确奖励时；只在有噪声时领先、但精确奖励下领先同样多为部分成立。",
        (
            Number("带噪奖励 GRPO", "grpo-vs-ppo", GRPO_NOISY, ACC),
            Number("PPO", "grpo-vs-ppo", PPO_NOISY, ACC),
            Number("精确奖励 GRPO", "grpo-vs-ppo", GRPO, ACC),
            Number("PPO", "grpo-vs-ppo", PPO, ACC),
        ),
        title="奖励方差大（奖励有噪声）时，PPO + Critic 更好",
    ),
    "no-free-lunch": ClaimZh(
        "在三个尺度上比较 GRPO 与 PPO：后期准确率、达到目标所需的回答数、所需的秒数。成立：两者各在某个尺度上胜出。",
        (
            Number("后期准确率 GRPO", "grpo-vs-ppo", GRPO, ACC),
            Number("PPO", "grpo-vs-ppo", PPO, ACC),
            Number("达标回答数 GRPO", "grpo-vs-ppo", GRPO, "samples_to_target"),
            Number("PPO", "grpo-vs-ppo", PPO, "samples_to_target"),
            Number("达标秒数 GRPO", "grpo-vs-ppo", GRPO, "time_to_target_s"),
            Number("PPO", "grpo-vs-ppo", PPO, "time_to_target_s"),
        ),
    ),
    "std-essential": ClaimZh(
        "在各 prompt 奖励尺度相同的情况下，比较 zscore 与只减均值（mean）的后期准确率（两个实验）。成立：两个实验中 zscore 都更好，且至少一个领先 5 个百分点以上。"
        "除以 σ 要在不同 prompt 的奖励尺度不同时才可能起作用（见 [scale]）。",
        (
            Number("offset-and-scale：zscore", "offset-and-scale", "zscore, offset 0", ACC),
            Number("mean", "offset-and-scale", "mean, offset 0", ACC),
            Number("difficulty-bias：zscore", "difficulty-bias", "train with zscore", ACC),
            Number("mean", "difficulty-bias", "train with mean", ACC),
        ),
    ),
    "difficulty": ClaimZh(
        "测量只有 1 个答对的组的梯度范数相对于最均衡的组是多少（zscore 与 mean 各测一次），再比较训练后难题与易题的准确率。"
        "成立：在参考策略和半训练策略上，zscore 给这种一边倒的组（题目太难或太容易，σ 小）的相对权重都高于 mean。",
        (
            Number(
                "参考策略，1 个答对的组的相对梯度范数 zscore",
                "difficulty-bias",
                "group weights at the reference policy",
                "weight_vs_middle.zscore.k=1",
            ),
            Number("mean", "difficulty-bias", "group weights at the reference policy", "weight_vs_middle.mean.k=1"),
            Number("训练后难题准确率 zscore", "difficulty-bias", "train with zscore", "hard_eval_accuracy"),
            Number("mean", "difficulty-bias", "train with mean", "hard_eval_accuracy"),
        ),
        title="除以 σ 会过度加权太难和太容易的 prompt（Dr. GRPO）",
    ),
    "faster-30": ClaimZh(
        "每步回答数相同时，比较达到目标准确率所需的回答数。成立：PPO 比 GRPO 多用 20% 以上的回答；多用但不到 20% 为部分成立。"
        "“快 30%”是卡片中 7B 模型做数学任务的经验，这里只能检验方向。",
        (Number("达标回答数 GRPO", "grpo-vs-ppo", GRPO, "samples_to_target"), Number("PPO", "grpo-vs-ppo", PPO, "samples_to_target")),
    ),
    "log-returns": ClaimZh(
        "检验形状：对数关系意味着每翻一倍 G 提升相同，所以 4 → 16 与 16 → 64（各翻两倍）的提升应在噪声内相等；饱和则意味着提升逐渐消失。"
        "prompt 数固定时比较 G = 4、16、64 的后期准确率。成立：两段提升都明显且相等（对数）；4 → 16 明显而 16 → 64 在噪声内为零（饱和），"
        "或后段提升更小但仍为正，为部分成立。注意 G 越大每步样本越多；相同样本下的结论见 [g-at-least-8]。",
        (
            Number("G = 4", "group-size", "equal prompts, G=4", ACC),
            Number("G = 16", "group-size", "equal prompts, G=16", ACC),
            Number("G = 64", "group-size", "equal prompts, G=64", ACC),
        ),
    ),
    "two-grpo": ClaimZh(
        "prompt 数和步数相同时，G = 2（只用 1/8 的回答）的后期准确率是 G = 16 的百分之几。成立：≥ 95%；90%-95% 为部分成立。"
        "2-GRPO 论文把 G = 2 看作一对回答之间的对比学习，接近 DPO。",
        (Number("G = 2", "group-size", "equal prompts, G=2", ACC), Number("G = 16", "group-size", "equal prompts, G=16", ACC)),
        title="G = 2 用 12.5% 的回答达到 G = 16 约 97.6% 的准确率（2-GRPO，arXiv 2510.00977）",
    ),
    "long-text": ClaimZh("本任务的回答只有 3-4 个 token、奖励只有一个且精确，测不了对话和长文本；成本一侧在 [tradeoff] 中模拟。"),
    "batchnorm": ClaimZh("这是一个类比，不是可测量的论断。"),
}


# "in plain words" for the claims the drill explains in Chinese: what the numbers mean, whatever the
# verdict (claims.md's English explanations are written from the numbers; these say the mechanism)
PLAIN_ZH = {
    "offset": "减去组内均值后，优势里根本看不到全局偏移，所以加不加偏移结果一样；不减基线时，每个采样到的回答不论对错都被往上推，"
    "只有对错之间的微小差别带信息，偏移越大噪声越大。",
    "scale": "只减均值时，难题奖励缩小 10 倍，它们的优势也缩小 10 倍，难题学得更少；除以 σ 把这个倍数除掉了，难题和易题重新站在同一尺度上。",
    "variance": "原始方差不是合适的尺度：z-score 后优势是单位尺度，梯度本身更大，方差自然更大。该看的是信噪比和与真实梯度的夹角；"
    "除以 σ 主要是按 prompt 重新加权，而不是去掉噪声。",
    "g-at-least-8": "在回答总数相同时，小 G 意味着更多不同的 prompt；本任务一批梯度的噪声主要来自抽到了哪些 prompt，所以小 G 不一定吃亏。",
    "small-g-noisy": "G = 2 的组要么两个回答一样（优势为 0，没有信号也没有噪声），要么一对一错（优势 ±0.71，干净的成对比较）："
    "它的问题不是“被噪声主导”，而是很多组根本没有信号。",
    "g4-oscillates": "看的是留出集准确率从此前最好值跌下的最大幅度；训练奖励的逐步抖动在 prompt 数相同时本来就会随 G 变小而变大（每步评分的回答更少）。",
    "sigma-explodes": "在精确算术下，G 个数的 z-score 有上界 (G-1)/√G，不会爆炸到无穷大；真正出问题的是 ε = 0 时全相同的组得到 0/0，"
    "以及奖励只差一点噪声时，噪声被放大成满幅的优势。如果有运行超过上界，那来自 float32 舍入：ε 小于 float32 的精度时，它起不到保护作用。",
    "epsilon": "任何 ε > 0 都能把 0/0 变成 0；但 ε 远小于奖励噪声时，噪声照样被放大。ε 要高于奖励的无意义抖动才有用。",
    "dapo-filter": "只丢弃奖励全相同的组而不补充时，ε > 0 下这些组的优势本来就是 0，丢掉它们只改变损失的归一化；带噪奖励下几乎没有组恰好全相同。",
    "dapo-refill": "动态采样让每一步都在满 batch 的“有信号”组上训练，代价是多采样的回答；被丢的组越多（弱策略，或训练后期几乎全对），要补的越多。",
    "batch-blowup": "一步的 batch 是 prompt 数 × G 个回答，反向传播要保存的激活随之成比例增长；梯度累积把它分成小块，梯度不变，内存只取决于小块，但每步更慢。",
    "g2-usable": "“差”要看怎么比：同样的步数下，G = 2 每步的样本只有 G = 8 的四分之一；把同样的样本数给 G = 2（更多 prompt）再比，才是公平的比较（见关键数字）。",
    "g2-ema": "EMA 基线是过去奖励的滑动平均，不依赖本组；一对回答都对或都错时，组内基线给 0，EMA 基线仍给出非零优势。",
    "g2-kl": "KL 惩罚把策略拉向参考策略：更稳，但同样的步数内学得更少，所以它不一定提高准确率。",
    "g2-lr": "更小的学习率让每一步更小：曲线更平稳，但同样的步数内走得更短。",
    "std-essential": "σ 统一尺度的作用只在不同 prompt 的奖励尺度不同时才用得上；同一个 0/1 奖励下，它主要是按难度重新加权（见 [difficulty]）。",
    "difficulty": "除以 σ 相当于给每个 prompt 的梯度乘上 1/σ，几乎全对或几乎全错的 prompt σ 最小、权重最大；这个机制是真的，但它对准确率的影响要看任务。",
    "log-returns": "对数关系意味着 G 每翻一倍提升相同；如果后面的翻倍几乎不再提升，那是饱和，不是对数。注意 G 越大每步样本越多。",
    "no-params": "Critic 是第二个和策略一样大的网络，有自己的优化器和损失，每步还要多训练 16 次（4 轮 × 4 个小批量）；组内基线没有参数，算一个均值就行。",
    "tradeoff": "达到目标的成本 = 计算时间 + 每个回答的生成成本 × 回答数。需要回答更少的一方在生成贵时胜出；但在本任务里，"
    "不用 Critic、只用滑动平均基线、同样每步 128 个 prompt 的对照也一样省，省下来的是 batch 的形状（更多 prompt），不是 Critic。",
    "critic-per-response": "G = 1 时没有组，Critic 仍给每个回答一个基线，所以能学；但它只解释了回报方差的很小一部分，"
    "PPO 这里主要靠对整个 batch（128 个不同 prompt）做白化，相当于减去 batch 均值。",
    "critic-fits": "要从 0/1 奖励里学会“这道题答对的概率”，Critic 得自己学会算术：新样本源源不断时学得很慢（欠拟合）；"
    "在同一池回答上反复训练，它会记住这池回答，在新回答上比常数还差（过拟合）。",
    "noisy-rewards": "奖励噪声让两种方法都变差，差不多一样多；PPO 有噪声时的领先幅度和没有噪声时相当，所以决定胜负的不是噪声。",
    "stability": "样本够多时，组内基线没有 Critic 的预测误差，曲线回落不比 PPO 大；样本很少时（G = 2），很多组没有信号，PPO 每步看更多 prompt，更占优。",
    "group-in-ppo": "GRPO 恰好就是“把 PPO 的 Critic 换成组内基线”。在 3-4 个 token、奖励只在结尾的回答上，GAE 能分配的时序信用很少，所以两者打平；长回答可能不同。",
    "not-no-value": "GRPO 并非不估计价值：G 个回答的平均奖励就是 prompt 价值的蒙特卡洛估计，G 越大越准；它用采样代替了 Critic 的训练。"
    "估计有噪声也没关系：作为基线，噪声只增加方差，不引入偏差。",
    "no-free-lunch": "在相同样本下 PPO（G = 1）准确率略高、需要的回答更少；在相同时间下 GRPO 远远领先，因为 Critic 让每步慢约 5 倍。没有在所有尺度上都更好的方法。",
    "faster-30": "这里 GRPO 需要的回答反而更多；但不用 Critic、同样每步 128 个 prompt 的对照需要的回答和 PPO 一样少，所以差别来自 batch 形状。"
    "“快 30%”是卡片中 7B 模型做数学的经验，长思维链和 3-4 个 token 的回答不可同日而语。",
    "two-grpo": "G = 2 是一对回答之间的比较，接近 DPO 的偏好对；“12.5% 的回答”有两种预算读法：同样的 prompt 数和步数，或 8 倍 prompt、1/8 步数。",
}


def results_folder():
    """data/results/, or the folder named by GRPO_LAB_RESULTS_DIR."""
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


def cached_results() -> dict:
    """Every cached experiment result, by name (data/results/, or the folder in GRPO_LAB_RESULTS_DIR)."""
    from .experiments.claims_report import available_results

    return available_results(results_folder())


def results_sources(results: dict | None = None) -> list[str]:
    """One line per result the drill reads: its folder, whether it is a --fast run, when and by which command it was made."""
    results = cached_results() if results is None else results
    folder = results_folder()
    return [
        f"{name}: {folder / (name + '.json')} ({'fast' if result.get('fast') else 'full'} run, {result.get('created', '?')}): "
        f"`{result.get('command', '?')}`"
        for name, result in results.items()
    ]


def answer_experiments() -> list[str]:
    """The experiments whose numbers the model answers quote."""
    from .drill_answers import ANSWERS

    return list(dict.fromkeys(number.experiment for sentences in ANSWERS.values() for sentence in sentences for number in sentence.numbers))


def rerun_fast(experiments: list[str] | None = None, folder: str | os.PathLike | None = None, workers: int = 2) -> Path:
    """Re-run the --fast variants of ``experiments`` (default: those the model answers quote) into
    ``folder`` (default: a new temporary folder), write claims.md there, and point the drill at it
    (GRPO_LAB_RESULTS_DIR), so that every number the drill prints afterwards is one you produced.
    Fast grids have fewer cells and seeds: numbers of cells they lack print as '?' or 'no data'."""
    import tempfile

    from .course import RESULTS_DIR_ENV
    from .experiments.claims_report import write_claims
    from .experiments.runner import check_name, run_experiment, write_result

    names = list(experiments) if experiments is not None else answer_experiments()
    for name in names:
        check_name(name)
    target = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="grpo-lab-results-"))
    for name in names:
        write_result(name, run_experiment(name, fast=True, workers=workers), target)
    write_claims(directory=target)
    os.environ[RESULTS_DIR_ENV] = str(target)
    return target


def findings(keys: list[str] | None = None, results: dict | None = None) -> list[tuple]:
    """(claim, finding) for the claims with these keys (all when None), in the order given, from
    ``results`` (default: the cached results)."""
    from .experiments.claims import CLAIMS, evaluate_claim

    by_key = {claim.key: claim for claim in CLAIMS}
    unknown = [key for key in keys or [] if key not in by_key]
    if unknown:
        raise ValueError(f"claim key(s) {', '.join(unknown)} not valid: choose from {', '.join(by_key)}")
    results = cached_results() if results is None else results
    return [(by_key[key], evaluate_claim(by_key[key], results)) for key in (keys or list(by_key))]


def quoted_number(number: Number, results: dict, language: str = "zh") -> str:
    """'label：mean ± std (n=seeds)', read from the result files; '无数据' ('no data') where the result lacks it."""
    from .experiments.claims import stat
    from .experiments.stats import format_mean_std

    label, colon, missing = (number.english or number.label, ": ", "no data in this result") if language == "en" else (number.label, "：", "无数据")
    try:
        return f"{label}{colon}{format_mean_std(stat(results, number.experiment, number.cell, number.metric), percent=number.percent)}"
    except KeyError:
        return f"{label}{colon}{missing}"


def print_findings(keys: list[str] | None = None, language: str = "en") -> None:
    """For each claim: its verdict, where the course teaches it, the card's words and the numbers
    (language "en": claims.md's evidence and explanation; "zh": CLAIMS_ZH's test and key numbers)."""
    if language not in ("en", "zh"):
        raise ValueError(f"language={language!r} is not valid: choose en or zh")
    results = cached_results()
    for claim, finding in findings(keys, results):
        where = CLAIM_NOTEBOOKS.get(claim.key, "-")
        if language == "en":
            print(f"[{claim.key}] {claim.claim}  ->  {finding.verdict.upper()}")
            print(f"    taught in: {where};  card: {claim.card}")
            print(f"    measured: {finding.evidence}")
            if finding.explanation:
                print(f"    in plain words: {finding.explanation}")
            continue
        chinese = CLAIMS_ZH[claim.key]
        print(f"[{claim.key}] {chinese.title or claim.card}  ->  {VERDICTS_ZH[finding.verdict]}")
        print(f"    对应笔记本：{where}")
        if claim.evaluate is None:
            print(f"    为什么不测：{chinese.how}")
            continue
        print(f"    怎么检验：{chinese.how}")
        missing = [name for name in claim.experiments if name not in results]
        if missing:
            print("    还没有结果：运行 " + "；".join(f"`python -m grpo_lab sweep {name}`" for name in missing))
        else:
            print("    关键数字：" + "；".join(quoted_number(number, results) for number in chinese.numbers))
        if claim.key in PLAIN_ZH:
            print(f"    通俗地说：{PLAIN_ZH[claim.key]}")


def claims_audit_zh(results: dict | None = None) -> str:
    """The claims audit in Chinese, as markdown: for every claim of the card (and of the literature),
    its verdict, the notebook that teaches it, how it is tested, its key numbers and the command that
    regenerates them, from the same result files as claims.md."""
    results = cached_results() if results is None else results
    lines = ["| # | 论断 | 实验 | 结论 |", "|---|---|---|---|"]
    sections = []
    for index, (claim, finding) in enumerate(findings(None, results), 1):
        chinese = CLAIMS_ZH[claim.key]
        title = chinese.title or claim.card
        experiments = "、".join(f"`{name}`" for name in claim.experiments) or "—"
        lines.append(f"| {index} | {title}（{claim.key}） | {experiments} | **{VERDICTS_ZH[finding.verdict]}** |")
        body = [f"### {index}. {title}\n", f"*结论：* **{VERDICTS_ZH[finding.verdict]}**；*对应笔记本：* {CLAIM_NOTEBOOKS.get(claim.key, '-')}  "]
        if claim.evaluate is None:
            body.append(f"*为什么不测：* {chinese.how}")
        else:
            body.append(f"*怎么检验：* {chinese.how}  ")
            missing = [name for name in claim.experiments if name not in results]
            if missing:
                body.append("*还没有结果：* 运行 " + "；".join(f"`python -m grpo_lab sweep {name}`" for name in missing))
            else:
                body.append("*关键数字：* " + "；".join(quoted_number(number, results) for number in chinese.numbers) + "  ")
                body.append("*重新生成：* " + "；".join(f"`{results[name]['command']}`" for name in claim.experiments) + "  ")
            if claim.key in PLAIN_ZH:
                body.append(f"*通俗地说：* {PLAIN_ZH[claim.key]}")
        sections.append("\n".join(body))
    return "\n".join(lines) + "\n\n" + "\n\n".join(sections) + "\n"


def question(prompt: str, options: list[str], answer: int, why: list[str], source: str):
    from .widgets import Question

    return Question(prompt, options, answer, why, source)


QUIZ = [  # (where the course shows it, index of the right option, {language: (question, options, why each option is right or wrong)})
    (
        "01 §2, 02 §3",
        0,
        {
            "en": (
                "Why does subtracting the group mean not bias the policy gradient?",
                [
                    "E[∇log π · b] = 0 for any b that does not depend on the sampled answer; the group mean includes the answer's own reward, which only shrinks the gradient by (G-1)/G",
                    "Because the group mean is always 0",
                    "Because dividing by σ cancels it",
                    "It does bias it badly, which is why PPO is better",
                ],
                [
                    "Right: a baseline is free when it does not depend on the answer; the mean's only 'bias' is one constant factor for every prompt.",
                    "No: the mean reward is generally not 0.",
                    "No: unbiasedness comes from E[∇log π] = 0, not from σ; dividing by σ re-weights prompts.",
                    "No: a constant shrink is absorbed by the learning rate; the direction is unchanged.",
                ],
            ),
            "zh": (
                "为什么减去组内均值不会让策略梯度产生偏差？",
                [
                    "只要基线不依赖于被采样的答案，E[∇log π · b] = 0；组内均值包含了答案自身的奖励，只会把梯度整体缩小 (G-1)/G 倍",
                    "因为组内均值总是 0",
                    "因为除以 σ 抵消了它",
                    "它确实有严重偏差，所以 PPO 更好",
                ],
                [
                    "对：基线“免费”的条件是不依赖于该答案；均值的唯一“偏差”是一个对所有 prompt 相同的常数因子。",
                    "不对：奖励的均值一般不是 0。",
                    "不对：无偏性来自 E[∇log π] = 0，与 σ 无关；除以 σ 反而会按 prompt 重新加权。",
                    "不对：常数倍的缩小会被学习率吸收，不改变方向。",
                ],
            ),
        },
    ),
    (
        "01 §3-4",
        0,
        {
            "en": (
                "A reward model adds +5 to every reward. Which is hurt most?",
                ["No baseline (REINFORCE)", "Group mean", "z-score (GRPO)", "RLOO"],
                [
                    "Right: the expected gradient is unchanged but its noise grows like the offset squared; see the variance-vs-offset figure in 01 §3.",
                    "No: the group mean subtracts the offset.",
                    "No: the z-score subtracts the mean first, so the offset cancels.",
                    "No: the leave-one-out mean cancels it too.",
                ],
            ),
            "zh": (
                "奖励模型给每个回答都加了 +5。哪种做法受影响最大？",
                ["不减基线（REINFORCE）", "减组内均值", "z-score（GRPO）", "RLOO"],
                [
                    "对：期望梯度不变，但噪声随偏移的平方增长；见 01 §3 中方差随偏移变化的图。",
                    "不对：组内均值会把偏移减掉。",
                    "不对：z-score 先减均值，偏移被完全抵消。",
                    "不对：留一均值同样抵消偏移。",
                ],
            ),
        },
    ),
    (
        "04 §2",
        1,
        {
            "en": (
                "G = 8, z-score with Bessel's std, ε → 0: how large can one |advantage| be?",
                ["1", "(G-1)/√G ≈ 2.47", "8", "Unbounded as σ → 0"],
                [
                    "No: one right answer among 7 wrong ones already exceeds 1.",
                    "Right: Samuelson's inequality; z-scores are bounded.",
                    "No: far below G.",
                    "No: that is the 'exploding advantage' myth; what explodes is the weight of noise, not the size.",
                ],
            ),
            "zh": (
                "G = 8，用 Bessel 校正的 z-score（ε → 0），单个优势 |A| 最大可能是多少？",
                ["1", "(G-1)/√G ≈ 2.47", "8", "σ → 0 时无上界"],
                [
                    "不对：一个正确答案配 7 个错误答案就超过 1。",
                    "对：Samuelson 不等式；z-score 有界。",
                    "不对：远小于 G。",
                    "不对：这正是“优势爆炸”的误解；爆炸的是噪声的权重，而不是数值大小。",
                ],
            ),
        },
    ),
    (
        "04 §2",
        0,
        {
            "en": (
                "All 8 answers of a group are right and std_eps = 1e-4. Their advantages are:",
                ["exactly 0", "±1", "huge, because σ → 0", "NaN"],
                [
                    "Right: the numerators r_i - μ are exactly 0 and the denominator is ε > 0. No signal, no explosion.",
                    "No: there is no difference to normalise.",
                    "No: the numerators are 0 too.",
                    "No: only with ε = 0 is it 0/0.",
                ],
            ),
            "zh": (
                "一组 8 个回答全对，std_eps = 1e-4。它们的优势是？",
                ["全部恰好为 0", "±1", "因为 σ → 0 而巨大", "NaN"],
                [
                    "对：分子 r_i - μ 恰好为 0，分母是 ε > 0。没有信号，也没有爆炸。",
                    "不对：没有任何差异可以标准化。",
                    "不对：分子也是 0。",
                    "不对：只有 ε = 0 时才是 0/0。",
                ],
            ),
        },
    ),
    (
        "04 §2",
        0,
        {
            "en": (
                "When is 'σ → 0' really dangerous?",
                [
                    "When a group's rewards differ only by tiny noise (partial credit, a noisy reward model) and ε is below the noise",
                    "When every answer is right",
                    "When G is large",
                    "When a KL penalty is used",
                ],
                [
                    "Right: tiny differences divided by a tiny σ become full-size advantages; ε should sit above the reward's meaningless jitter.",
                    "No: that is the exact-zero case, and ε > 0 makes its advantages 0.",
                    "No: a larger G estimates σ better.",
                    "No: the KL term has nothing to do with σ.",
                ],
            ),
            "zh": (
                "“σ → 0”真正危险的情形是？",
                ["组内奖励只差一点点噪声（部分得分、带噪的奖励模型），而 ε 比噪声还小", "所有回答都对", "G 很大", "使用了 KL 惩罚"],
                [
                    "对：微小的差异被除以微小的 σ，噪声变成了满幅的优势；ε 应该高于奖励的无意义抖动。",
                    "不对：那是恰好为 0 的情形，ε > 0 时优势为 0。",
                    "不对：G 越大，σ 的估计越稳定。",
                    "不对：KL 与 σ 无关。",
                ],
            ),
        },
    ),
    (
        "02 §3, 04 §4",
        0,
        {
            "en": (
                "With G = 2 and 0/1 rewards, GRPO's advantages (Bessel's std) can only be:",
                ["±0.707 or 0", "±1 or 0", "any real number", "always 0"],
                [
                    "Right: ±1/√2 when one is right and one wrong, else 0: a pairwise comparison (the 2-GRPO argument).",
                    "No: that is the population std (dividing by G).",
                    "No: two rewards leave only one comparison.",
                    "No: a right/wrong pair gives non-zero advantages.",
                ],
            ),
            "zh": (
                "G = 2、奖励为 0/1 时，GRPO（Bessel 校正）的优势只可能是？",
                ["±0.707 或 0", "±1 或 0", "任意实数", "总是 0"],
                [
                    "对：一对一错时是 ±1/√2，其余为 0：这是一个成对比较（2-GRPO 的论点）。",
                    "不对：那是不做 Bessel 校正（除以 G）的结果。",
                    "不对：只有两个值可以比较。",
                    "不对：一对一错时不为 0。",
                ],
            ),
        },
    ),
    (
        "05 §2",
        0,
        {
            "en": (
                "In PPO's terms, what does GRPO's group mean estimate?",
                ["V(s₀), the value of the prompt", "V(s_t) at every token", "the KL to the reference", "Q(s, a)"],
                [
                    "Right: the mean reward of G answers is a Monte-Carlo estimate of the prompt's value; inside PPO it would lose the per-token credit (follow-up 3).",
                    "No: that needs a critic; the group baseline exists only at t = 0.",
                    "No: the KL is a separate term.",
                    "No: it does not depend on the action.",
                ],
            ),
            "zh": (
                "用 PPO 的语言说，GRPO 的组内均值估计的是什么？",
                ["V(s₀)：这个 prompt 的价值", "每个 token 的 V(s_t)", "到参考策略的 KL", "Q(s, a)"],
                [
                    "对：G 个回答的平均奖励就是 prompt 价值的蒙特卡洛估计；因此放进 PPO 会失去逐 token 的信用分配（追问 3）。",
                    "不对：那需要 Critic；组内基线只在 t = 0 有值。",
                    "不对：KL 是另一个项。",
                    "不对：它不依赖于具体动作。",
                ],
            ),
        },
    ),
    (
        "04 §3",
        0,
        {
            "en": (
                "Gradient accumulation (micro-batches) in GRPO changes:",
                ["memory, not the gradient", "the gradient", "the number of samples", "the learning rate"],
                [
                    "Right: the micro-batches' losses are normalised by the whole batch and add up to the same gradient; measured in 04.",
                    "No: the measured gradient norm is the same up to float rounding.",
                    "No: sampling happens before the backward pass.",
                    "No: the learning rate is untouched.",
                ],
            ),
            "zh": (
                "在 GRPO 中使用梯度累积（micro-batch）会改变什么？",
                ["只改变内存，不改变梯度", "梯度", "采样数", "学习率"],
                [
                    "对：各个 micro-batch 的损失按整个 batch 归一化后相加，梯度与整 batch 相同；见 04 的实测。",
                    "不对：实测梯度范数相同（只差浮点误差）。",
                    "不对：采样在反向传播之前就完成了。",
                    "不对：学习率不变。",
                ],
            ),
        },
    ),
    (
        "05 §4",
        0,
        {
            "en": (
                "When is a learned critic worth its cost?",
                ["When each response is expensive to sample (seconds each)", "When rewards are 0/1", "When answers are short", "Never"],
                [
                    "Right: GRPO buys 'no critic' with samples; the dearer a sample, the worse the deal. In 05 the crossover sits at a few "
                    "milliseconds per response, but a critic-free baseline on PPO's batch shape was as cheap: on that toy the saving came "
                    "from 128 prompts per step, not from the critic. Long outputs, where per-token credit matters, are the critic's other case.",
                    "No: verifiable 0/1 rewards are GRPO's home ground.",
                    "No: the shorter the answer, the less per-token credit helps; on 3-token answers 05's critic, trained for 1,500 updates, "
                    "explains about a fifth of what an exact value does.",
                    "No: it is a trade-off, not a ranking: a PPO step with a critic was about 5x slower in 05, yet needed fewer responses.",
                ],
            ),
            "zh": (
                "什么时候一个学习出来的 Critic 值得它的成本？",
                ["每个回答的采样很贵（例如每个要几秒）时", "奖励是 0/1 时", "回答很短时", "永远不值得"],
                [
                    "对：GRPO 用更多样本换掉 Critic；样本越贵，这笔交易越不划算。05 中的交叉点在每个回答几毫秒处，但在 PPO 的 batch 形状上"
                    "不用 Critic 的滑动平均基线同样便宜：在这个玩具任务上省下的样本来自每步 128 个 prompt，而不是 Critic。输出很长、需要逐 token "
                    "信用分配时，是 Critic 的另一个用武之地。",
                    "不对：可验证的 0/1 奖励恰恰是 GRPO 的主场。",
                    "不对：回答越短，逐 token 信用越没用；在 3 个 token 的回答上，05 中训练了 1500 次更新的 Critic 只解释了准确价值的约五分之一。",
                    "不对：这是一种权衡，没有绝对的好坏：05 中带 Critic 的 PPO 每步慢约 5 倍，却需要更少的回答。",
                ],
            ),
        },
    ),
    (
        "02 §4",
        0,
        {
            "en": (
                "Dr. GRPO's argument against dividing by σ:",
                [
                    "It re-weights prompts by difficulty: nearly-all-right and nearly-all-wrong prompts are amplified",
                    "It biases the gradient to the opposite direction",
                    "It is slow",
                    "It needs a critic",
                ],
                [
                    "Right: each prompt's gradient is multiplied by 1/σ, which is largest when p is near 0 or 1; see the U-shaped curve in 02 §4.",
                    "No: the direction is re-weighted, not reversed.",
                    "No: its cost is negligible.",
                    "No: the z-score has nothing to do with a critic.",
                ],
            ),
            "zh": (
                "Dr. GRPO 反对除以 σ 的理由是？",
                ["它按难度重新加权 prompt：几乎全对或几乎全错的 prompt 被放大", "它让梯度有偏到相反方向", "它太慢", "它需要 Critic"],
                [
                    "对：一个 prompt 的梯度乘上了 1/σ，σ 在 p 接近 0 或 1 时最小；见 02 §4 的 U 形曲线。",
                    "不对：方向只是被重新加权，不是反向。",
                    "不对：计算量可以忽略。",
                    "不对：z-score 与 Critic 无关。",
                ],
            ),
        },
    ),
]


def quiz_questions(language: str = "en") -> list:
    """The drill's self-check questions, in English or Chinese (the same questions)."""
    return [question(*text[language][:2], answer, text[language][2], source) for source, answer, text in QUIZ]


def quiz(language: str = "en"):
    """The drill's quiz as a widget: choosing an answer shows at once whether it is right and why."""
    from .widgets import Quiz

    return Quiz(quiz_questions(language), language)
