"""The command line: a real short run writes run.json and a PNG; bad flags give one line and exit 2."""

import json
import subprocess
import sys

import pytest

from grpo_lab.cli import flag_message, main
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


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--group-size", "1"], "error: --group-size=1 is not valid: must be an integer from 2 to 256"),
        (["--group-size", "many"], "error: argument --group-size: invalid int value: 'many'"),
        (["--std-eps=-1e-4"], "error: --std-eps=-0.0001 is not valid"),
        (["--baseline", "median"], "error: --baseline='median' is not valid: choose one of none, mean, zscore, rloo, ema, critic, mc_value"),
        (["--skip-zero-std-groups", "maybe"], "error: argument --skip-zero-std-groups: expected true or false"),
        (["--reference", "nowhere.pt"], "error: --reference='nowhere.pt' is not valid"),
        (["--no-such-flag", "1"], "error: unrecognized arguments: --no-such-flag 1"),
    ],
)
def test_bad_flags_print_one_line_and_exit_2(args, expected, capsys):
    assert main(["train", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(expected), err
    assert "\n" not in err and "Traceback" not in err


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


def test_the_flag_line_is_built_from_the_errors_parts():
    """The knob becomes its flag; the allowed range is copied as it is, even where it holds 'name=' text."""
    error = ConfigError("micro_batch_size", 0, "use micro_batch_size=64 (--micro-batch-size 64)")
    assert flag_message(error) == "--micro-batch-size=0 is not valid: use micro_batch_size=64 (--micro-batch-size 64)"
    assert str(error) == "micro_batch_size=0 is not valid: use micro_batch_size=64 (--micro-batch-size 64)"
    folder = ConfigError("pretrain's output folder", "/data", "'/data' is a file, not a folder")  # not a flag: as it reads
    assert flag_message(folder) == str(folder)
    assert flag_message(ValueError("policy file x.pt is not a grpo-lab policy")) == "policy file x.pt is not a grpo-lab policy"
