"""How long `python -m grpo_lab sweep all` takes, from the shipped result files: no training, files only.

Sums the ``wall_time_s`` each main result recorded (data/results/NAME.json and
data/results/regimes/REGIME/NAME.json; replication/ is not part of ``sweep all``) per regime and in all,
against the 2.5-hour budget on 2 cores (data/results/README.md, "Seeds"). What the sum leaves out: starting
Python and the worker processes, loading the reference policies, rebuilding claims.md (seconds). The files may
come from different passes, machines and loads: the table says which ``workers`` and ``machine`` they recorded.

    python benchmarks/bench_sweep_all.py
"""

from __future__ import annotations

from collections import Counter

from grpo_lab.experiments.catalog import REGIMES, experiments_in
from grpo_lab.experiments.runner import load_result, result_path

BUDGET_S = 2.5 * 3600  # sweep all, every regime, on 2 cores with --workers 2


def minutes(seconds: float) -> str:
    return f"{seconds:,.0f} s ({seconds / 60:.0f} min)"


def main() -> None:
    rows, machines, total, missing = [], Counter(), 0.0, []
    for regime in REGIMES:
        found, seconds, units, workers = 0, 0.0, 0, Counter()
        for name in experiments_in(regime):
            if not result_path(name, regime=regime).is_file():
                missing.append(f"{regime}/{name}")
                continue
            result = load_result(name, regime=regime)
            found += 1
            seconds += result["wall_time_s"]
            units += sum(len(cell["per_seed"]) for cell in result["cells"])
            workers[result["workers"]] += 1
            recorded = result.get("machine")
            machines[f"{recorded['cpu']} ({recorded['cpu_capability']}), torch {recorded['torch']}" if recorded else "not recorded"] += 1
        total += seconds
        worker_counts = ", ".join(f"{count} ({files} files)" if len(workers) > 1 else str(count) for count, files in sorted(workers.items()))
        rows.append((regime, f"{found} of {len(experiments_in(regime))}", units, minutes(seconds), worker_counts))
    print("command: python benchmarks/bench_sweep_all.py (reads data/results/, main runs only; trains nothing)")
    print("| regime | experiments | cells x seeds | recorded wall time | workers |")
    print("|---|---|---|---|---|")
    for regime, found, units, seconds, workers in rows:
        print(f"| {regime} | {found} | {units} | {seconds} | {workers} |")
    print(f"| **all** | | {sum(row[2] for row in rows)} | **{minutes(total)}** | |")
    verdict = "within" if total <= BUDGET_S else "over"
    print(f"\nsweep all: {total / 3600:.2f} h recorded, {verdict} the {BUDGET_S / 3600:.1f} h budget ({100 * total / BUDGET_S:.0f}% of it)")
    print("machine field of the files (results from different machines, loads and days are summed as they are):")
    for described, files in machines.most_common():
        print(f"  {files:2d} files: {described}")
    if missing:
        print(f"missing (not counted): {', '.join(missing)}")


if __name__ == "__main__":
    main()
