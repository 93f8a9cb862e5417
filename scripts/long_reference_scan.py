"""The measurement behind a regime's reference (grpo_lab/pretrain.py: START_RULES): the recipe's greedy
accuracy on its task's eval set at every checkpoint of a pretraining scan, and the first checkpoint at
or above the rule's accuracy.

    python scripts/long_reference_scan.py            long.pt's steps (LONG_STEPS): every 500 steps to 5,000,
                                                     first >= 20%; writes data/results/regimes/long-reference-scan.json (about 90 s)
    python scripts/long_reference_scan.py practice   practice.pt's (PRACTICE_STEPS, docs/practice-regime.md): every 10 steps
                                                     to 1,000, first >= 10%; writes .../practice-reference-scan.json
    python scripts/long_reference_scan.py default    default's rule (pretrain --only default applies it while training): every
                                                     step to 1,000, first >= 48%; writes .../default-reference-scan.json (about 85 s; not shipped)

Like the lr scan, it looks at the pretraining run only, never at a claim.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from datetime import UTC, datetime

from tqdm import tqdm

from grpo_lab.checks import paths
from grpo_lab.checks.files import json_text, write_atomically
from grpo_lab.pretrain import RECIPES, START_RULES, checkpoint_evaluator, first_checkpoint_reaching, pretrain
from grpo_lab.task import Task


def main(name: str = "long") -> None:
    accuracy, checkpoint_every, scan_steps = START_RULES[name]
    recipe = dataclasses.replace(RECIPES[name], steps=scan_steps)
    task = Task.parse(recipe.task)
    checkpoints: list[dict] = []

    started = time.perf_counter()
    with tqdm(total=scan_steps, desc=f"scan {name}", unit="step", file=sys.stderr) as bar:
        pretrain(recipe, bar, checkpoint_evaluator(task, checkpoint_every, checkpoints))
    scan = {
        "command": "python scripts/long_reference_scan.py" + ("" if name == "long" else f" {name}"),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_time_s": round(time.perf_counter() - started, 1),
        "recipe": {key: value for key, value in dataclasses.asdict(recipe).items() if key != "name"},
        "rule": {"start_accuracy": accuracy, "checkpoint_every": checkpoint_every, "scan_steps": scan_steps},
        "checkpoints": checkpoints,
    }
    scan["chosen_steps"] = first_checkpoint_reaching(scan, accuracy)
    path = paths.RESULTS_DIR / "regimes" / f"{name}-reference-scan.json"
    write_atomically(path, json_text(scan, indent=1))
    print(f"first checkpoint at or above {accuracy:.0%}: {scan['chosen_steps']} steps -> {path}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
