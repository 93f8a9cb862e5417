"""Our GRPO step against TRL's GRPOTrainer step: same model size, same batch, same machine, same run.

    python benchmarks/bench_vs_trl.py                 # step time, ours vs TRL (a few minutes on 2 cores)
    python benchmarks/bench_vs_trl.py --full          # also a full run of each to our held-out accuracy
    python benchmarks/bench_vs_trl.py --threads 2 --json vs_trl.json

Needs the extra: pip install -e ".[trl]". Prints Markdown for benchmarks/README.md ("vs TRL").

Both sides start from the same policy (TRL's model is an exact GPT-2 copy of our reference,
grpo_lab.bridge.gpt2_from_tiny, ~103k parameters), train on the CPU with the same torch threads,
16 prompts x G=8 completions per step, completions of at most the task's longest answer
(5 tokens for 2d+: 3 digits, a sign slot, EOS), z-score advantages, one optimiser pass per batch.
A step is timed from the end of one step to the end of the next (generation, reward, advantages,
loss, backward, optimiser step, logging), after warm-up steps; the rounds alternate ours and TRL's
so that a change in the machine's load hits both. Measurements, not assertions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import machine  # noqa: E402

from grpo_lab import TrainConfig, train  # noqa: E402
from grpo_lab.checks.files import check_destination, finite_json, json_text, write_atomically  # noqa: E402


def stamp() -> tuple[float, float]:
    """(wall clock, this process's CPU time) in seconds. CPU time is what a step costs the process
    itself; on a machine shared with other jobs it moves much less than the wall clock."""
    return time.perf_counter(), time.process_time()


def step_durations(step_ends: list[tuple[float, float]], warmup: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each step after the first ``warmup`` (>= 1). step_ends[i]: stamp() when step i + 1 ended."""
    return [(later[0] - earlier[0], later[1] - earlier[1]) for earlier, later in zip(step_ends[warmup - 1 :], step_ends[warmup:])]


def our_step_times(steps: int, warmup: int) -> list[tuple[float, float]]:
    """Step times of our train(): probes and evaluation off (the last step's evaluation is left out)."""
    stamps: list[tuple[float, float]] = []
    train(TrainConfig(steps=warmup + steps + 1, probe_every=0, eval_every=0, device="cpu"), on_step=lambda record: stamps.append(stamp()))
    return step_durations(stamps[1:-1], warmup)  # stamps[0]: step 0 (the reference's evaluation); the last step evaluates


def trl_step_times(steps: int, warmup: int, output_dir: Path) -> list[tuple[float, float]]:
    """Step times of TRL's GRPOTrainer on the same config (trainer construction left out)."""
    from grpo_lab.bridge import make_trainer

    timer = StepTimer()
    make_trainer(TrainConfig(steps=warmup + steps, device="cpu"), output_dir, callbacks=[timer]).train()
    return step_durations(timer.step_ends, warmup)


class StepTimer(transformers.TrainerCallback):
    """Records stamp() when TRL's training begins and when each optimiser step ends."""

    def __init__(self):
        self.began = (0.0, 0.0)
        self.step_ends: list[tuple[float, float]] = []

    def on_train_begin(self, args, state, control, **kwargs):
        self.began = stamp()

    def on_step_end(self, args, state, control, **kwargs):
        self.step_ends.append(stamp())


def summary_ms(durations: list[float]) -> dict:
    """Median and quartiles of durations in seconds, as milliseconds."""
    quartiles = statistics.quantiles(durations, n=4)
    return {"median": statistics.median(durations) * 1000, "q1": quartiles[0] * 1000, "q3": quartiles[2] * 1000}


def full_runs(output_dir: Path, trl_steps: int) -> dict:
    """Our default run (150 steps), then TRL's on the same config for ``trl_steps`` steps, both
    evaluated greedily on the same held-out set every 10 steps (evaluation time included on both
    sides). Returns both accuracy curves and when each first reached our final accuracy."""
    from grpo_lab.bridge import HeldOutAccuracyCallback, make_trainer

    ours = train(TrainConfig(probe_every=0, device="cpu"))
    our_curve = [{"step": r["step"], "eval_accuracy": r["eval_accuracy"], "seconds": r["wall_time"]} for r in ours.history if "eval_accuracy" in r]
    target = our_curve[-1]["eval_accuracy"]

    timer, accuracy = StepTimer(), HeldOutAccuracyCallback("2d+", every=10)
    make_trainer(TrainConfig(steps=trl_steps, probe_every=0, device="cpu"), output_dir, callbacks=[timer, accuracy]).train()
    # the timer runs before the evaluation callback: an evaluation ends its step's time plus its own duration
    trl_curve = [
        {
            "step": r["step"],
            "eval_accuracy": r["eval_accuracy"],
            "seconds": (timer.step_ends[r["step"] - 1] if r["step"] else timer.began)[0] - timer.began[0] + r["seconds"],
        }
        for r in accuracy.records
    ]

    def first_reach(curve: list[dict]) -> dict | None:
        return next((point for point in curve if point["eval_accuracy"] >= target), None)

    return {"target": target, "ours": our_curve, "trl": trl_curve, "ours_reached": first_reach(our_curve), "trl_reached": first_reach(trl_curve)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per round and side (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps at the start of each round, at least 1 (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds, ours then TRL's (default 3)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads for both sides (default: torch's choice)")
    parser.add_argument("--full", action="store_true", help="also run both to our held-out accuracy")
    parser.add_argument("--trl-steps", type=int, default=150, help="length of TRL's full run (default 150, as ours)")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    if args.warmup < 1 or args.steps < 2 or args.rounds < 1:
        parser.error("--warmup must be >= 1, --steps >= 2 and --rounds >= 1")
    if args.json:
        try:
            check_destination(args.json, "--json")  # before minutes of benchmarking, not after
        except ValueError as error:
            parser.error(str(error))
    if args.threads:
        torch.set_num_threads(args.threads)
    import tempfile

    import trl

    output_dir = Path(tempfile.mkdtemp(prefix="bench-vs-trl-"))
    load_before = os.getloadavg()[0]
    ours, theirs = [], []
    for round_index in range(args.rounds):
        ours += our_step_times(args.steps, args.warmup)
        theirs += trl_step_times(args.steps, args.warmup, output_dir / f"round{round_index}")
        print(
            f"round {round_index + 1}/{args.rounds}: median wall ms so far: ours {summary_ms([w for w, _ in ours])['median']:.1f}, "
            f"TRL {summary_ms([w for w, _ in theirs])['median']:.1f}",
            file=sys.stderr,
            flush=True,
        )
    threads_variable = f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} " if "OMP_NUM_THREADS" in os.environ else ""
    command = f"{threads_variable}python benchmarks/bench_vs_trl.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results = {
        "machine": machine(),
        "trl": trl.__version__,
        "transformers": transformers.__version__,
        "command": command.strip(),
        "steps_timed_per_side": len(ours),
        "load_average_1min": [load_before, os.getloadavg()[0]],
    }
    for clock, index in (("wall", 0), ("cpu", 1)):
        results[clock] = {"ours": summary_ms([t[index] for t in ours]), "trl": summary_ms([t[index] for t in theirs])}
        results[clock]["ratio"] = results[clock]["trl"]["median"] / results[clock]["ours"]["median"]
    if args.full:
        results["full"] = full_runs(output_dir / "full", args.trl_steps)
    print(markdown(results))
    if args.json:
        write_atomically(args.json, json_text(finite_json(results)[0], indent=1))
    return results


def markdown(results: dict) -> str:
    def cell(entry: dict) -> str:
        return f"{entry['median']:.1f} ms ({entry['q1']:.1f} to {entry['q3']:.1f})"

    wall, cpu = results["wall"], results["cpu"]
    lines = [
        f"Machine: {results['machine']}; TRL {results['trl']}, transformers {results['transformers']}.",
        f"Command: `{results['command']}`",
        f"Load average (1 min) before and after the timed rounds: {results['load_average_1min'][0]:.1f}, {results['load_average_1min'][1]:.1f}.",
        "",
        f"| one GRPO step, 16 prompts x G=8, ~103k-parameter model, CPU ({results['steps_timed_per_side']} timed steps each) "
        "| wall clock, median (quartiles) | process CPU time, median (quartiles) |",
        "|---|---|---|",
        f"| grpo_lab `train` | {cell(wall['ours'])} | {cell(cpu['ours'])} |",
        f"| TRL `GRPOTrainer` | {cell(wall['trl'])} | {cell(cpu['trl'])} |",
        f"| **ratio TRL / ours** | **{wall['ratio']:.2f}x** | **{cpu['ratio']:.2f}x** |",
    ]
    full = results.get("full")
    if full:
        lines += [
            "",
            f"Full runs to our final held-out accuracy ({full['target']:.3f}), greedy evaluation every 10 steps included on both sides:",
            "",
            "| | first eval at or above the target | wall time to it | final held-out accuracy |",
            "|---|---|---|---|",
        ]
        for name, key in (("grpo_lab", "ours"), ("TRL", "trl")):
            reached, curve = full[f"{key}_reached"], full[key]
            where = f"step {reached['step']}" if reached else f"not reached in {curve[-1]['step']} steps"
            seconds = f"{reached['seconds']:.1f} s" if reached else f"({curve[-1]['seconds']:.1f} s for the whole run)"
            lines.append(f"| {name} | {where} | {seconds} | {curve[-1]['eval_accuracy']:.3f} at step {curve[-1]['step']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
