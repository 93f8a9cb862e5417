"""The lab's responsiveness: a control change -> the first updated plot -> the end of the default
run; how fast a change cancels the run in progress; plot frames per second; memory over 50
re-runs; and what the torch warm-up at construction buys the first run of a fresh kernel.

    python benchmarks/bench_lab.py            # prints a Markdown table for benchmarks/README.md ("Lab")
    python benchmarks/bench_lab.py --quick    # one repeat each, 20 re-runs for memory

Measurements, not assertions: the numbers depend on the machine and on its load (both printed).
The first-run numbers come from fresh processes, since torch's one-time costs are paid once.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch

FIRST_RUN_THINK_SECONDS = 3.0  # a learner reads the dashboard for a few seconds before moving a slider
FIRST_RUN_STEPS = 30  # the fresh-process runs only need to reach their first plots


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores, {cpu}, torch {torch.__version__}, {torch.get_num_threads()} threads"


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def resident_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class PlotWatch:
    """Timestamps of every plot update after ``arm()``, with how many training steps the run
    being measured had done at that moment (0 = only the step-0 evaluation, or nothing yet)."""

    def __init__(self, lab):
        self.lab, self.events, self.started = lab, [], None
        lab.plot.observe(self._on_plot, "value")

    def arm(self) -> None:
        self.events, self.started = [], time.perf_counter()

    def _on_plot(self, _change) -> None:
        if self.started is not None and self.lab.current is not None:
            self.events.append((time.perf_counter() - self.started, self.lab.current.number, self.lab.current.steps_done))

    def first(self, run_number: int, min_steps: int) -> float:
        return next(t for t, number, steps in self.events if number == run_number and steps >= min_steps)


def change_and_time(lab, watch: PlotWatch, name: str, value) -> dict:
    """Set one control; seconds to the first plot of the new run, to its first plot with a
    training step, and to the end of the run (status finished)."""
    watch.arm()
    lab.controls[name].value = value
    lab.wait()
    run = lab.runs[-1]
    return {
        "first_plot": watch.first(run.number, 0),
        "first_step_plot": watch.first(run.number, 1),
        "run_end": time.perf_counter() - watch.started,
        "train_seconds": run.elapsed,
        "frames": len(watch.events),
        "accuracy": (run.history[0]["eval_accuracy"], run.history[-1]["eval_accuracy"]),
    }


def cancel_latency(lab, after_steps: int = 20) -> dict:
    """Seconds from a change during a default run until that run's training loop has returned,
    and until the new run has trained its first step."""
    lab.run_button.click()
    while lab.current.steps_done < after_steps:
        time.sleep(0.01)
    old = lab.current
    started = time.perf_counter()
    lab.controls["baseline"].value = "mean" if lab.controls["baseline"].value == "zscore" else "zscore"
    new = lab.current
    while old.status not in ("stopped", "finished", "failed"):
        time.sleep(0.002)
    stopped = time.perf_counter() - started
    while new.steps_done < 1:
        time.sleep(0.005)
    first_step = time.perf_counter() - started
    lab.stop()
    lab.wait()
    return {"cancelled": stopped, "new_first_step": first_step, "old_status": old.status}


def first_run_in_fresh_process(warm_up: bool) -> dict:
    """Run in a subprocess: construct the lab, wait as a learner would, change a control, time it."""
    started = time.perf_counter()
    import grpo_lab.lab.runs as runs_module
    from grpo_lab import GRPOLab

    if not warm_up:
        runs_module._warmed_up = True  # pretend it happened: the first run pays torch's one-time costs itself
    lab = GRPOLab(steps=FIRST_RUN_STEPS)
    constructed = time.perf_counter() - started
    time.sleep(FIRST_RUN_THINK_SECONDS)
    watch = PlotWatch(lab)
    result = change_and_time(lab, watch, "group_size", 4)
    result["construct"] = constructed
    return result


def fresh(warm_up: bool) -> dict:
    output = subprocess.run([sys.executable, __file__, "--fresh", "warm" if warm_up else "cold"], capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def memory_over_reruns(reruns: int, every: int = 10) -> dict:
    """Resident memory after warm-up and then every ``every`` re-runs (10 steps each): the
    allocator makes single readings jump by tens of MB, the series shows whether memory grows."""
    from grpo_lab import GRPOLab

    lab = GRPOLab(steps=10, eval_every=5, probe_every=5)
    for index in range(5):  # warm: allocator, figure artists, the run list filled to max_runs
        lab.controls["group_size"].value = (4, 8)[index % 2]
        lab.wait()
    series = [resident_mb()]
    for index in range(reruns):
        lab.controls["group_size"].value = (2, 4, 8, 16)[index % 4]
        lab.wait()
        if (index + 1) % every == 0:
            series.append(resident_mb())
    return {"series_mb": series, "reruns": reruns, "every": every}


def training_threads_comparison(steps: int = 40) -> dict[int, float]:
    """Seconds of one lab run (plot drawing on) when training uses 1 or 2 torch threads: on two
    cores a team of two shares them with the drawing thread."""
    from grpo_lab import GRPOLab

    seconds = {}
    for threads in (1, 2):
        lab = GRPOLab(steps=steps, training_threads=threads)
        lab.run_button.click()
        lab.wait()
        seconds[threads] = lab.runs[-1].elapsed
        lab.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat each, 20 re-runs for memory")
    parser.add_argument("--fresh", choices=("warm", "cold"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fresh:
        print(json.dumps(first_run_in_fresh_process(args.fresh == "warm")))
        return

    repeats = 1 if args.quick else 3
    from grpo_lab.checks.threads import default_training_threads

    print(f"machine: {machine()}; the lab trains with {default_training_threads()} torch thread(s); load average before: {load_average()}")
    first_runs = {kind: fresh(kind == "warm") for kind in ("warm", "cold")}

    from grpo_lab import GRPOLab

    lab = GRPOLab()
    frame_seconds: list[float] = []
    refresh = lab.refresh_view

    def timed_refresh() -> float:
        seconds = refresh()
        frame_seconds.append(seconds)
        return seconds

    lab.refresh_view = timed_refresh
    lab.run_button.click()  # warm-up run, not measured
    lab.wait()
    watch = PlotWatch(lab)
    frame_seconds.clear()
    changes = [change_and_time(lab, watch, "baseline", ("mean", "zscore")[index % 2]) for index in range(repeats)]
    cancels = [cancel_latency(lab) for _ in range(repeats)]
    memory = memory_over_reruns(20 if args.quick else 50)
    threads = training_threads_comparison()

    def median(key: str, rows: list[dict]) -> float:
        return statistics.median(row[key] for row in rows)

    fps = median("frames", changes) / median("run_end", changes)
    print(f"load average after: {load_average()}\n")
    print("| measurement (default run: G=8, 16 prompts, 150 steps) | value |")
    print("|---|---|")
    print(f"| control change -> first plot of the new run (median of {repeats}) | {median('first_plot', changes):.2f} s |")
    print(f"| control change -> first plot with a training step | {median('first_step_plot', changes):.2f} s |")
    print(
        f"| control change -> end of the default run, status Finished | {median('run_end', changes):.1f} s "
        f"(training {median('train_seconds', changes):.1f} s) |"
    )
    print(f"| plot updates while training | {fps:.1f} per second; one frame {statistics.median(frame_seconds):.2f} s median |")
    print(
        f"| change during a run -> that run's training stopped (median, max of {repeats}) | "
        f"{median('cancelled', cancels):.2f} s, {max(c['cancelled'] for c in cancels):.2f} s |"
    )
    print(f"| change during a run -> the new run's first step | {median('new_first_step', cancels):.2f} s |")
    for kind, label in (("warm", "with the warm-up (default)"), ("cold", "without the warm-up")):
        row = first_runs[kind]
        print(
            f"| fresh kernel, {label}: GRPOLab() takes; {FIRST_RUN_THINK_SECONDS:.0f} s later a change -> first plot with a step | "
            f"{row['construct']:.1f} s; {row['first_step_plot']:.2f} s |"
        )
    series = memory["series_mb"]
    print(
        f"| memory over {memory['reruns']} re-runs (10 steps each), every {memory['every']} | "
        f"{' -> '.join(f'{mb:.0f}' for mb in series)} MB (last - first: {series[-1] - series[0]:+.0f} MB) |"
    )
    print(f"| a 40-step lab run trained with 1 torch thread (the lab's choice here) / with 2 | {threads[1]:.1f} s / {threads[2]:.1f} s |")
    accuracy = changes[0]["accuracy"]
    print(f"\nheld-out accuracy of the measured default run: {accuracy[0]:.2f} -> {accuracy[1]:.2f}")


if __name__ == "__main__":
    main()
