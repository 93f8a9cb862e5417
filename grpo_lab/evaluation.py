"""Greedy evaluation on a task's fixed held-out set: the ``eval_accuracy`` of every run."""

from __future__ import annotations

import torch

from .policy import TinyTransformer, sample
from .task import Task, decode, eval_batch


def greedy_correct(policy: TinyTransformer, task: Task, device: torch.device) -> torch.Tensor:
    """Whether the policy answers each of the task's held-out problems exactly, decoding greedily: [N] bool."""
    batch = eval_batch(task)
    answers, _ = sample(policy, batch.prompts.to(device), task.max_answer_length, temperature=0)
    return torch.tensor([decode(row) == answer for row, answer in zip(answers.cpu().tolist(), batch.answers)])


def greedy_accuracy(policy: TinyTransformer, task: Task, device: torch.device) -> float:
    """Fraction of the task's held-out problems the policy answers exactly, decoding greedily."""
    correct = greedy_correct(policy, task, device)
    return int(correct.sum()) / len(correct)
