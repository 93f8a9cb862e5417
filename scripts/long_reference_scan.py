"""The measurement behind long.pt's step count (grpo_lab/pretrain.py: LONG_STEPS): the long recipe's
greedy accuracy on the 5-digit addition eval set at every 500-step checkpoint, and the first
checkpoint at or above LONG_START_ACCURACY, the rule that fixes the long-answer regime's start.

    python scripts/long_reference_scan.py     writes data/results/regimes/long-reference-scan.json (about 90 s)

Like the lr scan, it looks at the pretraining run only, never at a claim.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime

from grpo_lab.checks import paths
from grpo_lab.checks.files import json_text, write_atomically
from grpo_lab.pretrain import LONG_CHECKPOINT_EVERY, LONG_SCAN_STEPS, RECIPES, first_checkpoint_reaching, pretrain
from grpo_lab.task import Task, eval_accuracy

SCAN_PATH = paths.RESULTS_DIR / "regimes" / "long-reference-scan.json"


def main() -> None:
    recipe = dataclasses.replace(RECIPES["long"], steps=LONG_SCAN_STEPS)
    task = Task.parse(recipe.task)
    checkpoints: list[dict] = []

    def evaluate(step: int, policy) -> None:
        if step % LONG_CHECKPOINT_EVERY == 0:
            checkpoints.append({"step": step, "eval_accuracy": eval_accuracy(policy, task)})
            print(f"step {step}: greedy accuracy {checkpoints[-1]['eval_accuracy']:.3f}", flush=True)

    started = time.perf_counter()
    pretrain(recipe, after_step=evaluate)
    scan = {
        "command": "python scripts/long_reference_scan.py",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_time_s": round(time.perf_counter() - started, 1),
        "recipe": {key: value for key, value in dataclasses.asdict(recipe).items() if key != "name"},
        "checkpoints": checkpoints,
    }
    scan["chosen_steps"] = first_checkpoint_reaching(scan)
    write_atomically(SCAN_PATH, json_text(scan, indent=1))
    print(f"first checkpoint at or above the rule's accuracy: {scan['chosen_steps']} steps -> {SCAN_PATH}")


if __name__ == "__main__":
    main()
