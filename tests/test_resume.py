"""A stopped sweep resumes (issue 38): SIGTERM or SIGINT keeps its finished units in NAME.partial.jsonl, the
same command re-runs only the rest and writes the result an uninterrupted run writes, and a partial file of
another sweep (other seeds, another grid) is not reused."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest

from grpo_lab.cli import main
from grpo_lab.experiments import runner
from grpo_lab.experiments.catalog import EXPERIMENTS

SWEEP = ["sweep", "variance", "--fast", "--seeds", "1", "--quiet"]  # 6 cells x 1 seed of fixed-policy measures, about a second a unit
UNITS = 6
RUN_JOB = runner._run_job
STOPPED = 128 + signal.SIGTERM


def run_counting(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], stop_after: int | None = None, stop_signal: int = signal.SIGTERM
) -> tuple[int, list[tuple[int, int]]]:
    """``main(argv)`` (with --workers 1 its units run in this process) and the units it ran, (cell index, seed);
    with ``stop_after``, ``stop_signal`` arrives as unit ``stop_after + 1`` is about to start, as a kill or a
    Ctrl-C would."""
    ran: list[tuple[int, int]] = []

    def counting(job: tuple[int, dict, int]) -> tuple[int, dict]:
        if len(ran) == stop_after:
            signal.raise_signal(stop_signal)  # the command line's handler stops the sweep here
        ran.append((job[0], job[2]))
        return RUN_JOB(job)

    monkeypatch.setattr(runner, "_run_job", counting)
    return main(argv), ran


def per_seed(result: dict) -> list[list[dict]]:
    return [cell["per_seed"] for cell in result["cells"]]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("uninterrupted")
    assert main([*SWEEP, "--workers", "2", "--out", str(folder)]) == 0
    assert not (folder / "variance.partial.jsonl").exists()  # a finished sweep leaves no partial file
    return json.loads((folder / "variance.json").read_text())


def test_a_stopped_sweep_keeps_its_units_and_the_command_it_prints_runs_only_the_rest(tmp_path, monkeypatch, capsys, uninterrupted):
    partial = tmp_path / "variance.partial.jsonl"
    code, first = run_counting(monkeypatch, [*SWEEP, "--workers", "1", "--out", str(tmp_path)], stop_after=2, stop_signal=signal.SIGINT)
    err = capsys.readouterr().err.strip()
    assert code == 128 + signal.SIGINT and len(first) == 2, err  # Ctrl-C
    assert len(runner.read_partial(partial)[1]) == 2 and not (tmp_path / "variance.json").exists()
    assert "\n" not in err and re.search(r"\b2 of 6 units\b", err), err  # one line: how many units finished
    resume = re.search(r"`(python -m grpo_lab [^`]*)`", err)
    assert resume, err
    code, second = run_counting(monkeypatch, shlex.split(resume.group(1))[3:])  # the command the line gives
    assert code == 0 and len(second) == UNITS - 2 and not set(first) & set(second)
    assert not partial.exists()
    result = json.loads((tmp_path / "variance.json").read_text())
    assert per_seed(result) == per_seed(uninterrupted) and result["derived"] == uninterrupted["derived"]


def test_sigterm_to_a_sweep_with_two_workers_keeps_what_finished_and_the_rerun_completes_it(tmp_path, uninterrupted):
    command = [sys.executable, "-m", "grpo_lab", *SWEEP, "--workers", "2", "--out", str(tmp_path)]
    partial = tmp_path / "variance.partial.jsonl"
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while len(runner.read_partial(partial)[1]) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    _, kept, first_seconds = runner.read_partial(partial)
    assert process.returncode == STOPPED and 2 <= len(kept) < UNITS, err
    assert f"{len(kept)} of {UNITS} units" in err and "Traceback" not in err, err
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{len(kept)} of {UNITS} units kept, {UNITS - len(kept)} to run" in again.stderr, again.stderr
    assert not partial.exists()
    result = json.loads((tmp_path / "variance.json").read_text())
    assert per_seed(result) == per_seed(uninterrupted) and result["derived"] == uninterrupted["derived"]
    assert result["wall_time_s"] > first_seconds  # the sum over both sessions


@pytest.mark.parametrize("other", ["seeds", "grid"])
def test_a_partial_file_of_another_sweep_is_not_reused(other, tmp_path, monkeypatch, capsys):
    argv = [*SWEEP, "--workers", "1", "--out", str(tmp_path)]
    partial = tmp_path / "variance.partial.jsonl"
    with monkeypatch.context() as patch:
        if other == "grid":  # the same experiment with fewer cells, as an edited catalog would give
            spec = EXPERIMENTS["variance"]
            patch.setitem(EXPERIMENTS, "variance", dataclasses.replace(spec, grid=lambda fast: spec.grid(fast)[:3]))
        code, first = run_counting(patch, argv + (["--seeds", "2"] if other == "seeds" else []), stop_after=2)
    assert code == STOPPED and len(runner.read_partial(partial)[1]) == 2
    capsys.readouterr()
    code, second = run_counting(monkeypatch, argv, stop_after=1)
    assert code == STOPPED and second[0] in first  # a unit the other sweep had finished runs again
    identity, kept, _ = runner.read_partial(partial)
    assert identity["seeds"] == 1 and len(identity["grid"]) == 16 and len(kept) == 1  # the other sweep's units are gone
    said = [line for line in capsys.readouterr().err.splitlines() if str(partial) in line and "sweep stopped" not in line]
    assert len(said) == 1, said  # one line says the file is set aside


def test_a_line_cut_short_by_a_kill_is_skipped_and_the_next_session_appends_after_it(tmp_path):
    path = tmp_path / "variance.partial.jsonl"
    identity = {"name": "variance", "seeds": 2, "grid": "0123456789abcdef", "units": 2}
    entry = {"seed": 0, "status": "finished", "message": "", "metrics": {"reward": 0.5}}
    lines = [{"sweep": identity}, {"cell": "a", "seed": 0, "entry": entry, "elapsed_s": 3.0}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"cell": "a", "seed": 1, "ent')
    assert runner.start_partial(path, identity) == ({("a", 0): entry}, 3.0)
    runner.append_record(path, {"cell": "a", "seed": 1, "entry": {**entry, "seed": 1}, "elapsed_s": 5.0})
    assert runner.read_partial(path) == (identity, {("a", 0): entry, ("a", 1): {**entry, "seed": 1}}, 5.0)


def test_a_stopped_sweep_all_does_not_run_its_finished_experiments_again(tmp_path, monkeypatch):
    """`sweep all` stopped in its second experiment: the re-run runs only the rest of the second, no unit of the
    first (whose result was already written), and leaves no partial file once both results are written."""
    from grpo_lab.experiments import catalog

    monkeypatch.setattr(catalog, "experiments_in", lambda regime: ["variance", "difficulty-bias"])
    argv = ["sweep", "all", "--regime", "gentle", "--fast", "--seeds", "1", "--quiet", "--workers", "1", "--out", str(tmp_path)]
    code, first = run_counting(monkeypatch, argv, stop_after=UNITS + 1)
    assert code == STOPPED and len(first) == UNITS + 1
    assert (tmp_path / "variance.json").exists() and not (tmp_path / "difficulty-bias.json").exists()
    before = json.loads((tmp_path / "variance.json").read_text())
    code, second = run_counting(monkeypatch, argv)
    assert code == 0 and not list(tmp_path.glob("*.partial.jsonl"))
    difficulty = json.loads((tmp_path / "difficulty-bias.json").read_text())
    assert len(second) == len(difficulty["cells"]) - 1  # the one unit of difficulty-bias that finished is not run again
    assert per_seed(json.loads((tmp_path / "variance.json").read_text())) == per_seed(before)
