"""What ``torch.compile`` would buy one GRPO step, and what its compile costs (issue 13's last lever).

    python benchmarks/bench_compile.py [--steps 40]

In a fresh process per variant (compiled code and its caches are per process): the default step
(16 prompts x G=8, no evaluation or probe, one torch thread) eager, then with the policy's forward
compiled (``torch.compile(policy.forward, dynamic=True)``, inductor's C++ code for the CPU). For the
compiled variant: the seconds of its first step (tracing and compiling), the seconds until steps
stop recompiling (answer lengths and batch shapes vary from step to step), and then the median
step; run twice, the second time with inductor's on-disk cache filled by the first. Also whether
the compiled run draws the same rewards as the eager one (fused kernels round differently, so a
long run drifts apart). Measurements, not assertions; nothing in grpo_lab compiles.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import machine  # noqa: E402

WARM_STEPS = 30  # steps run before the timed ones (the compiled variant recompiles during these)


def child(compiled: bool, steps: int) -> dict:
    from grpo_lab.core.config import TrainConfig
    from grpo_lab.core.loop import train_step
    from grpo_lab.trainer import start_run

    torch.set_num_threads(1)
    config = TrainConfig(eval_every=0, probe_every=0)
    state, problems = start_run(config)
    if compiled:
        state.policy.forward = torch.compile(state.policy.forward, dynamic=True)
    seconds, rewards = [], []
    for step in range(1, WARM_STEPS + steps + 1):
        started = time.perf_counter()
        record, _ = train_step(config, state, problems, step)
        seconds.append(time.perf_counter() - started)
        rewards.append(record["reward"])
    eager_like = statistics.median(seconds[WARM_STEPS:])
    return {
        "first_step_s": seconds[0],
        "warm_steps_s": sum(seconds[:WARM_STEPS]),
        "slow_steps": sum(1 for s in seconds[:WARM_STEPS] if s > 3 * eager_like),  # steps that (re)compiled
        "median_step_ms": 1e3 * eager_like,
        "rewards": rewards,
    }


def fresh(compiled: bool, steps: int) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--child", "compiled" if compiled else "eager", "--steps", str(steps)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="timed steps after the warm-up ones")
    parser.add_argument("--child", choices=("eager", "compiled"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child == "compiled", args.steps)))
        return
    print(f"machine: {machine()}; load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    eager = fresh(False, args.steps)
    cold = fresh(True, args.steps)  # inductor's cache may hold earlier compiles: 'cold' is this process's first
    warm = fresh(True, args.steps)
    eager_again = fresh(False, args.steps)
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}\n")
    eager_ms = statistics.median([eager["median_step_ms"], eager_again["median_step_ms"]])
    print(
        f"| one GRPO step, 16 x 8, one torch thread ({args.steps} timed steps after {WARM_STEPS}) | eager | compiled, 1st process | compiled, 2nd process |"
    )
    print("|---|---|---|---|")
    print(f"| median step | {eager_ms:.1f} ms | {cold['median_step_ms']:.1f} ms | {warm['median_step_ms']:.1f} ms |")
    print(f"| speed-up | 1.00x | {eager_ms / cold['median_step_ms']:.2f}x | {eager_ms / warm['median_step_ms']:.2f}x |")
    print(f"| first step (compiles) | {eager['first_step_s']:.2f} s | {cold['first_step_s']:.1f} s | {warm['first_step_s']:.1f} s |")
    print(
        f"| first {WARM_STEPS} steps (recompiles), steps over 3x the median | {eager['warm_steps_s']:.1f} s, {eager['slow_steps']} | "
        f"{cold['warm_steps_s']:.1f} s, {cold['slow_steps']} | {warm['warm_steps_s']:.1f} s, {warm['slow_steps']} |"
    )
    same = sum(a == b for a, b in zip(eager["rewards"], cold["rewards"]))
    print(f"\nsteps whose mean reward is the same in the eager and the compiled run: {same} of {len(eager['rewards'])}")


if __name__ == "__main__":
    main()
