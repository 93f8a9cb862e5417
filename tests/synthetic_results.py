"""Results with chosen numbers, for testing rules on both sides of their lines: a shipped result (the real cells,
configs and metric names) with some cells' per-seed values replaced and their summaries recomputed."""

from __future__ import annotations

import copy

from grpo_lab.experiments.catalog import DEFAULT_REGIME, result_cell
from grpo_lab.experiments.runner import load_result
from grpo_lab.experiments.stats import summarize


def shipped(*names: str, regime: str = DEFAULT_REGIME) -> dict:
    """{name: a deep copy of the shipped result}, to edit."""
    return {name: copy.deepcopy(load_result(name, regime=regime)) for name in names}


def set_values(results: dict, name: str, cell_id: str, metric: str, values: list[float | None]) -> dict:
    """Give ``metric`` of one cell these per-seed values (None: the seed has none, e.g. never reached the target);
    the cell's seeds follow the number of values (seeds beyond it are dropped, missing ones copied from the last);
    returns ``results``, edited in place."""
    cell = result_cell(results[name], cell_id)
    del cell["per_seed"][len(values) :]
    while len(cell["per_seed"]) < len(values):
        cell["per_seed"].append(copy.deepcopy(cell["per_seed"][-1]) | {"seed": len(cell["per_seed"])})
    for entry, value in zip(cell["per_seed"], values):
        entry["metrics"][metric] = value
    cell["summary"] = summarize(cell["per_seed"])
    return results


def around(mean: float, spread: float, n: int) -> list[float]:
    """n values with this mean and sample std ``spread`` (symmetric around the mean)."""
    if n == 1:
        return [mean]
    import statistics

    base = [i - (n - 1) / 2 for i in range(n)]
    scale = spread / statistics.stdev(base)
    return [mean + scale * b for b in base]


def drop_metric(results: dict, name: str, cell_id: str, metric: str) -> dict:
    """Remove ``metric`` from one cell, from every seed and from its summary, as in a result made before the metric was
    recorded; returns ``results``, edited in place."""
    cell = result_cell(results[name], cell_id)
    for entry in cell["per_seed"]:
        entry["metrics"].pop(metric, None)
    cell["summary"].pop(metric, None)
    return results
