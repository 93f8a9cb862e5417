"""The measurement behind the regimes' rule (grpo_lab/experiments/catalog.py: REGIME_RULE): the default
config at each learning rate of LR_SCAN, over LR_SCAN_SEEDS seeds, and the lr the rule picks.

    python scripts/regime_lr_scan.py [--workers 2]    writes data/results/regimes/lr-scan.json

It looks at the default config's late accuracy only, never at a claim, so it can fix the regimes
before any claim is measured in them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from datetime import UTC, datetime

from grpo_lab.checks import paths
from grpo_lab.checks.files import json_text, write_atomically
from grpo_lab.experiments.catalog import LR_SCAN, LR_SCAN_SEEDS, LR_SCAN_STEPS, TARGET_ACCURACY, best_lr, large_step_lr
from grpo_lab.experiments.runner import _run_job, _worker_init, rounded

SCAN_PATH = paths.RESULTS_DIR / "regimes" / "lr-scan.json"
KEPT_METRICS = ("initial_eval_accuracy", "late_eval_accuracy", "final_eval_accuracy", "eval_max_drawdown", "failed", "wall_time_s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="worker processes, one torch thread each (default 2)")
    args = parser.parse_args()
    jobs = [
        (index, {"kind": "train", "train": {"lr": lr, "probe_every": 0}, "target": TARGET_ACCURACY}, seed)
        for index, lr in enumerate(LR_SCAN)
        for seed in range(LR_SCAN_SEEDS)
    ]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.workers, initializer=_worker_init) as pool:
        outputs = pool.map(_run_job, jobs)
    runs = [
        {"lr": LR_SCAN[index], "seed": entry["seed"], **{key: entry["metrics"].get(key) for key in KEPT_METRICS}}
        for index, entry in sorted(outputs, key=lambda pair: (pair[0], pair[1]["seed"]))
    ]
    scan = {
        "command": "python scripts/regime_lr_scan.py" + (f" --workers {args.workers}" if args.workers != 2 else ""),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_time_s": time.perf_counter() - started,
        "config": f"TrainConfig() with lr varied, {LR_SCAN_STEPS} steps, probe_every 0, seeds 0..{LR_SCAN_SEEDS - 1}",
        "runs": runs,
    }
    scan["best_lr"], scan["large_step_lr"] = best_lr(scan), large_step_lr(scan)
    write_atomically(SCAN_PATH, json_text(rounded(scan), indent=1))
    for run in runs:
        print(f"lr {run['lr']:g} seed {run['seed']}: late accuracy {run['late_eval_accuracy']:.3f}, largest fall {run['eval_max_drawdown']:.3f}")
    print(
        f"best lr (highest mean late accuracy) {scan['best_lr']:g}, large-step lr (largest that still learns) {scan['large_step_lr']:g} -> {SCAN_PATH}"
    )


if __name__ == "__main__":
    main()
