"""Does a sweep's unit run slower beside another one? What two workers on two cores cost each other.

``sweep`` runs its units in two worker processes of one torch thread each. This times one heavy unit
(grpo-vs-ppo's PPO with a critic and 4 x 4 batch reuse, the sweep's costliest kind) and one light unit
(GRPO, G = 8 x 16 prompts) three ways: alone (the other worker idle), beside a copy of itself, and
beside a stream of the other kind. Each unit's own training seconds (its ``wall_time_s``) are compared
within each round, so a change in the machine's load hits all three ways alike.

    python benchmarks/bench_sweep_pairing.py [--steps 40] [--rounds 3]

Measurements, not assertions; the machine, its load average and the command are printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_lab import load_average, machine  # noqa: E402

from grpo_lab.experiments.catalog import EXPERIMENTS  # noqa: E402
from grpo_lab.experiments.runner import run_cell, worker_pool  # noqa: E402


def unit(cell_id: str, steps: int) -> dict:
    """grpo-vs-ppo's cell ``cell_id`` (gentle regime), shortened to ``steps`` steps."""
    config = next(cell["config"] for cell in EXPERIMENTS["grpo-vs-ppo"].grid(False) if cell["id"] == cell_id)
    return {**config, "train": {**config["train"], "steps": steps}}


def seconds(config: dict) -> float:
    """One unit's training seconds, as the sweep records them (runs in a worker)."""
    return run_cell(config, seed=0)["metrics"]["wall_time_s"]


def beside_a_stream(pool, measured: dict, other: dict) -> tuple[float, list[float]]:
    """``measured`` on one worker while the other runs ``other`` again and again until it ends:
    (measured's seconds, the other's seconds each time)."""
    result = pool.apply_async(seconds, (measured,))
    stream = []
    while not result.ready():
        stream.append(pool.apply(seconds, (other,)))
    return result.get(), stream[:-1] or stream  # the last one may have finished alone


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="training steps of each unit (the sweep's: 150)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    heavy, light = unit("ppo-reuse", args.steps), unit("grpo", args.steps)
    print(f"machine: {machine()}; load average before: {load_average()}")
    print(f"command: python benchmarks/bench_sweep_pairing.py --steps {args.steps} --rounds {args.rounds}")
    times: dict[str, list[float]] = {
        key: [] for key in ("heavy alone", "heavy beside heavy", "heavy beside light", "light alone", "light beside light", "light beside heavy")
    }
    with worker_pool(2) as pool:
        pool.map(seconds, [light, light])  # both workers warm: imports and first calls done
        for round_ in range(args.rounds):
            times["heavy alone"].append(pool.apply(seconds, (heavy,)))
            times["light alone"].append(pool.apply(seconds, (light,)))
            times["heavy beside heavy"] += pool.map(seconds, [heavy, heavy], chunksize=1)
            times["light beside light"] += pool.map(seconds, [light, light], chunksize=1)
            measured, stream = beside_a_stream(pool, heavy, light)
            times["heavy beside light"].append(measured)
            times["light beside heavy"] += stream
            print(f"round {round_ + 1} done; load average {load_average()}", flush=True)
    print(f"\nload average after: {load_average()}")
    print(f"\n| unit ({args.steps} steps) | alone | beside its own kind | beside the other kind |")
    print("|---|---|---|---|")
    for kind, other in (("heavy", "light"), ("light", "heavy")):
        alone = statistics.median(times[f"{kind} alone"])
        cells = [f"{alone:.2f} s"]
        for key in (f"{kind} beside {kind}", f"{kind} beside {other}"):
            median = statistics.median(times[key])
            cells.append(f"{median:.2f} s ({median / alone:.2f}x, n={len(times[key])})")
        name = "PPO critic, 4 x 4 reuse" if kind == "heavy" else "GRPO, G = 8 x 16 prompts"
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
