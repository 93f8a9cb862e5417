"""The interactive lab: sliders that re-run GRPO and draw its curves while it trains.

    lab = GRPOLab(steps=60)                 # in a notebook cell: shows the dashboard
    lab.controls["group_size"].value = 4    # any control, by TrainConfig field name: re-runs
    lab.run_button.click(); lab.wait(60)    # or press Run, and wait for the run to end
    lab.runs[-1].history                    # the kept runs, each with its config and history
    lab.runs_panel.rows[lab.runs[0].key].pin.value = True   # the Runs tab: pin, name, show; A/B; export

The package, in the order a run flows through it:
- controls.py: one widget per knob (CSS class ``grpo-<knob>``), read into a TrainConfig;
- describe.py: a run's label on the plot and plain-words notes on what happened;
- runs.py: ``LabRun``, one config trained once per seed, its histories filling while it trains, and
  which runs the lab keeps (``keep_runs``: the newest few, and every pinned one);
- view.py: the ticker that redraws while a run trains, the status words and colours;
- compare.py: the Runs tab (``RunsPanel``): a row per kept run to name, pin and hide it, A and B to
  compare alone, the export; export.py: the runs as JSON and CSV, and download links;
- dashboard.py: ``GRPOLab``, which lays them out and wires them together; kernel_thread.py: widgets made
  and closed on the kernel's thread, not a run's;
- classroom.py: the Voila page (cells tagged voila-skip left out, settings from the page address).
The figure it draws is ``grpo_lab/live_figure.py`` (the CLI's ``train --plot`` draws it too).

Names are imported on first use: the command line reads ``describe.run_label`` for its plot
without pulling in ipywidgets.
"""

from __future__ import annotations

import importlib

_HOMES = {  # public name -> the module of this package that holds it
    **dict.fromkeys(("GRPOLab",), "dashboard"),
    **dict.fromkeys(("build_controls", "config_from_controls", "seed_configs", "css_class", "RefusesOutOfRange", "EpsilonControl"), "controls"),
    **dict.fromkeys(("run_label", "compared_labels", "explain_run", "knob_value_text"), "describe"),
    **dict.fromkeys(("LabRun", "keep_runs", "lab_measure_every", "warm_up_torch"), "runs"),
    **dict.fromkeys(("ViewTicker",), "view"),
    **dict.fromkeys(("RunsPanel",), "compare"),
    **dict.fromkeys(("runs_json", "runs_csv"), "export"),
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module 'grpo_lab.lab' has no attribute {name!r}")
