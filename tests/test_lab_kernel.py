"""The lab in a real kernel, asked for every widget's state while its runs end, as a page that opens
(Voila) or reloads (JupyterLab) asks: each request gets its answer (issue 41: a widget made by a run's
thread during the kernel's walk over its widgets ended the walk, and the page got no answer)."""

import os
import queue
import time
import uuid

import pytest
from jupyter_client.manager import start_new_kernel

pytestmark = pytest.mark.slow

RUNS = 24  # runs that end while the page asks: each end adds a row of widgets to the Runs tab (and lets go of one)
ANSWER_S = 20.0  # a kernel answers in well under a second; a lost answer never comes
# in the kernel, a student pressing Run whenever the last run has ended (a thread: the kernel's own
# thread must stay free to answer the page, as it is when a class uses the lab)
STUDENT = f"""
import threading
from grpo_lab import GRPOLab
lab = GRPOLab(steps=4, eval_every=2, probe_every=2, max_runs=3)
def press_run():
    for _ in range({RUNS}):
        lab.start_run()
        lab.wait(120)
student = threading.Thread(target=press_run)
student.start()
"""


def request_states(client, comm_id: str) -> bool:
    """Ask for every widget's state on the control comm (what Voila's and JupyterLab's pages send);
    True when the kernel's answer comes within ANSWER_S."""
    client.shell_channel.send(client.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "request_states"}}))
    deadline = time.monotonic() + ANSWER_S
    while time.monotonic() < deadline:
        try:
            message = client.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        content = message["content"]
        if message["msg_type"] == "comm_msg" and content.get("comm_id") == comm_id and content["data"].get("method") == "update_states":
            return True
    return False


def test_a_page_asking_for_every_widget_while_runs_end_is_always_answered():
    manager, client = start_new_kernel(kernel_name="python3", env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        assert client.execute_interactive(STUDENT, timeout=120)["content"]["status"] == "ok"
        comm_id = uuid.uuid4().hex
        control = client.session.msg("comm_open", {"comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}})
        control["metadata"] = {"version": "1.0.0"}
        client.shell_channel.send(control)
        asked = answered = 0
        deadline = time.monotonic() + 300
        while student_is_busy(client) and time.monotonic() < deadline:
            asked += 1
            answered += request_states(client, comm_id)
        assert asked >= RUNS and answered == asked, f"{asked - answered} of {asked} requests for every widget's state got no answer"
        # once the runs are over, the Runs tab has a row for each kept run
        rows = "assert sorted(lab.runs_panel.rows) == sorted(run.key for run in lab.runs)"
        assert client.execute_interactive(rows, timeout=60)["content"]["status"] == "ok"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def student_is_busy(client) -> bool:
    printed = []
    client.execute_interactive(
        "print(student.is_alive())", timeout=60, output_hook=lambda message: printed.append(message["content"].get("text", ""))
    )
    return "True" in "".join(printed)
