"""What one student costs on the classroom JupyterHub, and so what a class needs: the shipped
configuration (deploy/jupyterhub/jupyterhub_config.py, its local route, the way tests/test_jupyterhub.py
starts it: an account and a system user per student, as root) with N students logged in from
headless Chromium at the same moment, in teaching mode (not GRPO_LAB_FAST) unless --fast:

1. opening: seconds from each student's login until the lab page's first run has finished;
2. idle: RSS (and USS, the memory only that process holds) of each student's server and kernel, and
   of the hub with its proxy;
3. one run each, one student at a time (Run pressed, the default G=8 run): the CPU seconds the
   student's server and kernel used, over the run's wall time (= cores), and their peak RSS and USS
   sampled every 0.25 s;
4. all students press Run together: the wall time until every page says Finished.

    python benchmarks/bench_hub_students.py [--students 3] [--fast]

Measurements, not assertions; the machine, its load average and the command are printed. RSS counts
the shared libraries (torch's) in every process, so N x RSS overstates a class; N x USS plus one
copy of what they share is the closer figure, and both are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from hub_helpers import chromium_browser, log_in, serve_hub, unique_names, wait_for_servers  # noqa: E402
from test_browser import LAST_FINISHED_RUN, plot_source, wait_for_next_finished_run  # noqa: E402

PAGE_TIMEOUT_MS = 900_000  # N students' notebooks run at once on the machine's cores
MB = 1024 * 1024


class PeakMemory:
    """Samples RSS and USS of ``processes`` every ``interval_s`` in a thread of its own; keeps each peak."""

    def __init__(self, processes: list[psutil.Process], interval_s: float = 0.25):
        self.processes, self.interval_s = processes, interval_s
        self.rss = self.uss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.is_set():
            rss, uss = memory(self.processes)
            self.rss, self.uss = max(self.rss, rss), max(self.uss, uss)
            self._stop.wait(self.interval_s)


def memory(processes: list[psutil.Process]) -> tuple[int, int]:
    """(RSS, USS) in bytes, summed over ``processes``."""
    infos = [process.memory_full_info() for process in processes]
    return sum(info.rss for info in infos), sum(info.uss for info in infos)


def cpu_seconds(processes: list[psutil.Process]) -> float:
    return sum(sum(process.cpu_times()[:2]) for process in processes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=3, help="students logged in at once (1 to 10)")
    parser.add_argument("--fast", action="store_true", help="GRPO_LAB_FAST=1 (the test's mode) instead of teaching mode")
    args = parser.parse_args()
    if not 1 <= args.students <= 10:
        parser.error(f"--students={args.students} is not valid: must be an integer from 1 to 10")
    users = unique_names([f"student{number}" for number in range(1, args.students + 1)])  # system users, removed afterwards
    print(f"machine: {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB; load average {os.getloadavg()[0]:.1f}")
    print(f"command: python benchmarks/bench_hub_students.py --students {args.students}{' --fast' if args.fast else ''}")

    with tempfile.TemporaryDirectory() as workdir, serve_hub(Path(workdir), users, fast=args.fast) as hub, chromium_browser() as browser:
        logged_in, pages = {}, {}
        for user in users:
            logged_in[user] = time.monotonic()
            pages[user] = log_in(browser.new_context(viewport={"width": 1400, "height": 1200}), hub, user, timeout_ms=PAGE_TIMEOUT_MS)
        opening = {}
        for user in users:  # students who log in together wait for each other's notebooks
            pages[user].wait_for_function(LAST_FINISHED_RUN, timeout=PAGE_TIMEOUT_MS, polling=250)
            opening[user] = time.monotonic() - logged_in[user]
        print(f"opening (login to first run finished), {args.students} at once: " + ", ".join(f"{opening[u]:.0f} s" for u in users))

        students = wait_for_servers(hub, users, timeout_s=30)
        hub_process = psutil.Process(hub.process.pid)
        hub_processes = [hub_process, *(p for p in hub_process.children() if "jupyterhub.singleuser" not in " ".join(p.cmdline()))]
        hub_rss, hub_uss = memory(hub_processes)
        print(f"hub + proxy: RSS {hub_rss / MB:.0f} MB, USS {hub_uss / MB:.0f} MB")
        print(
            "\n| student | idle server RSS | idle kernel RSS | run: peak RSS (server + kernel) | run: peak USS | run: wall | run: CPU seconds | run: cores |"
        )
        print("|---|---|---|---|---|---|---|---|")
        peaks_rss, peaks_uss, cpus, walls = [], [], [], []
        for user in users:
            student = students[user]
            processes = [student.server, *student.kernels]
            server_rss, kernel_rss = student.server.memory_info().rss, sum(kernel.memory_info().rss for kernel in student.kernels)
            page = pages[user]
            run, source = page.evaluate(LAST_FINISHED_RUN), plot_source(page)
            cpu_before, started = cpu_seconds(processes), time.monotonic()
            with PeakMemory(processes) as peak:
                page.locator(".grpo-run").click()
                wait_for_next_finished_run(page, run, source)
            wall = time.monotonic() - started
            used = cpu_seconds(processes) - cpu_before
            peaks_rss.append(peak.rss), peaks_uss.append(peak.uss), cpus.append(used), walls.append(wall)
            print(
                f"| {user} | {server_rss / MB:.0f} MB | {kernel_rss / MB:.0f} MB | {peak.rss / MB:.0f} MB | {peak.uss / MB:.0f} MB | {wall:.1f} s | {used:.1f} s | {used / wall:.2f} |"
            )

        sources = {user: (pages[user].evaluate(LAST_FINISHED_RUN), plot_source(pages[user])) for user in users}
        started = time.monotonic()
        for user in users:
            pages[user].locator(".grpo-run").click()
        for user in users:
            wait_for_next_finished_run(pages[user], *sources[user])
        together = time.monotonic() - started
        print(f"\nall {args.students} press Run together: every page finished after {together:.1f} s")

        per_student_rss, per_student_uss = statistics.median(peaks_rss), statistics.median(peaks_uss)
        print(
            f"\nper student (median): peak RSS {per_student_rss / MB:.0f} MB, peak USS {per_student_uss / MB:.0f} MB, "
            f"{statistics.median(cpus):.1f} CPU seconds in {statistics.median(walls):.1f} s per run"
        )
        class_size, cpu_per_run = 30, statistics.median(cpus)
        print(
            f"a class of {class_size}: memory {(class_size * per_student_rss + hub_rss) / 2**30:.1f} GiB by RSS, "
            f"{(class_size * per_student_uss + hub_rss) / 2**30:.1f} GiB by USS (+ one copy of the shared libraries); "
            f"{class_size * cpu_per_run:.0f} CPU seconds when all press Run at once (a run uses one torch thread): on K cores "
            "every run has finished after about that / K seconds ("
            + ", ".join(f"{cores} cores: {class_size * cpu_per_run / cores:.0f} s" for cores in (4, 8, 16, class_size))
            + ")"
        )


if __name__ == "__main__":
    main()
