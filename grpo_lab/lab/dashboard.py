"""The dashboard (``GRPOLab``): the controls beside the live figure, a status line, a progress bar
and plain-words hints; a Runs tab to pin, name, hide, compare (A/B) and export the runs. A changed
control cancels the run in progress and starts a new one, trained in a background thread with one
core fewer than the machine has (the drawing needs one), while a ``view.ViewTicker`` redraws the figure.
Threads write only the output widgets, never the knobs' controls (the way that works in JupyterLab
and Voila alike); the one exception is the Runs tab at a run's end, whose rows and A/B choices follow
the kept runs (compare.RunsPanel.sync). The callbacks are thin."""

from __future__ import annotations

import html
import itertools
import threading
import time
import traceback
from dataclasses import replace

import ipywidgets as widgets

from ..checks.config_rules import validate_config
from ..checks.threads import default_training_threads, torch_threads
from ..core.config import TrainConfig
from ..errors import ConfigError
from ..live_figure import ALL_PANELS, CSS_DPI, LiveRunFigure, RunCurves
from ..plots import run_look
from ..trainer import train
from . import classroom, view
from .classroom import PLOT_VIEWS
from .compare import RunsPanel
from .controls import (
    ADVANCED_CONTROLS,
    DESCRIPTION_STYLE,
    MAX_SEEDS,
    PRESET_WATCH,
    PRESETS,
    RefusesOutOfRange,
    allowed_values,
    build_controls,
    config_from_controls,
    css_class,
    labelled_row,
    refusing,
    seed_configs,
)
from .describe import EPSILON_BASELINES, EPSILON_KNOBS, compared_labels, explain_run, knob_value_text, plot_summary, run_label, short_run_label
from .export import FILE_NAMES, runs_csv, runs_json
from .kernel_thread import on_kernel_thread
from .runs import LabRun, keep_runs, lab_measure_every, warm_up_torch
from .view import BAR_STYLES, NOTE_MARK, PAGE_EXTRAS, STATUS_WORDS, ViewTicker

LARGE_VIEW_RUNS = 3  # runs a large plot view shows (the newest): their legend stays on one projector screen
# the large views: two panels stacked, drawn at twice the page's pixels (sharp on any screen) and shown
# as wide as the page leaves beside the controls (the plot room the page reports, from LARGE_VIEW_CSS_PX,
# which fits beside them at 1024 x 768 and is used until the page has said, up to LARGE_VIEW_MAX_CSS_PX),
# so the live figure's 16-point type is 16 points on the page, and the plot fills the width at any size
LARGE_VIEW_CSS_PX, LARGE_VIEW_MAX_CSS_PX, LARGE_VIEW_HEIGHT_CSS_PX, LARGE_VIEW_DPI = 460, 900, 600, 192
ANNOUNCED = ("running", "finished", "failed")  # a run's states said to screen readers (the announcer): not each frame


def live_figure_for(view: str, plot_room: int = 0) -> LiveRunFigure:
    """The live figure of a PLOT_VIEWS view: the four panels, or two of them in large type, as wide as
    ``plot_room`` (CSS pixels the page has beside the controls; 0: not known) allows."""
    panels = PLOT_VIEWS[view][1]
    if panels == ALL_PANELS:
        return LiveRunFigure()
    scale = LARGE_VIEW_DPI / CSS_DPI
    css_width = min(max(plot_room, LARGE_VIEW_CSS_PX), LARGE_VIEW_MAX_CSS_PX)
    return LiveRunFigure(round(css_width * scale), round(LARGE_VIEW_HEIGHT_CSS_PX * scale), LARGE_VIEW_DPI, panels)


def within_control_ranges(values: dict, base: TrainConfig) -> list[str]:
    """Drop from ``values`` (TrainConfig values from a page address) those outside the range of the
    lab's control (steps 5 to 500, ...); one line for each dropped."""
    probes = build_controls(base)
    problems = []
    for knob, value in list(values.items()):
        probes[knob].value = value  # refused, not clamped, when outside the range (RefusesOutOfRange)
        if probes[knob].value != value:
            problems.append(
                f"{knob} = {knob_value_text(value)} in the page address is outside the lab's range: allowed {allowed_values(probes[knob])}"
            )
            del values[knob]
    for probe in probes.values():
        probe.close()
    return problems


