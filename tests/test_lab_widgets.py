"""The lab's widgets without a browser: controls -> TrainConfig -> background run -> plot and status.

Runs are short (10-20 steps); every lab is closed at the end of its test so no thread outlives it.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import os
import re
import runpy
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import nbformat
import PIL.Image
import pytest
import traitlets.config
from conftest import assert_one_line_error, assert_one_line_naming
from matplotlib.text import Text

import grpo_lab.lab.dashboard as dashboard_module
from grpo_lab import GRPOLab, TrainConfig, train
from grpo_lab.checks.threads import torch_threads
from grpo_lab.errors import ConfigError
from grpo_lab.lab import build_controls, config_from_controls, explain_run, lab_measure_every, run_label
from grpo_lab.lab.classroom import query_for_config, settings_from_query
from grpo_lab.live_figure import LiveRunFigure, RunCurves

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WAIT_SECONDS = 240  # generous: CI shares two cores with the other tests
LAB_NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "03_interactive_lab.ipynb"
VOILA_PAGE = Path(__file__).resolve().parents[1] / "grpo_lab" / "lab" / "voila_page"
VOILA_PAGE_CONFIG = VOILA_PAGE / "voila.py"


@pytest.fixture
def make_lab():
    labs = []

    def make(**values) -> GRPOLab:
        lab = GRPOLab(**values)
        labs.append(lab)
        return lab

    yield make
    for lab in labs:
        lab.close()


def lab_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith(("grpo-lab-run", "grpo-lab-view"))]


def wait_for_steps(lab: GRPOLab, steps: int, timeout: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while lab.current is None or lab.current.steps_done < steps:
        assert time.monotonic() < deadline, f"the run did not reach {steps} steps in {timeout} s"
        time.sleep(0.05)


def test_every_control_has_its_css_class_and_maps_to_a_config_field():
    controls = build_controls(TrainConfig())
    config_fields = set(TrainConfig().to_dict())
    for name, control in controls.items():
        assert name in config_fields
        assert "grpo-" + name.replace("_", "-") in control._dom_classes
    for name in ("group_size", "std_eps", "baseline"):
        assert name in controls
    assert set(controls["group_size"].options) >= {2, 4, 8, 16, 32, 64}
    assert [value for _, value in controls["baseline"].options][:2] == ["mean", "zscore"]  # the comparison up front


def test_epsilon_control_can_be_exactly_zero():
    controls = build_controls(TrainConfig())
    epsilon = controls["std_eps"]
    epsilon.zero.value = True
    assert epsilon.value == 0.0 and epsilon.slider.disabled
    assert config_from_controls(controls, TrainConfig()).std_eps == 0.0
    epsilon.value = 1e-6
    assert not epsilon.zero.value and math.isclose(epsilon.slider.value, 1e-6)
    epsilon.slider.value = 1e-8
    assert math.isclose(config_from_controls(controls, TrainConfig()).std_eps, 1e-8)


def test_a_bad_starting_value_is_one_clear_line():
    with pytest.raises(ConfigError) as caught:
        GRPOLab(group_size=1)
    assert_one_line_error(caught.value, "group_size", 1)


def test_run_reflects_the_controls_trains_for_real_and_redraws_the_plot(make_lab):
    lab = make_lab(steps=20, eval_every=10, probe_every=5)
    before = bytes(lab.plot.value)
    assert before.startswith(PNG_SIGNATURE)
    settings = {"group_size": 4, "baseline": "mean", "std_eps": 1e-6, "prompts_per_step": 8, "lr": 3e-4}
    for name, value in settings.items():
        lab.controls[name].value = value
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)

    run = lab.runs[-1]
    for name, control in lab.controls.items():
        assert getattr(run.config, name) == control.value, name
    assert (run.config.group_size, run.config.baseline, run.config.prompts_per_step) == (4, "mean", 8)
    assert run.status == "finished" and [r["step"] for r in run.history] == list(range(21))
    assert [r["samples"] for r in run.history[1:]] == [8 * 4 * step for step in range(1, 21)]
    # the history is the library's: the same config trained directly (with the same number of torch
    # threads, which sets the order of floating-point sums) gives the same numbers
    with torch_threads(lab.training_threads):
        direct = train(run.config).history
    assert [{k: v for k, v in r.items() if k != "wall_time"} for r in direct] == [
        {k: v for k, v in r.items() if k != "wall_time"} for r in run.history
    ]

    assert bytes(lab.plot.value) != before and bytes(lab.plot.value).startswith(PNG_SIGNATURE)
    assert "Finished" in lab.status.value and "G=4, mean" in lab.status.value
    assert lab.progress.value == lab.progress.max == 20
    assert run.advantages is not None and tuple(run.advantages.shape) == (8, 4)


def test_a_change_during_a_run_cancels_it_and_starts_the_new_one(make_lab):
    lab = make_lab(steps=150)
    lab.run_button.click()
    wait_for_steps(lab, 2)
    first = lab.current
    lab.controls["group_size"].value = 4
    lab.controls["steps"].value = 10  # within the debounce: the two changes make one new run
    assert lab.wait(WAIT_SECONDS)
    assert first.status == "stopped" and first.steps_done < 150
    assert first not in lab.runs
    assert [(run.config.group_size, run.config.steps, run.status) for run in lab.runs] == [(4, 10, "finished")]


def test_stop_button_stops_the_run(make_lab):
    lab = make_lab(steps=150)
    lab.run_button.click()
    wait_for_steps(lab, 1)
    lab.stop_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert lab.current.status == "stopped" and "user" in lab.current.message
    assert lab.runs == [] and "Stopped" in lab.status.value


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_twenty_reruns_leave_no_live_training_threads(make_lab):
    lab = make_lab(steps=10, eval_every=5, probe_every=5)
    for index in range(20):
        if index % 4 == 3:
            lab.run_button.click()
        else:
            lab.controls["group_size"].value = (2, 4, 8)[index % 3]
        time.sleep(0.1 if index % 2 else 0.4)  # some changes land while a run trains, some while it waits
    assert lab.wait(WAIT_SECONDS)
    assert lab_threads() == []
    assert lab.runs[-1].config.group_size == lab.controls["group_size"].value
    assert len(lab.runs) <= lab.max_runs


def test_earlier_runs_stay_labelled_by_what_differs_and_clear_removes_them(make_lab):
    lab = make_lab(steps=10, eval_every=5, probe_every=5)
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    lab.controls["group_size"].value = 4
    assert lab.wait(WAIT_SECONDS)
    assert [run.config.group_size for run in lab.runs] == [8, 4]
    assert lab.runs[0].color != lab.runs[1].color
    with_both = bytes(lab.plot.value)
    lab.x_axis.value = "samples"  # redraws without training
    assert bytes(lab.plot.value) != with_both
    lab.clear_button.click()
    assert lab.runs == [] and bytes(lab.plot.value) != with_both


def test_several_seeds_train_in_turn(make_lab):
    lab = make_lab(steps=10, eval_every=5, probe_every=5)
    lab.num_seeds.value = 2
    assert lab.wait(WAIT_SECONDS)
    run = lab.runs[-1]
    assert [config.seed for config in run.configs] == [0, 1]
    assert [result.status for result in run.results] == ["finished", "finished"]
    rewards = [[record.get("reward") for record in history] for history in run.histories]
    assert rewards[0] != rewards[1]  # different seeds, different samples
    assert "2 seeds" in lab.status.value and "mean over seeds" in lab.status.value


def test_a_non_finite_run_says_why(make_lab):
    lab = make_lab(steps=10, reference="weak")
    lab.controls["std_eps"].value = 0.0
    assert lab.wait(WAIT_SECONDS)
    run = lab.runs[-1]
    assert run.status == "failed" and "std_eps is 0" in run.message
    assert "Failed" in lab.status.value
    assert "not finite" in lab.hints.value and "std_eps" in lab.hints.value


def test_run_label_names_the_reference_epsilon_and_every_knob_off_its_default():
    base = TrainConfig()
    other = TrainConfig(group_size=4, reward_offset=1.0)
    assert run_label(base, [base]) == "G=8, zscore, ref=default, ε=1e-4"
    assert run_label(other, [base, other]) == "G=4, zscore, ref=default, ε=1e-4, offset=1"
    assert run_label(base, [base, other]) == "G=8, zscore, ref=default, ε=1e-4, offset=0"  # differs from the other run
    assert run_label(base, [base], num_seeds=3) == "G=8, zscore, ref=default, ε=1e-4, 3 seeds"
    # off the default even when every run on the plot shares it; the seed only when runs differ in it
    tuned = TrainConfig(reference="weak", std_eps=3e-6, kl_coef=0.04, lr=3e-4, steps=30, seed=5)
    assert run_label(tuned, [tuned]) == "G=8, zscore, ref=weak, ε=3e-6, beta=0.04, lr=3e-4, steps=30"
    assert run_label(tuned, [tuned, replace(tuned, seed=6)]).endswith("steps=30, seed=5")


def test_run_then_stop_at_once_ends_stopped_not_starting(make_lab):
    lab = make_lab(steps=150, debounce=0.5)
    lab.run_button.click()
    assert "Starting" in lab.status.value
    lab.stop_button.click()  # within the debounce: the run never trains
    assert lab.wait(WAIT_SECONDS)
    assert lab.current.status == "stopped" and lab.current.steps_done == 0
    assert "Starting" not in lab.status.value and "Stopped" in lab.status.value and "user" in lab.status.value


def test_an_error_in_the_code_says_what_failed_not_a_number_hint(make_lab, monkeypatch):
    def broken_train(config, **_callbacks):
        raise IndexError("index 16 is out of bounds for dimension 0 with size 16")

    monkeypatch.setattr(dashboard_module, "train", broken_train)
    lab = make_lab(steps=10)
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    run = lab.current
    assert run.status == "failed" and run.message.startswith("IndexError: index 16")
    assert "IndexError" in run.traceback and "broken_train" in run.traceback
    assert "Failed" in lab.status.value and "IndexError: index 16" in lab.status.value
    assert "IndexError" in lab.hints.value and "not finite" not in lab.hints.value
    assert lab_threads() == []


@pytest.mark.parametrize(
    ("knob", "value", "line"),
    [
        ("steps", 10**9, "Cannot run:</b> steps = 1000000000, allowed 5 to 500"),
        ("prompts_per_step", 1, "Cannot run:</b> prompts_per_step = 1, allowed 2 to 64"),
        ("kl_coef", -0.5, "Cannot run:</b> kl_coef = -0.5, allowed 0 to 0.5"),
        ("lr", 0.5, "Cannot run:</b> lr = 0.5, allowed 1e-05 to 0.01"),
        ("group_size", 5, "Cannot run:</b> group_size = 5, allowed 2, 4, 8, 16, 32, 64"),
        ("baseline", "ppo", "Cannot run:</b> baseline = 'ppo', allowed mean, zscore, none, rloo, ema, critic"),
        ("std_eps", 5.0, "Cannot run:</b> std_eps = 5, allowed 0 or 1e-10 to 0.1"),
        ("num_seeds", 99, "Cannot run:</b> num_seeds = 99, allowed 1 to 5"),
    ],
)
def test_an_out_of_range_value_from_code_is_refused_not_clamped(make_lab, knob, value, line):
    lab = make_lab(steps=10)
    control = lab.num_seeds if knob == "num_seeds" else lab.controls[knob]
    before = control.value
    control.value = value
    assert line in lab.status.value
    assert control.value == before and lab.current is None  # nothing clamped, nothing started


def test_run_with_unchanged_settings_says_it_repeats_the_same_seed(make_lab):
    lab = make_lab(steps=5, eval_every=5, probe_every=5)
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert "same settings and seed" not in lab.status.value
    first = lab.runs[-1]
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert "same settings and seed as run 1" in lab.status.value
    assert lab.runs == [lab.current]  # one copy of identical curves on the plot
    without_time = [[{k: v for k, v in record.items() if k != "wall_time"} for record in run.history] for run in (first, lab.current)]
    assert without_time[0] == without_time[1]
    lab.controls["seed"].value = 1
    assert lab.wait(WAIT_SECONDS)
    assert "same settings and seed" not in lab.status.value and len(lab.runs) == 2


def test_explanations_in_plain_words():
    config = TrainConfig()
    quiet = explain_run(config, [{"step": 1, "frac_reward_zero_std": 0.1, "adv_abs_max": 2.0, "reward_std": 0.4}], "running")
    assert quiet == []
    dead_groups = explain_run(config, [{"step": 1, "frac_reward_zero_std": 0.9}], "running")
    assert len(dead_groups) == 1 and "90%" in dead_groups[0] and "teaches the policy nothing" in dead_groups[0]
    offset = explain_run(TrainConfig(baseline="none", reward_offset=2.0), [], "finished")
    assert len(offset) == 1 and "offset 2" in offset[0]
    amplified = explain_run(config, [{"step": 1, "reward_std": 0.001, "adv_abs_max": 1.4}], "running")
    assert len(amplified) == 1 and "amplified" in amplified[0]


def test_the_live_figure_ends_right_under_its_legend():
    figure = LiveRunFigure()
    history = [{"step": step, "reward": 0.4, "eval_accuracy": 0.5, "frac_reward_zero_std": 0.2} for step in range(0, 11, 5)]
    figure.update([RunCurves(0, "G=8, zscore, ref=default, ε=1e-4", [history], "C0")], x_max=10)
    one_run = PIL.Image.open(io.BytesIO(figure.png()))
    # labels too long for more than two columns: three rows
    figure.update([RunCurves(key, f"G=8, zscore, ref=default, ε=1e-4, seed={key}", [history], f"C{key}") for key in range(5)], x_max=10)
    five_runs = PIL.Image.open(io.BytesIO(figure.png()))
    assert one_run.width == five_runs.width == figure.width_px
    assert one_run.height < five_runs.height < figure.height_px  # no empty band under a short legend


def test_the_large_plot_views_draw_two_panels_in_type_that_is_16_points_on_the_page(make_lab):
    lab = make_lab(steps=10, eval_every=5, probe_every=5, page_query="plot=large&group_size=4")
    assert lab.plot_view.value == "large" and lab.figure.panel_names == ("reward", "variance")
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    for group_size in (2, 16, 8):  # four runs in all: the large view shows the newest three
        lab.controls["group_size"].value = group_size
        assert lab.wait(WAIT_SECONDS)
    large = PIL.Image.open(io.BytesIO(lab.plot.value))
    assert large.width == lab.figure.width_px == 2 * lab.figure.css_width_px  # drawn at twice the page's pixels ...
    assert lab.plot.layout.max_width == f"{lab.figure.css_width_px}px"  # ... and shown at the page's: points are points
    assert [text.get_text() for text in lab.figure._legend.get_texts()] == ["run 2: G=2", "run 3: G=16", "run 4: G=8"]
    assert "plot=large" in lab.share_link.value
    before = lab.plot.value
    lab.plot_view.value = "large-zero-std"
    assert lab.figure.panel_names == ("zero_std", "histogram") and lab.plot.value != before
    lab.plot_view.value = "all"
    assert lab.figure.panel_names == ("reward", "variance", "zero_std", "histogram") and lab.plot.layout.max_width == "900px"
    assert "plot=" not in lab.share_link.value
    with pytest.raises(ValueError) as caught:
        LiveRunFigure(panels=("reward",))
    assert_one_line_naming(caught.value, "panels", ("reward",))


def test_a_bad_plot_view_in_the_page_address_is_named_and_not_used(make_lab):
    lab = make_lab(steps=10, page_query="plot=huge&baseline=mean")
    assert lab.plot_view.value == "all" and lab.controls["baseline"].value == "mean"
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert "plot = huge in the page address is not valid: use all, large, large-zero-std" in lab.hints.value


def test_the_lab_measures_about_six_times_a_run_unless_told(make_lab):
    assert [lab_measure_every(steps) for steps in (5, 30, 60, 150, 500)] == [10, 10, 10, 25, 85]
    assert (make_lab().base_config.eval_every, make_lab().base_config.probe_every) == (25, 25)
    told = make_lab(steps=30, eval_every=5).base_config
    assert (told.eval_every, told.probe_every) == (5, 10)


def test_a_refusal_during_a_run_stays_on_the_status_line_until_the_next_run(make_lab):
    lab = make_lab(steps=150)
    lab.run_button.click()
    wait_for_steps(lab, 1)
    lab.controls["steps"].value = 10**9
    steps_before = lab.current.steps_done
    wait_for_steps(lab, steps_before + 2)
    lab.refresh_view()  # as the view's ticker does during the run
    assert "Cannot run:</b> steps = 1000000000" in lab.status.value and "Running" in lab.status.value
    lab.controls["steps"].value = 10  # a valid change: a new run, and the refusal is gone
    assert lab.wait(WAIT_SECONDS)
    assert "Cannot run" not in lab.status.value and "Finished" in lab.status.value


def test_a_critic_run_says_what_the_critic_costs():
    notes = explain_run(TrainConfig(baseline="critic", group_size=1, prompts_per_step=32), [], "running")
    assert any("16 times a step" in note and "five times" in note for note in notes)
    assert not any("critic" in note for note in explain_run(TrainConfig(), [], "running"))


# -- the classroom: page address, presets, new seed, epsilon, colours, the plot in words --------------


def test_page_address_settings_are_read_and_bad_ones_named_in_one_line():
    values, seeds, problems = settings_from_query("?group_size=2&baseline=mean&std_eps=0&skip_zero_std_groups=true&seeds=3", TrainConfig())
    assert values == {"group_size": 2, "baseline": "mean", "std_eps": 0.0, "skip_zero_std_groups": True} and seeds == 3 and problems == []
    values, seeds, problems = settings_from_query("group_size=1&steps=ten&colour=red&seeds=9&token=abc", TrainConfig())
    assert values == {} and seeds is None
    assert len(problems) == 4 and all("\n" not in problem for problem in problems)
    assert problems[0].startswith("group_size=1 is not valid") and "page address" in problems[0]
    assert "steps = ten" in problems[1] and "colour" in problems[2] and "seeds = 9" in problems[3]
    config = TrainConfig(group_size=16, reward_offset=5.0, reference="weak")
    link = query_for_config(config, TrainConfig(), seeds=2)
    assert link == "?group_size=16&reward_offset=5&reference=weak&seeds=2"
    assert settings_from_query(link, TrainConfig())[:2] == ({"group_size": 16, "reward_offset": 5.0, "reference": "weak"}, 2)


def test_the_lab_opens_with_the_page_address_settings(make_lab):
    lab = make_lab(steps=10, page_query="group_size=16&reference=weak&seeds=2&steps=99999")
    assert lab.controls["group_size"].value == 16 and lab.controls["reference"].value == "weak" and lab.num_seeds.value == 2
    assert lab.controls["steps"].value == 10  # the bad value is not used ...
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert (
        "Not used: steps = 99999 in the page address is outside the lab&#x27;s range: allowed 5 to 500" in lab.hints.value
    )  # ... and the page says so
    assert "group_size=16" in lab.share_link.value and "seeds=2" in lab.share_link.value


def voila_page_hook():
    """The prelaunch hook that the classroom page's Voila config file sets (as Voila loads it)."""
    config = traitlets.config.Config()
    runpy.run_path(str(VOILA_PAGE_CONFIG), init_globals={"get_config": lambda: config})
    return config.VoilaConfiguration.prelaunch_hook


