"""A task: which problems to pose, written ``"{digits}d{ops}"`` (``"2d+"``, ``"1d+-*"``), and its sizes.

Bottom floor (it imports only the errors): the config's checks (config.py) parse a task with it,
and task.py builds the vocabulary, eval sets and rewards on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ConfigError

OPERATIONS = "+-*"
MAX_DIGITS = 5  # 5-digit addition is the long-answer regime's task (6-7 answer tokens); a policy must also read the task (policy.context_problem)


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
