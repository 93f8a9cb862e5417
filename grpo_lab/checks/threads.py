"""How many torch threads training uses, shared by the lab and the command line (one job: no widgets here,
so the CLI does not import the dashboard for it)."""

from __future__ import annotations

import os
from contextlib import contextmanager

import torch


def default_training_threads() -> int:
    """torch threads for the lab's training: one core fewer than the machine has (at most torch's
    default), leaving a core to draw the plot and serve the page. On two cores that is one thread:
    an OpenMP team of two that has to share its cores with the drawing thread spin-waits, and
    training then runs several times slower (benchmarks/README.md, "Lab")."""
    return max(1, min(torch.get_num_threads(), (os.cpu_count() or 2) - 1))


@contextmanager
def torch_threads(count: int):
    """Train with ``count`` torch threads, then restore the number this thread had."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
