"""Would fewer seeds have given the same verdicts? The power check behind ``sweep all``'s seed counts.

A sweep with ``--seeds N`` runs seeds 0..N-1, and every unit is deterministic on a CPU, so the first N
seeds of a cached result are exactly what the shorter sweep would have given on the CPU that made it.
This keeps them, summarises and derives again, and prints every claim whose verdict (or near-the-line
mark) changes and every derived finding of the experiments that changes (e.g. grpo-vs-ppo's crossover
vanishing), in one regime.

python scripts/fewer_seeds.py --seeds 3 grpo-vs-ppo                      # the gentle regime's 5 -> 3
python scripts/fewer_seeds.py --seeds 3 group-size small-group-remedies --results /tmp/sweep

Exit status 0 when nothing changes, 1 when a verdict or a derived value does (it is a report, not a test).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

from grpo_lab.experiments.catalog import DEFAULT_REGIME, EXPERIMENTS, REGIMES
from grpo_lab.experiments.claims import CLAIMS
from grpo_lab.experiments.claims_report import available_results, regime_finding, verdict_cell
from grpo_lab.experiments.runner import RESULTS_DIR, is_finite_number, rounded
from grpo_lab.experiments.stats import summarize


def first_seeds(result: dict, seeds: int) -> dict:
    """``result`` as a sweep of its first ``seeds`` seeds would have written it (wall_time_s aside)."""
    shorter = copy.deepcopy(result)
    shorter["seeds"] = seeds
    for cell in shorter["cells"]:
        cell["per_seed"] = cell["per_seed"][:seeds]
        cell["summary"] = summarize(cell["per_seed"])
    derive = EXPERIMENTS[result["name"]].derive
    shorter["derived"] = derive(shorter["cells"]) if derive else {}
    return rounded(shorter)


def changed_derived(before: dict, after: dict, path: str = "") -> list[str]:
    """'path: before -> after' for each derived finding that changes: a word ('PPO' -> 'tie') or a number that
    appears or vanishes (a crossover -> None). A number that only moves is left out: fewer seeds move every
    mean; the verdicts say whether the move matters. Accuracies at equal wall time are clock readings: left out."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [line for key in before if "wall_time" not in key for line in changed_derived(before[key], after.get(key), f"{path}/{key}")]
    if is_finite_number(before) and is_finite_number(after):
        return []
    return [] if before == after else [f"{path}: {before} -> {after}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", choices=list(EXPERIMENTS), metavar="NAME", help="experiments to cut to fewer seeds")
    parser.add_argument("--seeds", type=int, required=True, help="keep the first N seeds")
    parser.add_argument("--regime", default=DEFAULT_REGIME, choices=list(REGIMES))
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="a results folder (default: data/results)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds={args.seeds} is not valid: keep at least 1 seed")
    results = available_results(args.results, regime=args.regime)
    missing = [name for name in args.names if name not in results]
    if missing:
        parser.error(f"no {args.regime} result for {', '.join(missing)} under {args.results}")
    too_few = [f"{name} has {results[name]['seeds']}" for name in args.names if results[name]["seeds"] <= args.seeds]
    if too_few:
        parser.error(f"--seeds={args.seeds} keeps every seed ({'; '.join(too_few)}): choose fewer")
    shorter = {**results, **{name: first_seeds(results[name], args.seeds) for name in args.names}}
    changes = []
    for index, claim in enumerate(CLAIMS, 1):
        if not set(claim.experiments) & set(args.names):
            continue
        before, after = verdict_cell(regime_finding(claim, results, args.regime)), verdict_cell(regime_finding(claim, shorter, args.regime))
        if before != after:
            changes.append(f"claim {index} [{claim.key}]: {before} -> {after}")
    for name in args.names:
        changes += [f"{name} derived{line}" for line in changed_derived(results[name]["derived"], shorter[name]["derived"])]
    print(f"{', '.join(args.names)} in the {args.regime} regime, first {args.seeds} seeds of {args.results}:")
    print("\n".join(f"  {line}" for line in changes) if changes else "  every verdict and derived value is the same")
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main())
