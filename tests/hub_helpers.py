"""A local JupyterHub for the hub test and the per-student benchmark: the shipped configuration
(deploy/jupyterhub/jupyterhub_config.py, its local route: accounts checked against accounts.py's file,
each student's server run as the student's own system user) on free 127.0.0.1 ports, with its
database, cookie secret and accounts in one temporary folder and the students' homes in another;
logging a student in from a Playwright browser context; and finding each student's server and kernel
processes. Every process the hub started is ended when it stops, and the students' system users and
homes are removed. Needs root (the hub starts servers as other users)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, REPO, free_port, wait_until_serving

HUB_CONFIG = REPO / "deploy" / "jupyterhub" / "jupyterhub_config.py"
ACCOUNTS = REPO / "deploy" / "jupyterhub" / "accounts.py"
PROXY = REPO / "build" / "hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
LAB_PAGE = "voila/render/notebooks/03_interactive_lab.ipynb"


def unique_names(names: list[str]) -> list[str]:
    """``names`` with a prefix of this run's own (e.g. ``hub3f9a2c-alice``): they become system users
    of this machine, which must not clash with anyone's, nor with another run's."""
    prefix = f"hub{secrets.token_hex(3)}"
    return [f"{prefix}-{name}" for name in names]


@dataclass
class Hub:
    url: str  # http://127.0.0.1:PORT, the address students open
    process: subprocess.Popen | None  # None until the hub has started
    homes: Path  # one folder per student under it, each the student's system user's home (0700)
    state: Path  # the hub's working folder: its database, cookie secret and accounts.json
    passwords: dict[str, str]  # student name -> the password accounts.py printed

    def lab_url(self, user: str) -> str:
        return f"{self.url}/user/{user}/{LAB_PAGE}"


@contextmanager
def open_to_students(paths: list[Path]):
    """Let other users enter (o+x, not list) every folder on the way to each of ``paths`` while the
    block runs, and give each its mode back afterwards: the students' servers run the hub's Python,
    which may sit under a closed home (pyenv's under /root). The hub config refuses to start where
    it could not; a teacher opens the folders once, as its message says."""
    closed = {folder: folder.stat().st_mode for path in paths for folder in (*path.parents, path) if not folder.stat().st_mode & stat.S_IXOTH}
    try:
        for folder, mode in closed.items():
            folder.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
        yield
    finally:
        for folder, mode in closed.items():
            folder.chmod(stat.S_IMODE(mode))


@contextmanager
def serve_hub(workdir: Path, students: list[str], fast: bool = True):
    """Make an account for each of ``students`` (accounts.py: a password and a system user each, homes
    in a fresh folder under /tmp that the students can enter) and start the shipped hub config in its
    local route under ``workdir``; yields a ``Hub``. On exit the hub is interrupted (it stops the
    students' servers), any process it started that is still alive then is killed, and the accounts,
    system users and homes are removed."""
    port, hub_port, api_port = free_port(), free_port(), free_port()
    state = workdir / "hub"
    homes = Path(tempfile.mkdtemp(prefix="grpo-lab-homes-"))  # not under pytest's tmp_path: that is closed to other users
    homes.chmod(0o755)
    hub = Hub(url=f"http://127.0.0.1:{port}", process=None, homes=homes, state=state, passwords={})
    try:
        made = subprocess.run(
            [sys.executable, str(ACCOUNTS), "--hub-dir", str(state), "--homes", str(homes), *students], capture_output=True, text=True, check=True
        )
        hub.passwords = dict(line.split() for line in made.stdout.splitlines())
        with (
            open_to_students([REPO, Path(sys.prefix), Path(sys.base_prefix)]),
            run_hub(workdir, state, port, hub_port, api_port, fast) as hub.process,
        ):
            yield hub
    finally:
        created = list(json.loads((state / "accounts.json").read_text())) if (state / "accounts.json").exists() else []
        if created:
            subprocess.run([sys.executable, str(ACCOUNTS), "--hub-dir", str(state), "--remove", *created], check=True)
        shutil.rmtree(homes)


@contextmanager
def run_hub(workdir: Path, state: Path, port: int, hub_port: int, api_port: int, fast: bool):
    """The hub process, serving on ``port``, with its log in ``workdir``/hub.log."""
    environment = dict(os.environ)
    environment.update(
        GRPO_LAB_HUB="local",
        GRPO_LAB_HUB_URL=f"http://127.0.0.1:{port}",
        GRPO_LAB_HUB_PROXY=str(PROXY),
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
    )
    environment.pop("GRPO_LAB_FAST", None)
    if fast:
        environment["GRPO_LAB_FAST"] = "1"
    command = [
        sys.executable,
        "-m",
        "jupyterhub",
        "-f",
        str(HUB_CONFIG),
        f"--JupyterHub.hub_port={hub_port}",
        f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{api_port}",
        f"--JupyterHub.db_url=sqlite:///{state / 'jupyterhub.sqlite'}",
        f"--JupyterHub.cookie_secret_file={state / 'jupyterhub_cookie_secret'}",
        f"--JupyterHub.pid_file={state / 'jupyterhub.pid'}",
    ]
    log = workdir / "hub.log"
    with open(log, "w") as log_file:
        process = subprocess.Popen(command, cwd=state, env=environment, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    started: dict[int, psutil.Process] = {}
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/hub/api/", port, process, log)
        yield process
    finally:
        # the students' servers run in sessions of their own (the spawner starts them so): note them
        # all before the hub goes, and kill whatever outlives it
        started.update({child.pid: child for child in descendants(process.pid)})
        stop_hub(process)
        for child in started.values():
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(list(started.values()), timeout=10)


def stop_hub(process: subprocess.Popen, grace_s: float = 30) -> None:
    """SIGTERM: the hub stops each student's server (which shuts its kernels down) and its proxy,
    then exits; a hub still there after ``grace_s`` is killed with its process group."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def submit_login(page, hub: Hub, user: str, password: str, timeout_ms: int = 30_000):
    """Fill in and send the hub's login form on ``page``; returns the response to the form."""
    page.goto(f"{hub.url}/hub/login", timeout=timeout_ms)
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    with page.expect_response(lambda response: response.request.method == "POST", timeout=timeout_ms) as response:
        page.click("#login_submit")
    return response.value


def log_in(context, hub: Hub, user: str, timeout_ms: int):
    """Log ``user`` in with their password in a Playwright browser ``context`` of its own, and return
    the page as soon as the hub has sent it to the student's Voila lab (Voila is still running the
    notebook then: the next student can log in while it does)."""
    page = context.new_page()
    submit_login(page, hub, user, hub.passwords[user], timeout_ms)
    page.wait_for_url(f"**/user/{user}/{LAB_PAGE}*", timeout=timeout_ms, wait_until="commit")
    return page


@dataclass
class StudentProcesses:
    server: psutil.Process  # the student's Jupyter server (jupyterhub-singleuser with Voila's extension)
    kernels: list[psutil.Process]  # the kernels it started: one per open lab page


def student_processes(hub: Hub) -> dict[str, StudentProcesses]:
    """Each student's server and kernels, found among the hub's descendants by the JUPYTERHUB_USER
    that the hub gives each server (its kernels inherit it)."""
    found: dict[str, StudentProcesses] = {}
    for process in descendants(hub.process.pid):
        try:
            if "jupyterhub.singleuser" in " ".join(process.cmdline()):
                found[process.environ()["JUPYTERHUB_USER"]] = StudentProcesses(server=process, kernels=process.children(recursive=True))
        except (psutil.NoSuchProcess, psutil.AccessDenied, KeyError):
            continue
    return found


def wait_for_servers(hub: Hub, users: list[str], timeout_s: float) -> dict[str, StudentProcesses]:
    """Wait until every user in ``users`` has a server with at least one kernel; return them all."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = student_processes(hub)
        if all(user in found and found[user].kernels for user in users) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


@contextmanager
def chromium_browser():
    """Debian's headless Chromium under Playwright (never `playwright install`); each student gets a
    context of their own from it (their own cookies: their own login). Closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
