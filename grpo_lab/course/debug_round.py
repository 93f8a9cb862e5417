"""The interview drill's debugging round: a GRPO step with four planted bugs of the kinds interviewers
ask about. ``print_buggy_step()`` shows its code with line numbers and the kinds of bug to look for;
the learner names each bug by line and kind, and ``check_debug_round({line: kind}, language)``
confirms each one found, says what it would do to a real run, and counts the ones still missing.

The step is real code: it runs and returns a finite loss. ``step_with_bugs(kinds)`` is the same
step with only those bugs planted (the others fixed); with none it computes grpo_lab.core's loss
(tests/test_debug_round.py checks that, and what each bug alone changes).
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch

from ..errors import ConfigError


def buggy_grpo_step(policy, reference, prompts, answers, mask, rewards, old_logprobs, clip_eps=0.2, kl_coef=0.04, std_eps=1e-4):
    """The loss of one GRPO update on P prompts x G answers (B = P*G rows, each group's rows together).
    prompts [B, Lp]; answers, mask (1 on answer tokens up to EOS, 0 on padding), old_logprobs (the
    sampler's) [B, La]; rewards [P, G]. Returns (loss, {"clip_fraction", "kl", "adv_abs_max"})."""
    prompt_len = prompts.shape[1]
    sequence = torch.cat([prompts, answers], dim=1)

    def answer_logprobs(model):  # log pi(answer token t | prompt, answer tokens before t), [B, La]
        logits = model(sequence)[:, prompt_len:]
        return torch.log_softmax(logits, dim=-1).gather(-1, answers.unsqueeze(-1)).squeeze(-1)

    logprobs = answer_logprobs(policy)
    with torch.no_grad():
        ref_logprobs = answer_logprobs(reference)

    # advantages: each answer's reward as a z-score within its group, shared by all its tokens
    mean = rewards.mean(dim=1, keepdim=True)
    std = rewards.std(dim=0, keepdim=True)
    advantages = ((rewards - mean) / (std + std_eps)).reshape(-1, 1)  # [B, 1]

    # per token: the clipped-ratio policy loss plus kl_coef x k3, an estimate of KL(pi || pi_ref)
    ratio = torch.exp(logprobs.detach() - old_logprobs)
    unclipped = ratio * advantages
    clipped = ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages
    log_ref_ratio = ref_logprobs - logprobs
    kl = torch.exp(log_ref_ratio) - log_ref_ratio - 1
    per_token = -torch.minimum(unclipped, clipped) + kl_coef * kl

    # the token mean over the batch's answer tokens (verl's token-mean; DAPO's is over each prompt's group), and what a trainer logs
    tokens = mask.sum()
    loss = per_token.mean()
    clip_fraction = ((clipped < unclipped).float() * mask).sum() / tokens
    return loss, {"clip_fraction": clip_fraction.detach(), "kl": (kl * mask).sum().detach() / tokens, "adv_abs_max": advantages.abs().max()}


@dataclass(frozen=True)
class Bug:
    """A planted bug: the line as planted, the line as it should be, and what it does to a real run."""

    planted: str
    fixed: str
    symptom: dict[str, str]  # by language


BUGS: dict[str, Bug] = {
    "shift": Bug(
        "logits = model(sequence)[:, prompt_len:]",
        "logits = model(sequence[:, :-1])[:, prompt_len - 1 :]",
        {
            "en": "each answer token is scored by the logits at its own position, which have already seen it: the policy is trained on the "
            "wrong conditionals (for a positive advantage, to repeat the token it was just given) and the first answer token is never trained. In a real run the "
            "log-prob gap to the inference engine (|log π_trainer − log π_engine|) is large from step 1; where the trainer recomputes "
            "π_old with the same code (TRL, verl) the ratio is still 1 on the first minibatch, so the clip fraction does not show it; and "
            "the reward stays flat while the loss moves.",
            "zh": "每个答案 token 用的是它自己位置上的 logits，而那个位置已经看到了这个 token：策略学的是错误的条件概率（优势为正时，学会重复刚输入的 "
            "token），第一个答案 token 从来没有被训练。真实训练中，从第 1 步起和推理引擎的 log-prob 差距"
            "（|log π_trainer − log π_engine|）就很大；训练端用同一份代码重算 π_old 时（TRL、verl），第一个 minibatch 上 ratio 仍然是 1，"
            "clip fraction 看不出问题；loss 在变而 reward 不动。",
        },
    ),
    "std_axis": Bug(
        "std = rewards.std(dim=0, keepdim=True)",
        "std = rewards.std(dim=1, keepdim=True)",
        {
            "en": "the std runs across prompts (one per answer slot) instead of within each group: each answer is scaled by the spread of the "
            "other prompts' rewards in the same slot, which means nothing (slots are arbitrary), so prompts get noise for weights. A slot whose "
            "rewards happen to be equal across prompts has std 0 and its advantages jump to about 1/std_eps; with one prompt per batch the std "
            "is NaN. In a real run adv_abs_max and the grad norm spike (or the run stops on NaN), and results change with the batch's make-up.",
            "zh": "std 沿 prompt 方向算（每个答案槽位一个），而不是在每组之内：每个回答被同一槽位上其他 prompt 的奖励离散程度缩放，这没有意义"
            "（槽位是任意的），prompt 的权重成了噪声。某个槽位上各 prompt 的奖励恰好相同时 std 为 0，优势跳到约 1/std_eps；每批只有一个 "
            "prompt 时 std 是 NaN。真实训练中 adv_abs_max 和梯度范数出现尖峰（或者因 NaN 中止），结果随批次的组成而变。",
        },
    ),
    "detach": Bug(
        "ratio = torch.exp(logprobs.detach() - old_logprobs)",
        "ratio = torch.exp(logprobs - old_logprobs)",
        {
            "en": "the ratio carries no gradient, so the policy-gradient term is a constant: only the KL term has a gradient, and it is exactly "
            "0 while the policy equals the reference. In a real run the grad norm is 0 from step 1 and the policy never moves: reward, "
            "entropy and KL flat, the ratio exactly 1, clip fraction 0, the loss flat.",
            "zh": "ratio 没有梯度，策略梯度项成了常数：只剩 KL 项有梯度，而策略等于参考模型时它恰好为 0。真实训练中从第 1 步起梯度范数就是 0，"
            "策略一动不动：reward、熵和 KL 都是平的，ratio 恒为 1，clip fraction 为 0，loss 不变。",
        },
    ),
    "mask": Bug(
        "loss = per_token.mean()",
        "loss = (per_token * mask).sum() / tokens",
        {
            "en": "the mean runs over every position, padding included: each answer's advantage is also pushed onto the pad tokens after its "
            "end (positions the sampler never produced), the KL counts padding, and every real token's weight shrinks as the batch's longest "
            "answer grows. In a real run the learning rate in effect changes with padding, short answers get extra pushes on pad positions they never "
            "produced, and the same "
            "answers padded differently give a different loss and gradient.",
            "zh": "均值把所有位置都算进去了，包括 padding：每个回答的优势也被加到它结束之后的 pad token 上（采样器从未生成过的位置），KL 也算上了 "
            "padding，批中最长的回答越长，每个真实 token 的权重越小。真实训练中有效学习率随 padding 变化，短回答在它从未生成的 pad 位置上多受推动，同样的回答换一种 "
            "padding 就得到不同的 loss 和梯度。",
        },
    ),
}

# what to look for: the four planted kinds and two that are not planted
KINDS: dict[str, dict[str, str]] = {
    "shift": {"en": "log-probs read at the wrong position (off by one)", "zh": "log-prob 错位了一个位置"},
    "mask": {"en": "a mean or mask that counts prompt or padding tokens", "zh": "均值或 mask 把 prompt 或 padding token 也算了进去"},
    "detach": {"en": "a tensor cut off from the graph where the gradient must flow", "zh": "该有梯度的地方被 detach，梯度断了"},
    "kl_direction": {"en": "the KL with the wrong sign or direction", "zh": "KL 的符号或方向反了"},
    "std_axis": {"en": "a group statistic over the wrong axis", "zh": "组内统计量沿错误的维度计算"},
    "clip": {"en": "the clipped objective the wrong way round (max for min, bounds swapped)", "zh": "clip 目标写反了（min 写成 max，或上下界颠倒）"},
}

WORDS = {
    "en": {
        "kinds": "Kinds of bug (not every kind is planted):",
        "found": "line {0} {1}: PASS, found. Symptom: {2}\n    fix: {3}",
        "wrong": "line {0} {1}: FAIL, no bug of that kind on that line",
        "all": "[debug-round] PASS: all {0} bugs found",
        "missing": "[debug-round] {0} of {1} bugs found; {2} still to find",
        "answers": "a dict {line number: kind}",
        "line": "a line number of the step, 1 to {0}",
        "kind": "one of {0}",
    },
    "zh": {
        "kinds": "bug 的类型（并非每种都埋了）：",
        "found": "第 {0} 行 {1}：PASS，找到了。症状：{2}\n    修正：{3}",
        "wrong": "第 {0} 行 {1}：FAIL，这一行没有这种 bug",
        "all": "[debug-round] PASS：{0} 个 bug 全部找到",
        "missing": "[debug-round] 找到 {0} 个，共 {1} 个；还差 {2} 个",
        "answers": "一个字典 {行号: 类型}",
        "line": "这个函数的行号，1 到 {0}",
        "kind": "以下之一：{0}",
    },
}

SOURCE = textwrap.dedent(inspect.getsource(buggy_grpo_step))
SOURCE_LINES = SOURCE.splitlines()


def bug_line(kind: str) -> int:
    """The line of the printed step (counting from 1) that holds the bug ``kind``."""
    (line,) = [number for number, text in enumerate(SOURCE_LINES, start=1) if BUGS[kind].planted in text]
    return line


def step_with_bugs(kinds: Iterable[str]) -> Callable:
    """``buggy_grpo_step`` with only the bugs ``kinds`` planted and the others fixed."""
    kinds = set(kinds)
    if not kinds <= set(BUGS):
        raise ConfigError("kinds", sorted(kinds), f"planted bugs among {', '.join(BUGS)}")
    source = SOURCE
    for kind in set(BUGS) - kinds:
        source = source.replace(BUGS[kind].planted, BUGS[kind].fixed)
    namespace = {"torch": torch}
    exec(compile(source, f"<GRPO step with bugs: {', '.join(sorted(kinds)) or 'none'}>", "exec"), namespace)
    return namespace["buggy_grpo_step"]


def check_language(language: str) -> dict[str, str]:
    if language not in WORDS:
        raise ConfigError("language", language, "en or zh")
    return WORDS[language]


def print_buggy_step(language: str = "en") -> None:
    """Print the step with its line numbers, then the kinds of bug to look for."""
    words = check_language(language)
    for number, text in enumerate(SOURCE_LINES, start=1):
        print(f"{number:3d}  {text}")
    print(f"\n{words['kinds']}")
    for kind, meaning in KINDS.items():
        print(f"  {kind:13s} {meaning[language]}")


def check_debug_round(answers: dict[int, str], language: str = "en") -> None:
    """Print a verdict for each {line: kind} named: PASS with the symptom and the fix where that line
    holds that bug, else FAIL; then how many bugs are found and how many are still missing (not which)."""
    words = check_language(language)
    if not isinstance(answers, dict):
        raise ConfigError("answers", answers, words["answers"])
    for line, kind in answers.items():
        if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= len(SOURCE_LINES):
            raise ConfigError("line", line, words["line"].format(len(SOURCE_LINES)))
        if not isinstance(kind, str) or kind not in KINDS:
            raise ConfigError("kind", kind, words["kind"].format(", ".join(KINDS)))
    found = 0
    for line, kind in sorted(answers.items()):
        if kind in BUGS and bug_line(kind) == line:
            found += 1
            print(words["found"].format(line, kind, BUGS[kind].symptom[language], BUGS[kind].fixed))
        else:
            print(words["wrong"].format(line, kind))
    if found == len(BUGS):
        print(words["all"].format(len(BUGS)))
    else:
        print(words["missing"].format(found, len(BUGS), len(BUGS) - found))
