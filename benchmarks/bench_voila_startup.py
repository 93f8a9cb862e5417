"""How long a class waits for the Voila page: from opening it to the dashboard visible, and to its
first run training live (the status line says "Running" at a step past 0). Voila is started as
`make voila` starts it (the classroom notebook, its kernels warmed in advance) or by another
``--route``, on a copy of the lab notebook, in teaching mode (not fast mode: the class's run, 150
steps), and Debian's Chromium opens the page ``--tabs`` times at once, once the warm kernels wait
(the teacher starts the server before the class). The budget (DESIGN.md) is 10 s for one tab at
load < 1, 12 s with three.

    python benchmarks/bench_voila_startup.py [--route warm|cold|all-cells] [--tabs 1] [--repeats 2] [--pool 3]

``--route cold``: a kernel started per page, voila-skip cells left out (each student's server on the
JupyterHub, and `make voila` before warm kernels); ``all-cells``: every cell run (before voila-skip).

Measurements, not assertions; the machine, its load average and the command are printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]
from bench_lab import load_average, machine  # noqa: E402
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, SERVER_START_SECONDS, VOILA_ROUTES, WARM_KERNEL_READY, serve  # noqa: E402

TIMEOUT_MS = 180_000
POLL_S = 0.1
# what a page shows: its plot (a drawn image), run 1 training live (the status line at a step past 0), run 1 over
PAGE_STATE = """() => {
    const plot = document.querySelector("img.grpo-plot[src^='data:'], img.grpo-plot[src^='blob:']");
    const text = (document.querySelector('.grpo-status') || {}).textContent || '';
    const running = text.match(/Running run 1\\b.*step (\\d+)/);
    return {visible: !!plot && plot.offsetWidth > 0, live: !!running && Number(running[1]) > 0, over: /(Finished|Failed|Stopped) run 1\\b/.test(text)};
}"""


def time_one_load(url: str, tabs: int) -> list[tuple[float, float | None]]:
    """Open ``url`` in ``tabs`` pages at once (each in a browser context of its own, as separate students'
    browsers), and watch them all together; per page, seconds to the plot visible and to run 1 training live
    (None: run 1 had ended before the page showed it training)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            pages = [browser.new_context(viewport={"width": 1280, "height": 720}).new_page() for _ in range(tabs)]
            started = time.perf_counter()
            for page in pages:
                page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
            visible: list[float | None] = [None] * tabs
            live: list[float | None] = [None] * tabs
            done = [False] * tabs
            while not all(done):
                if time.perf_counter() - started > TIMEOUT_MS / 1000:
                    raise TimeoutError(f"pages {[i + 1 for i, d in enumerate(done) if not d]} showed no run 1 within {TIMEOUT_MS / 1000:.0f} s")
                for index, page in enumerate(pages):
                    if done[index]:
                        continue
                    state, now = page.evaluate(PAGE_STATE), time.perf_counter() - started
                    if state["visible"] and visible[index] is None:
                        visible[index] = now
                    if state["visible"] and state["live"] and live[index] is None:
                        live[index] = now
                    done[index] = visible[index] is not None and (live[index] is not None or state["over"])
                time.sleep(POLL_S)
            return list(zip(visible, live))
        finally:
            browser.close()


def wait_for_warm_kernels(log: Path, count: int) -> None:
    """Wait until the server's log says ``count`` kernels in all were warmed (used ones are replaced
    FILL_DELAY_S after their page opened: grpo_lab/lab/voila_page/warm/voila.py)."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while log.read_text().count(WARM_KERNEL_READY) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{count} warm kernels were not ready within {SERVER_START_SECONDS} s")
        time.sleep(0.5)


def kernels_memory() -> str:
    """The resident memory of the machine's running IPython kernels, each (what a warm pool holds idle)."""
    import psutil

    sizes = [
        process.info["memory_info"].rss / 2**20
        for process in psutil.process_iter(["cmdline", "memory_info"])
        if "ipykernel_launcher" in " ".join(process.info["cmdline"] or [])
    ]
    return f"{len(sizes)} kernels, " + ", ".join(f"{size:.0f}" for size in sorted(sizes)) + " MB resident"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, default=1, choices=range(1, 11), help="pages opened at once (1 to 10)")
    parser.add_argument("--repeats", type=int, default=2, choices=range(1, 11), help="page loads, one server (1 to 10)")
    parser.add_argument("--route", choices=VOILA_ROUTES, default="warm", help="how Voila serves the lab (default: warm, as `make voila`)")
    parser.add_argument("--pool", type=int, default=3, choices=range(1, 11), help="warm kernels (GRPO_LAB_POOL; `make voila`'s default 3)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}: nothing measured")
        return 1
    print(f"machine: {machine()}; load average before: {load_average()}")
    print(f"command: python benchmarks/bench_voila_startup.py --route {args.route} --tabs {args.tabs} --repeats {args.repeats} --pool {args.pool}")
    visible, live = [], []
    with tempfile.TemporaryDirectory() as workdir, serve("voila", Path(workdir), fast=False, route=args.route, pool=args.pool) as url:
        for repeat in range(args.repeats):
            if args.route == "warm":  # the pages used so far replaced: the class arrives at a ready server
                wait_for_warm_kernels(Path(workdir) / "voila.log", args.pool + repeat * min(args.tabs, args.pool))
                print(f"load {repeat + 1}: {args.pool} warm kernels ready ({kernels_memory()}); load average {load_average()}")
            for page, (seen, training) in enumerate(time_one_load(url, args.tabs), start=1):
                live_words = f"{training:.1f} s" if training is not None else "never (run 1 was over when the page showed)"
                print(f"load {repeat + 1}, tab {page}: dashboard visible {seen:.1f} s, run 1 training live {live_words}")
                visible.append(seen)
                if training is not None:
                    live.append(training)
    live_words = f"{statistics.median(live):.1f} s" if live else "never"
    print(f"median over {len(visible)} pages: visible {statistics.median(visible):.1f} s, training live {live_words}")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
