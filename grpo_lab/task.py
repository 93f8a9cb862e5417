"""Toy arithmetic: tasks, problems, held-out eval sets and reward functions (the vocabulary is the
model's, core/model.py).

A problem is ``a op b =`` with operands zero-padded to the task's digit count, so every prompt
of a task has the same length (``"07+35="``). The answer is the plain decimal result
(``"42"``, ``"-8"``) followed by an end-of-sequence token. Keeping prompts fixed-length lets the
policy sample a whole batch with one tensor and no padding logic.

A task is written ``"{digits}d{ops}"``: ``"2d+"`` is 2-digit addition (the default),
``"1d+-*"`` mixes the three operations on single digits.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from .checks import paths
from .checks.files import checksum_problem, read_strict_json, record_checksum, write_atomically
from .core.config import TrainConfig
from .core.loop import greedy_accuracy
from .core.model import TinyTransformer, decode, encode
from .errors import ConfigError

REWARD_KINDS = ("exact", "partial")  # score_answers' reward functions
EVAL_SET_SIZE = 300
DATA_DIR = paths.DATA_DIR  # read at call time (tests point it elsewhere)

OPERATIONS = "+-*"
# 5-digit addition is the long-answer regime's task (6-7 answer tokens); a policy must also read the task (checks.checkpoints.context_problem)
MAX_DIGITS = 5


@dataclass(frozen=True)
class Task:
    """Which problems to pose: operands of ``digits`` digits, combined with one of ``ops``."""

    digits: int = 2
    ops: str = "+"

    def __post_init__(self) -> None:
        # checked here, not only in parse: 10**digits problems per operand, so a huge digits would hang num_problems
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 1 <= self.digits <= MAX_DIGITS:
            raise ConfigError("digits", self.digits, f"must be an integer from 1 to {MAX_DIGITS}", f"{self.digits!r:.60}")
        if not isinstance(self.ops, str) or not self.ops or not set(self.ops) <= set(OPERATIONS) or len(set(self.ops)) != len(self.ops):
            raise ConfigError("ops", self.ops, f"must be one or more of {OPERATIONS!r}, each once", f"{self.ops!r:.60}")

    @classmethod
    def parse(cls, spec: str) -> Task:
        """``"2d+"`` -> Task(digits=2, ops="+"); a bad spec raises one clear ConfigError (a ValueError)."""
        match = re.fullmatch(r"([1-9])d([+\-*]+)", spec)
        if match is None or not 1 <= int(match.group(1)) <= MAX_DIGITS:
            raise ConfigError("task", spec, f"write '{{digits}}d{{ops}}' with digits 1 to {MAX_DIGITS} and ops from '+-*', e.g. '2d+' or '1d+-*'")
        ops = "".join(op for op in OPERATIONS if op in match.group(2))
        return cls(digits=int(match.group(1)), ops=ops)

    @property
    def name(self) -> str:
        return f"{self.digits}d{self.ops}"

    @property
    def prompt_length(self) -> int:
        return 2 * self.digits + 2

    @property
    def max_answer_length(self) -> int:
        """Longest answer in tokens, EOS included: a product has 2*digits digits, a sign at most 1."""
        longest = 2 * self.digits if "*" in self.ops else self.digits + 1
        return longest + 1 + 1

    def prompt(self, a: int, op: str, b: int) -> str:
        return f"{a:0{self.digits}d}{op}{b:0{self.digits}d}="

    def num_problems(self) -> int:
        return (10**self.digits) ** 2 * len(self.ops)

    def problem(self, index: int) -> tuple[int, str, int]:
        """The index-th problem of the task's problem space, 0 <= index < num_problems()."""
        high = 10**self.digits
        a, rest = divmod(index, high * len(self.ops))
        b, op_index = divmod(rest, len(self.ops))
        return a, self.ops[op_index], b


def solve(a: int, op: str, b: int) -> str:
    """The answer as a digit string: ``solve(7, '-', 9) == '-2'``."""
    return str({"+": a + b, "-": a - b, "*": a * b}[op])


def is_hard(a: int, op: str, b: int) -> bool:
    """The course's 'hard' problems: the units digits carry (+), borrow (-) or overflow (*) into the
    next digit. Used for per-prompt reward scales and for accuracy by difficulty (experiments.py)."""
    x, y = a % 10, b % 10
    return {"+": x + y >= 10, "-": x < y, "*": x * y >= 10}[op]


@dataclass
class ProblemBatch:
    """A batch of problems. prompts: [N, prompt_length] token ids; answers: N strings;
    hard: [N] bool, ``is_hard`` of each problem."""

    prompts: torch.Tensor
    answers: list[str]
    texts: list[str]
    hard: torch.Tensor


def make_batch(task: Task, problems: list[tuple[int, str, int]]) -> ProblemBatch:
    texts = [task.prompt(a, op, b) for a, op, b in problems]
    prompts = torch.tensor([encode(text) for text in texts], dtype=torch.long)
    hard = torch.tensor([is_hard(*problem) for problem in problems], dtype=torch.bool)
    return ProblemBatch(prompts, [solve(a, op, b) for a, op, b in problems], texts, hard)


