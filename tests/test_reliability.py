"""The reliability pass (issue 12): every bad input one clear line, nothing lost, no NaN in a file.

Table-driven and fast: bad values of every TrainConfig knob (ValueError naming the knob; exit 2
and one line from the CLI), destinations checked before any work, atomic writes, corrupt and
mismatched checkpoints, devices, equal groups, JSON without NaN, unreadable result files, the
memory estimate, torch threads; and hand-computed checks that catch silent mutations of the EMA
baseline, token_sum_norm's normaliser and the clipped loss / k3 KL terms (no TRL needed).
"""

import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import torch
from bad_values import BAD_VALUES, INF, MPS_ABSENT, NAN, ODD_VALUES, bad_cases
from conftest import assert_one_line_error, assert_one_line_naming

import grpo_lab.checks.checkpoints as policy_module
import grpo_lab.checks.config_rules as config_module
import grpo_lab.cli as cli
import grpo_lab.core.loop as trainer_module
import grpo_lab.core.losses as losses_module
from grpo_lab import TrainConfig, TrainResult, compute_advantages, train
from grpo_lab.checks.checkpoints import load_policy, record_checksum, reference_path, save_policy
from grpo_lab.checks.config_rules import validate_config
from grpo_lab.checks.devices import available_devices, resolve_device
from grpo_lab.checks.files import check_destination, finite_json, json_text, write_atomically
from grpo_lab.checks.memory import BASE_BYTES, step_bytes
from grpo_lab.checks.paths import REFERENCE_NAMES
from grpo_lab.cli import main
from grpo_lab.core.advantages import EMABaseline
from grpo_lab.core.losses import aggregate, policy_loss_terms
from grpo_lab.core.model import PolicyConfig, TinyTransformer
from grpo_lab.errors import ConfigError
from grpo_lab.experiments import UnreadableResultError, load_result, write_result
from grpo_lab.experiments.claims_report import available_results
from grpo_lab.task import Task

ROOT = Path(__file__).resolve().parent.parent


def test_the_table_covers_every_knob():
    assert set(BAD_VALUES) == {f.name for f in fields(TrainConfig)}


@pytest.mark.parametrize("name, value", bad_cases(), ids=lambda v: repr(v)[:20])
def test_every_bad_value_is_one_config_error_naming_the_knob(name, value):
    with pytest.raises(ConfigError) as caught:
        validate_config(TrainConfig(**{name: value}))
    assert_one_line_error(caught.value, name, value)


def test_fuzzing_every_knob_gives_a_valid_config_or_one_config_error():
    refused = 0
    for config_field in fields(TrainConfig):
        for value in ODD_VALUES:
            try:
                validate_config(TrainConfig(**{config_field.name: value}))
            except ConfigError as error:
                assert_one_line_error(error, config_field.name, value)
                refused += 1
    assert refused > len(ODD_VALUES) * len(fields(TrainConfig)) // 2  # most of them are refused


def test_numpy_scalars_and_paths_are_accepted_as_plain_values():
    config = validate_config(
        TrainConfig(
            group_size=np.int64(4), lr=np.float32(1e-3), skip_zero_std_groups=np.bool_(True), seed=np.int32(3), reference=reference_path("weak")
        )
    )
    assert type(config.group_size) is int and type(config.lr) is float and config.skip_zero_std_groups is True
    assert config.reference == str(reference_path("weak"))
    json.dumps(config.to_dict())  # no numpy type left to break the JSON


@pytest.mark.parametrize("values, named", [({1: 2}, "1"), ({"nope": 1, "lr": 0.1}, "'nope'"), ([("lr", 1)], "dict")])
def test_from_dict_names_bad_keys(values, named):
    with pytest.raises(ValueError) as caught:
        TrainConfig.from_dict(values)
    assert_one_line_naming(caught.value, named)


