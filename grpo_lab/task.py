"""Toy arithmetic: tasks, problems, held-out eval sets and reward functions (the vocabulary is the
model's, core/model.py).

A problem is ``a op b =`` with operands zero-padded to the task's digit count, so every prompt
of a task has the same length (``"07+35="``). The answer is the plain decimal result
(``"42"``, ``"-8"``) followed by an end-of-sequence token. Keeping prompts fixed-length lets the
policy sample a whole batch with one tensor and no padding logic.

A task is written ``"{digits}d{ops}"``: ``"2d+"`` is 2-digit addition (the default),
``"1d+-*"`` mixes the three operations on single digits.

A **worked** task, ``"{digits}d+w"`` (the practice regime's ``"3d+w"``, docs/practice-regime.md), asks
for the sum column by column, units first, then the result after a last ``=``: the prompt
``"=347+586="`` (its leading ``=`` asks for the steps) is answered ``"7+6=13" "4+8+1=13" "3+5+1=09"
"=933"`` (written without spaces; each further column adds the carry, each sum has two digits). Only
the final result is rewarded: the text after the response's last ``=`` (``final_result``).
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
from .core.model import TOKEN_ID, TinyTransformer, decode, encode
from .errors import ConfigError

REWARD_KINDS = ("exact", "partial")  # score_answers' reward functions
EVAL_SET_SIZE = 300
DATA_DIR = paths.DATA_DIR  # read at call time (tests point it elsewhere)

OPERATIONS = "+-*"
# 5-digit addition is the long-answer regime's task (6-7 answer tokens); a policy must also read the task (checks.checkpoints.context_problem)
MAX_DIGITS = 5
WORK_MARK = "="  # a prompt that starts with it asks for a worked answer (the vocabulary has no words)
POOL_SEED = 4321  # draws TrainConfig.prompt_pool's fixed pool: one pool for every run seed (docs/practice-regime.md)
MAX_PROMPT_POOL = 100_000


@dataclass(frozen=True)
class Task:
    """Which problems to pose: operands of ``digits`` digits, combined with one of ``ops``; ``worked``:
    answered with the column-by-column steps (addition only)."""

    digits: int = 2
    ops: str = "+"
    worked: bool = False

    def __post_init__(self) -> None:
        # checked here, not only in parse: 10**digits problems per operand, so a huge digits would hang num_problems
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 1 <= self.digits <= MAX_DIGITS:
            raise ConfigError("digits", self.digits, f"must be an integer from 1 to {MAX_DIGITS}", f"{self.digits!r:.60}")
        if not isinstance(self.ops, str) or not self.ops or not set(self.ops) <= set(OPERATIONS) or len(set(self.ops)) != len(self.ops):
            raise ConfigError("ops", self.ops, f"must be one or more of {OPERATIONS!r}, each once", f"{self.ops!r:.60}")
        if self.worked is not False and (self.worked is not True or self.ops != "+"):
            raise ConfigError("worked", self.worked, "worked answers are written for addition only: True with ops='+', else False")

    @classmethod
    def parse(cls, spec: str) -> Task:
        """``"2d+"`` -> Task(digits=2, ops="+"), ``"3d+w"`` -> Task(3, "+", worked=True); a bad spec
        raises one clear ConfigError (a ValueError)."""
        match = re.fullmatch(r"([1-9])d([+\-*]+)(w?)", spec)
        ops = "".join(op for op in OPERATIONS if op in match.group(2)) if match else ""
        if match is None or not 1 <= int(match.group(1)) <= MAX_DIGITS or (match.group(3) and ops != "+"):
            raise ConfigError(
                "task",
                spec,
                f"write '{{digits}}d{{ops}}' with digits 1 to {MAX_DIGITS} and ops from '+-*', e.g. '2d+' or '1d+-*', "
                "or '{digits}d+w' for worked addition (e.g. '3d+w')",
            )
        return cls(digits=int(match.group(1)), ops=ops, worked=bool(match.group(3)))

    @property
    def name(self) -> str:
        return f"{self.digits}d{self.ops}{'w' if self.worked else ''}"

    @property
    def prompt_length(self) -> int:
        return 2 * self.digits + 2 + self.worked

    @property
    def max_answer_length(self) -> int:
        """Longest answer in tokens, EOS included: a product has 2*digits digits, a sign at most 1; a
        worked sum has its steps ('a+b=ss', then 'a+b+c=ss' per further column), '=' and digits+1 digits."""
        if self.worked:
            return 6 + 8 * (self.digits - 1) + 1 + self.digits + 1 + 1
        longest = 2 * self.digits if "*" in self.ops else self.digits + 1
        return longest + 1 + 1

    def prompt(self, a: int, op: str, b: int) -> str:
        return f"{WORK_MARK if self.worked else ''}{a:0{self.digits}d}{op}{b:0{self.digits}d}="

    def target(self, a: int, op: str, b: int) -> str:
        """The answer a right policy writes, without EOS (what pretraining teaches): the result, or
        for a worked task its steps then '=' and the result."""
        return worked_sum(a, b, self.digits) if self.worked else solve(a, op, b)

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


def worked_sum(a: int, b: int, digits: int) -> str:
    """``a + b`` worked column by column, units first: ``worked_sum(347, 586, 3) ==
    '7+6=134+8+1=133+5+1=09=933'``. The units column is 'x+y=ss', each further one 'x+y+c=ss' with
    c the carry into it; every column sum has two digits, so every step has a fixed length."""
    steps, carry = [], 0
    for column in range(digits):
        x, y = a // 10**column % 10, b // 10**column % 10
        total = x + y + carry
        steps.append(f"{x}+{y}={total:02d}" if column == 0 else f"{x}+{y}+{carry}={total:02d}")
        carry = total // 10
    return "".join(steps) + "=" + solve(a, "+", b)


def final_result(response: str, worked: bool) -> str:
    """What a response answers, the only part rewarded: all of it, or for a worked answer the text
    after its last '=' (the steps are never checked)."""
    return response.rpartition("=")[2] if worked else response


def is_hard(a: int, op: str, b: int) -> bool:
    """The course's 'hard' problems: the units digits carry (+), borrow (-) or overflow (*) into the
    next digit. Used for per-prompt reward scales and for accuracy by difficulty (experiments.py)."""
    x, y = a % 10, b % 10
    return {"+": x + y >= 10, "-": x < y, "*": x * y >= 10}[op]


@dataclass
class ProblemBatch:
    """A batch of problems. prompts: [N, prompt_length] token ids; answers: N strings, each right
    result; hard: [N] bool, ``is_hard`` of each problem; targets: N strings, the whole answer a right
    policy writes (``Task.target``: the result, or the worked steps and the result); worked: whether
    only the final result of a response is checked (``final_result``)."""

    prompts: torch.Tensor
    answers: list[str]
    texts: list[str]
    hard: torch.Tensor
    targets: list[str]
    worked: bool

    def correct(self, responses: list[str]) -> torch.Tensor:
        """Whether each response (one per problem) gives the right result: [N] bool."""
        return torch.tensor([final_result(response, self.worked) == answer for response, answer in zip(responses, self.answers)])


def make_batch(task: Task, problems: list[tuple[int, str, int]]) -> ProblemBatch:
    texts = [task.prompt(a, op, b) for a, op, b in problems]
    prompts = torch.tensor([encode(text) for text in texts], dtype=torch.long)
    hard = torch.tensor([is_hard(*problem) for problem in problems], dtype=torch.bool)
    answers, targets = [solve(*problem) for problem in problems], [task.target(*problem) for problem in problems]
    return ProblemBatch(prompts, answers, texts, hard, targets, task.worked)


class ProblemSampler:
    """Draws training problems, seeded, never from the task's held-out eval set: fresh problems on
    every call, or with ``pool_size`` N > 0 (TrainConfig.prompt_pool) from one fixed pool of N
    distinct problems. The pool is drawn with POOL_SEED, so every run seed shares it (a fixed data
    set); ``seed`` shuffles it once per epoch, and each call takes the next problems of that order.

    For 1-digit tasks the whole problem space is the eval set (there are only 100 problems per
    operation), so training and evaluation share problems there.
    """

    def __init__(self, task: Task, seed: int, pool_size: int = 0):
        self.task = task
        self.generator = torch.Generator().manual_seed(seed)
        held_out = eval_problems(task)
        self.excluded = set(held_out) if len(held_out) < task.num_problems() else set()
        if not 0 <= pool_size <= largest_pool(task):
            raise ConfigError("prompt_pool", pool_size, f"must be from 0 to {largest_pool(task)} for {task.name} (its problems outside the eval set)")
        self.pool = self.draw(pool_size, torch.Generator().manual_seed(POOL_SEED), distinct=True)
        self.epoch_order: list[int] = []  # the pool's indices still to visit this epoch

    def draw(self, count: int, generator: torch.Generator, distinct: bool = False) -> list[tuple[int, str, int]]:
        """``count`` problems drawn uniformly from the task's space outside the eval set (``distinct``: no repeats)."""
        problems: list[tuple[int, str, int]] = []
        seen: set[tuple[int, str, int]] = set()
        while len(problems) < count:
            indices = torch.randint(0, self.task.num_problems(), (count,), generator=generator)
            for index in indices.tolist():
                problem = self.task.problem(index)
                if problem not in self.excluded and len(problems) < count and not (distinct and problem in seen):
                    problems.append(problem)
                    seen.add(problem)
        return problems

    def sample(self, count: int) -> ProblemBatch:
        if not self.pool:
            return make_batch(self.task, self.draw(count, self.generator))
        problems: list[tuple[int, str, int]] = []
        while len(problems) < count:
            if not self.epoch_order:
                self.epoch_order = torch.randperm(len(self.pool), generator=self.generator).tolist()
            taken, self.epoch_order = self.epoch_order[: count - len(problems)], self.epoch_order[count - len(problems) :]
            problems.extend(self.pool[index] for index in taken)
        return make_batch(self.task, problems)


def largest_pool(task: Task) -> int:
    """The largest TrainConfig.prompt_pool for ``task``: its problems outside the eval set (all of a
    1-digit task's, whose eval set is its whole space), at most MAX_PROMPT_POOL."""
    held_out = len(eval_problems(task))
    return min(MAX_PROMPT_POOL, task.num_problems() - (held_out if held_out < task.num_problems() else 0))


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
    answers exactly (a worked answer: its final result), decoding greedily."""
    return greedy_accuracy(policy, eval_batch(task), task.max_answer_length)


PROBLEM = re.compile(rf"{WORK_MARK}?(\d+)([+\-*])(\d+)=")


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
        (rewards [N], correct [N]), each prompt's right answer and difficulty read from its tokens. A
        worked prompt (it starts with WORK_MARK) has only its response's final result scored."""
        rows = prompts.tolist()
        problems = [problem_of_prompt(tuple(prompt)) for prompt in rows]
        responses = [final_result(decode(row), prompt[0] == TOKEN_ID[WORK_MARK]) for row, prompt in zip(answers.cpu().tolist(), rows)]
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