class ProblemSampler:
    """Draws training problems, seeded, never from the task's held-out eval set.

    For 1-digit tasks the whole problem space is the eval set (there are only 100 problems per
    operation), so training and evaluation share problems there.
    """

    def __init__(self, task: Task, seed: int):
        self.task = task
        self.generator = torch.Generator().manual_seed(seed)
        held_out = eval_problems(task)
        self.excluded = set(held_out) if len(held_out) < task.num_problems() else set()

    def sample(self, count: int) -> ProblemBatch:
        problems: list[tuple[int, str, int]] = []
        while len(problems) < count:
            indices = torch.randint(0, self.task.num_problems(), (count,), generator=self.generator)
            for index in indices.tolist():
                problem = self.task.problem(index)
                if problem not in self.excluded and len(problems) < count:
                    problems.append(problem)
        return make_batch(self.task, problems)


def eval_path(task: Task) -> Path:
    return DATA_DIR / "eval" / f"{task.name}.json"


RESTORE_EVAL_CHECKSUMS = "restore it (git checkout checksums.json) or regenerate the eval sets with: python -m grpo_lab pretrain"


def eval_checksums_path(eval_set: Path) -> Path:
    """The checksums.json beside an eval set: the SHA-256 of each set ``pretrain`` wrote there."""
    return eval_set.parent / "checksums.json"


PERMUTED_PROBLEM_SPACE = 10**7  # eval sets of problem spaces up to this size come from one seeded permutation


def generate_eval_problems(task: Task, seed: int = 1234) -> list[tuple[int, str, int]]:
    """The held-out set: EVAL_SET_SIZE distinct problems (all of them for 1-digit tasks)."""
    generator = torch.Generator().manual_seed(seed)
    total = task.num_problems()
    size = min(EVAL_SET_SIZE, total)
    if total <= PERMUTED_PROBLEM_SPACE:  # the 1-3 digit sets, as they shipped
        indices = torch.randperm(total, generator=generator)[:size].sort().values.tolist()
    else:  # 4-5 digits: a permutation of 10^8+ indices would take gigabytes; draw distinct indices instead
        chosen: set[int] = set()
        while len(chosen) < size:
            chosen.update(torch.randint(0, total, (size,), generator=generator).tolist()[: size - len(chosen)])
        indices = sorted(chosen)
    return [task.problem(index) for index in indices]


def write_eval_set(task: Task) -> Path:
    """Write the task's eval set and record its SHA-256 in the checksums.json beside it."""
    problems = generate_eval_problems(task)
    path = write_atomically(eval_path(task), json.dumps({"task": task.name, "problems": [list(p) for p in problems]}) + "\n")
    record_checksum(eval_checksums_path(path), path, RESTORE_EVAL_CHECKSUMS)
    return path


_EVAL_CACHE: dict[str, list[tuple[int, str, int]]] = {}


def read_eval_set(task: Task, path: Path) -> list[tuple[int, str, int]]:
    """The problems in the eval set file ``path``; one ValueError naming the file and what is wrong
    (not JSON, NaN, nested too deeply, another task, a problem that is not one of ``task``'s, fewer
    or more problems than ``generate_eval_problems`` draws, bytes other than the SHA-256 in the
    checksums.json beside it says: a damaged set would measure every run on other problems)."""
    restore = f"restore it (git checkout {path.name}) or regenerate it with: python -m grpo_lab pretrain"
    try:
        data = read_strict_json(path)
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, NaN, nesting
        reason = "empty" if not path.stat().st_size else str(error).splitlines()[0][:100]
        raise ValueError(f"eval set {path} is not readable ({reason}): {restore}") from None
    problems = data.get("problems") if isinstance(data, dict) else None
    if not isinstance(problems, list) or not problems:
        raise ValueError(f"eval set {path} is not readable (malformed: no list of problems): {restore}")
    largest = 10**task.digits
    for problem in problems:
        valid = isinstance(problem, list) and len(problem) == 3 and problem[1] in tuple(task.ops)
        valid = valid and all(type(operand) is int and 0 <= operand < largest for operand in (problem[0], problem[2]))
        if not valid:
            raise ValueError(f"eval set {path} is not readable (malformed: {str(problem)[:60]} is not a {task.name} problem): {restore}")
    size = min(EVAL_SET_SIZE, task.num_problems())
    if len(problems) != size:
        raise ValueError(
            f"eval set {path} is damaged or truncated: it holds {len(problems)} problems, a {task.name} eval set holds {size}; {restore}"
        )
    damage = checksum_problem(eval_checksums_path(path), path, RESTORE_EVAL_CHECKSUMS)
    if damage is not None:
        raise ValueError(f"eval set {path} {damage}; {restore}")
    return [tuple(problem) for problem in problems]


def eval_problems(task: Task) -> list[tuple[int, str, int]]:
    """The task's fixed held-out problems: read from data/eval/ when shipped there, else generated
    with the same seed (so a task we did not ship still gets a stable eval set)."""
    if task.name not in _EVAL_CACHE:
        path = eval_path(task)
        _EVAL_CACHE[task.name] = read_eval_set(task, path) if path.exists() else generate_eval_problems(task)
    return _EVAL_CACHE[task.name]


