"""The command line: a real short run writes run.json and a PNG; bad flags give one line and exit 2."""

import json
import subprocess
import sys
from dataclasses import fields

import pytest
from bad_values import bad_cases

from grpo_lab.checks.config_rules import is_of_kind
from grpo_lab.cli import flag_message, main
from grpo_lab.core.config import TrainConfig
from grpo_lab.errors import ConfigError


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "grpo_lab", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_train_writes_json_and_plot(tmp_path):
    out, plot = tmp_path / "run.json", tmp_path / "run.png"
    done = run_cli(
        "train",
        "--baseline",
        "mean",
        "--group-size",
        "4",
        "--prompts-per-step",
        "4",
        "--steps",
        "3",
        "--eval-every",
        "1",
        "--probe-every",
        "2",
        "--seed",
        "1",
        "--out",
        str(out),
        "--plot",
        str(plot),
    )
    assert done.returncode == 0, done.stderr
    assert "held-out accuracy" in done.stdout
    run = json.loads(out.read_text())
    assert set(run) == {"config", "history", "final", "environment"}
    assert run["environment"]["torch_threads"] >= 1 and run["environment"]["torch_version"]  # a history is reproducible only with both
    assert run["config"]["baseline"] == "mean" and run["config"]["group_size"] == 4
    assert [r["step"] for r in run["history"]] == [0, 1, 2, 3]
    assert run["final"]["status"] == "finished"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 20_000


def flag_cases() -> list[tuple[str, object]]:
    """The shared table's bad values that a flag can be given as text: those of their knob's own type
    (the text '8' of a wrong-typed '8' reads as a good group size)."""
    kinds = {config_field.name: str(config_field.type) for config_field in fields(TrainConfig)}
    return [(name, value) for name, value in bad_cases() if is_of_kind(value, kinds[name])]


@pytest.mark.parametrize("name, value", flag_cases(), ids=lambda v: repr(v)[:20])
def test_every_bad_flag_value_prints_one_line_naming_the_flag_and_exits_2(name, value, capsys, no_training):
    flag = "--" + name.replace("_", "-")
    assert main(["train", f"{flag}={value}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and flag in err, err


@pytest.mark.parametrize(
    "args", [["--group-size", "many"], ["--lr", "1e-4x"], ["--steps", "1e9"], ["--skip-zero-std-groups", "maybe"], ["--no-such-flag", "1"]]
)
def test_flag_text_that_cannot_be_read_prints_one_line_naming_the_flag_and_exits_2(args, capsys, no_training):
    assert main(["train", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and all(arg in err for arg in args), err


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_failed_run_exits_1_with_its_reason(tmp_path):
    done = run_cli(
        "train",
        "--reference",
        "weak",
        "--std-eps",
        "0",
        "--steps",
        "3",
        "--group-size",
        "4",
        "--prompts-per-step",
        "4",
        "--quiet",
        "--out",
        str(tmp_path / "run.json"),
    )
    assert done.returncode == 1
    assert "std_eps is 0" in done.stdout
    assert json.loads((tmp_path / "run.json").read_text())["final"]["status"] == "failed"


def test_help_shows_every_knobs_help_line(monkeypatch):
    from dataclasses import fields

    from grpo_lab.cli import build_parser
    from grpo_lab.core.config import TrainConfig

    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps at the terminal's width (and may break at a hyphen)
    train_parser = build_parser()._subparsers._group_actions[0].choices["train"]
    text = " ".join(train_parser.format_help().split())  # argparse wraps lines: compare with single spaces
    for config_field in fields(TrainConfig):
        help_line = config_field.metadata.get("help", "")
        assert help_line, f"{config_field.name} has no help line"
        assert " ".join(help_line.split()) in text, config_field.name
    assert TrainConfig().samples_per_step == TrainConfig().prompts_per_step * TrainConfig().group_size


def test_a_choice_knobs_help_line_names_every_value_the_rules_accept():
    """A baseline, reference, reward, ... added to the code and left out of its --help line fails here."""
    import re
    from dataclasses import fields

    from grpo_lab.checks.paths import REFERENCE_NAMES
    from grpo_lab.core.advantages import BASELINES, EPS_MODES, STD_SCOPES
    from grpo_lab.core.config import TrainConfig
    from grpo_lab.core.critic import CRITIC_SCHEDULES
    from grpo_lab.core.losses import LOSS_AGGREGATIONS
    from grpo_lab.task import MAX_DIGITS, REWARD_KINDS

    help_lines = {config_field.name: config_field.metadata["help"] for config_field in fields(TrainConfig)}
    choices = {
        "baseline": BASELINES,
        "reference": REFERENCE_NAMES,
        "reward": REWARD_KINDS,
        "loss_agg": LOSS_AGGREGATIONS,
        "eps_mode": EPS_MODES,
        "std_scope": STD_SCOPES,
        "critic_schedule": CRITIC_SCHEDULES,
    }
    for knob, allowed in choices.items():
        missing = [value for value in allowed if not re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", help_lines[knob])]
        assert not missing, f"{knob}'s help line does not name {missing}"
    assert f"digits 1-{MAX_DIGITS}" in help_lines["task"]


def test_the_flag_line_is_built_from_the_errors_parts():
    """The knob becomes its flag; the allowed range is copied as it is, even where it holds 'name=' text."""
    error = ConfigError("micro_batch_size", 0, "use micro_batch_size=64 (--micro-batch-size 64)")
    assert flag_message(error) == "--micro-batch-size=0 is not valid: use micro_batch_size=64 (--micro-batch-size 64)"
    assert str(error) == "micro_batch_size=0 is not valid: use micro_batch_size=64 (--micro-batch-size 64)"
    folder = ConfigError("pretrain's output folder", "/data", "'/data' is a file, not a folder")  # not a flag: as it reads
    assert flag_message(folder) == str(folder)
    assert flag_message(ValueError("policy file x.pt is not a grpo-lab policy")) == "policy file x.pt is not a grpo-lab policy"


def test_train_plot_draws_the_notebooks_run_figure_a_frame_of_the_labs(tmp_path, monkeypatch):
    """`train --plot` saves plots.run_figure of its run, the figure the notebooks show: the lab's live
    figure less the advantages histogram (a finished history has no raw batch)."""
    import grpo_lab.plots as plots
    from grpo_lab.live_figure import LiveRunFigure

    saved, save_figure = [], plots.save_figure
    monkeypatch.setattr(plots, "save_figure", lambda figure, path, **options: saved.append(figure) or save_figure(figure, path, **options))
    out, plot = tmp_path / "run.json", tmp_path / "run.png"
    flags = ["--steps", "2", "--group-size", "4", "--prompts-per-step", "4", "--eval-every", "1", "--probe-every", "1", "--quiet"]
    assert main(["train", *flags, "--out", str(out), "--plot", str(plot)]) == 0
    history = json.loads(out.read_text())["history"]

    def panels(figure) -> list[tuple[str, str, str]]:
        return [(axis.get_title(), axis.get_xlabel(), axis.get_ylabel()) for axis in figure.axes if axis.get_ylabel()]

    (figure,) = saved
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert panels(figure) == panels(plots.run_figure([("a run", history)]))
    lab_panels = panels(LiveRunFigure().figure)
    assert set(panels(figure)) == {panel for panel in lab_panels if panel[1] != "advantage"}
    accuracy = [record["eval_accuracy"] for record in history]
    assert any(list(line.get_ydata()) == accuracy for line in figure.axes[0].get_lines())  # its own run's curve
