"""The dashboard (``GRPOLab``): the controls beside the live figure, a status line, a progress bar
and plain-words hints. A changed control cancels the run in progress and starts a new one, trained
in a background thread with one core fewer than the machine has (the drawing needs one), while a
``view.ViewTicker`` redraws the figure.
Threads write only the output widgets, never the controls (the way that works in JupyterLab and
Voila alike). The callbacks are thin."""

from __future__ import annotations

import html
import itertools
import threading
import time
import traceback
from dataclasses import replace

import ipywidgets as widgets

from ..errors import ConfigError
from ..live_figure import LiveRunFigure, RunCurves
from ..threads import default_training_threads, torch_threads
from ..trainer import TrainConfig, train
from . import view
from .controls import (
    ADVANCED_CONTROLS,
    DESCRIPTION_STYLE,
    MAX_SEEDS,
    RefusesOutOfRange,
    build_controls,
    config_from_controls,
    css_class,
    labelled_row,
    refusing,
    seed_configs,
)
from .describe import explain_run, format_value, run_label
from .runs import LabRun, lab_measure_every, warm_up_torch
from .view import BAR_STYLES, COLORS, NOTE_MARK, STATUS_WORDS, ViewTicker


class GRPOLab:
    """The dashboard. ``GRPOLab(**knobs)`` starts the controls at ``TrainConfig(**knobs)``.

    Unless given, eval_every and probe_every are ``lab_measure_every(steps)`` (25 for 150 steps).
    autorun: start a run at once; max_runs: finished runs kept on the plot (oldest dropped);
    refresh_interval: seconds between plot updates while training (at least); debounce: seconds a
    new run waits for further changes before it starts; training_threads: torch threads of the
    training thread (default: one core fewer than the machine has, see default_training_threads).
    Surface for tests and notebooks: ``controls`` (by TrainConfig field name), ``num_seeds``,
    ``x_axis``, ``run_button``, ``stop_button``, ``clear_button``, ``plot`` (the Image), ``status``,
    ``progress``, ``hints``, ``runs`` (finished runs, oldest first), ``current``, ``wait(timeout)``.
    """

    def __init__(
        self,
        autorun: bool = False,
        max_runs: int = 6,
        refresh_interval: float = 0.4,
        debounce: float = 0.05,
        training_threads: int | None = None,
        **config_values,
    ):
        if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
            raise ConfigError("max_runs", max_runs, "must be an integer >= 1 (finished runs kept on the plot)")
        config = TrainConfig(**config_values).validate()
        measure_every = {name: lab_measure_every(config.steps) for name in ("eval_every", "probe_every") if name not in config_values}
        self.base_config = replace(config, **measure_every).validate()
        self.max_runs, self.refresh_interval, self.debounce = max_runs, refresh_interval, debounce
        self.training_threads = training_threads or default_training_threads()
        self.controls = build_controls(self.base_config)
        self.num_seeds = refusing(widgets.IntSlider)(
            value=1,
            min=1,
            max=MAX_SEEDS,
            description="seeds (mean and band)",
            continuous_update=False,
            style=DESCRIPTION_STYLE,
            layout=widgets.Layout(width="520px"),
        )
        self.x_axis = widgets.Dropdown(
            options=(("training step", "step"), ("responses sampled", "samples")),
            value="step",
            description="x axis",
            style={"description_width": "60px"},
            layout=widgets.Layout(width="240px"),
        )
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play", layout=widgets.Layout(width="110px"))
        self.stop_button = widgets.Button(description="Stop", button_style="warning", icon="stop", layout=widgets.Layout(width="110px"))
        self.clear_button = widgets.Button(description="Clear earlier runs", icon="trash", layout=widgets.Layout(width="180px"))
        self.status = widgets.HTML("Move a slider or press Run.")
        self.progress = widgets.IntProgress(value=0, min=0, max=1, layout=widgets.Layout(width="220px"))
        self.hints = widgets.HTML("")
        self.figure = LiveRunFigure()
        self.plot = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width=f"{self.figure.width_px}px"))
        for widget, name in (
            (self.num_seeds, "num_seeds"),
            (self.x_axis, "x_axis"),
            (self.run_button, "run"),
            (self.stop_button, "stop"),
            (self.clear_button, "clear"),
            (self.status, "status"),
            (self.progress, "progress"),
            (self.hints, "hints"),
            (self.plot, "plot"),
        ):
            widget.add_class(css_class(name))

        self.runs: list[LabRun] = []
        self.current: LabRun | None = None
        self.refusal = ""  # the last "Cannot run: ..." line, shown until a run starts
        self._thread: threading.Thread | None = None
        self._keys = itertools.count()
        self._color_index = -1
        self._started_runs = 0
        self._lock = threading.RLock()  # guards runs, current and _thread
        self._draw_lock = threading.Lock()  # one figure, drawn by one thread at a time

        for name, control in (*self.controls.items(), ("num_seeds", self.num_seeds)):
            control.observe(lambda _change: self.start_run(), "value")
            if isinstance(control, RefusesOutOfRange):  # a checkbox has no range
                control.on_refused(lambda value, allowed, name=name: self.refuse(name, value, allowed))
        self.x_axis.observe(lambda _change: self.redraw(), "value")
        self.run_button.on_click(lambda _button: self.start_run())
        self.stop_button.on_click(lambda _button: self.stop())
        self.clear_button.on_click(lambda _button: self.clear())
        self.widget = self._layout()
        warm_up_torch()
        self.refresh_view()
        if autorun:
            self.start_run()

    def _layout(self) -> widgets.Box:
        advanced = widgets.VBox([labelled_row(name, self.controls[name]) for name in ADVANCED_CONTROLS] + [self.num_seeds])
        accordion = widgets.Accordion([advanced], titles=("Advanced: batch, optimiser, reward model, seeds",), selected_index=None)
        accordion.add_class("grpo-advanced")
        controls = widgets.VBox(
            [
                *[labelled_row(name, self.controls[name]) for name in ("group_size", "std_eps", "baseline")],
                accordion,
                widgets.HBox([self.run_button, self.stop_button, self.clear_button]),
                self.x_axis,
                widgets.HBox([self.progress, self.status], layout=widgets.Layout(align_items="center", flex_flow="row wrap")),
                self.hints,
            ],
            layout=widgets.Layout(flex="0 0 540px", width="540px", margin="0 16px 0 0"),
        )
        plot = widgets.Box([self.plot], layout=widgets.Layout(flex="1 1 600px", min_width="600px", max_width=f"{self.figure.width_px}px"))
        # controls beside the plot where the page is wide enough (a projector, a 1440 px screen),
        # so both fit one screen; on a narrow page the plot wraps under the controls
        return widgets.Box([controls, plot], layout=widgets.Layout(display="flex", flex_flow="row wrap", align_items="flex-start", width="100%"))

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # -- callbacks (thin) --

    def start_run(self) -> LabRun | None:
        """Cancel the run in progress, if any, and start one with the controls' values; None (and
        the reason in the status line) when the values are not a valid TrainConfig."""
        try:
            config = config_from_controls(self.controls, self.base_config)
        except ValueError as error:
            self.status.value = f"<b>Cannot run:</b> {html.escape(str(error))}"
            return None
        self.refusal = ""
        with self._lock:
            key = next(self._keys)
            run = LabRun(seed_configs(config, self.num_seeds.value), key=key)
            run.repeats = next((earlier.number for earlier in reversed(self.runs) if earlier.configs == run.configs), 0)
            previous_thread = self._thread
            if self.current is not None:
                self.current.cancel("superseded")
            self.current = run
            self._thread = threading.Thread(target=self._run_in_background, args=(run, previous_thread), name=f"grpo-lab-run-{key}", daemon=True)
            self._thread.start()
        self._show_status(run)  # "Starting ...": at once, before the previous run has wound down
        return run

    def refuse(self, knob: str, value, allowed: str) -> None:
        """Say why a value set from code was refused (the control kept its value; nothing runs)."""
        shown = format_value(value) if isinstance(value, (int, float)) else repr(value)
        self.refusal = f"<b>Cannot run:</b> {html.escape(knob)} = {html.escape(shown, quote=False)}, allowed {html.escape(allowed)}"
        self.status.value = self.refusal  # and it stays above a run in progress until the next run starts

    def stop(self) -> None:
        """Stop the run in progress (it stays on the plot until the next run, not in ``runs``)."""
        with self._lock:
            if self.current is not None:
                self.current.cancel("stopped by the user")

    def clear(self) -> None:
        """Forget the earlier runs (the run in progress goes on)."""
        with self._lock:
            self.runs.clear()
        self.redraw()

    def redraw(self) -> None:
        """Redraw now if idle; a run in progress redraws at its next tick."""
        with self._lock:
            running = self.current is not None and self.current.status in ("waiting", "running")
            if running:
                self.current.version += 1
        if not running:
            self.refresh_view()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no run is in progress, at most ``timeout`` seconds; True when idle."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                thread = self._thread
            if thread is None:
                return True
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            if thread.is_alive():
                return False
            with self._lock:
                if thread is self._thread:
                    return True

    def close(self) -> None:
        """Stop the run in progress and close every widget."""
        self.stop()
        self.wait(10)
        pending = [self.widget]
        while pending:
            widget = pending.pop()
            pending.extend(getattr(widget, "children", ()))
            widget.close()

    # -- the background run --

    def _run_in_background(self, run: LabRun, previous_thread: threading.Thread | None) -> None:
        if previous_thread is not None:
            previous_thread.join()  # one run at a time: the cancelled one ends within a step
        if run.stop_event.wait(self.debounce):  # a newer change came in, or Stop: it never starts
            run.status, run.message = "stopped", run.stop_reason
            with self._lock:
                stopped_by_user = run is self.current
            if stopped_by_user:  # else the newer run shows its own status
                self._show_status(run)
            return
        with self._lock:
            self._started_runs += 1
            run.number = self._started_runs
        run.color = self._next_color()
        # the first frame (the new run in the legend, no points yet) is a full redraw of the four panels,
        # a few tenths of a second of Python: drawn here, before training, it does not compete with it
        run.status = "running"
        if view.FIRST_FRAME_BEFORE_TRAINING:
            self.refresh_view()
        seen = {"version": run.version if view.FIRST_FRAME_BEFORE_TRAINING else -1}

        def changed() -> bool:
            fresh = run.version != seen["version"]
            seen["version"] = run.version
            return fresh

        ticker = ViewTicker(self.refresh_view, changed, self.refresh_interval, name=f"grpo-lab-view-{run.key}")
        ticker.start()
        try:
            with torch_threads(self.training_threads):
                run.train_all_seeds(train)
        except Exception as error:  # a bug must not leave the dashboard saying "Running" forever
            run.status, run.message, run.traceback = "failed", f"{type(error).__name__}: {error}", traceback.format_exc()
            run.elapsed = time.perf_counter() - run.started if run.started else 0.0
        finally:
            ticker.stop()
            if run.status == "stopped":
                run.message = run.stop_reason
            with self._lock:
                if run.status in ("finished", "failed"):
                    # same configs and seeds train the same curves (CPU runs are deterministic): keep one copy
                    self.runs = [earlier for earlier in self.runs if earlier.configs != run.configs] + [run]
                    del self.runs[: -self.max_runs]
                superseded = run is not self.current
            if not superseded:  # the final picture first, then "Finished" (refresh_view writes the status last)
                self.refresh_view()

    def _next_color(self) -> str:
        """The next matplotlib cycle colour ('C0'...'C9') that no run on the plot uses."""
        with self._lock:
            used = {run.color for run in self.runs}
            self._color_index += 1
            for offset in range(len(COLORS)):
                color = COLORS[(self._color_index + offset) % len(COLORS)]
                if color not in used:
                    self._color_index += offset
                    return color
        return COLORS[self._color_index % len(COLORS)]

    # -- the view: figure, status line, progress bar, hints --

    def shown_runs(self) -> list[LabRun]:
        """The runs on the plot, oldest first: the finished ones, then the current one."""
        with self._lock:
            shown = list(self.runs)
            if self.current is not None and self.current not in shown and self.current.status != "waiting":
                shown.append(self.current)
        return shown

    def refresh_view(self) -> float:
        """Redraw the figure into the Image and update the status line; returns the seconds it took."""
        started = time.perf_counter()
        shown = self.shown_runs()
        configs = [run.config for run in shown]
        curves = [
            RunCurves(
                run.key,
                run_label(run.config, configs, run.num_seeds) + ("  (failed)" if run.status == "failed" else ""),
                [list(history) for history in run.histories],
                run.color,
                faded=run is not shown[-1],
                live=run.status in ("waiting", "running"),
            )
            for run in shown
        ]
        newest = shown[-1] if shown else None
        x_key = self.x_axis.value
        x_max = max((run.config.steps * (1 if x_key == "step" else run.config.samples_per_step) for run in shown), default=None)
        advantages_title = ""
        if newest is not None and newest.advantages is not None:
            P, G = newest.advantages.shape
            advantages_title = f"Advantages at step {newest.advantages_step} ({P} x {G} responses)"
        with self._draw_lock:
            self.figure.update(
                curves,
                x_key=x_key,
                x_max=x_max,
                advantages=newest.advantages if newest else None,
                advantages_title=advantages_title,
                histogram_color=newest.color if newest else None,
            )
            png = self.figure.png()
        self.plot.value = png
        self._show_status(self.current)
        return time.perf_counter() - started

    def _show_status(self, run: LabRun | None) -> None:
        if run is None:
            return
        configs = [shown.config for shown in self.shown_runs()] or [run.config]
        label = html.escape(run_label(run.config, configs, run.num_seeds))
        total = run.config.steps * run.num_seeds
        words = [f"<b>{STATUS_WORDS[run.status]}</b> run {run.number}: {label}" if run.number else f"<b>{STATUS_WORDS[run.status]}</b> {label}"]
        if run.status == "running":
            seed_part = f"seed {len(run.histories)} of {run.num_seeds}, " if run.num_seeds > 1 else ""
            step = run.histories[-1][-1]["step"] if run.histories and run.histories[-1] else 0
            words.append(f"{seed_part}step {step} of {run.config.steps}")
        elif run.status in ("finished", "failed", "stopped"):
            words.append(f"in {run.elapsed:.1f} s" + (f": {html.escape(run.message)}" if run.message and run.status != "finished" else ""))
        if run.repeats:
            words.append(
                f"same settings and seed as run {run.repeats}, so the same curves again (CPU runs repeat exactly); "
                "change <i>first seed</i> under Advanced for a new draw"
            )
        accuracies = [
            (history[0]["eval_accuracy"], [r["eval_accuracy"] for r in history if "eval_accuracy" in r][-1]) for history in run.histories if history
        ]
        if accuracies:
            start = sum(a for a, _ in accuracies) / len(accuracies)
            latest = sum(b for _, b in accuracies) / len(accuracies)
            over = " (mean over seeds)" if len(accuracies) > 1 else ""
            words.append(f"held-out accuracy {start:.2f} &rarr; {latest:.2f}{over}")
        self.status.value = (self.refusal + "<br>" if self.refusal else "") + " &middot; ".join(words)
        self.progress.max = max(total, 1)
        self.progress.value = min(run.steps_done, total) if run.status != "finished" else total
        self.progress.bar_style = BAR_STYLES[run.status]
        notes = explain_run(run.config, run.histories[-1] if run.histories else [], run.status, run.message, crashed=bool(run.traceback))
        self.hints.value = "".join(f"<p style='margin:4px 0;max-width:1000px'>{NOTE_MARK} {html.escape(note)}</p>" for note in notes)
