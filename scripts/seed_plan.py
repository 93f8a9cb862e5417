"""How many seeds each experiment needs in each regime: the written power calculation behind the catalog's seeds.

For every deciding comparison of the claims table (claims.verdict_table on the cached results, the pilot), the
fewest seeds per cell at which it could detect the claim's claimed effect (80% power at the table's false-discovery
level): its standard error scaled by sqrt(pilot seeds / n), Welch's degrees of freedom scaled with n - 1, and, for a
rank test, enough seeds that its smallest possible p is below the level. An experiment needs the most any of its
claims' comparisons needs, at least ANSWER_SEEDS where the course's answer or the drill quotes it, at most MAX_SEEDS (the time
budget; a comparison that would need more is listed and does not raise the plan: no seed count within the budget powers it,
and its verdict says so, "not detected (could detect >= X)").

python scripts/seed_plan.py            # prints the plan and writes data/results/seed-plan.json
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from grpo_lab.checks.files import json_text, write_atomically
from grpo_lab.course.drill_answers import answer_runs
from grpo_lab.course.final_answer import ANSWER_RUNS
from grpo_lab.experiments.catalog import MAX_SEEDS, MIN_SEEDS, REGIMES, experiments_in
from grpo_lab.experiments.claims import claimed_effect, verdict_table
from grpo_lab.experiments.claims_report import cached_tables
from grpo_lab.experiments.runner import RESULTS_DIR
from grpo_lab.experiments.stats import POWER, Comparison, t_quantile

ANSWER_SEEDS = 8  # issue 37: every comparison the course's answer quotes rests on at least 8 seeds
PLAN_PATH = RESULTS_DIR / "seed-plan.json"


def seeds_for(comparison: Comparison, effect: float, level: float, most: int = 100) -> int | None:
    """The fewest seeds per cell at which ``comparison`` could detect ``effect`` at ``level`` (module docstring);
    None when ``most`` are not enough or the pilot cannot tell (a side without two seeds)."""
    pilot = min(comparison.n)
    if pilot < 2 or not math.isfinite(comparison.standard_error):
        return None
    for n in range(2, most + 1):
        if comparison.test == "rank" and 2 / math.comb(2 * n, n) > level:
            continue  # the rank test's smallest p cannot reach the level
        if comparison.standard_error == 0:
            return n
        error = comparison.standard_error * math.sqrt(pilot / n)
        df = max(comparison.df * (n - 1) / (pilot - 1), 1.0)
        detectable = (t_quantile(1 - level / 2, df) + t_quantile(POWER, df)) * error
        if detectable <= effect:
            return n
    return None


def plan() -> dict:
    found, replications = cached_tables()
    table = verdict_table({regime: results for regime, results in found.items() if results}, replications)
    answer = {(name, regime) for name, regime in answer_runs()}
    needs: dict[tuple[str, str], list[tuple[int | None, str]]] = {}
    level = None
    for regime, verdicts in table.items():
        for verdict in verdicts:
            level = verdict.level
            for comparison in verdict.finding.deciding:
                n = seeds_for(comparison, claimed_effect(verdict.claim, comparison), verdict.level)
                for name in verdict.claim.experiments:
                    needs.setdefault((name, regime), []).append((n, f"{verdict.claim.key}: {comparison.label}"))
    answer |= set(ANSWER_RUNS)
    # an experiment no deciding comparison reads (batch-blowup: memory and time) needs the least; so does one with no
    # pilot result yet in a regime (a new experiment or regime: its first run is the pilot)
    for regime in REGIMES:
        for name in experiments_in(regime):
            needs.setdefault((name, regime), [])
    experiments = {}
    for (name, regime), listed in sorted(needs.items()):
        # comparisons that MAX_SEEDS can power set the need; the others cannot be powered within the budget at all, so
        # they do not raise it: their verdicts say "not detected (could detect >= X)"
        feasible = [n for n, _ in listed if n is not None and n <= MAX_SEEDS]
        beyond = [why for n, why in listed if n is None or n > MAX_SEEDS]
        needed = max(feasible, default=MIN_SEEDS)
        floor = ANSWER_SEEDS if (name, regime) in answer else MIN_SEEDS
        result = found.get(regime, {}).get(name)
        experiments.setdefault(regime, {})[name] = {
            "pilot_seeds": result["seeds"] if result else None,
            "needed": needed,
            "planned": min(max(needed, floor), MAX_SEEDS),
            "quoted_by_the_answer": (name, regime) in answer,
            "beyond_the_budget": beyond,
            "pilot_seconds": round(result["wall_time_s"]) if result else None,
        }
    for regime in experiments.values():
        for entry in regime.values():
            entry["planned_seconds"] = round(entry["pilot_seconds"] * entry["planned"] / entry["pilot_seeds"]) if entry["pilot_seeds"] else None
    return {
        "command": "python scripts/seed_plan.py",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "level": level,
        "power": POWER,
        "answer_seeds": ANSWER_SEEDS,
        "min_seeds": MIN_SEEDS,
        "max_seeds": MAX_SEEDS,
        "regimes": experiments,
    }


def main() -> None:
    result = plan()
    write_atomically(PLAN_PATH, json_text(result, indent=1, ensure_ascii=False))
    total, unknown = 0, []
    for regime, experiments in result["regimes"].items():
        for name, entry in experiments.items():
            if entry["planned_seconds"] is None:
                unknown.append(f"{name} ({regime})")
            total += entry["planned_seconds"] or 0
            minutes = "    ?" if entry["planned_seconds"] is None else f"{entry['planned_seconds'] / 60:5.1f}"
            print(
                f"{regime:12s} {name:22s} pilot {entry['pilot_seeds'] or 0:2d}  needed {entry['needed']:2d}  planned {entry['planned']:2d}"
                f"  {minutes} min  ({len(entry['beyond_the_budget'])} comparisons beyond the budget)"
            )
    print(f"sweep all at the planned seeds: about {total / 3600:.1f} h on this machine (pilot times scaled); {PLAN_PATH}")
    if unknown:
        print(f"not counted, no pilot yet: {', '.join(unknown)}")


if __name__ == "__main__":
    main()
