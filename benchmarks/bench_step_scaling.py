"""The cost of one GRPO step against the batch size P x G: time (expected linear) and the memory a
step adds, with the whole batch in one backward pass and with gradient accumulation
(``micro_batch_size``), which should bound the memory whatever P x G is.

    python benchmarks/bench_step_scaling.py [--out benchmarks/step_scaling.png]

Every point is a fresh process (peak resident memory is per process): it loads the policy, then
trains 5 steps (no evaluation or probe in between); the time is the median of steps 2 to 4, the
memory is the growth of the peak resident set over the loaded model. One torch thread. Prints a
Markdown table and the machine's load average; writes the figure. Measurements, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import torch

SIZES = ((16, 4), (16, 8), (16, 16), (16, 32), (16, 64), (32, 64), (64, 64))  # (P, G): 64 to 4096 responses
MICRO_BATCH = 64


def child(prompts: int, group: int, micro_batch: int) -> None:
    """In a fresh process: seconds per step and MB added to the peak resident set by training."""
    from grpo_lab import TrainConfig, train
    from grpo_lab.checks.checkpoints import load_reference_policy
    from grpo_lab.task import Task, eval_accuracy

    torch.set_num_threads(1)
    eval_accuracy(load_reference_policy(), Task.parse("2d+"))  # torch, model, eval set loaded
    torch.optim.Adam(torch.nn.Linear(1, 1).parameters())  # the optimiser's one-time imports
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    history = train(
        TrainConfig(prompts_per_step=prompts, group_size=group, micro_batch_size=micro_batch, steps=5, eval_every=0, probe_every=0)
    ).history
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = [history[step]["wall_time"] - history[step - 1]["wall_time"] for step in (2, 3, 4)]
    print(json.dumps({"step_s": statistics.median(times), "added_mb": (after - before) / 1024}))


def measure(prompts: int, group: int, micro_batch: int) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--child", str(prompts), str(group), str(micro_batch)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "step_scaling.png")
    parser.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    from matplotlib.figure import Figure

    print(
        f"machine: {os.cpu_count()} cores, torch {torch.__version__}, 1 torch thread; "
        f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}"
    )
    rows = [(P, G, measure(P, G, 0), measure(P, G, MICRO_BATCH)) for P, G in SIZES]
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}\n")
    print(
        f"| P x G | step, whole batch | step, micro_batch_size={MICRO_BATCH} | memory added, whole batch | "
        f"memory added, micro_batch_size={MICRO_BATCH} |"
    )
    print("|---|---|---|---|---|")
    for P, G, whole, micro in rows:
        print(
            f"| {P} x {G} = {P * G} | {whole['step_s'] * 1000:.0f} ms | {micro['step_s'] * 1000:.0f} ms | "
            f"{whole['added_mb']:.0f} MB | {micro['added_mb']:.0f} MB |"
        )

    responses = [P * G for P, G, _, _ in rows]
    figure = Figure(figsize=(10, 3.8), layout="constrained")
    time_axis, memory_axis = figure.subplots(1, 2)
    for label, index, style in (("whole batch", 2, "o-"), (f"micro_batch_size={MICRO_BATCH}", 3, "s--")):
        time_axis.plot(responses, [row[index]["step_s"] * 1000 for row in rows], style, label=label)
        memory_axis.plot(responses, [row[index]["added_mb"] for row in rows], style, label=label)
    per_response = rows[-1][2]["step_s"] * 1000 / responses[-1]
    time_axis.plot(responses, [per_response * n for n in responses], ":", color="0.5", label="linear through the largest")
    time_axis.set(xscale="log", yscale="log", xlabel="responses per step (P x G)", ylabel="ms per step", title="Time of one step")
    memory_axis.set(xscale="log", xlabel="responses per step (P x G)", ylabel="MB added to peak resident memory", title="Memory a step adds")
    for axis in (time_axis, memory_axis):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.savefig(args.out, dpi=100)
    print(f"\nfigure: {args.out}")


if __name__ == "__main__":
    main()
