"""The lab's training process (grpo_lab/lab/worker.py): the same numbers as training here, errors
that say what failed, a dead worker that fails one run and is replaced, and no worker that outlives
the process that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grpo_lab import GRPOLab, TrainConfig, train
from grpo_lab.lab import TrainingProcess, TrainingProcessError, shared_training_process, torch_threads

WAIT_SECONDS = 240  # generous: CI shares two cores with the other tests


def without_times(history: list[dict]) -> list[dict]:
    return [{key: value for key, value in record.items() if key != "wall_time"} for record in history]


def process_exists(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, ended but not yet reaped by its new parent, counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return not stat.parent.parent.is_dir()  # no /proc here (macOS): os.kill said it exists


def test_the_worker_trains_the_same_numbers_and_returns_the_policy():
    worker = shared_training_process()
    config = TrainConfig(steps=6, eval_every=3, probe_every=3, group_size=4, prompts_per_step=8)
    steps, batches = [], []
    assert worker.try_acquire()
    try:
        result = worker.train(config, on_step=steps.append, on_batch=batches.append, threads=1)
    finally:
        worker.release()
    with torch_threads(1):
        here = train(config)
    assert result.status == "finished" and without_times(result.history) == without_times(here.history)
    assert result.history == steps and [batch["step"] for batch in batches] == list(range(1, 7))
    assert tuple(batches[-1]["advantages"].shape) == (8, 4)
    for (name, mine), (_, theirs) in zip(result.policy.state_dict().items(), here.policy.state_dict().items()):
        assert mine.equal(theirs), name


def test_an_exception_in_the_worker_comes_back_with_its_traceback():
    worker = shared_training_process()
    config = TrainConfig(steps=5)
    config.group_size = 1  # after validation here: the worker refuses it
    assert worker.try_acquire()
    try:
        with pytest.raises(TrainingProcessError, match=r"^ValueError: group_size=1") as caught:
            worker.train(config)
    finally:
        worker.release()
    assert "Traceback" in caught.value.details and "worker.py" in caught.value.details and "ValueError" in caught.value.details
    assert worker.alive  # an exception ends the run, not the worker


def test_a_killed_worker_fails_its_run_and_the_next_run_gets_a_new_one():
    lab = GRPOLab(steps=150)
    try:
        lab.run_button.click()
        deadline = time.monotonic() + WAIT_SECONDS
        while lab.current is None or lab.current.steps_done < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        killed = shared_training_process().pid
        os.kill(killed, signal.SIGKILL)
        assert lab.wait(WAIT_SECONDS)
        assert lab.current.status == "failed" and "ended unexpectedly" in lab.current.message
        assert "Failed" in lab.status.value and "ended unexpectedly" in lab.status.value
        lab.controls["steps"].value = 10
        assert lab.wait(WAIT_SECONDS)
        assert lab.runs[-1].status == "finished" and shared_training_process().pid != killed
    finally:
        lab.close()


def test_the_worker_ends_with_the_process_that_started_it(tmp_path):
    script = textwrap.dedent(
        """
        import sys, time
        from grpo_lab.lab import TrainingProcess
        worker = TrainingProcess()
        print(worker.pid, flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    worker_pid = int(parent.stdout.readline())
    assert process_exists(worker_pid)
    parent.kill()  # as a culled or crashed kernel ends: no chance to clean up
    parent.wait()
    deadline = time.monotonic() + 60
    while process_exists(worker_pid):
        assert time.monotonic() < deadline, "the worker outlived its parent by a minute"
        time.sleep(0.1)


def test_closing_a_worker_ends_it():
    worker = TrainingProcess()
    worker.close()
    assert not worker.alive