# --- the command line: exit 2, one line, before any work (test_cli.py: every bad value of every flag) ---------


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "grpo_lab", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_cli_in_a_fresh_process_never_prints_a_traceback(tmp_path):
    broken = tmp_path / "nan.pt"
    policy = TinyTransformer()
    with torch.no_grad():
        policy.head.weight[0, 0] = NAN
    save_policy(policy, broken)
    flipped = bytearray(reference_path("default").read_bytes())
    flipped[len(flipped) // 3] ^= 0x10  # a bit in a weight of a copy outside data/reference
    (tmp_path / "flipped.pt").write_bytes(bytes(flipped))
    for args, fragment in [
        (["--device", "cuda:99"], "--device='cuda:99' is not valid"),
        (["--out", str(tmp_path)], "it is a folder"),
        (["--reference", str(broken)], "weight head.weight contains NaN"),
        (["--reference", str(tmp_path / "flipped.pt")], "do not match the checksum saved with them"),
    ]:
        done = run_cli("train", "--steps", "2", "--quiet", *args)
        assert done.returncode == 2, done.stderr
        assert fragment in done.stderr and "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.slow  # about 8 s each: a process that starts two workers
@pytest.mark.parametrize("name, to_group", [("SIGTERM", False), ("SIGINT", True)])  # SIGINT to the group, as Ctrl-C sends it
def test_a_signal_stops_a_sweep_with_one_line_and_no_worker_traceback(name, to_group, tmp_path):
    command = [sys.executable, "-m", "grpo_lab", "sweep", "variance", "--fast", "--workers", "2", "--out", str(tmp_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen = ""
    while "0/" not in seen:  # the progress bar: the units are handed to the workers
        character = process.stderr.read(1)
        assert character, seen
        seen += character
    time.sleep(3)  # the workers are past their start and inside a unit
    number = getattr(signal, name)
    if to_group:
        os.killpg(process.pid, number)
    else:
        process.send_signal(number)
    _, rest = process.communicate(timeout=60)  # returns once every worker has let go of stderr
    err = seen + rest
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip() and "%|" not in line]  # all but the progress bar
    assert process.returncode == 128 + number, err
    assert len(lines) == 1 and lines[0].startswith(f"sweep stopped by {name}"), err
    assert not any(word in err for word in ("Traceback", "BrokenPipeError", "leaked", "KeyboardInterrupt")), err
    assert not (tmp_path / "variance.json").exists()


@pytest.mark.parametrize(
    "flag, target, fragment",
    [
        ("--out", "{tmp}", "it is a folder"),
        ("--out", "{tmp}/file/run.json", "is a file, not a folder"),
        ("--plot", "{tmp}", "must end in .png"),
        ("--plot", "{tmp}/run.txt", "must end in .png"),
        ("--plot", "{tmp}/file/run.png", "is a file, not a folder"),
    ],
)
def test_train_destinations_are_checked_before_training(flag, target, fragment, tmp_path, capsys, no_training):
    (tmp_path / "file").write_text("a file, not a folder")
    assert main(["train", flag, target.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {flag}=") and fragment in err and "\n" not in err, err


def test_sweep_and_pretrain_destinations_are_checked_before_work(tmp_path, capsys, monkeypatch):
    import grpo_lab.experiments as experiments
    import grpo_lab.pretrain as pretrain

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the destination was checked")

    monkeypatch.setattr(experiments, "run_experiment", refuse)
    monkeypatch.setattr(pretrain, "write_reference", refuse)
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    assert main(["sweep", "variance", "--out", str(blocker)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    monkeypatch.setattr(policy_module, "CHECKSUMS_PATH", blocker / "checksums.json")
    assert main(["pretrain", "--only", "weak"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_check_destination_makes_missing_folders_and_refuses_folders(tmp_path):
    assert check_destination(tmp_path / "new" / "deeper" / "run.json", "out").parent.is_dir()
    with pytest.raises(ConfigError) as caught:
        check_destination(tmp_path, "out")
    assert_one_line_error(caught.value, "out", str(tmp_path))
    assert list(tmp_path.rglob("*.tmp")) == []  # the write probe cleans up after itself


def test_cli_pins_torch_threads_as_the_lab_does(monkeypatch, tmp_path):
    from grpo_lab.checks.threads import default_training_threads

    seen = {}

    def fake_train(config, on_step=None, on_batch=None):
        seen["threads"] = torch.get_num_threads()
        return TrainResult(config=config, history=[{"step": 0, "eval_accuracy": 0.5}])

    monkeypatch.setattr(cli, "train", fake_train)
    before = torch.get_num_threads()
    try:
        assert main(["train", "--quiet", "--steps", "1"]) == 0
    finally:
        torch.set_num_threads(before)
    assert seen["threads"] == default_training_threads()


# --- atomic writes ----------------------------------------------------------------------------------------


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = write_atomically(tmp_path / "result.json", "old\n")

    def crash(file):
        file.write(b"half of the new")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_atomically(path, crash)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_kill_9_during_save_policy_leaves_a_readable_checkpoint(tmp_path):
    path = tmp_path / "policy.pt"
    script = textwrap.dedent(f"""
        from grpo_lab.checks.checkpoints import save_policy
        from grpo_lab.core.model import TinyTransformer
        policy = TinyTransformer()
        while True:
            save_policy(policy, {str(path)!r})
    """)
    process = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # a few saves in, most likely in the middle of one
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert load_policy(path).num_parameters() == TinyTransformer().num_parameters()


# --- checkpoints ------------------------------------------------------------------------------------------


def broken_checkpoint(tmp_path, change) -> Path:
    """Save a TinyTransformer, apply ``change`` to the saved dict (or return new bytes), write it back."""
    path = tmp_path / "broken.pt"
    save_policy(TinyTransformer(), path)
    checkpoint = torch.load(path, weights_only=True)
    changed = change(checkpoint)
    if isinstance(changed, bytes):
        path.write_bytes(changed)
    else:
        torch.save(checkpoint, path)
    return path


def other_architecture(**sizes):
    def change(checkpoint):
        other = TinyTransformer(PolicyConfig(**sizes))
        checkpoint["config"], checkpoint["state_dict"] = {**checkpoint["config"], **sizes}, other.state_dict()

    return change


def set_weight(name, value):
    def change(checkpoint):
        checkpoint["state_dict"][name].view(-1)[0] = value

    return change


CHECKPOINT_CASES = {
    "NaN weight": (set_weight("head.weight", NAN), "weight head.weight contains NaN or infinity"),
    "infinite weight": (set_weight("blocks.0.qkv.weight", INF), "contains NaN or infinity"),
    "huge weight": (set_weight("token_embedding.weight", 1e30), "of magnitude 1e+30"),
    "other vocabulary": (other_architecture(vocab_size=20), "its vocabulary has 20 tokens, the task's has 16"),
    "short max length": (other_architecture(max_len=4), "max_len=4"),
    "heads do not divide width": (other_architecture(n_heads=3), "3 attention heads do not divide its width d_model=64"),
    "no config": (lambda c: c.pop("config"), "has the format tag but no 'config'"),
    "no state_dict": (lambda c: c.pop("state_dict"), "no 'state_dict'"),
    "config not a dict": (lambda c: c.update(config=[64]), "its 'config' is a list"),
    "unknown config key": (lambda c: c["config"].update(width=3), "unknown architecture key(s) 'width'"),
    "config value a string": (lambda c: c["config"].update(d_model="64"), "d_model='64' is not a whole number"),
    "missing weight": (lambda c: c["state_dict"].pop("head.bias"), "missing head.bias"),
    "integer weight": (lambda c: c["state_dict"].update({"head.bias": torch.zeros(16, dtype=torch.long)}), "not a float tensor"),
    "wrong shape": (lambda c: c["state_dict"].update({"head.bias": torch.zeros(17)}), "does not match the TinyTransformer architecture"),
    "no format tag": (lambda c: c.pop("format"), "not a grpo-lab policy"),
    "random bytes": (lambda c: os.urandom(5000), "not a readable checkpoint"),
}


@pytest.mark.parametrize("case", CHECKPOINT_CASES)
def test_bad_checkpoints_are_refused_at_load_with_one_line(case, tmp_path):
    change, fragment = CHECKPOINT_CASES[case]
    path = broken_checkpoint(tmp_path, change)
    with pytest.raises(ValueError) as error:
        load_policy(path)
    message = str(error.value)
    assert str(path) in message and fragment in message and "\n" not in message, message


def test_truncated_checkpoint_is_refused(tmp_path):
    path = save_policy(TinyTransformer(), tmp_path / "whole.pt")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError) as caught:
        load_policy(path)
    assert_one_line_naming(caught.value, path)


def test_shipped_checksums_match_the_shipped_files():
    checksums = json.loads((ROOT / "data" / "reference" / "checksums.json").read_text())
    for name in REFERENCE_NAMES:
        path = reference_path(name)
        assert checksums[path.name] == hashlib.sha256(path.read_bytes()).hexdigest(), path


def test_a_flipped_byte_in_a_shipped_reference_is_caught(tmp_path, monkeypatch):
    folder = tmp_path / "reference"
    folder.mkdir()
    monkeypatch.setattr(policy_module, "CHECKSUMS_PATH", folder / "checksums.json")
    copy = Path(shutil.copy(reference_path("default"), folder / "default.pt"))
    with pytest.raises(ValueError) as caught:
        load_policy(copy)
    assert_one_line_naming(caught.value, copy, folder / "checksums.json")  # the file, and where its checksum is missing from
    record_checksum(copy)
    assert load_policy(copy).metadata["name"] == "default"
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    data[len(data) // 2 + 1] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(ValueError) as caught:
        load_policy(copy)
    assert_one_line_naming(caught.value, copy, hashlib.sha256(copy.read_bytes()).hexdigest()[:12])  # the file, and the checksum it has now


# --- devices ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "device", ["tpu", "cuda:99", "", "cuda:x", 3, *(["cuda"] if not torch.cuda.is_available() else []), *(["mps"] if MPS_ABSENT else [])]
)
def test_an_unavailable_device_lists_the_ones_that_exist(device):
    with pytest.raises(ValueError) as error:
        resolve_device(device)
    assert f"this machine has {', '.join(available_devices())}" in str(error.value)


def test_available_devices_resolve():
    for name in available_devices():
        assert isinstance(resolve_device(name), torch.device)


# --- equal groups: exactly 0 ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.0, 1.0, 2 / 3, 5 + 1 / 3, 100.7, -3.7, 1e6 + 0.3, 1e30])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_an_all_equal_group_gets_exactly_zero(value, dtype):
    rewards = torch.full((16, 8), value, dtype=dtype)
    rewards[0] = torch.arange(8, dtype=dtype)  # one group with spread, so the batch std is not 0
    rewards[1, :] = torch.full((8,), value, dtype=dtype) / 3  # another equal group, another value
    for eps in (1e-8, 1e-6, 1e-4, 0.1):
        for scope in ("group", "batch"):
            for mode in ("add", "clamp"):
                advantages = compute_advantages(rewards, "zscore", std_eps=eps, std_scope=scope, eps_mode=mode)
                assert advantages.dtype == dtype
                assert (advantages[1:] == 0).all(), (value, eps, scope, mode, advantages[1:].abs().max())
    for baseline in ("mean", "rloo"):
        assert (compute_advantages(rewards, baseline)[1:] == 0).all()


def test_equal_groups_with_zero_eps_are_nan_never_infinite():
    rewards = torch.full((4, 16), 5 + 1 / 3)
    advantages = compute_advantages(rewards, "zscore", std_eps=0.0)
    assert advantages.isnan().all()


def test_float64_rewards_stay_float64_and_finite():
    rewards = torch.tensor([[1e39, 1e39, 0.0, 2e39]], dtype=torch.float64)
    advantages = compute_advantages(rewards, "zscore")
    assert advantages.dtype == torch.float64 and torch.isfinite(advantages).all()


# --- JSON: no NaN token, null and a note -------------------------------------------------------------------

NON_FINITE_TOKEN = re.compile(r"\b(NaN|Infinity)\b")


def test_run_json_nulls_non_finite_metrics_and_says_why():
    history = [{"step": 0, "eval_accuracy": 0.5}, {"step": 1, "explained_variance": NAN, "reward": 0.0, "grad_norm": INF}]
    data = TrainResult(config=TrainConfig(), history=history).to_json()
    text = json_text(data, indent=1)
    assert not NON_FINITE_TOKEN.search(text)
    assert data["history"][1]["explained_variance"] is None and data["final"]["explained_variance"] is None
    assert "history[1], final: undefined when every return of the batch is the same" in data["notes"]["explained_variance"]
    assert "not a finite number" in data["notes"]["grad_norm"]
    assert history[1]["explained_variance"] != history[1]["explained_variance"]  # the history itself is untouched


def test_json_text_refuses_nan_and_finite_json_replaces_it():
    with pytest.raises(ValueError):
        json_text({"x": NAN})
    assert finite_json({"a": [1.0, NAN, {"b": np.float32("inf")}]}) == ({"a": [1.0, None, {"b": None}]}, ["a[1]", "a[2].b"])


def test_cli_run_json_has_no_nan_token(tmp_path):
    out = tmp_path / "run.json"
    # the weak policy: whole batches of reward 0, where the critic's explained variance is undefined
    assert main(
        [
            "train",
            "--quiet",
            "--baseline",
            "critic",
            "--reference",
            "weak",
            "--group-size",
            "1",
            "--prompts-per-step",
            "2",
            "--steps",
            "3",
            "--eval-every",
            "0",
            "--probe-every",
            "0",
            "--out",
            str(out),
        ]
    ) in (0, 1)
    text = out.read_text()
    assert not NON_FINITE_TOKEN.search(text)
    json.loads(text, parse_constant=lambda token: pytest.fail(f"{token} in run.json"))


def test_write_result_nulls_non_finite_numbers(tmp_path):
    result = load_result("variance")
    cell = result["cells"][0]
    for entry in cell["per_seed"]:  # the summary must be what the seeds give: NaN seeds, no mean
        entry["metrics"]["grad_var"] = NAN
    cell["summary"]["grad_var"] = {"mean": NAN, "std": INF, "n": 0}
    path = write_result("variance", result, tmp_path)
    assert not NON_FINITE_TOKEN.search(path.read_text())


def test_no_json_file_in_data_has_a_non_finite_number():
    paths = sorted((ROOT / "data").rglob("*.json"))
    assert len(paths) > 10
    for path in paths:
        json.loads(path.read_text(), parse_constant=lambda token, path=path: pytest.fail(f"{token} in {path}"))


# --- result files: name the bad one, go on with the others ---------------------------------------------------


def test_unreadable_result_files_are_named_and_skipped(tmp_path, capsys, monkeypatch):
    shutil.copy(ROOT / "data" / "results" / "variance.json", tmp_path / "variance.json")
    (tmp_path / "group-size.json").write_text("")
    (tmp_path / "sigma-to-zero.json").write_text('{"name": "sigma-to-zero", "cells": [')
    (tmp_path / "batch-blowup.json").write_text("[1, 2]")
    with pytest.raises(UnreadableResultError) as caught:
        load_result("group-size", directory=tmp_path)
    assert_one_line_naming(caught.value, tmp_path / "group-size.json")
    results = available_results(tmp_path)
    assert list(results) == ["variance"]
    err = capsys.readouterr().err
    for name in ("group-size", "sigma-to-zero", "batch-blowup"):
        assert f"{name}.json is not a readable result" in err and f"sweep {name}" in err
    assert main(["sweep", "claims", "--out", str(tmp_path)]) == 0
    assert "group-size.json is not a readable result" in capsys.readouterr().err
    assert (tmp_path / "claims.md").is_file()

    from grpo_lab.course import RESULTS_DIR_ENV, drill

    monkeypatch.setenv(RESULTS_DIR_ENV, str(tmp_path))
    assert list(drill.cached_results()) == ["variance"]
    assert "sigma-to-zero.json" in capsys.readouterr().err


# --- memory -------------------------------------------------------------------------------------------------


def test_memory_estimate_covers_the_measured_batch_blowup():
    result = load_result("batch-blowup")
    task = Task.parse(result["train_defaults"]["task"])
    for cell in result["cells"]:
        train_overrides, summary = cell["config"]["train"], cell["summary"]
        responses = train_overrides["prompts_per_step"] * train_overrides["group_size"]
        backward = train_overrides["micro_batch_size"] or responses
        estimate = step_bytes(responses, backward, task.max_answer_length, task.prompt_length + task.max_answer_length)
        activations = summary["saved_activations_mb"]["mean"] * 2**20
        peak = summary["peak_rss_mb"]["mean"] * 2**20
        assert peak <= estimate <= 3 * peak, cell["id"]  # never below what the process used, not absurdly above
        if responses >= 128:  # where the per-response terms dominate; below, BASE_BYTES' slack covers ~2 MB of fixed activations
            assert estimate - BASE_BYTES >= activations, cell["id"]


def test_a_batch_that_does_not_fit_is_refused_with_the_way_out(monkeypatch, capsys, no_training):
    monkeypatch.setattr(config_module, "available_bytes", lambda device: 16 * 2**30)
    big = dict(prompts_per_step=1024, group_size=256)
    with pytest.raises(ConfigError) as error:
        validate_config(TrainConfig(**big))
    assert_one_line_error(error.value, "micro_batch_size", 0)
    fits = int(re.search(r"--micro-batch-size (\d+)", error.value.allowed).group(1))  # the way out it gives works
    validate_config(TrainConfig(**big, micro_batch_size=fits))
    assert main(["train", "--prompts-per-step", "1024", "--group-size", "256"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--micro-batch-size" in err and "\n" not in err, err
    monkeypatch.setattr(config_module, "available_bytes", lambda device: 2 * 2**30)
    with pytest.raises(ConfigError) as error:
        validate_config(TrainConfig(**big, micro_batch_size=1))
    assert_one_line_error(error.value, "prompts_per_step", 1024)
    validate_config(TrainConfig())  # the default run fits in 2 GB


# --- silent mutations: hand-computed values -------------------------------------------------------------------


def test_ema_baseline_keeps_decay_of_the_old_value():
    ema = EMABaseline(decay=0.9)
    ema.update(torch.tensor([[1.0, 1.0]]))
    ema.update(torch.tensor([[0.0, 0.0]]))
    assert ema.value == pytest.approx(0.9)  # 0.9 * 1 + 0.1 * 0; swapped decay would give 0.1


def test_the_trainer_feeds_the_ema_the_configured_decay():
    result = train(TrainConfig(baseline="ema", ema_decay=0.9, steps=3, prompts_per_step=4, group_size=4, eval_every=0, probe_every=0))
    first, second, third = result.history[1:4]
    assert first["reward"] != second["reward"]  # else a swapped decay would not show
    assert second["ema_baseline"] == pytest.approx(first["reward"])
    assert third["ema_baseline"] == pytest.approx(0.9 * first["reward"] + 0.1 * second["reward"])


def test_token_sum_norm_divides_by_the_longest_possible_answer():
    per_token = torch.ones(2, 3)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    # 5 tokens / (2 responses x max_len 5): the trimmed width (3) would give 5 / 6
    assert aggregate(per_token, mask, "token_sum_norm", 2, 5.0, max_len=5).item() == pytest.approx(0.5)


def test_the_trainer_gives_token_sum_norm_the_task_max_length(monkeypatch):
    seen = []

    def recording(per_token, mask, loss_agg, num_sequences, num_tokens, max_len):
        seen.append((mask.shape[1], max_len))
        return aggregate(per_token, mask, loss_agg, num_sequences, num_tokens, max_len)

    monkeypatch.setattr(trainer_module, "aggregate", recording)
    train(TrainConfig(loss_agg="token_sum_norm", steps=2, prompts_per_step=4, group_size=4, eval_every=0, probe_every=0))
    longest = Task.parse("2d+").max_answer_length  # 5: room for a sign; sums of two 2-digit numbers need at most 4
    assert seen and all(max_len == longest for _, max_len in seen)
    assert any(width < longest for width, _ in seen)  # the trimmed batch was narrower: the check had teeth


def test_clipped_loss_and_k3_kl_against_hand_computed_values(monkeypatch):
    # two responses of two tokens; ratios 1.25 and 0.5 against the sampling policy; clip 0.2; beta 0.1
    logprobs = torch.log(torch.tensor([[0.5, 0.2], [0.5, 0.2]]))
    old = torch.log(torch.tensor([[0.4, 0.4], [0.4, 0.4]]))
    ref = torch.log(torch.tensor([[0.3, 0.2], [0.5, 0.1]]))
    advantages = torch.tensor([[1.0, 1.0], [-1.0, -1.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    monkeypatch.setattr(losses_module, "token_logprobs", lambda *args, **kwargs: (logprobs, torch.zeros(2, 2)))
    config = TrainConfig(clip_eps=0.2, kl_coef=0.1)
    per_token, diagnostics = policy_loss_terms(None, None, None, mask, old, ref, advantages, config)
    # -min(r A, clip(r) A): A=+1: r=1.25 -> -1.2 (clipped), r=0.5 -> -0.5; A=-1: r=1.25 -> 1.25, r=0.5 -> 0.8 (clipped)
    # k3 = q/p - ln(q/p) - 1: q/p = 0.6 -> 0.110826; 1 -> 0; 1 -> 0; 0.5 -> 0.193147
    expected_k3 = torch.tensor([[0.6 - math.log(0.6) - 1, 0.0], [0.0, 0.5 - math.log(0.5) - 1]])
    assert torch.allclose(diagnostics["kl"], expected_k3, atol=1e-6)
    assert torch.allclose(per_token, torch.tensor([[-1.2 + 0.0110826, -0.5], [1.25, 0.8 + 0.0193147]]), atol=1e-6)
    assert diagnostics["clipped"].tolist() == [[1.0, 0.0], [0.0, 1.0]]
    # seq_mean: ((-1.1889174 - 0.5) / 2 + 1.25 / 1) / 2; token_mean: sum of 3 tokens / 3; token_sum_norm: / (2 x 4)
    masked_sum = -1.1889174 - 0.5 + 1.25
    assert aggregate(per_token, mask, "seq_mean", 2, 3.0, 4).item() == pytest.approx(((-1.1889174 - 0.5) / 2 + 1.25) / 2, abs=1e-6)
    assert aggregate(per_token, mask, "token_mean", 2, 3.0, 4).item() == pytest.approx(masked_sum / 3, abs=1e-6)
    assert aggregate(per_token, mask, "token_sum_norm", 2, 3.0, 4).item() == pytest.approx(masked_sum / 8, abs=1e-6)
    # without a sampling policy the ratio is exactly 1 and the loss is -A; without a reference, no KL term
    per_token, diagnostics = policy_loss_terms(None, None, None, mask, None, None, advantages, config)
    assert torch.equal(per_token, -advantages) and "kl" not in diagnostics


def test_a_damaged_eval_set_is_one_line_naming_the_file(tmp_path, monkeypatch):
    import grpo_lab.task as task_module

    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "2d+.json").write_text('{"task": "2d+", "probl')
    monkeypatch.setattr(task_module, "DATA_DIR", tmp_path)
    monkeypatch.setattr(task_module, "_EVAL_CACHE", {})
    with pytest.raises(ValueError) as caught:
        task_module.eval_problems(Task.parse("2d+"))
    assert_one_line_naming(caught.value, tmp_path / "eval" / "2d+.json", "python -m grpo_lab pretrain")  # the file, and the command that remakes it
