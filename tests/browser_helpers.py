"""Servers and a browser for the browser tests: JupyterLab or Voila as a subprocess on a free
127.0.0.1 port, with its own temporary Jupyter config, data and runtime folders (nothing leaks
in or out), and Debian's Chromium driven by Playwright (never `playwright install`)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
REPO = Path(__file__).resolve().parents[1]
LAB_NOTEBOOK = REPO / "notebooks" / "03_interactive_lab.ipynb"
ARTIFACTS = REPO / "tests" / "artifacts"
VOILA_PAGE = REPO / "grpo_lab" / "lab" / "voila_page"
# how Voila serves the lab: "warm" as `make voila` (the classroom notebook, kernels warmed in advance),
# "cold" as each student's server on the JupyterHub (a kernel started per page, voila-skip cells left out
# by the prelaunch hook), "all-cells" every cell run (the page before voila-skip)
VOILA_ROUTES = ("warm", "cold", "all-cells")
WARM_KERNEL_READY = "grpo-lab: a warm kernel is ready"  # each warm kernel logs it once it waits for a page (classroom.py)
SERVER_START_SECONDS = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def isolated_environment(home: Path, fast: bool = True, one_thread: bool = True) -> dict[str, str]:
    """The server's environment: fresh Jupyter/IPython folders under ``home``, fast mode (unless
    not ``fast``: the class's own runs), one torch thread (the browser and the server share the two
    cores with the kernel; unless not ``one_thread``: then the server's own configuration decides)."""
    environment = dict(os.environ)
    for name, folder in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("IPYTHONDIR", "ipython"),
    ):
        (home / folder).mkdir(parents=True, exist_ok=True)
        environment[name] = str(home / folder)
    # JupyterLab's "receive news?" toast would cover the page in screenshots
    labconfig = home / "config" / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text('{"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": true}}')
    # JupyterLab 4 renders only the cells in view by default; "Run All" scrolls to the last cell, and
    # the dashboard above it would then never be attached to the page: render every cell instead
    tracker = home / "config" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True, exist_ok=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    environment.update(PYTHONUNBUFFERED="1")
    environment.pop("OMP_NUM_THREADS", None)
    if one_thread:  # else the server's own configuration decides its kernels' threads, as on a teacher's machine
        environment["OMP_NUM_THREADS"] = "1"
    if fast:
        environment["GRPO_LAB_FAST"] = "1"
    else:
        environment.pop("GRPO_LAB_FAST", None)
    environment.pop("JUPYTER_PATH", None)
    environment.pop("PYTEST_CURRENT_TEST", None)  # the kernels run as a user's do: ipykernel changes its output capture under pytest
    return environment


def answers(url: str | None, port: int) -> bool:
    """Whether ``url`` answers (or, with url None, whether the port accepts connections)."""
    if url is None:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except OSError:
        return False


