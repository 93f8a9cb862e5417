"""What one tab of `make voila` costs in memory as a student uses it: the page's kernel (RSS, and USS,
the memory only that process holds) while it waits warm, after the page's run 1, and after each further
default run (New seed), in teaching mode (150 steps a run); the Voila server's own memory beside it.
The lab keeps the newest 7 runs on its plot, so memory should level off after about 7 runs.

    python benchmarks/bench_voila_memory.py [--runs 13] [--query "group_size=64&seeds=3"]

``--query``: the page's settings (a link's, docs/classroom.md) for every run: a heavier tab than the default.

Measurements, not assertions; the machine, its load average and the command are printed. RSS counts
the shared libraries (torch's) in every kernel, so N tabs cost about N x USS plus one copy of the
shared part (RSS - USS), plus the server.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]
from bench_lab import load_average, machine  # noqa: E402
from bench_voila_startup import wait_for_warm_kernels  # noqa: E402
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402

RUN_TIMEOUT_MS = 240_000  # one teaching-mode run on two busy cores, with room
FINISHED_RUN = """(run) => {
    const match = (document.querySelector('.grpo-status')?.textContent || '').match(/Finished run (\\d+)/);
    return match && Number(match[1]) >= run;
}"""


def kernels_under(folder: Path) -> list:
    """The ipykernel processes Voila started for the notebook under ``folder``, oldest first."""
    import psutil

    found = []
    for process in psutil.process_iter(["cmdline", "cwd", "create_time"]):
        if "ipykernel" in " ".join(process.info["cmdline"] or []) and Path(process.info["cwd"] or "/").is_relative_to(folder):
            found.append(process)
    return sorted(found, key=lambda process: process.info["create_time"])


def mib(process) -> tuple[float, float]:
    """(RSS, USS) of ``process`` in MiB."""
    info = process.memory_full_info()
    return info.rss / 2**20, info.uss / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=13, choices=range(1, 31), help="default runs in the one tab (1 to 30)")
    parser.add_argument("--query", default="", help="the page address's settings, e.g. 'group_size=64&seeds=3' (default: none)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}: nothing measured")
        return 1
    from playwright.sync_api import sync_playwright

    print(f"machine: {machine()}; load average before: {load_average()}")
    print(f"command: python benchmarks/bench_voila_memory.py --runs {args.runs}" + (f" --query '{args.query}'" if args.query else ""))
    with tempfile.TemporaryDirectory() as workdir, serve("voila", Path(workdir), fast=False, route="warm", pool=1) as url:
        folder = Path(workdir).resolve()
        wait_for_warm_kernels(folder / "voila.log", 1)
        time.sleep(2)  # the warm kernel has printed that it is ready: let it settle
        kernel = kernels_under(folder)[0]
        server = kernel.parent()
        rows = [("warm kernel, waiting for a page", mib(kernel))]
        server_waiting = mib(server)[0]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(url + (f"?{args.query}" if args.query else ""), timeout=RUN_TIMEOUT_MS)
                page.wait_for_function(FINISHED_RUN, arg=1, timeout=RUN_TIMEOUT_MS)
                rows.append(("after run 1 (the page's first)", mib(kernel)))
                for run in range(2, args.runs + 1):
                    page.locator(".grpo-new-seed").click()
                    page.wait_for_function(FINISHED_RUN, arg=run, timeout=RUN_TIMEOUT_MS)
                    rows.append((f"after run {run}", mib(kernel)))
            finally:
                browser.close()
        server_after = mib(server)[0]
    print("| the page's kernel | RSS (MiB) | USS (MiB) |")
    print("|---|---|---|")
    for words, (rss, uss) in rows:
        print(f"| {words} | {rss:.0f} | {uss:.0f} |")
    print(f"Voila server (RSS): {server_waiting:.0f} MiB with one warm kernel waiting, {server_after:.0f} MiB after the runs")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
