"""What each speed lever buys the lab's default run (G=8, 16 prompts, 150 steps), as ratios measured
in one process, variants alternating so that a change in the machine's load hits all of them. Each
variant builds a lab, trains the default run once (unmeasured), then changes the first seed and
times that run: a control change to its first plot, to its first plot with a training step, and to
its end:

- before: the lab as it was (evaluation and gradient probe every 10 steps, a frame every 0.25 s from
  the first, 0.15 s debounce);
- fewer measurements: evaluation and probe every 25 steps (the last step is always evaluated);
- fewer measurements + drawing: also the run's first frame drawn before it trains, the next ones as
  soon as there is news, then one every 0.4 s, 0.05 s debounce (the lab's defaults now);
- no lab: the same training as the lab's default with no dashboard at all (`train` called directly,
  one torch thread), the floor the lab can approach;
- attention (``--attention``): torch's fused ``scaled_dot_product_attention`` (what core/model.py uses)
  against the same attention written out (softmax(q k^T / sqrt(d) + mask) v), 30-step runs.

    python benchmarks/bench_lab_speed.py [--repeats 2] [--attention]
    python benchmarks/bench_lab_speed.py --against DIR    # the lab of an earlier copy (DIR) against this one

Measurements, not assertions; the machine, its load average and the command are printed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lab import PlotWatch, load_average, machine  # noqa: E402

import grpo_lab.core.model as policy_module  # noqa: E402
import grpo_lab.lab.view as view_module  # noqa: E402
from grpo_lab import GRPOLab, TrainConfig, train  # noqa: E402
from grpo_lab.checks.threads import default_training_threads  # noqa: E402
from grpo_lab.lab import lab_measure_every  # noqa: E402

VARIANTS = {  # name -> (GRPOLab keyword arguments, eager first frames)
    "before": ({"eval_every": 10, "probe_every": 10, "refresh_interval": 0.25, "debounce": 0.15}, False),
    "fewer measurements": ({"eval_every": 25, "probe_every": 25, "refresh_interval": 0.25, "debounce": 0.15}, False),
    "fewer measurements + drawing (now)": ({}, True),
}


def lab_run(options: dict, eager: bool) -> dict:
    """A fresh lab trains the default run once (unmeasured: the picture a class sees after the
    notebook's autorun); then a change of the first seed starts the measured run: seconds to its
    first plot, its first plot with a step, and the end."""
    if eager:  # the lab as it is (also an earlier copy's, with --against)
        return measured_run(options)
    # the ticker as it was: every frame, the first too, drawn by the ticker after a full interval
    first_frames, first_poll, before = view_module.FIRST_FRAMES, view_module.FIRST_FRAME_POLL, view_module.FIRST_FRAME_BEFORE_TRAINING
    view_module.FIRST_FRAMES, view_module.FIRST_FRAME_POLL = 0, options["refresh_interval"]
    view_module.FIRST_FRAME_BEFORE_TRAINING = False
    try:
        return measured_run(options)
    finally:
        view_module.FIRST_FRAMES, view_module.FIRST_FRAME_POLL = first_frames, first_poll
        view_module.FIRST_FRAME_BEFORE_TRAINING = before


def measured_run(options: dict) -> dict:
    lab = GRPOLab(**options)
    lab.run_button.click()
    lab.wait()
    watch = PlotWatch(lab)
    watch.arm()
    lab.controls["seed"].value = 1
    lab.wait()
    ended = time.perf_counter() - watch.started
    run = lab.runs[-1]
    result = {
        "first_plot": watch.first(run.number, 0),
        "first_step_plot": watch.first(run.number, 1),
        "end": ended,
        "frames": len(watch.events),
        "accuracy": run.history[-1]["eval_accuracy"],
    }
    lab.close()
    return result


def bare_run() -> dict:
    """The lab's default training with no dashboard (one torch thread, as the lab trains on 2 cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(default_training_threads())
    try:
        started = time.perf_counter()
        every = lab_measure_every(TrainConfig.steps)
        result = train(TrainConfig(seed=1, eval_every=every, probe_every=every))  # seed 1: the lab rows' measured run
        return {"end": time.perf_counter() - started, "accuracy": result.final["eval_accuracy"]}
    finally:
        torch.set_num_threads(threads)


def written_out_attention(q, k, v, attn_mask=None, is_causal=False):
    """scaled_dot_product_attention without the fused kernel: q, k, v [B, H, T, d] -> [B, H, T, d]."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if is_causal:
        attn_mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf"))
    return scores.softmax(dim=-1) @ v


def attention_comparison(repeats: int, steps: int = 30) -> dict[str, list[float]]:
    fused = policy_module.F.scaled_dot_product_attention
    config = TrainConfig(steps=steps, eval_every=0, probe_every=0)
    seconds: dict[str, list[float]] = {"fused": [], "written out": []}
    histories = {}
    torch.set_num_threads(1)
    for _ in range(repeats):
        for name in seconds:
            policy_module.F.scaled_dot_product_attention = fused if name == "fused" else written_out_attention
            try:
                started = time.perf_counter()
                histories[name] = train(config).history
                seconds[name].append(time.perf_counter() - started)
            finally:
                policy_module.F.scaled_dot_product_attention = fused
    rewards = [[record.get("reward") for record in histories[name]] for name in seconds]
    seconds["same rewards"] = [float(rewards[0] == rewards[1])]
    return seconds


def against(code_dir: Path, repeats: int) -> None:
    """The lab's default measured run (see lab_run, the lab's own defaults) with the grpo_lab in
    ``code_dir`` (e.g. an earlier commit: git archive COMMIT | tar -x -C DIR) and with this one,
    each in a fresh process, alternating."""
    here = Path(__file__).resolve().parents[1]
    results: dict[str, list[dict]] = {str(code_dir): [], str(here): []}
    for _ in range(repeats):
        for directory in results:
            environment = {**os.environ, "PYTHONPATH": directory}
            output = subprocess.run(
                [sys.executable, __file__, "--measure-once"], capture_output=True, text=True, check=True, env=environment, cwd=directory
            ).stdout
            results[directory].append(json.loads(output.strip().splitlines()[-1]))
    print(f"load average after: {load_average()}\n")
    print(f"| code (median of {repeats} fresh processes) | change -> first plot | change -> first plot with a step | change -> finished |")
    print("|---|---|---|---|")
    for directory, rows in results.items():
        print(
            f"| {directory} | {statistics.median(r['first_plot'] for r in rows):.2f} s | "
            f"{statistics.median(r['first_step_plot'] for r in rows):.2f} s | {statistics.median(r['end'] for r in rows):.1f} s |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--attention", action="store_true", help="also compare fused and written-out attention")
    parser.add_argument("--against", type=Path, help="compare the lab of the grpo_lab copy in this folder with this one")
    parser.add_argument("--measure-once", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_once:
        print(json.dumps(lab_run({}, eager=True)))
        return
    if args.against:
        print(f"machine: {machine()}; load average before: {load_average()}")
        against(args.against, args.repeats)
        return
    print(f"machine: {machine()}; lab trains with {default_training_threads()} torch thread(s); load average before: {load_average()}")
    bare_run()  # warm-up: torch's one-time costs, the reference policy and the evaluation set
    rows: dict[str, list[dict]] = {name: [] for name in [*VARIANTS, "no lab"]}
    for _ in range(args.repeats):
        for name, (options, eager) in VARIANTS.items():
            rows[name].append(lab_run(options, eager))
        rows["no lab"].append(bare_run())
    print(f"load average after: {load_average()}\n")
    print(
        f"| default run, 150 steps (median of {args.repeats}) | change -> first plot | change -> first plot with a step | "
        "change -> finished | vs before | final accuracy |"
    )
    print("|---|---|---|---|---|---|")
    before = statistics.median(row["end"] for row in rows["before"])
    for name, results in rows.items():
        end = statistics.median(row["end"] for row in results)
        first = statistics.median(row["first_plot"] for row in results) if "first_plot" in results[0] else None
        first_step = statistics.median(row["first_step_plot"] for row in results) if "first_step_plot" in results[0] else None
        print(
            f"| {name} | {'-' if first is None else f'{first:.2f} s'} | {'-' if first_step is None else f'{first_step:.2f} s'} | "
            f"{end:.1f} s | {before / end:.2f}x | {results[-1]['accuracy']:.3f} |"
        )
    if args.attention:
        seconds = attention_comparison(args.repeats)
        fused, written = statistics.median(seconds["fused"]), statistics.median(seconds["written out"])
        print(
            f"\n30-step runs, no evaluation or probe (median of {args.repeats}): fused attention {fused:.2f} s, "
            f"written out {written:.2f} s: fused is {written / fused:.2f}x as fast; "
            f"same sampled rewards: {bool(seconds['same rewards'][0])}; load average: {load_average()}"
        )


if __name__ == "__main__":
    main()