def test_voila_leaves_out_every_cell_tagged_voila_skip_and_nothing_there_trains():
    without_voila_skip_cells = voila_page_hook()
    notebook = nbformat.read(LAB_NOTEBOOK, as_version=4)
    page = without_voila_skip_cells(None, nbformat.from_dict(notebook), "")
    code = "\n".join(cell.source for cell in page.cells if cell.cell_type == "code")
    assert "GRPOLab(" in code and "autorun=True" in code  # the dashboard and its first run stay
    for trains in ("check_run_prediction", "train(", "start_notebook", "lab.runs"):
        assert trains not in code, trains
    assert len(page.cells) < len(notebook.cells)


def test_a_warm_kernel_builds_the_lab_before_the_page_opens_and_takes_its_address_after(make_lab, monkeypatch):
    """`make voila`'s warm kernels run the notebook before anyone asks: the lab is built up to the page
    address and waits there (voila.utils.wait_for_request); then it uses the address, and only once."""
    import voila.utils

    events = []
    monkeypatch.setattr(dashboard_module, "warm_up_torch", lambda: events.append("torch warmed up"))

    def page_opened(url=None):  # what Voila hands the kernel when a student opens the page
        events.append("page opened")
        monkeypatch.setenv("QUERY_STRING", "group_size=2&seeds=2")
        monkeypatch.setenv("SERVER_SOFTWARE", "voila/0.5")

    monkeypatch.setattr(voila.utils, "wait_for_request", page_opened)
    monkeypatch.setenv("VOILA_PREHEAT", "True")
    monkeypatch.delenv("QUERY_STRING", raising=False)
    lab = make_lab(steps=10)
    assert events == ["torch warmed up", "page opened"]
    assert (lab.controls["group_size"].value, lab.num_seeds.value) == (2, 2)
    make_lab(steps=10)  # a second lab in the same kernel: the page is open already
    assert events.count("page opened") == 1


