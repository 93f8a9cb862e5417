"""A run of the lab (``LabRun``: one config trained once per seed, its histories filling while it
trains), which finished runs the lab keeps (``keep_runs``: pinned ones always), how often a run
measures itself (``lab_measure_every``), and torch's one-time costs paid ahead of the first run when
training happens in the kernel's own process (``warm_up_torch``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from ..checks.checkpoints import load_reference_policy
from ..core.config import TrainConfig
from ..trainer import TrainResult, train


@dataclass(eq=False)  # a run is itself: two runs of the same settings are two runs
class LabRun:
    """One press of Run (or one change of a control): the same config trained once per seed.

    configs: one TrainConfig per seed; histories: one list of per-step dicts per seed, filled while
    it trains; results: the TrainResult of every seed that ended; advantages: the latest step's
    advantages [P, G]. status: waiting | running | finished | failed | stopped.
    """

    configs: list[TrainConfig]
    key: int
    color: str = "#0072B2"
    marker: str = "o"  # with the colour and the line style, the run's look on the plot: fixed per settings (plots.run_look)
    line_style: str | tuple = "-"
    number: int = 0  # 1, 2, ... in the order runs start training (superseded ones get none)
    name: str = ""  # given by the user: shown instead of "run 3"
    pinned: bool = False  # kept however many runs come after it (keep_runs)
    hidden: bool = False  # kept, but not drawn
    histories: list[list[dict]] = field(default_factory=list)
    results: list[TrainResult] = field(default_factory=list)
    advantages: torch.Tensor | None = None
    status: str = "waiting"
    message: str = ""
    stop_reason: str = ""
    traceback: str = ""  # set when the run crashed on an exception (status 'failed'); empty otherwise
    repeats: int = 0  # the number of an earlier run with the same configs and seeds (CPU runs repeat exactly)
    started: float = 0.0
    elapsed: float = 0.0
    version: int = 0  # bumped on every new record, so the view knows when to redraw
    stop_event: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def config(self) -> TrainConfig:
        return self.configs[0]

    @property
    def history(self) -> list[dict]:
        """The first seed's history (step 0 = the reference's evaluation)."""
        return self.histories[0] if self.histories else []

    @property
    def tag(self) -> str:
        """What the plot calls it: its name, else "run 3"."""
        return self.name or f"run {self.number}"

    @property
    def num_seeds(self) -> int:
        return len(self.configs)

    @property
    def steps_done(self) -> int:
        return sum(max(len(history) - 1, 0) for history in self.histories)

    def record_step(self, record: dict) -> None:  # train's on_step
        self.histories[-1].append(record)
        self.version += 1

    def record_batch(self, batch: dict) -> None:  # train's on_batch
        self.advantages = batch["advantages"]

    def cancel(self, reason: str) -> None:
        self.stop_reason = self.stop_reason or reason
        self.stop_event.set()

    def train_all_seeds(self, train_one: Callable[..., TrainResult] = train) -> None:
        """Train every seed in turn with ``train_one`` (``trainer.train``'s signature), in the calling
        thread; stop at the first seed that does not finish."""
        self.status, self.started = "running", time.perf_counter()
        for config in self.configs:
            self.histories.append([])
            result = train_one(config, on_step=self.record_step, stop=self.stop_event, on_batch=self.record_batch)
            self.results.append(result)
            if result.status != "finished":
                self.status, self.message = result.status, result.message
                break
        else:
            self.status = "finished"
        self.elapsed = time.perf_counter() - self.started
        self.version += 1


def keep_runs(runs: list[LabRun], finished: LabRun, max_runs: int) -> tuple[list[LabRun], list[LabRun]]:
    """The runs the lab keeps once ``finished`` ends (or will keep, once it ends), oldest first, and those
    it lets go: ``finished`` replaces an earlier run of the same configs and seeds (CPU runs repeat exactly: one copy of the
    same curves), taking over its name and pin; then the oldest unpinned runs go until
    at most ``max_runs`` unpinned ones are left. Pinned runs are never let go."""
    same = [run for run in runs if run.configs == finished.configs]
    for earlier in same:
        finished.name, finished.pinned = finished.name or earlier.name, finished.pinned or earlier.pinned
    kept = [run for run in runs if run not in same] + [finished]
    unpinned = [run for run in kept if not run.pinned]
    dropped = unpinned[: max(len(unpinned) - max_runs, 0)]
    return [run for run in kept if run not in dropped], dropped


def lab_measure_every(steps: int) -> int:
    """Steps between the lab's evaluations and gradient-noise probes: about six per run, at least
    every 10 steps (25 for the default 150). The last step is always evaluated. Every 10, as the
    notebooks measure, cost the default run about 1.3x its time (benchmarks/README.md, "Lab speed")."""
    return max(10, 5 * round(steps / 30))


_warm_up_lock = threading.Lock()
_warmed_up = False


def warm_up_torch() -> None:
    """Pay torch's one-time costs in a background thread, once per process: the first optimiser
    construction imports torch._dynamo (seconds), so the first run can plot within a second."""
    global _warmed_up
    with _warm_up_lock:
        if _warmed_up:
            return
        _warmed_up = True

    def warm() -> None:
        torch.optim.Adam([torch.zeros(1, requires_grad=True)])
        load_reference_policy("default")

    threading.Thread(target=warm, name="grpo-lab-warmup", daemon=True).start()
