"""The reliability pass, files (issue 21, items 1, 2, 3, 6, 7): device files written as streams,
results never lost at the end of a run, damaged files refused in one line naming them, the command
line's wording, leftovers cleaned and checkpoints that cannot change silently.

Device files are made with ``mknod`` (root only, as in containers and Colab); a copy of /dev/full
(character device 1, 7) stands in for a disk that fills during the run.
"""

import errno
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch
from conftest import assert_one_line_naming

import grpo_lab.checks.checkpoints as policy_module
import grpo_lab.cli as cli
import grpo_lab.course.drill_answers as drill_answers
import grpo_lab.course.text_files as text_files
import grpo_lab.task as task_module
from grpo_lab import TrainResult
from grpo_lab.checks.checkpoints import load_policy, reference_path, save_policy, shipped_checksums
from grpo_lab.checks.files import check_destination, name_max, remove_stale_temporaries, save_with_fallback, write_atomically
from grpo_lab.cli import main
from grpo_lab.core.model import TinyTransformer
from grpo_lab.errors import ConfigError
from grpo_lab.experiments import UnreadableResultError, load_result
from grpo_lab.task import Task

ROOT = Path(__file__).resolve().parent.parent
AS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")


def device(folder: Path, name: str, major: int, minor: int) -> Path:
    path = folder / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    return path


def is_character_device(path: Path) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


@pytest.fixture
def quick_train(monkeypatch):
    """The CLI's train, stubbed to a two-step history: what is tested is what happens to the files."""

    def fake_train(config, on_step=None, on_batch=None):
        return TrainResult(config=config, history=[{"step": 0, "eval_accuracy": 0.5, "reward": 0.1}, {"step": 1, "reward": 0.2}])

    monkeypatch.setattr(cli, "train", fake_train)


@pytest.fixture
def fallback_folder(tmp_path, monkeypatch):
    folder = tmp_path / "fallback"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


# --- 1. device files are written as streams, never replaced ------------------------------------------


@AS_ROOT
def test_out_to_a_null_device_keeps_the_device(tmp_path, quick_train):
    null = device(tmp_path, "n", 1, 3)
    assert main(["train", "--quiet", "--out", str(null)]) == 0
    assert is_character_device(null)


@AS_ROOT
def test_save_policy_to_a_full_device_is_an_os_error_not_torch_runtime_error(tmp_path):
    full = device(tmp_path, "full", 1, 7)
    with pytest.raises(OSError) as caught:
        save_policy(TinyTransformer(), full)
    assert caught.value.errno == errno.ENOSPC
    assert is_character_device(full)


def test_a_fifo_is_written_as_a_stream(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write_atomically(fifo, "through the pipe\n")
    reader.join(10)
    assert received == ["through the pipe\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


# --- 2. results are not lost after the work ---------------------------------------------------------------


@AS_ROOT
def test_a_full_disk_at_the_end_saves_the_run_elsewhere_and_says_where(tmp_path, quick_train, fallback_folder, capsys):
    full = device(tmp_path, "run.json", 1, 7)
    assert main(["train", "--quiet", "--out", str(full)]) == 1
    err = capsys.readouterr().err.strip()
    saved = re.search(r"it was saved to (\S+) instead", err)
    assert saved and "No space left on device" in err and "\n" not in err, err
    assert Path(saved.group(1)).parent.parent == fallback_folder and Path(saved.group(1)).name == "run.json"
    assert json.loads(Path(saved.group(1)).read_text())["history"][1]["reward"] == 0.2


@AS_ROOT
def test_a_full_disk_at_the_end_of_a_sweep_saves_the_result_elsewhere(tmp_path, fallback_folder, capsys, monkeypatch):
    import grpo_lab.experiments as experiments

    monkeypatch.setattr(experiments, "run_experiment", lambda *args, **kwargs: load_result("variance"))
    device(tmp_path, "variance.json", 1, 7)
    assert main(["sweep", "variance", "--quiet", "--out", str(tmp_path)]) == 1
    saved = re.search(r"it was saved to (\S+) instead", capsys.readouterr().err)
    assert saved and load_result("variance", directory=Path(saved.group(1)).parent)["cells"] == load_result("variance")["cells"]


def test_when_the_fallback_fails_too_the_message_says_it_is_lost(tmp_path):
    def failing(path):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError) as caught:
        save_with_fallback(tmp_path / "run.json", failing, tmp_path)
    assert_one_line_naming(caught.value, tmp_path / "run.json")
    assert str(caught.value).count("No space left on device") == 2  # why the file failed, and why its fallback did


def test_a_name_that_only_just_fits_is_written(tmp_path):
    longest = name_max(tmp_path)
    path = tmp_path / ("r" * (longest - 5) + ".json")
    check_destination(path, "out")
    assert write_atomically(path, "{}\n").read_text() == "{}\n"  # the temporary name is longer: it is cut to fit
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_name_too_long_for_the_file_system_is_refused_before_the_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "train", lambda *a, **k: pytest.fail("training started before the name was checked"))
    path = tmp_path / ("r" * name_max(tmp_path) + ".json")
    assert main(["train", "--out", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "this file system allows at most" in err and len(err) < 400 and "\n" not in err, err


def test_out_and_plot_naming_one_file_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "train", lambda *a, **k: pytest.fail("training started before the names were checked"))
    target = str(tmp_path / "run.png")
    assert main(["train", "--out", target, "--plot", target]) == 2
    assert "it is the file --out writes" in capsys.readouterr().err


# --- 3. damaged files: one line naming the file -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('{"default.pt": 5}', "not a SHA-256"),
        ('{"default.pt": NaN}', "NaN"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[1]", "JSON list"),
    ],
)
def test_a_damaged_checksums_file_is_one_line_naming_it(text, fragment, tmp_path, monkeypatch):
    path = tmp_path / "checksums.json"
    path.write_text(text)
    monkeypatch.setattr(policy_module, "CHECKSUMS_PATH", path)
    with pytest.raises(ValueError) as error:
        shipped_checksums()
    assert str(path) in str(error.value) and fragment in str(error.value) and "\n" not in str(error.value)