def wait_until_serving(url: str | None, port: int, process: subprocess.Popen, log: Path, warm_kernels: int = 0) -> None:
    """Wait until the server answers on ``url`` (or ``port``) and its log says that ``warm_kernels``
    kernels in all were warmed (each logs WARM_KERNEL_READY once it waits for a page)."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        if answers(url, port) and log.read_text().count(WARM_KERNEL_READY) >= warm_kernels:
            return
        time.sleep(0.5)
    raise RuntimeError(f"the server was not ready on port {port} within {SERVER_START_SECONDS} s:\n{log.read_text()[-3000:]}")


def stop_server(process: subprocess.Popen) -> None:
    """Interrupt the server (it shuts its kernels down), then terminate, then kill its process group."""
    if process.poll() is not None:
        return
    for sent, grace in ((signal.SIGINT, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sent)
            if sent == signal.SIGINT:  # jupyter asks "Shutdown this Jupyter server (y/[n])?" on one ^C: a second one skips it
                time.sleep(0.5)
                os.killpg(process.pid, sent)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def serve(kind: str, workdir: Path, fast: bool = True, route: str = "warm", pool: int = 1, one_thread: bool = True):
    """Start ``kind`` ('lab' or 'voila') on a copy of the lab notebook under ``workdir``, in fast mode
    unless not ``fast``; yields the URL that opens the notebook (with the token for JupyterLab) once a
    page can be opened. Voila serves it by ``route`` (VOILA_ROUTES; "warm" with ``pool`` kernels
    warmed, and ready once they are). Always shuts it down."""
    root = workdir / "course"
    (root / "notebooks").mkdir(parents=True)
    notebook = root / "notebooks" / LAB_NOTEBOOK.name
    shutil.copy(LAB_NOTEBOOK, notebook)  # a copy: JupyterLab saves outputs into what it opens
    port, token = free_port(), secrets.token_hex(16)
    environment, warm_kernels = isolated_environment(workdir / "home", fast, one_thread), 0
    if kind == "lab":
        command = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.allow_root=True",  # CI containers run as root
            "--LabApp.extension_manager=readonly",
        ]  # no PyPI look-ups from the extension manager
        ready = f"http://127.0.0.1:{port}/api/status?token={token}"
        url = f"http://127.0.0.1:{port}/lab/tree/notebooks/{notebook.name}?token={token}"
    elif kind == "voila":
        if route not in VOILA_ROUTES:
            raise ValueError(f"route={route!r} is not valid: choose one of {', '.join(VOILA_ROUTES)}")
        if route == "warm":  # as `make voila`: the classroom notebook, then Voila with its warm kernels
            served = root / "classroom" / notebook.name
            subprocess.run([sys.executable, str(VOILA_PAGE / "classroom_page.py"), str(notebook), str(served)], check=True, capture_output=True)
            page_config = [f"--Voila.config_file_paths={VOILA_PAGE / 'warm'}"]
            environment["GRPO_LAB_POOL"], warm_kernels = str(pool), pool
        else:
            served = notebook
            page_config = [f"--Voila.config_file_paths={VOILA_PAGE}"] if route == "cold" else []
        command = [
            sys.executable,
            "-m",
            "voila",
            str(served),
            "--no-browser",
            "--Voila.ip=127.0.0.1",
            f"--Voila.port={port}",
            "--Voila.port_retries=0",
            "--show_tracebacks=True",
            *page_config,
        ]
        ready, url = None, f"http://127.0.0.1:{port}/"  # a cold Voila runs the notebook on every page request: wait for the port only
    else:
        raise ValueError(f"kind={kind!r} is not valid: choose lab or voila")
    log = workdir / f"{kind}.log"
    with open(log, "w") as log_file:
        process = subprocess.Popen(command, cwd=root, env=environment, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(ready, port, process, log, warm_kernels)
        yield url
    finally:
        stop_server(process)


@contextmanager
def chromium_page(width: int = 1400, height: int = 1200, device_scale_factor: float = 1.0):
    """A fresh headless Chromium page (Debian's binary) with Playwright; closed afterwards. A window
    at 150% browser zoom is ``width`` and ``height`` in CSS pixels (its size / 1.5) at device_scale_factor 1.5."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=device_scale_factor)
            yield page
        finally:
            browser.close()


# Colour vision: Machado, Oliveira and Fernandes (2009), severity 1.0, applied to linear RGB
CVD_MATRICES = {
    "normal": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
}


def parse_color(text: str) -> tuple[float, float, float]:
    """'#0072B2' or 'rgb(0, 114, 178)' -> (r, g, b) in 0..255."""
    if text.startswith("#"):
        return tuple(int(text[i : i + 2], 16) for i in (1, 3, 5))
    return tuple(float(part) for part in text[text.index("(") + 1 : text.index(")")].split(",")[:3])


def _linear(channel: float) -> float:
    channel /= 255
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def cielab(color: str, vision: str = "normal") -> tuple[float, float, float]:
    """The CIE L*a*b* (D65) of ``color`` as seen with ``vision`` (a CVD_MATRICES key)."""
    linear = [_linear(c) for c in parse_color(color)]
    seen = [min(max(sum(m * c for m, c in zip(row, linear)), 0.0), 1.0) for row in CVD_MATRICES[vision]]
    to_xyz = ((0.4124564, 0.3575761, 0.1804375), (0.2126729, 0.7151522, 0.0721750), (0.0193339, 0.1191920, 0.9503041))
    x, y, z = (sum(m * c for m, c in zip(row, seen)) / white for row, white in zip(to_xyz, (0.95047, 1.0, 1.08883)))
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def closest_pair_delta_e(colors: list[str]) -> tuple[float, str, str, str]:
    """The smallest CIE76 delta E between two of ``colors`` under normal vision, protanopia or
    deuteranopia: (delta E, colour, colour, vision)."""
    return min(
        (sum((p - q) ** 2 for p, q in zip(cielab(a, vision), cielab(b, vision))) ** 0.5, a, b, vision)
        for vision in CVD_MATRICES
        for i, a in enumerate(colors)
        for b in colors[i + 1 :]
    )


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two opaque colours ('#rrggbb' or 'rgb(...)')."""

    def luminance(color: str) -> float:
        r, g, b = (_linear(c) for c in parse_color(color))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)
