"""Training in a process of its own, so that drawing the plot and training do not share one GIL.

In one process the lab's drawing thread (a few tenths of a second of Python per full redraw) and
its training thread take turns at the interpreter, and a run takes about a quarter longer than the
same training alone (benchmarks/README.md, "Lab speed"). ``TrainingProcess`` starts
``python -m grpo_lab.lab.worker`` once per kernel and sends it one TrainConfig at a time; the
worker calls ``trainer.train`` exactly as the lab would in a thread (same seeds, same numbers) and
sends every step's record, every step's advantages and the end back as they happen.

The two processes talk over the worker's stdin and stdout, one pickled tuple per message:

    lab -> worker:  ("train", run_id, config dict, torch threads)   ("stop", run_id)
    worker -> lab:  ("ready",)  ("step", run_id, record)  ("batch", run_id, {"step", "rewards", "advantages"})
                    ("done", run_id, status, message, policy config, policy state_dict)
                    ("error", run_id, "TypeName: message", traceback text)

When the lab's process ends (a closed tab, a culled or restarted kernel) the worker reads the end
of its stdin and exits, so no training process outlives its notebook.
"""

from __future__ import annotations

import itertools
import os
import pickle
import queue
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import BinaryIO

from ..policy import PolicyConfig, TinyTransformer
from ..trainer import TrainConfig, TrainResult

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding grpo_lab/, put on the worker's path
REPLY_POLL = 0.02  # seconds between looks at the stop event while waiting for the worker's next message


class TrainingProcessError(RuntimeError):
    """The worker failed: an exception in its training (message 'TypeName: text', ``details`` the
    worker's traceback) or the process ended unexpectedly."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


class TrainingProcess:
    """The lab's side of one worker process. ``train`` has ``trainer.train``'s signature and result
    (the policy comes back as a fresh TinyTransformer); one run at a time (``busy``)."""

    def __init__(self) -> None:
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, (str(PACKAGE_ROOT), environment.get("PYTHONPATH"))))
        self._process = subprocess.Popen(
            [sys.executable, "-m", "grpo_lab.lab.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment
        )
        self._replies: queue.Queue = queue.Queue()
        self._send_lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._run_ids = itertools.count()
        threading.Thread(target=self._read_replies, name="grpo-lab-worker-replies", daemon=True).start()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    @property
    def pid(self) -> int:
        return self._process.pid

    def close(self) -> None:
        """End the worker (it exits when its stdin closes) and wait for it."""
        try:
            self._process.stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()

    def _read_replies(self) -> None:
        while True:
            try:
                reply = pickle.load(self._process.stdout)
            except Exception:  # the end of the pipe: the worker has ended
                self._replies.put(("exit",))
                return
            self._replies.put(reply)

    def _send(self, message: tuple) -> None:
        with self._send_lock:
            pickle.dump(message, self._process.stdin)
            self._process.stdin.flush()

    def try_acquire(self) -> bool:
        """Reserve the worker for one run; False when another run (another lab) is using it."""
        return self._run_lock.acquire(blocking=False)

    def release(self) -> None:
        self._run_lock.release()

    def train(
        self,
        config: TrainConfig,
        on_step: Callable[[dict], None] | None = None,
        stop: threading.Event | None = None,
        on_batch: Callable[[dict], None] | None = None,
        threads: int = 1,
    ) -> TrainResult:
        """Train ``config`` in the worker with ``threads`` torch threads; see ``trainer.train``.
        Raises TrainingProcessError when the worker fails (call after ``try_acquire``)."""
        run_id = next(self._run_ids)
        result = TrainResult(config=config)
        try:
            self._send(("train", run_id, config.to_dict(), threads))
        except OSError:
            raise TrainingProcessError(self._ended()) from None
        stop_sent = False
        while True:
            if stop is not None and stop.is_set() and not stop_sent:
                try:
                    self._send(("stop", run_id))
                except OSError:
                    pass  # the worker has ended: its "exit" is in the queue
                stop_sent = True
            try:
                reply = self._replies.get(timeout=REPLY_POLL)
            except queue.Empty:
                continue
            kind = reply[0]
            if kind == "exit":
                raise TrainingProcessError(self._ended())
            if kind == "ready" or reply[1] != run_id:
                continue
            if kind == "step":
                result.history.append(reply[2])
                if on_step is not None:
                    on_step(reply[2])
            elif kind == "batch":
                if on_batch is not None:
                    on_batch(reply[2])
            elif kind == "error":
                raise TrainingProcessError(reply[2], reply[3])
            elif kind == "done":
                result.status, result.message = reply[2], reply[3]
                policy = TinyTransformer(PolicyConfig(**reply[4]))
                policy.load_state_dict(reply[5])
                result.policy = policy.eval()
                return result

    def _ended(self) -> str:
        try:
            code = self._process.wait(2)
        except subprocess.TimeoutExpired:
            code = None
        return f"the training process (pid {self._process.pid}) ended unexpectedly (exit code {code})"


_shared: TrainingProcess | None = None
_shared_lock = threading.Lock()


def shared_training_process() -> TrainingProcess:
    """This kernel's worker, started on first use and again if it has ended; every lab of the
    kernel shares it (a lab whose run finds it busy trains in a thread instead)."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            _shared = TrainingProcess()
        return _shared


# --- the worker's side ----------------------------------------------------------------------------


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """Train each requested config in turn, sending its records back; exit at the end of ``requests``."""
    import torch

    from ..policy import load_reference_policy
    from ..trainer import train

    stopped: set[int] = set()
    pending: queue.Queue = queue.Queue()
    send_lock = threading.Lock()

    def send(message: tuple) -> None:
        with send_lock:
            pickle.dump(message, replies)
            replies.flush()

    def read_requests() -> None:
        while True:
            try:
                request = pickle.load(requests)
            except Exception:  # the lab's process has gone: so does this one
                os._exit(0)
            if request[0] == "stop":
                stopped.add(request[1])
            else:
                pending.put(request)

    class StopSignal:  # what ``train`` checks before every step
        def __init__(self, run_id: int):
            self.run_id = run_id

        def is_set(self) -> bool:
            return self.run_id in stopped

    threading.Thread(target=read_requests, name="grpo-lab-worker-requests", daemon=True).start()
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # torch's one-time costs, before the first run
    load_reference_policy("default")
    send(("ready",))
    while True:
        _, run_id, values, threads = pending.get()
        try:
            torch.set_num_threads(threads)
            result = train(
                TrainConfig.from_dict(values),
                on_step=lambda record, run_id=run_id: send(("step", run_id, record)),
                stop=StopSignal(run_id),
                on_batch=lambda batch, run_id=run_id: send(("batch", run_id, batch)),
            )
            state = {name: tensor.detach().cpu() for name, tensor in result.policy.state_dict().items()}
            send(("done", run_id, result.status, result.message, asdict(result.policy.config), state))
        except Exception as error:
            send(("error", run_id, f"{type(error).__name__}: {error}", traceback.format_exc()))


def main() -> None:
    # the replies travel on the real stdout; anything else printed (a warning, a stray print) goes to stderr
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
