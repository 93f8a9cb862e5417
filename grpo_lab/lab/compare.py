"""The lab's Runs tab (``RunsPanel``): a row for each kept run (``RunRow``: its tag in its colour and
marker, a name, pin and show boxes, what sets it apart), two runs chosen to compare alone (A and B),
and the export of the plot and the runs as download links. The callbacks only set a run's fields and
call the lab back."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable

import ipywidgets as widgets

from .controls import css_class
from .describe import compared_labels, run_label
from .export import download_links
from .runs import LabRun

MAX_NAME = 12  # characters of a run's name: it is written beside the plot's accuracy panel
NO_RUN = -1  # the A/B choices' value for none, not comparing (a Dropdown would show a value of None as no choice at all)
# the runs' markers (plots.RUN_MARKERS) as characters, for their rows
MARKER_GLYPHS = {"o": "●", "s": "■", "^": "▲", "D": "◆", "v": "▼", "P": "✚", "X": "✖"}


class RunRow:
    """One kept run's row: ``tag``, ``name`` (a text box; at most MAX_NAME characters are used),
    ``pin`` and ``show`` (check boxes), ``settings`` (what sets it apart). ``changed()`` is called
    after the user changes one."""

    def __init__(self, run: LabRun, changed: Callable[[], None]):
        self.run, self.changed = run, changed
        self.tag = widgets.HTML(layout=widgets.Layout(width="84px"))
        self.name = widgets.Text(
            value=run.name,
            description="name",
            placeholder=f"run {run.number}",
            continuous_update=False,
            style={"description_width": "54px"},
            layout=widgets.Layout(width="170px"),
        )
        self.pin = widgets.Checkbox(value=run.pinned, description="pin", indent=False, layout=widgets.Layout(width="60px"))
        self.show = widgets.Checkbox(value=not run.hidden, description="show", indent=False, layout=widgets.Layout(width="72px"))
        self.settings = widgets.HTML(layout=widgets.Layout(flex="1 1 0", min_width="0", overflow="hidden"))
        self.widget = widgets.HBox([self.tag, self.name, self.pin, self.show, self.settings], layout=widgets.Layout(align_items="center"))
        for widget, name in ((self.widget, "run_row"), (self.name, "run_name"), (self.pin, "run_pin"), (self.show, "run_show")):
            widget.add_class(css_class(name))
        self.name.observe(self._renamed, "value")
        self.pin.observe(self._pinned, "value")
        self.show.observe(self._shown, "value")

    def _renamed(self, change) -> None:
        self.run.name = change.new.strip()[:MAX_NAME]
        self.changed()

    def _pinned(self, change) -> None:
        self.run.pinned = change.new
        self.changed()

    def _shown(self, change) -> None:
        self.run.hidden = not change.new
        self.changed()

    def describe(self, apart: str, settings: str) -> None:
        """Show the run's tag in its colour and marker, and ``apart`` (what sets it apart; cut short with
        '...' when long), its whole ``settings`` on hover."""
        glyph = MARKER_GLYPHS.get(self.run.marker, "●")
        self.tag.value = f"<span style='color:{self.run.color}'>{glyph}</span> {html.escape(self.run.tag)}"
        self.settings.value = (
            f"<div title='{html.escape(settings)}' style='white-space:nowrap;overflow:hidden;text-overflow:ellipsis'>"
            f"{html.escape(apart or settings)}</div>"
        )

    def close(self) -> None:
        for widget in (self.widget, self.tag, self.name, self.pin, self.show, self.settings):
            widget.close()


class RunsPanel:
    """The Runs tab. ``compare_a``, ``compare_b``: the two runs drawn alone when both are chosen (``pair``);
    ``rows``: a RunRow per kept run, by run key; ``export_button`` fills ``downloads`` with links to
    ``export()``'s files. ``changed()`` is called after the user changes anything but the export."""

    def __init__(self, changed: Callable[[], None], export: Callable[[], dict[str, bytes]]):
        self.changed, self.export = changed, export
        choice = {"options": [("none", NO_RUN)], "value": NO_RUN, "style": {"description_width": "90px"}, "layout": widgets.Layout(width="250px")}
        self.compare_a = widgets.Dropdown(description="compare A", **choice)
        self.compare_b = widgets.Dropdown(description="with B", **choice)
        self.rows: dict[int, RunRow] = {}
        self.rows_box = widgets.VBox([], layout=widgets.Layout(max_height="300px", overflow="auto"))
        self.export_button = widgets.Button(
            description="Export plot and runs", tooltip="The plot as PNG, the runs as JSON and CSV", layout=widgets.Layout(width="190px")
        )
        self.downloads = widgets.HTML("")
        for widget, name in (
            (self.compare_a, "compare_a"),
            (self.compare_b, "compare_b"),
            (self.export_button, "export"),
            (self.downloads, "downloads"),
        ):
            widget.add_class(css_class(name))
        self._syncing = False  # True while sync() sets the choices: no call back for that
        self._sync_lock = threading.Lock()  # a run's end (its thread) and the user (the kernel's) may sync at once
        self.compare_a.observe(self._chosen, "value")
        self.compare_b.observe(self._chosen, "value")
        self.export_button.on_click(lambda _button: self.prepare_downloads())
        self.widget = widgets.VBox(
            [
                widgets.HTML("Choose A and B to draw those two runs alone, on the same axes. Pinned runs stay however many come after."),
                widgets.HBox([self.compare_a, self.compare_b], layout=widgets.Layout(flex_flow="row wrap")),
                self.rows_box,
                widgets.HBox([self.export_button, self.downloads], layout=widgets.Layout(align_items="center", flex_flow="row wrap")),
            ]
        )

    def sync(self, runs: list[LabRun]) -> None:
        """A row for each of ``runs`` (the kept runs, oldest first), in order: new rows made, rows of
        runs let go closed; the A/B choices offer the same runs, each named by what sets it apart (a
        choice of a run let go falls back to none)."""
        configs = [run.config for run in runs]
        apart = compared_labels(configs, [run.num_seeds for run in runs])[0] if runs else []
        with self._sync_lock:
            self._syncing = True
            try:
                keys = [run.key for run in runs]
                for run, words in zip(runs, apart):
                    if run.key not in self.rows:
                        self.rows[run.key] = RunRow(run, self.changed)
                    self.rows[run.key].describe(words, run_label(run.config, configs, run.num_seeds))
                self.rows_box.children = [self.rows[key].widget for key in keys]
                # closed only once off the page: a row closed while shown would leave a gap for a moment
                for key in set(self.rows) - set(keys):
                    self.rows.pop(key).close()
                options = (("none", NO_RUN), *((f"{run.tag}: {words}" if words else run.tag, run.key) for run, words in zip(runs, apart)))
                for choice in (self.compare_a, self.compare_b):
                    if tuple(choice.options) != options:
                        value = choice.value
                        choice.options = options  # resets the value
                        choice.value = value if value in keys else NO_RUN
            finally:
                self._syncing = False

    def pair(self) -> tuple[int, int] | None:
        """The keys of runs A and B when two different runs are chosen, else None."""
        a, b = self.compare_a.value, self.compare_b.value
        return (a, b) if NO_RUN not in (a, b) and a != b else None

    def end_comparison(self) -> None:
        """Choose none for A and B (a new run is started: all runs are drawn again)."""
        self._syncing = True
        try:
            self.compare_a.value = self.compare_b.value = NO_RUN
        finally:
            self._syncing = False

    def prepare_downloads(self) -> None:
        self.downloads.value = "Download: " + download_links(self.export())

    def _chosen(self, _change) -> None:
        if not self._syncing:
            self.changed()