def eval_batch(task: Task) -> ProblemBatch:
    return make_batch(task, eval_problems(task))


def eval_accuracy(policy: TinyTransformer, task: Task) -> float:
    """The run metric ``eval_accuracy``: the fraction of the task's fixed held-out problems the policy
    answers exactly, decoding greedily."""
    return greedy_accuracy(policy, eval_batch(task), task.max_answer_length)


PROBLEM = re.compile(r"(\d+)([+\-*])(\d+)=")


@functools.lru_cache(maxsize=65536)
def problem_of_prompt(prompt: tuple[int, ...]) -> tuple[str, bool]:
    """A prompt's token ids -> (the right answer, whether the problem is hard, ``is_hard``)."""
    a, op, b = PROBLEM.fullmatch(decode(prompt)).groups()
    return solve(int(a), op, int(b)), is_hard(int(a), op, int(b))


def score_answers(responses: list[str], answers: list[str], kind: str = "exact") -> torch.Tensor:
    """Task reward for each response, in [0, 1]. Returns [N] float.

    ``exact``: 1 if the response is the answer, else 0.
    ``partial``: the fraction of the answer's characters that the response has in the same place,
    counted from the right (units digit first), and divided by the longer of the two lengths, so
    a response that is too long is penalised. Rewards within a group can then differ by a
    fraction of a point, which is what makes the group std tiny but non-zero.
    """
    if kind not in REWARD_KINDS:
        raise ConfigError("reward", kind, f"choose one of {', '.join(REWARD_KINDS)}")
    scores = []
    for response, answer in zip(responses, answers):
        if kind == "exact":
            scores.append(float(response == answer))
        else:
            longest = max(len(response), len(answer))
            same = sum(r == a for r, a in zip(reversed(response), reversed(answer)))
            scores.append(same / longest if longest else 0.0)
    return torch.tensor(scores, dtype=torch.float32)


class RewardModel:
    """A simulated, imperfect reward model: task reward, then ``scale * r + offset + noise``, and
    the rewards of hard problems (``is_hard``) multiplied by ``hard_scale`` last.

    This is how the course tests the card's claims about reward-model offsets and scales without
    a real reward model. ``noise`` is Gaussian with the given standard deviation, drawn from the
    model's own seeded generator so a run stays reproducible. ``hard_scale`` (TrainConfig's
    ``hard_reward_scale``) gives prompts different reward scales: the training loop, the
    experiments' probes and the TRL bridge all score through this one path.
    """

    def __init__(self, kind: str = "exact", offset: float = 0.0, scale: float = 1.0, noise: float = 0.0, seed: int = 0, hard_scale: float = 1.0):
        if kind not in REWARD_KINDS:
            raise ConfigError("reward", kind, f"choose one of {', '.join(REWARD_KINDS)}")
        self.kind, self.offset, self.scale, self.noise, self.hard_scale = kind, offset, scale, noise, hard_scale
        self.generator = torch.Generator().manual_seed(seed + 7919)

    @classmethod
    def for_config(cls, config: TrainConfig, seed: int) -> RewardModel:
        """The reward model a TrainConfig describes (reward, reward_offset, reward_scale, reward_noise,
        hard_reward_scale), its noise seeded by ``seed``."""
        return cls(config.reward, config.reward_offset, config.reward_scale, config.reward_noise, seed, config.hard_reward_scale)

    def score(self, prompts: torch.Tensor, answers: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The training loop's view of the reward model: prompts [N, Lp] and answer tokens [N, La] ->
        (rewards [N], correct [N]), each prompt's right answer and difficulty read from its tokens."""
        problems = [problem_of_prompt(tuple(prompt)) for prompt in prompts.tolist()]
        responses = [decode(row) for row in answers.cpu().tolist()]
        return self(responses, [answer for answer, _ in problems], torch.tensor([hard for _, hard in problems], dtype=torch.bool))

    def __call__(self, responses: list[str], answers: list[str], hard: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns (rewards [N] as the learner sees them, correct [N] exact-match 0/1). ``hard`` [N]
        bool marks the responses to hard problems; it is needed when ``hard_scale`` is not 1."""
        correct = score_answers(responses, answers, "exact")
        task_reward = correct if self.kind == "exact" else score_answers(responses, answers, self.kind)
        rewards = self.scale * task_reward + self.offset
        if self.noise > 0:
            rewards = rewards + self.noise * torch.randn(rewards.shape, generator=self.generator)
        if self.hard_scale != 1.0:
            if hard is None:
                raise ValueError(
                    f"hard_reward_scale={self.hard_scale!r} needs to know which problems are hard: "
                    "pass hard= (a [N] bool tensor, ProblemBatch.hard per response)"
                )
            rewards = torch.where(torch.as_tensor(hard, dtype=torch.bool), rewards * self.hard_scale, rewards)
        return rewards, correct