def test_the_classroom_notebook_is_the_lab_without_its_voila_skip_cells(tmp_path):
    script = VOILA_PAGE / "classroom_page.py"
    written = tmp_path / "classroom" / LAB_NOTEBOOK.name
    done = subprocess.run([sys.executable, str(script), str(LAB_NOTEBOOK), str(written)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = nbformat.read(written, as_version=4)
    assert [cell.source for cell in page.cells] == [
        cell.source for cell in voila_page_hook()(None, nbformat.read(LAB_NOTEBOOK, as_version=4), "").cells
    ]
    missing = subprocess.run([sys.executable, str(script), str(tmp_path / "nope.ipynb"), str(written)], capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no notebook at" in missing.stderr


def warm_page_config(pool: str | None) -> traitlets.config.Config:
    """`make voila`'s Voila configuration (warm/voila.py), loaded as Voila loads it, with GRPO_LAB_POOL=pool."""
    config = traitlets.config.Config()

    def load_subconfig(name, path):
        runpy.run_path(str(Path(path) / name), init_globals={"get_config": lambda: config})

    environment = {} if pool is None else {"GRPO_LAB_POOL": pool}
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("GRPO_LAB_POOL", raising=False)
        for name, value in environment.items():
            patch.setenv(name, value)
        runpy.run_path(str(VOILA_PAGE / "warm" / "voila.py"), init_globals={"get_config": lambda: config, "load_subconfig": load_subconfig})
    return config


def test_make_voila_warms_kernels_and_refuses_a_bad_pool_size_in_one_line():
    config = warm_page_config(None)
    assert config.VoilaConfiguration.preheat_kernel is True and config.VoilaConfiguration.prelaunch_hook is None  # Voila refuses both
    assert config.VoilaConfiguration.default_pool_size == 3 and config.VoilaConfiguration.template == "grpo-classroom"
    assert warm_page_config("5").VoilaConfiguration.default_pool_size == 5
    for bad in ("0", "eleven", "-2", "11"):
        with pytest.raises(SystemExit) as refused:
            warm_page_config(bad)
        assert (
            str(refused.value) == f"GRPO_LAB_POOL={bad!r} is not valid: a whole number of warm kernels, 1 to 10 (about 400 MB each while they wait)"
        )


def test_make_voila_gives_each_kernel_one_torch_thread_unless_the_shell_says_otherwise():
    """A class shares the cores: each warm kernel gets OMP_NUM_THREADS=1, and the lab's training then uses one thread."""
    assert warm_page_config(None).VoilaKernelManager.default_env_variables == {"OMP_NUM_THREADS": "1"}
    # on a 16-core machine (os.cpu_count patched), a kernel's training threads follow its OMP_NUM_THREADS
    code = "import os; os.cpu_count = lambda: 16; from grpo_lab.checks.threads import default_training_threads; print(default_training_threads())"
    for omp in ("1", "2"):  # torch takes at most the cores there are (2 in CI)
        environment = {**os.environ, "OMP_NUM_THREADS": omp}
        threads = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True).stdout
        assert int(threads) == int(omp)


def test_epsilon_is_disabled_for_baselines_that_do_not_divide_by_the_std(make_lab):
    lab = make_lab(steps=10)
    for baseline, disabled in (("zscore", False), ("mean", True), ("none", True), ("rloo", True), ("zscore", False)):
        lab._quiet = True  # no run per change: only the controls are looked at
        lab.controls["baseline"].value = baseline
        lab._quiet = False
        epsilon = lab.controls["std_eps"]
        assert (epsilon.slider.disabled, epsilon.zero.disabled, lab.controls["eps_mode"].disabled) == (disabled,) * 3, baseline
    assert "ε" not in run_label(TrainConfig(baseline="mean", std_eps=1e-6), []) and "ε=1e-6" in run_label(TrainConfig(std_eps=1e-6), [])


def test_a_preset_trains_its_comparison_in_turn_and_new_seed_draws_again(make_lab):
    lab = make_lab(steps=10, eval_every=5, probe_every=5)
    lab.preset_buttons["G = 2 vs 16"].click()
    assert lab.wait(WAIT_SECONDS)
    assert [(run.number, run.config.group_size, run.status) for run in lab.runs] == [(1, 2, "finished"), (2, 16, "finished")]
    assert lab.controls["group_size"].value == 16
    summary = lab.summary.value
    assert "Run 2" in summary and "held-out accuracy" in summary and "changed: G 2 -&gt; 16" in summary and "run 1" in summary
    lab.new_seed_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert (lab.runs[-1].config.seed, lab.runs[-1].config.group_size, lab.controls["seed"].value) == (1, 16, 1)


def test_the_same_settings_keep_their_colour_and_marker(make_lab):
    lab = make_lab(steps=10, eval_every=5, probe_every=5)
    looks = []
    lab.run_button.click()  # G = 8, then 4, then 8 again
    for group_size in (8, 4, 8):
        lab.controls["group_size"].value = group_size
        assert lab.wait(WAIT_SECONDS)
        looks.append((lab.current.color, lab.current.marker))
    assert looks[0] == looks[2] and looks[0][0] != looks[1][0] and looks[0][1] != looks[1][1]


# -- comparing runs: pin, name, hide, A/B, tags that never overlap, stable axes, export ---------------


def drawn_boxes(figure: LiveRunFigure) -> dict:
    """The figure drawn, and where its parts landed (display pixels): each visible run tag's text (without
    its leader line), the reward panel, its title, the variance panel with its tick labels, the legend."""
    figure.png()
    renderer = figure.canvas.get_renderer()
    reward = figure.panels["reward"]
    tags = [text for text in reward.texts if text.get_visible() and text.get_text()]
    return {
        "tags": {text.get_text(): Text.get_window_extent(text, renderer) for text in tags},  # Text's: an Annotation's own adds its arrow
        "reward": reward.get_window_extent(renderer),
        "title": reward.title.get_window_extent(renderer),
        "variance": figure.panels["variance"].get_tightbbox(renderer),
        "legend": figure.figure.legends[0].get_window_extent(renderer),
    }


def assert_tags_apart(boxes: dict, count: int) -> None:
    tags = list(boxes["tags"].values())
    assert len(tags) == count
    for index, first in enumerate(tags):
        assert first.x0 >= boxes["reward"].x1  # beside the panel: never over a curve
        assert not first.overlaps(boxes["variance"]) and not first.overlaps(boxes["title"])
        for second in tags[index + 1 :]:
            assert not first.overlaps(second), boxes["tags"]


def test_seven_run_tags_never_overlap_and_a_live_tag_leaves_the_others_in_place():
    figure = LiveRunFigure()
    # the hardest case: every run ends at the same accuracy
    runs = [
        RunCurves(
            key,
            f"G={2**key}",
            [[{"step": step, "samples": step * 2**key, "eval_accuracy": 0.6} for step in (0, 5, 10)]],
            f"C{key}",
            tag=f"run {key + 1}",
        )
        for key in range(7)
    ]
    figure.update(runs, x_max=10)
    boxes = drawn_boxes(figure)
    assert_tags_apart(boxes, 7)
    assert boxes["legend"].y0 >= 0  # the legend is inside the picture, not cut off under it
    fixed = {name: (box.x0, box.y0) for name, box in boxes["tags"].items()}
    live = RunCurves(
        7,
        "G=256",
        [[{"step": 0, "samples": 0, "eval_accuracy": 0.6}, {"step": 5, "samples": 1280, "eval_accuracy": 0.6}]],
        "C7",
        live=True,
        tag="run 8",
    )
    figure.update([*runs, live], x_max=10)
    boxes = drawn_boxes(figure)
    assert_tags_apart(boxes, 8)
    figure.update([*runs, live], x_max=10)  # the live run's next frame
    assert {name: (box.x0, box.y0) for name, box in drawn_boxes(figure)["tags"].items() if name != "run 8"} == fixed


def test_spread_apart_keeps_the_gap_and_stays_near_its_targets():
    from grpo_lab.live_figure import nearest_free, spread_apart

    targets = [50.0, 52.0, 51.0, 200.0, 10.0]
    places = spread_apart(targets, 20.0, 0.0, 300.0)
    ordered = sorted(places)
    assert all(b - a >= 20.0 - 1e-9 for a, b in zip(ordered, ordered[1:]))
    assert places[3] == 200.0 and all(0.0 <= place <= 300.0 for place in places)
    assert sorted(range(5), key=places.__getitem__) == sorted(range(5), key=targets.__getitem__)  # order kept
    assert spread_apart([100.0, 100.0], 30.0, 0.0, 300.0) == [85.0, 115.0]  # centred on their target
    assert spread_apart([299.0, 300.0], 30.0, 0.0, 300.0) == [270.0, 300.0]  # kept within the top
    assert nearest_free(100.0, [95.0, 130.0], 20.0, 0.0, 300.0) == 75.0


def test_an_offset_reward_is_drawn_minus_its_offset_and_the_accuracy_axis_stays_put():
    figure = LiveRunFigure()
    history = [{"step": step, "samples": step * 64, "reward": 5.25 + 0.05 * step, "eval_accuracy": 0.5 + 0.02 * step} for step in range(6)]
    figure.update([RunCurves(0, "none, offset=5", [history], "C0", tag="run 1", reward_offset=5.0)], x_max=5)
    figure.png()
    reward = figure.panels["reward"]
    train_reward = next(line for line in reward.get_lines() if line.get_label().endswith(": reward"))
    assert list(train_reward.get_ydata()) == pytest.approx([0.25 + 0.05 * step for step in range(6)])
    assert reward.get_ylim() == (-0.02, 1.02)  # accuracy keeps its 0-1 axis
    assert "offset" in reward.get_title() and "offset" in figure.figure.legends[0].get_title().get_text()


def test_the_per_sample_view_gives_a_small_group_more_than_a_sliver():
    figure = LiveRunFigure()
    runs = [
        RunCurves(
            index,
            f"G={group}",
            [[{"step": s, "samples": s * 16 * group, "eval_accuracy": 0.5} for s in range(0, 151, 25)]],
            f"C{index}",
            tag=f"run {index + 1}",
        )
        for index, group in enumerate((2, 16))
    ]
    figure.update(runs, x_key="samples", x_max=150 * 16 * 16)
    boxes = drawn_boxes(figure)
    reward = figure.panels["reward"]
    end_of_small_group = reward.transData.transform((150 * 16 * 2, 0.5))[0]
    assert (end_of_small_group - boxes["reward"].x0) / boxes["reward"].width > 0.6  # G = 2 samples an eighth of G = 16
    assert_tags_apart(boxes, 2)


def test_keep_runs_keeps_pinned_runs_and_one_copy_of_the_same_settings():
    from grpo_lab.lab.runs import LabRun, keep_runs

    runs = [LabRun([TrainConfig(group_size=group)], key=key, number=key + 1) for key, group in enumerate((2, 4, 8))]
    runs[0].pinned = True
    kept, let_go = keep_runs(runs, LabRun([TrainConfig(group_size=16)], key=3, number=4), max_runs=2)
    assert [run.number for run in kept] == [1, 3, 4] and [run.number for run in let_go] == [2]
    again = LabRun([TrainConfig(group_size=2)], key=4, number=5)
    kept, let_go = keep_runs(kept, again, max_runs=2)
    assert [run.number for run in kept] == [3, 4, 5] and let_go == [] and again.pinned  # the re-run replaces run 1, pin and all


def test_compared_labels_name_what_sets_each_run_apart():
    from grpo_lab.lab.describe import compared_labels

    configs = [TrainConfig(group_size=2), TrainConfig(), TrainConfig(baseline="mean"), TrainConfig(baseline="none", reward_offset=3.0), TrainConfig()]
    labels, shared = compared_labels(configs, [1, 1, 1, 1, 3])
    assert labels == ["G=2", "", "mean", "none, offset=3", "3 seeds"]
    assert shared.startswith("G=8, zscore, ref=default") and "offset=0" in shared
    assert compared_labels([TrainConfig()], [1]) == ([run_label(TrainConfig(), [])], "")


def test_seven_runs_with_a_pinned_one_stay_apart_and_export_as_files(make_lab):
    lab = make_lab(steps=5, eval_every=5, probe_every=5, max_runs=6)
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    first = lab.runs[0]
    lab.runs_panel.rows[first.key].pin.value = True
    settings = [
        ("group_size", 2),
        ("group_size", 4),
        ("group_size", 16),
        ("baseline", "mean"),
        ("reward_offset", 3.0),
        ("group_size", 32),
        ("seed", 1),
    ]
    for knob, value in settings:  # 8 runs in all: one more than the pinned run and the 6 newest
        lab.controls[knob].value = value
        assert lab.wait(WAIT_SECONDS)
    assert [run.number for run in lab.runs] == [1, 3, 4, 5, 6, 7, 8] and lab.runs[0] is first
    assert "run 2 left the plot" in lab.status.value
    legend = [text.get_text() for text in lab.figure.figure.legends[0].get_texts()]
    assert len(legend) == 7 and legend[0].startswith("run 1")
    boxes = drawn_boxes(lab.figure)
    assert_tags_apart(boxes, 7)
    assert boxes["legend"].y0 >= 0  # the legend of seven runs is inside the picture
    assert len({run.color for run in lab.runs}) == 7  # seven kept runs, seven colours (each with its marker and line style)
    shown = PIL.Image.open(io.BytesIO(lab.plot.value))

    lab.runs_panel.export_button.click()
    links = re.findall(r"download='([^']+)' href='data:[^;]+;base64,([^']+)'", lab.runs_panel.downloads.value)
    files = {name: base64.b64decode(data) for name, data in links}
    assert set(files) == {"grpo-lab-plot.png", "grpo-lab-runs.json", "grpo-lab-runs.csv"}
    assert PIL.Image.open(io.BytesIO(files["grpo-lab-plot.png"])).size == shown.size
    exported = json.loads(files["grpo-lab-runs.json"])["runs"]
    assert [run["run"] for run in exported] == [1, 3, 4, 5, 6, 7, 8] and exported[0]["pinned"]
    for run, record in zip(lab.runs, exported):
        assert record["seeds"][0]["config"] == run.config.to_dict()
        assert [step["step"] for step in record["seeds"][0]["history"]] == [step["step"] for step in run.history]
    rows = list(csv.DictReader(io.StringIO(files["grpo-lab-runs.csv"].decode())))
    assert len(rows) == sum(len(run.history) for run in lab.runs)
    assert {int(row["run"]) for row in rows} == {1, 3, 4, 5, 6, 7, 8}
    last = next(row for row in reversed(rows) if row["run"] == "8")
    assert float(last["eval_accuracy"]) == pytest.approx(lab.runs[-1].history[-1]["eval_accuracy"])


def test_runs_can_be_named_hidden_and_compared_a_against_b(make_lab):
    lab = make_lab(steps=5, eval_every=5, probe_every=5)
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    for group_size in (2, 16):
        lab.controls["group_size"].value = group_size
        assert lab.wait(WAIT_SECONDS)
    first, second, third = lab.runs
    rows = lab.runs_panel.rows

    def legend() -> list[str]:
        return [text.get_text() for text in lab.figure.figure.legends[0].get_texts()]

    rows[first.key].name.value = "  the default run, long  "
    assert first.name == "the default " and legend()[0].startswith("the default")
    rows[second.key].show.value = False
    assert lab.shown_runs() == [first, third] and len(legend()) == 2
    rows[second.key].show.value = True
    assert lab.shown_runs() == [first, second, third]

    lab.runs_panel.compare_a.value = first.key
    assert lab.shown_runs() == [first, second, third]  # one run chosen: still all
    lab.runs_panel.compare_b.value = third.key
    assert lab.shown_runs() == [first, third]
    histograms = [patch for patch in lab.figure.panels["histogram"].patches if patch.get_visible() and patch.get_data().values.sum() > 0]
    assert len(histograms) == 2  # both runs' advantages
    assert "comparing" in lab.figure.figure.legends[0].get_title().get_text()

    rows[first.key].pin.value = True
    lab.clear_button.click()
    assert lab.runs == [first] and list(rows) == [first.key]  # the pinned run stays
    assert lab.runs_panel.pair() is None  # its partner is gone
    lab.runs_panel.compare_a.value = first.key
    lab.controls["group_size"].value = 4  # a new run ends a comparison
    assert lab.runs_panel.pair() is None and lab.runs_panel.compare_a.label == "none"
    assert lab.wait(WAIT_SECONDS)
    assert [run.number for run in lab.runs] == [1, 4]


def test_screen_readers_hear_a_run_start_its_end_and_a_failure_not_every_frame(make_lab, monkeypatch):
    lab = make_lab(steps=20, eval_every=5, probe_every=5, refresh_interval=0.05)
    heard, shown = [], []
    lab.announcement.observe(lambda change: heard.append(change.new), "value")
    lab.status.observe(lambda change: shown.append(change.new), "value")
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert [text.split(":")[0] for text in heard] == ["Started run 1", "<b>Finished</b> run 1"], heard
    assert "held-out accuracy" in heard[-1]
    assert len([text for text in shown if "Running" in text]) >= 2  # the visible line counted the steps

    def broken_train(config, **_callbacks):
        raise IndexError("index 16 is out of bounds for dimension 0 with size 16")

    monkeypatch.setattr(dashboard_module, "train", broken_train)
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert [text.split(":")[0] for text in heard[2:]] == ["Started run 2", "<b>Failed</b> run 2"], heard
    lab.controls["steps"].value = 10**9  # refused: nothing runs, and that is said too
    assert heard[-1].startswith("<b>Cannot run:</b> steps")


def test_the_share_link_keeps_the_dark_theme_and_a_large_view_fills_the_room_beside_the_controls(make_lab):
    lab = make_lab(steps=10, eval_every=5, probe_every=5, page_query="theme=dark&plot=large")
    assert lab.page_problems == []
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS)
    assert "theme=dark" in lab.share_link.value and "plot=large" in lab.share_link.value
    assert lab.figure.css_width_px == dashboard_module.LARGE_VIEW_CSS_PX  # room not known: the width that fits 1024 x 768
    for room, width in ((700, 700), (4000, dashboard_module.LARGE_VIEW_MAX_CSS_PX), (300, dashboard_module.LARGE_VIEW_CSS_PX)):
        lab.plot_room.value = room  # as the page's script reports it
        assert lab.figure.css_width_px == width and lab.plot.layout.max_width == f"{width}px"
        assert PIL.Image.open(io.BytesIO(lab.plot.value)).width == 2 * width  # drawn anew at that width: type stays 16 points
    lab.plot_view.value = "all"
    lab.plot_room.value = 700
    assert lab.figure.css_width_px == 900  # the four panels keep their drawing (the page shrinks it)
    plain = make_lab(steps=10, page_query="theme=light&group_size=4")
    assert plain.page_problems == [] and "theme" not in query_for_config(plain.base_config, plain.link_base, theme=plain.page_theme)


def test_the_first_six_runs_stay_apart_under_protanopia_and_deuteranopia():
    """Machado et al. (2009) at severity 1, CIE76 delta E between every two runs' colours (browser_helpers)."""
    from browser_helpers import closest_pair_delta_e, contrast_ratio

    from grpo_lab.plots import RUN_COLORS, run_look

    looks = [run_look(index) for index in range(len(RUN_COLORS))]
    closest_of_six = closest_pair_delta_e([look["color"] for look in looks[:6]])
    assert closest_of_six[0] >= 25, closest_of_six
    assert closest_pair_delta_e(list(RUN_COLORS))[0] >= 20  # and the seventh the lab keeps
    assert len({look["marker"] for look in looks}) == len(looks)  # a marker each: apart in grey too
    assert all(contrast_ratio(color, "#ffffff") >= 3 for color in RUN_COLORS)  # each line shows on white (WCAG 1.4.11)
    assert closest_pair_delta_e(["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"])[0] < 20  # Okabe-Ito's six: the check has teeth


def test_a_page_that_reports_its_room_is_sent_the_view_again(make_lab):
    """Voila loads a kernel's widget states, then listens: a run that ended in between must still reach
    the page. The page's report of its width (plot_room) is the sign it listens; the view is sent again."""
    lab = make_lab(steps=4, eval_every=2, probe_every=2)
    lab.run_button.click()
    assert lab.wait(WAIT_SECONDS) and "Finished" in lab.status.value
    sent = {}
    for name in ("status", "plot", "progress", "summary"):
        widget = getattr(lab, name)
        widget.comm.publish_msg = lambda _type, data=None, name=name, **_keys: sent.setdefault(name, []).append((data or {}).get("state", {}))
    lab.plot_room.value = 640  # as the page's script reports it once the page is laid out
    sent = {name: [state for state in states if state] for name, states in sent.items()}
    assert sent["status"][-1]["value"] == lab.status.value and "Finished</b> run 1" in sent["status"][-1]["value"]
    assert sent["progress"][-1]["value"] == lab.progress.max and sent["summary"][-1]["value"] == lab.summary.value
    assert sent["plot"][-1]["_model_name"] == "ImageModel"  # its PNG goes as a binary buffer beside the state