class GRPOLab:
    """The dashboard. ``GRPOLab(**knobs)`` starts the controls at ``TrainConfig(**knobs)``.

    Unless given, eval_every and probe_every are ``lab_measure_every(steps)`` (25 for 150 steps).
    autorun: start a run at once; max_runs: unpinned finished runs kept on the plot (the oldest let go;
    pinned runs are kept besides);
    refresh_interval: seconds between plot updates while training (at least); debounce: seconds a
    new run waits for further changes before it starts; training_threads: torch threads of the
    training thread (default: one core fewer than the machine has, see default_training_threads);
    page_query: settings from a page address ('group_size=2&baseline=mean', classroom.py), by
    default the Voila page's own (none outside Voila; in a kernel `make voila` warmed in advance, the
    constructor waits there until a student opens the page); they override the knobs given.
    Surface for tests and notebooks: ``controls`` (by TrainConfig field name), ``num_seeds``,
    ``x_axis``, ``plot_view`` (PLOT_VIEWS: all four panels, or two in large type for a projector;
    the page address's ``plot=large``), ``run_button``, ``stop_button``, ``clear_button``, ``new_seed_button``,
    ``preset_buttons`` (by PRESETS name), ``plot`` (the Image), ``status``, ``progress``, ``hints``,
    ``summary`` (the plot in words), ``announcement`` (what screen readers hear: a run's start, end or
    failure), ``plot_room`` (CSS pixels beside the controls, from the page), ``share_link``, ``runs_panel`` (compare.RunsPanel: a row per
    kept run with name, pin and show; the A/B choice; export), ``runs`` (the kept runs, oldest first),
    ``current``, ``wait(timeout)``, ``export_files()``.
    """

    def __init__(
        self,
        autorun: bool = False,
        max_runs: int = 6,
        refresh_interval: float = 0.4,
        debounce: float = 0.05,
        training_threads: int | None = None,
        page_query: str | None = None,
        **config_values,
    ):
        if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
            raise ConfigError("max_runs", max_runs, "must be an integer >= 1 (finished runs kept on the plot)")
        self.link_base = validate_config(TrainConfig(**config_values))  # what a page address is measured against
        warm_up_torch()  # first: in a kernel Voila warmed in advance, it is done while page_query waits for the page
        query = classroom.page_query() if page_query is None else page_query
        from_page, page_seeds, page_problems = classroom.settings_from_query(query, self.link_base)
        page_plot, plot_problems = classroom.plot_view_from_query(query)
        self.page_theme = classroom.theme_from_query(query)  # Voila's own (?theme=dark): kept in the share link
        page_problems += plot_problems + within_control_ranges(from_page, self.link_base)
        config = validate_config(TrainConfig(**{**config_values, **from_page}))
        measure_every = {name: lab_measure_every(config.steps) for name in ("eval_every", "probe_every") if name not in config_values}
        self.base_config = validate_config(replace(config, **measure_every))
        self.max_runs, self.refresh_interval, self.debounce = max_runs, refresh_interval, debounce
        self.training_threads = training_threads or default_training_threads()
        self.controls = build_controls(self.base_config)
        self.num_seeds = refusing(widgets.IntSlider)(
            value=page_seeds or 1,
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
        # no icons: they would come from FontAwesome (a CDN, offline in class) and be read out as part of the name
        self.run_button = widgets.Button(
            description="Run", button_style="primary", tooltip="Train with these settings", layout=widgets.Layout(width="96px")
        )
        self.stop_button = widgets.Button(description="Stop", button_style="danger", tooltip="Stop the run", layout=widgets.Layout(width="96px"))
        self.new_seed_button = widgets.Button(
            description="New seed", tooltip="The same settings on the next seeds: a new draw", layout=widgets.Layout(width="120px")
        )
        self.clear_button = widgets.Button(
            description="Clear earlier runs", tooltip="Take the earlier runs off the plot, but for pinned ones", layout=widgets.Layout(width="170px")
        )
        self.preset_buttons = {
            name: widgets.Button(
                description=name,
                tooltip="Runs "
                + " then ".join(", ".join(f"{knob} = {knob_value_text(value)}" for knob, value in settings.items()) for settings in runs)
                + ". Watch "
                + PRESET_WATCH[name],
                layout=widgets.Layout(width="auto"),
            )
            for name, runs in PRESETS.items()
        }
        self.share_link = widgets.HTML("")
        self.summary = widgets.HTML("")
        self.status = widgets.HTML("Move a slider or press Run.")
        # what a screen reader hears: the status at a run's start, end or failure, not the visible line's every frame
        self.announcement = widgets.HTML("")
        self._announced: tuple = ()  # (run key, state) last announced
        # CSS pixels the page has beside the controls, written by the page's script (view.ACCESSIBILITY_SCRIPT)
        self.plot_room = widgets.IntText(value=0, layout=widgets.Layout(display="none"))
        self.progress = widgets.IntProgress(value=0, min=0, max=1, layout=widgets.Layout(width="220px"))
        self.hints = widgets.HTML("")
        self.plot_view = widgets.Dropdown(
            options=[(words, key) for key, (words, _panels) in PLOT_VIEWS.items()],
            value=page_plot or "all",
            description="plot",
            style={"description_width": "40px"},
            layout=widgets.Layout(width="270px"),
        )
        self.figure = live_figure_for(self.plot_view.value, self.plot_room.value)
        self.plot = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width=f"{self.figure.css_width_px}px"))
        for widget, name in (
            (self.num_seeds, "num_seeds"),
            (self.x_axis, "x_axis"),
            (self.plot_view, "plot_view"),
            (self.run_button, "run"),
            (self.stop_button, "stop"),
            (self.clear_button, "clear"),
            (self.new_seed_button, "new_seed"),
            (self.share_link, "share_link"),
            (self.summary, "summary"),
            (self.status, "status"),
            (self.announcement, "announce"),
            (self.plot_room, "plot_room"),
            (self.progress, "progress"),
            (self.hints, "hints"),
            (self.plot, "plot"),
        ):
            widget.add_class(css_class(name))

        self.runs: list[LabRun] = []
        self.current: LabRun | None = None
        self.runs_panel = RunsPanel(changed=self._runs_changed, export=self.export_files)
        for button in self.preset_buttons.values():
            button.add_class("grpo-preset")
        self.refusal = ""  # the last "Cannot run: ..." line, shown until a run starts
        self.page_problems = page_problems  # settings of the page address that could not be used: shown in the hints
        self.let_go = ""  # which runs the last finished one pushed off the plot, for the status line
        self.watch = ""  # where a preset's difference shows (PRESET_WATCH), in the hints while its runs are on the plot
        self._thread: threading.Thread | None = None
        self._keys = itertools.count()
        self._styles: dict[str, int] = {}  # settings -> index of their look (plots.run_look): colour, marker, line style
        self._started_runs = 0
        self._queued: list[TrainConfig] = []  # the rest of a preset's runs, started one after the other
        self._quiet = False  # True while a preset moves the controls (no run per moved control)
        self._lock = threading.RLock()  # guards runs, current and _thread
        self._draw_lock = threading.Lock()  # one figure, drawn by one thread at a time
        self._send_lock = threading.Lock()  # the view's widgets written by one thread at a time (_send_view_again)
        self._rows_behind = False  # a run ended and the Runs tab has no row for it yet (_sync_rows)

        for name, control in (*self.controls.items(), ("num_seeds", self.num_seeds)):
            control.observe(lambda _change: self._control_changed(), "value")
            if isinstance(control, RefusesOutOfRange):  # a checkbox has no range
                control.on_refused(lambda value, allowed, name=name: self.refuse(name, value, allowed))
        self.x_axis.observe(lambda _change: self.redraw(), "value")
        self.plot_view.observe(lambda _change: self.change_plot_view(), "value")
        self.plot_room.observe(lambda _change: self._plot_room_changed(), "value")
        self.run_button.on_click(lambda _button: self.start_run())
        self.stop_button.on_click(lambda _button: self.stop())
        self.clear_button.on_click(lambda _button: self.clear())
        self.new_seed_button.on_click(lambda _button: self.new_seed())
        for name, button in self.preset_buttons.items():
            button.on_click(lambda _button, name=name: self.run_preset(name))
        self.controls["baseline"].observe(lambda _change: self._enable_epsilon(), "value")
        self._enable_epsilon()
        self.widget = self._layout()
        first_run = self.start_run() if autorun else None
        if first_run is None:
            # the empty plot; with autorun the run's first frame is the first drawing: one full draw of the
            # four panels (about a second of CPU) fewer before a Voila page shows
            self.refresh_view()

    def _layout(self) -> widgets.Box:
        main = widgets.VBox(
            [
                *[labelled_row(name, self.controls[name]) for name in ("group_size", "std_eps", "baseline")],
                widgets.HBox([self.x_axis, self.plot_view]),
            ]
        )
        advanced = widgets.VBox(
            [labelled_row(name, self.controls[name]) for name in ADVANCED_CONTROLS] + [self.num_seeds],
            layout=widgets.Layout(max_height="330px", overflow="auto"),  # scrolls within its tab: Run and the status stay put
        )
        tasks = widgets.VBox(
            [
                widgets.HTML("One click runs a guided task's comparison, one run after the other:"),
                widgets.HBox(list(self.preset_buttons.values()), layout=widgets.Layout(flex_flow="row wrap")),
                self.share_link,
            ]
        )
        # a tab, not an accordion: opening Advanced replaces the main controls instead of pushing
        # Run and the status down (they sit above the tabs)
        tabs = widgets.Tab([main, advanced, tasks, self.runs_panel.widget], titles=("Main", "Advanced", "Guided tasks", "Runs"))
        tabs.add_class("grpo-tabs")
        controls = widgets.VBox(
            [
                widgets.HBox(
                    [self.run_button, self.stop_button, self.new_seed_button, self.clear_button], layout=widgets.Layout(flex_flow="row wrap")
                ),
                widgets.HBox([self.progress, self.status], layout=widgets.Layout(align_items="center", flex_flow="row wrap")),
                tabs,
                self.summary,
                self.hints,
                self.announcement,
                self.plot_room,
            ],
            layout=widgets.Layout(flex="0 0 520px", width="520px", margin="0 12px 0 0"),
        )
        controls.add_class("grpo-controls")
        # overflow hidden: a box that can scroll is a tab stop of its own in Chromium, one with no name
        plot = widgets.Box(
            [self.plot], layout=widgets.Layout(flex="1 1 440px", min_width="440px", max_width=f"{self.figure.css_width_px}px", overflow="hidden")
        )
        plot.add_class("grpo-plot-box")
        self._plot_box = plot
        # controls beside the plot from about 1000 px of page (a projector at 1024 x 768), so both fit one
        # screen; narrower pages (150% zoom) narrow the controls column instead (view.PAGE_CSS); below
        # about 700 px the plot wraps under the controls
        page = widgets.Box([controls, plot], layout=widgets.Layout(display="flex", flex_flow="row wrap", align_items="flex-start", width="100%"))
        page.add_class("grpo-lab")
        return widgets.VBox([widgets.HTML(PAGE_EXTRAS), page])

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # -- callbacks (thin) --

    def _control_changed(self) -> None:
        if not self._quiet:
            self.start_run()

    def start_run(self, config: TrainConfig | None = None) -> LabRun | None:
        """Cancel the run in progress, if any, and start one with the controls' values (or
        ``config``); None (and the reason in the status line) when the values are not a valid
        TrainConfig. A run started from the controls ends a preset's sequence."""
        if config is None:
            self._queued, self.watch = [], ""
            self.runs_panel.end_comparison()
            try:
                config = config_from_controls(self.controls, self.base_config)
            except ValueError as error:
                self.status.value = self.announcement.value = f"<b>Cannot run:</b> {html.escape(str(error))}"
                return None
        self.refusal = self.let_go = ""
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
        shown = knob_value_text(value) if isinstance(value, (int, float)) else repr(value)
        self.refusal = f"<b>Cannot run:</b> {html.escape(knob)} = {html.escape(shown, quote=False)}, allowed {html.escape(allowed)}"
        self.status.value = self.announcement.value = self.refusal  # and it stays above a run in progress until the next run starts

    def new_seed(self) -> None:
        """The same settings on the next seeds (first seed moved past the seeds just used): re-runs."""
        self.controls["seed"].value = self.controls["seed"].value + self.num_seeds.value

    def run_preset(self, name: str) -> None:
        """Clear the plot and train the runs of PRESETS[name] one after the other, each from the
        lab's starting settings; the controls show the last run's settings."""
        configs = [validate_config(replace(self.base_config, **settings)) for settings in PRESETS[name]]
        self._quiet = True
        try:  # the controls move to the last run's settings without starting a run each
            for knob in self.controls:
                self.controls[knob].value = getattr(configs[-1], knob)
        finally:
            self._quiet = False
        self.runs_panel.end_comparison()
        self.clear()
        self.start_run(configs[0])
        self._queued, self.watch = configs[1:], f"Guided task {name}: watch {PRESET_WATCH[name]}"

    def _enable_epsilon(self) -> None:
        """std_eps, std_scope and eps_mode change only the baselines that divide by the std (z-score):
        disabled for the others, so two runs that train alike cannot look different."""
        ignored = self.controls["baseline"].value not in EPSILON_BASELINES
        for knob in EPSILON_KNOBS:
            control = self.controls[knob]
            control.disabled = ignored
            if knob == "std_eps":
                control.slider.disabled = ignored or control.value == 0
                control.zero.disabled = ignored

    def stop(self) -> None:
        """Stop the run in progress (it stays on the plot until the next run, not in ``runs``)."""
        self._queued = []
        with self._lock:
            if self.current is not None:
                self.current.cancel("stopped by the user")

    def clear(self) -> None:
        """Forget the earlier runs but for pinned ones (the run in progress goes on)."""
        with self._lock:
            self.runs = [run for run in self.runs if run.pinned]
        self._runs_changed()

    def _runs_changed(self) -> None:
        """The kept runs, or what the user set of them (name, pin, show, A/B), changed: the Runs tab and the plot follow."""
        with self._lock:
            runs = list(self.runs)
        self.runs_panel.sync(runs)
        self.redraw()

    def export_files(self) -> dict[str, bytes]:
        """The plot as shown (PNG) and the kept runs (JSON, CSV: export.py), by file name."""
        with self._lock:
            runs = list(self.runs)
        configs = [run.config for run in runs]
        labels = [run_label(run.config, configs, run.num_seeds) for run in runs]
        return {FILE_NAMES["plot"]: bytes(self.plot.value), FILE_NAMES["json"]: runs_json(runs, labels), FILE_NAMES["csv"]: runs_csv(runs, labels)}

    def redraw(self) -> None:
        """Redraw now if idle; a run in progress redraws at its next tick."""
        with self._lock:
            running = self.current is not None and self.current.status in ("waiting", "running")
            if running:
                self.current.version += 1
        if not running:
            self.refresh_view()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no run is in progress, at most ``timeout`` seconds; True when idle (and then the
        Runs tab has a row for every kept run, even in a cell that waits on the kernel's thread)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                thread = self._thread
            if thread is not None:
                thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
                if thread.is_alive():
                    return False
            with self._lock:
                idle = thread is self._thread
            if idle:
                on_kernel_thread(self._sync_rows)
                return True

    def _sync_rows(self) -> None:
        """The Runs tab's rows brought up to the kept runs, if a run ended since they last were."""
        with self._send_lock:
            if not self._rows_behind:
                return
            self._rows_behind = False
            with self._lock:
                runs = list(self.runs)
            self.runs_panel.sync(runs)

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
        look = self._look_for(run)
        run.color, run.marker, run.line_style = look["color"], look["marker"], look["ls"]
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
                kept = run.status in ("finished", "failed")
                if kept:
                    self.runs, let_go = keep_runs(self.runs, run, self.max_runs)
                    if let_go:
                        self.let_go = (
                            ", ".join(earlier.tag for earlier in let_go)
                            + f" left the plot: the lab keeps the newest {self.max_runs} runs besides pinned ones (pin a run in Runs to keep it)"
                        )
                superseded = run is not self.current
                follow_up = self._queued.pop(0) if self._queued and not superseded and kept else None
            if kept:  # its row in the Runs tab: widgets made on the kernel's thread (kernel_thread.py)
                self._rows_behind = True
                on_kernel_thread(self._sync_rows)
            if not superseded:  # the final picture first, then "Finished" (refresh_view writes the status last)
                self.refresh_view()
            if follow_up is not None:  # a preset's next run (it waits for this thread to end)
                queued, self._queued = self._queued, []
                self.start_run(follow_up)
                self._queued = queued

    def _look_for(self, run: LabRun) -> dict:
        """The colour, marker and line style (plots.run_look) of ``run``'s settings: the look those
        settings had before, unless a kept run of other settings has it now; else the first look in
        run_look's order that none of the runs kept beside it has (so up to seven runs have seven colours)."""
        with self._lock:
            taken = {self._styles[repr(other.configs)] for other in keep_runs(self.runs, run, self.max_runs)[0] if other is not run}
            index = self._styles.get(repr(run.configs))
            if index is None or index in taken:
                index = self._styles[repr(run.configs)] = next(free for free in itertools.count() if free not in taken)
        return run_look(index)

    # -- the view: figure, status line, progress bar, hints --

    def shown_runs(self) -> list[LabRun]:
        """The runs on the plot, oldest first: runs A and B when two are chosen in Runs; else the kept
        runs not hidden, then the current one. A run on its way in is drawn among the runs it will
        leave kept (keep_runs): the plot never holds more runs, nor two of one look, than it will keep."""
        with self._lock:
            pair = self.runs_panel.pair()
            if pair is not None:
                by_key = {run.key: run for run in self.runs}
                return [by_key[key] for key in pair if key in by_key]
            shown, current = list(self.runs), self.current
            if current is not None and current not in shown and current.status != "waiting":
                shown = keep_runs(shown, current, self.max_runs)[0] if current.status != "stopped" else [*shown, current]
        return [run for run in shown if not run.hidden]

    def _plot_room_changed(self) -> None:
        """The page reports its width beside the controls: the page is live (so it is sent the view
        again) and a large view is drawn again to fill the width."""
        self._send_view_again()
        if live_figure_for(self.plot_view.value, self.plot_room.value).css_width_px != self.figure.css_width_px:
            self.change_plot_view()

    def _send_view_again(self) -> None:
        """Send the page the current state of every widget the training thread writes. Voila loads a
        kernel's widget states and only then listens to the kernel: what a run wrote in between (its
        end, when it ends that soon) never reaches the page, and an unchanged value is not sent again."""
        with self._send_lock:
            pending = [self.plot, self.status, self.announcement, self.progress, self.summary, self.hints, self.share_link, self.runs_panel.widget]
            while pending:
                widget = pending.pop()
                widget.send_state()
                pending.extend(getattr(widget, "children", ()))

    def change_plot_view(self) -> None:
        """Draw the runs in the view the ``plot_view`` control names (a new figure: other panels, other type size)."""
        with self._draw_lock:
            self.figure = live_figure_for(self.plot_view.value, self.plot_room.value)
        self.plot.layout.max_width = self._plot_box.layout.max_width = f"{self.figure.css_width_px}px"
        self.redraw()  # and the status line, with the link that opens this view

    def refresh_view(self) -> float:
        """Redraw the figure into the Image and update the status line; returns the seconds it took."""
        started = time.perf_counter()
        shown = self.shown_runs()
        pair = self.runs_panel.pair() is not None
        large = self.figure.panel_names != ALL_PANELS
        if large:  # large type: the newest few runs, each named by what tells it apart, no legend title
            shown = shown[-LARGE_VIEW_RUNS:]
            configs = [run.config for run in shown]
            labels, shared = [short_run_label(run.config, configs, run.num_seeds) for run in shown], ""
        else:  # each run named by what sets it apart, what they share over the legend
            labels, shared = compared_labels([run.config for run in shown], [run.num_seeds for run in shown])
        compared = shown[-2:]  # in the histogram: A and B, or the newest two
        curves = [
            RunCurves(
                run.key,
                label + ("  (failed)" if run.status == "failed" else ""),
                [list(history) for history in run.histories],
                run.color,
                earlier=run is not shown[-1],
                live=run.status in ("waiting", "running"),
                marker=run.marker,
                line_style=run.line_style,
                tag=run.tag if run.number else "",
                reward_offset=run.config.reward_offset,
                reward_scale=run.config.reward_scale,
                histogram=run in compared,
                advantages=run.advantages if run in compared else None,
            )
            for run, label in zip(shown, labels)
        ]
        title = ""
        if len(shown) > 1 and not large:
            title = f"comparing {shown[0].tag} (A) and {shown[1].tag} (B) alone" if pair else "newest last"
            title += f"; unless named: {shared}" if shared else ""
        x_key = self.x_axis.value
        x_max = max((run.config.steps * (1 if x_key == "step" else run.config.samples_per_step) for run in shown), default=None)
        with self._draw_lock:
            self.figure.update(curves, x_key=x_key, x_max=x_max, legend_title=title)
            png = self.figure.png()
        with self._send_lock:
            self.plot.value = png
        self._show_status(self.current)
        return time.perf_counter() - started

    def _show_status(self, run: LabRun | None) -> None:
        if run is not None:
            with self._send_lock:
                self._write_status(run)

    def _write_status(self, run: LabRun) -> None:
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
        if self.let_go and run.status in ("finished", "failed"):
            words.append(html.escape(self.let_go))
        if run.repeats:
            words.append(
                f"same settings and seed as run {run.repeats}, so the same curves again (CPU runs repeat exactly); "
                "press <i>New seed</i> for a new draw"
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
        if run.status in ANNOUNCED and self._announced != (run.key, run.status):
            self._announced = (run.key, run.status)
            self.announcement.value = f"Started run {run.number}: {label}" if run.status == "running" else " &middot; ".join(words)
        self.progress.max = max(total, 1)
        self.progress.value = min(run.steps_done, total) if run.status != "finished" else total
        self.progress.bar_style = BAR_STYLES[run.status]
        notes = explain_run(run.config, run.histories[-1] if run.histories else [], run.status, run.message, crashed=bool(run.traceback))
        notes = [f"Not used: {problem}" for problem in self.page_problems] + ([self.watch] if self.watch else []) + notes
        self.hints.value = "".join(f"<p style='margin:4px 0;max-width:1000px'>{NOTE_MARK} {html.escape(note)}</p>" for note in notes)
        if run.status in ("finished", "failed", "stopped") and run.number:
            self.summary.value = "<b>The plot in words:</b> " + html.escape(self._plot_summary(run))
        link = classroom.query_for_config(run.config, self.link_base, run.num_seeds, self.plot_view.value, self.page_theme)
        self.share_link.value = f"Link to these settings: add <code>{html.escape(link)}</code> to the page address" if link else ""

    def _plot_summary(self, run: LabRun) -> str:
        """``describe.plot_summary`` of ``run`` (accuracies averaged over seeds) against the run shown before it."""

        def accuracy(shown: LabRun) -> tuple[float, float] | None:
            pairs = [[r["eval_accuracy"] for r in history if "eval_accuracy" in r] for history in shown.histories]
            pairs = [(values[0], values[-1]) for values in pairs if values]
            if not pairs:
                return None
            return sum(a for a, _ in pairs) / len(pairs), sum(b for _, b in pairs) / len(pairs)

        shown = [earlier for earlier in self.shown_runs() if earlier is not run and earlier.number and accuracy(earlier)]
        earlier = (shown[-1].number, shown[-1].config, accuracy(shown[-1])[1]) if shown else None
        label = run_label(run.config, [other.config for other in self.shown_runs()], run.num_seeds)
        return plot_summary(run.number, label, accuracy(run), earlier, run.config)
