"""Core speed and memory: time per GRPO step, a default run end to end, peak memory vs micro-batch.

    python benchmarks/bench_core.py            # prints a Markdown table; paste it into README.md

Measurements, not assertions: the numbers depend on the machine (printed with them).
Each memory point runs in a fresh process so one configuration's peak cannot hide another's.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time

import torch

from grpo_lab import TrainConfig, train


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores, {cpu}, torch {torch.__version__}, {torch.get_num_threads()} threads"


def time_per_step(steps: int = 40) -> float:
    """Median seconds per step at G=8 x 16 prompts, probes and evaluation off, after warm-up."""
    stamps = []
    train(TrainConfig(steps=3, probe_every=0, eval_every=0))  # warm-up: imports, allocator, kernels
    train(TrainConfig(steps=steps, probe_every=0, eval_every=0), on_step=lambda r: stamps.append(time.perf_counter()))
    gaps = sorted(b - a for a, b in zip(stamps[1:], stamps[2:]))
    return gaps[len(gaps) // 2]


def default_run() -> tuple[float, float, float]:
    """(seconds, accuracy before, accuracy after) of the default 150-step run, after warm-up."""
    started = time.perf_counter()
    result = train(TrainConfig())
    return time.perf_counter() - started, result.final["initial_eval_accuracy"], result.final["eval_accuracy"]


def peak_memory_child(group_size: int, micro_batch_size: int) -> None:
    """Run in a subprocess: peak resident memory of one training step, and what it adds, in MB."""
    from grpo_lab.checks.checkpoints import load_reference_policy
    from grpo_lab.task import Task, eval_accuracy

    eval_accuracy(load_reference_policy(), Task.parse("2d+"))  # torch, model, eval loaded
    torch.optim.Adam(torch.nn.Linear(1, 1).parameters())  # the optimiser's one-time imports
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    train(TrainConfig(group_size=group_size, micro_batch_size=micro_batch_size, steps=1, probe_every=0, eval_every=0))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"extra_mb": (after - before) / 1024, "peak_mb": after / 1024}))


def peak_memory(group_size: int, micro_batch_size: int) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--memory", str(group_size), str(micro_batch_size)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    print(f"Machine: {machine()}\n")
    step = time_per_step()
    seconds, before, after = default_run()
    print("| measurement | value |\n|---|---|")
    print(f"| one GRPO step, G=8 x 16 prompts (median, no probe/eval) | {step * 1000:.1f} ms |")
    print(f"| default run, 150 steps with eval every 10 and probes every 10 | {seconds:.1f} s (accuracy {before:.3f} -> {after:.3f}) |")
    print("\n| G=64 x 16 prompts (1024 responses), micro_batch_size | peak RSS (MB) | added by a training step (MB) |\n|---|---|---|")
    for micro in (0, 256, 64, 16):
        memory = peak_memory(64, micro)
        print(f"| {micro or 'whole batch'} | {memory['peak_mb']:.0f} | {memory['extra_mb']:.0f} |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--memory":
        peak_memory_child(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
