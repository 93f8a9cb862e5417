"""``train()``, the public entry to a run: it checks the config (checks/config_rules.py), loads the
reference policy, builds the task's problems and reward model, and hands them to the training
loop (core/loop.py, where the algorithm is). A run's result is a ``TrainResult``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .checks.checkpoints import context_problem, load_reference_policy
from .checks.config_rules import validate_config
from .checks.devices import resolve_device
from .checks.files import finite_json
from .core import loop
from .core.config import TrainConfig
from .core.model import TinyTransformer
from .errors import ConfigError
from .task import ProblemSampler, RewardModel, Task, eval_batch


@dataclass
class TrainResult:
    """What a run produced. status: 'finished', 'stopped' (the stop event was set) or 'failed'
    (non-finite values; ``message`` says why). history: one dict per step, step 0 being the
    reference's evaluation before any update."""

    config: TrainConfig
    history: list[dict] = field(default_factory=list)
    policy: TinyTransformer | None = None
    status: str = "finished"
    message: str = ""

    @property
    def stopped(self) -> bool:
        return self.status == "stopped"

    @property
    def final(self) -> dict:
        """The last value of each metric, plus the status and the initial eval accuracy."""
        summary: dict = {"status": self.status, "message": self.message}
        for record in self.history:
            summary.update(record)
        if self.history:
            summary["initial_eval_accuracy"] = self.history[0].get("eval_accuracy")
        return summary

    def to_json(self) -> dict:
        """{"config", "history", "final"} ready for json.dumps: a non-finite number (JSON has none)
        becomes null, and then "notes" says, per metric, where and why."""
        clean, nulled = finite_json({"config": self.config.to_dict(), "history": self.history, "final": self.final})
        if nulled:
            clean["notes"] = null_notes(nulled)
        return clean


WHY_NULL = {  # metrics that can be undefined, and why
    "explained_variance": "undefined when every return of the batch is the same (Var(returns) = 0): there is nothing to explain",
}


def null_notes(places: list[str]) -> dict[str, str]:
    """['history[3].explained_variance', 'final.explained_variance'] -> {metric: 'null in history[3], final: why'}."""
    by_metric: dict[str, list[str]] = {}
    for place in places:
        where, _, metric = place.rpartition(".")
        by_metric.setdefault(metric, []).append(where or "top level")
    notes = {}
    for metric, wheres in by_metric.items():
        listed = ", ".join(wheres[:5]) + (f" and {len(wheres) - 5} more" if len(wheres) > 5 else "")
        notes[metric] = f"null in {listed}: " + WHY_NULL.get(metric, "the value was not a finite number")
    return notes


def train(
    config: TrainConfig | dict,
    on_step: Callable[[dict], None] | None = None,
    stop: threading.Event | None = None,
    on_batch: Callable[[dict], None] | None = None,
) -> TrainResult:
    """Train a copy of the reference policy with GRPO (or a baseline variant, or PPO's critic).

    ``on_step(metrics)`` is called after every step (and once for step 0, the evaluation before
    training); ``stop`` is checked before every step and ends the run early, marked 'stopped'.
    ``on_batch({"step", "rewards" [P, G], "advantages" [P, G]})`` is called after every training
    step with that step's raw batch (for live views such as the lab's advantage histogram; the
    history keeps only summaries). Under baseline='critic' or 'mc_value' a response's advantage is
    the mean of its tokens' GAE advantages. ``samples`` counts every response generated, the value
    rollouts of 'mc_value' (``value_rollouts`` a step) included. ``config`` may also be a dict of
    knob values (``TrainConfig.from_dict``).

    Deterministic on a CPU for the same config, seed, torch build and torch thread count; with 1 and 2
    threads histories differ around the 7th digit (float sums split differently), which is why the
    CLI's run.json records ``environment.torch_threads`` (data/README.md, "Where determinism holds").
    """
    config = checked_train_arguments(config, on_step, stop, on_batch)
    state, problems = start_run(config)
    held_out = eval_batch(Task.parse(config.task))
    history, status, message = loop.run(config, state, problems, held_out, on_step, stop, on_batch)
    return TrainResult(config=config, history=history, policy=state.policy, status=status, message=message)


def checked_train_arguments(config: TrainConfig | dict, on_step: object, stop: object, on_batch: object) -> TrainConfig:
    """``train``'s arguments checked before any work: the validated TrainConfig (built from a dict of knob
    values if given one), or one ConfigError naming the argument that is wrong."""
    if isinstance(config, dict):
        config = TrainConfig.from_dict(config)
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ConfigError("stop", stop, "give a threading.Event (set it to stop the run) or None")
    for name, callback in (("on_step", on_step), ("on_batch", on_batch)):
        if callback is not None and not callable(callback):
            raise ConfigError(name, callback, "give a function of one dict, or None")
    return validate_config(config)


def start_run(config: TrainConfig) -> tuple[loop.RunState, ProblemSampler]:
    """A checked config's run at step 0 (``core.loop.start``) and its stream of problems. The global
    generator is seeded first: loading the reference and the critic's initialisation draw on it."""
    device = resolve_device(config.device)
    task = Task.parse(config.task)
    torch.manual_seed(config.seed)
    reference = load_reference_policy(config.reference, device)
    problem = context_problem(reference, task)
    if problem is not None:
        raise ConfigError("task", config.task, f"with reference {config.reference!r}, {problem}: choose a shorter task or a reference that reads it")
    state = loop.start(config, reference, RewardModel.for_config(config, config.seed), task.max_answer_length, device)
    return state, ProblemSampler(task, config.seed, config.prompt_pool)