def damaged_result(tmp_path, change) -> Path:
    result = json.loads((ROOT / "data" / "results" / "variance.json").read_text())
    text = change(result)
    (tmp_path / "variance.json").write_text(text if isinstance(text, str) else json.dumps(result))
    return tmp_path / "variance.json"


RESULT_DAMAGE = {
    "summary a number": (lambda r: r["cells"][0].update(summary=5), "'summary' is a int"),
    "wall time null": (lambda r: r.update(wall_time_s=None), "'wall_time_s' is a NoneType"),
    "a mean that is text": (lambda r: r["cells"][0]["summary"][next(iter(r["cells"][0]["summary"]))].update(mean="x"), "must hold numbers"),
    "per-seed metrics a list": (lambda r: r["cells"][0]["per_seed"][0].update(metrics=[]), "'metrics' is a list"),
    "NaN": (lambda r: json.dumps(r).replace('"wall_time_s":', '"wall_time_s": NaN, "x":'), "NaN"),
    "deep nesting": (lambda r: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", RESULT_DAMAGE)
def test_damaged_result_files_are_one_unreadable_result_error(case, tmp_path):
    change, fragment = RESULT_DAMAGE[case]
    path = damaged_result(tmp_path, change)
    with pytest.raises(UnreadableResultError) as error:
        load_result("variance", directory=tmp_path)
    assert str(path) in str(error.value) and fragment in str(error.value) and "\n" not in str(error.value), str(error.value)


def test_replot_of_a_result_no_figure_can_draw_is_one_line_naming_the_file(tmp_path, capsys):
    result = json.loads((ROOT / "data" / "results" / "group-size.json").read_text())
    result["cells"][2]["per_seed"][1]["series"]["eval_accuracy"][2] = {}  # passes the schema; the figure cannot draw it
    path = tmp_path / "group-size.json"
    path.write_text(json.dumps(result))
    assert main(["sweep", "group-size", "--replot", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: the group-size result cannot be drawn") and "\n" not in err, err
    assert not (tmp_path / "group-size.png").exists()


def null_means(result: dict, metric: str | None) -> None:
    """Every seed's value (of ``metric``, or of every metric) null, and the summaries that follow from it."""
    for cell in result["cells"]:
        for name, stats in cell["summary"].items():
            if metric in (None, name):
                stats.update(mean=None, std=None, n=0)
                for entry in cell["per_seed"]:
                    entry["metrics"][name] = None


@pytest.mark.parametrize(
    "name, metric, fragment",
    [
        ("group-size", None, "every summary mean is null in the cell "),  # drew empty panels and exited 0
        ("batch-blowup", None, "every summary mean is null in the cell "),  # a matplotlib TypeError traceback when saved
        ("batch-blowup", "time_per_step_s", "TypeError"),  # the y of an annotation: fails only when matplotlib renders
    ],
)
def test_replot_of_a_result_with_null_means_is_one_line_naming_the_file(name, metric, fragment, tmp_path, capsys):
    result = json.loads((ROOT / "data" / "results" / f"{name}.json").read_text())
    null_means(result, metric)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(result))
    assert main(["sweep", name, "--replot", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: the {name} result cannot be drawn") and fragment in err and "\n" not in err, err
    assert not (tmp_path / f"{name}.png").exists()


def test_a_damaged_eval_set_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(task_module, "DATA_DIR", tmp_path)
    monkeypatch.setattr(task_module, "_EVAL_CACHE", {})
    (tmp_path / "eval").mkdir()
    path = tmp_path / "eval" / "2d+.json"
    for text, fragment in [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"task": "2d+", "problems": [[1, "+", NaN]]}', "NaN"),
        ('{"task": "2d+", "problems": [[1, "*", 2]]}', "is not a 2d+ problem"),
        ('{"task": "2d+", "problems": [[1, "+", 2.5]]}', "is not a 2d+ problem"),
    ]:
        path.write_text(text)
        with pytest.raises(ValueError) as error:
            task_module.eval_problems(Task.parse("2d+"))
        assert str(path) in str(error.value) and fragment in str(error.value), str(error.value)


def test_every_shipped_eval_set_matches_its_checksum_and_size():
    paths = [path for path in sorted((ROOT / "data" / "eval").glob("*.json")) if path.name != "checksums.json"]
    assert len(paths) == 21  # 5 digit counts x 4 operation sets, and the practice regime's worked addition
    for path in paths:
        task = Task.parse(path.stem)
        assert task_module.read_eval_set(task, path) == task_module.generate_eval_problems(task), path


def test_a_truncated_or_changed_eval_set_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(task_module, "DATA_DIR", tmp_path)
    monkeypatch.setattr(task_module, "_EVAL_CACHE", {})
    task = Task.parse("2d+")
    path = task_module.write_eval_set(task)  # with its SHA-256 in the checksums.json beside it
    assert task_module.eval_problems(task) == task_module.generate_eval_problems(task)
    text = path.read_text()
    first_digit = text.index("[[") + 2
    changed = text[:first_digit] + ("8" if text[first_digit] == "9" else "9") + text[first_digit + 1 :]  # still a 2d+ problem
    for damaged, fragment in [
        (json.dumps({"task": "2d+", "problems": json.loads(text)["problems"][:1]}), "it holds 1 problems, a 2d+ eval set holds 300"),
        (changed, "is damaged or changed: its SHA-256 is"),
    ]:
        path.write_text(damaged)
        task_module._EVAL_CACHE.clear()
        with pytest.raises(ValueError) as error:
            task_module.eval_problems(task)
        message = str(error.value)
        assert str(path) in message and fragment in message and "python -m grpo_lab pretrain" in message and "\n" not in message, message


@pytest.mark.parametrize(
    "name, damage, fragment",
    [
        ("follow_ups.json", lambda text: text.encode("latin-1", "replace"), "is not UTF-8"),
        ("follow_ups.json", lambda text: re.sub(r'("key": )"[^"]*"', r"\g<1>5", text, count=1), "FollowUp.key is 5, not a str"),
        ("labels.json", lambda text: re.sub(r': "[^"]*"', ": null", text, count=1), "null"),
        ("answers.json", lambda text: re.sub(r'("text": )"[^"]*"', r"\g<1>[]", text, count=1), "Sentence.text is [], not a str"),
    ],
)
def test_damaged_course_text_is_refused_when_read(name, damage, fragment, tmp_path, monkeypatch):
    text = (text_files.TEXT_DIR / name).read_text(encoding="utf-8")
    damaged = damage(text.replace("—", "é") if name == "follow_ups.json" else text)
    (tmp_path / name).write_bytes(damaged if isinstance(damaged, bytes) else damaged.encode())
    monkeypatch.setattr(text_files, "TEXT_DIR", tmp_path)
    build = {
        "follow_ups.json": lambda items: tuple(drill_answers.FollowUp(**item) for item in items),  # as drill_answers reads them
        "answers.json": drill_answers.answers_from_text,
        "labels.json": lambda labels: labels["quiz"],
    }
    with pytest.raises(ValueError) as error:
        text_files.load_text(name, build[name])
    assert str(tmp_path / name) in str(error.value) and fragment in str(error.value), str(error.value)


def test_a_header_with_a_huge_architecture_is_refused_before_it_is_built(tmp_path):
    path = save_policy(TinyTransformer(), tmp_path / "huge.pt")
    checkpoint = torch.load(path, weights_only=True)
    checkpoint["config"]["n_layers"] = 100_000
    torch.save(checkpoint, path)
    started = time.perf_counter()
    with pytest.raises(ValueError) as caught:
        load_policy(path)
    assert_one_line_naming(caught.value, path, "n_layers=100000")
    assert time.perf_counter() - started < 5  # was 96-119 s: the model was built on the meta device first


# --- 6. the command line's wording ------------------------------------------------------------------------


def test_negative_numbers_are_values_not_flags(monkeypatch, capsys):
    seen = {}

    def fake_train(config, on_step=None, on_batch=None):
        seen["offset"] = config.reward_offset
        return TrainResult(config=config, history=[{"step": 0, "eval_accuracy": 0.5}])

    monkeypatch.setattr(cli, "train", fake_train)
    assert main(["train", "--quiet", "--reward-offset", "-1e3"]) == 0 and seen["offset"] == -1000.0
    assert main(["train", "--quiet", "--reward-offset", "-inf"]) == 2
    assert "--reward-offset=-inf is not valid: must be a finite number" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--lr", "1x" * 2500], ["--task", "x" * 5000], ["--baseline", "y" * 5000], ["--out", "/" + "d" * 5000]])
def test_a_long_value_is_not_echoed_whole(args, capsys, monkeypatch):
    monkeypatch.setattr(cli, "train", lambda *a, **k: pytest.fail("training started"))
    assert main(["train", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err) < 500 and "\n" not in err, err[:600]


def test_a_reference_path_longer_than_the_file_system_allows_names_the_flag(capsys):
    # Path.is_file() raises 'File name too long' for such a name: the check must refuse it as a value
    assert main(["train", "--quiet", "--steps", "1", "--reference", "a" * 300 + ".pt"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --reference=") and "existing .pt file" in lines[0]
    assert "[Errno" not in lines[0] and len(lines[0]) < 400


def test_config_error_shortens_a_long_value():
    message = str(ConfigError("task", "x" * 5000, "write '{digits}d{ops}'"))
    assert len(message) < 250 and "(5002 characters)" in message


# --- 7. leftovers and silent corruption -------------------------------------------------------------------


def finished_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_temporaries_of_killed_writers_are_removed_by_the_next_write(tmp_path):
    dead = tmp_path / f".run.json.{finished_pid()}.0123abcd.tmp"
    alive = tmp_path / f".run.json.{os.getppid()}.0123abcd.tmp"  # a writer still running: left alone
    other = tmp_path / f".other.json.{finished_pid()}.0123abcd.tmp"
    for path in (dead, alive, other):
        path.write_bytes(b"half a file")
    write_atomically(tmp_path / "run.json", "{}\n")
    assert not dead.exists() and alive.exists() and other.exists()
    assert remove_stale_temporaries(tmp_path / "other.json") == [other]


def test_a_writer_killed_mid_write_leaves_a_temporary_that_the_next_save_removes(tmp_path):
    path = tmp_path / "policy.pt"
    script = (
        "import time\nfrom grpo_lab.checks.files import write_atomically\n"
        f"write_atomically({str(path)!r}, lambda file: (file.write(b'half'), file.flush(), time.sleep(600)))"
    )
    process = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".policy.pt.*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    assert len(list(tmp_path.glob(".policy.pt.*.tmp"))) == 1  # what kill -9 leaves
    save_policy(TinyTransformer(), path)
    assert [p.name for p in tmp_path.iterdir()] == ["policy.pt"]
    assert load_policy(path).num_parameters() == TinyTransformer().num_parameters()


def test_single_bit_flips_anywhere_in_a_copy_of_default_pt_are_refused(tmp_path):
    shipped = reference_path("default")
    data, weights = shipped.read_bytes(), load_policy(shipped).state_dict()
    copy = tmp_path / "copy.pt"  # outside data/reference: only the checksum saved inside the file can catch a flip
    flips, changed, refused = 40, [], 0
    for index in range(flips):
        flipped = bytearray(data)
        flipped[(2 * index + 1) * len(data) // (2 * flips)] ^= 1 << index % 8
        copy.write_bytes(bytes(flipped))
        try:
            loaded = load_policy(copy)
        except ValueError as error:
            assert str(copy) in str(error) and "\n" not in str(error), str(error)
            refused += 1
            continue
        changed += [index] if any(not torch.equal(weights[name], tensor) for name, tensor in loaded.state_dict().items()) else []
    assert changed == [] and refused == flips, (changed, refused)


def test_an_unchecked_v1_checkpoint_is_refused_in_one_line(tmp_path):
    policy = TinyTransformer()
    path = tmp_path / "old.pt"
    torch.save({"format": "grpo-lab-policy-v1", "config": {}, "metadata": {}, "state_dict": policy.state_dict()}, path)
    with pytest.raises(ValueError) as error:
        load_policy(path)
    message = str(error.value)
    assert str(path) in message and "grpo-lab-policy-v1" in message and "re-save" in message and "\n" not in message, message


def test_to_grpo_config_leaves_no_folder_in_the_temporary_folder(fallback_folder):
    pytest.importorskip("trl")
    from grpo_lab import TrainConfig
    from grpo_lab.bridge import to_grpo_config

    for _ in range(3):
        to_grpo_config(TrainConfig(steps=2))
    assert list(fallback_folder.glob("grpo-lab-trl-*")) == []  # (importing trl may leave torch's own cache folder)
