"""Every student their own lab: the shipped JupyterHub configuration (deploy/jupyterhub/jupyterhub_config.py,
its local route) started on this machine with three accounts made by deploy/jupyterhub/accounts.py,
the students logged in from headless Chromium with their passwords, each lab trained and re-run with a
group size of the student's own, and nothing of one student's reaching another's: not the pages (each
counts and shows its own runs only), not the processes (a server and a kernel per student, each run as
the student's own system user in their own home), not the servers (a student's cookies open no other
student's server, files or page), not the files from code (one student's system user cannot read
another's home). A student can log in only with their own password, and their own server serves the
lab page alone: no JupyterLab, no terminal, no upload, no code run through the kernel's websocket.
The image recipe in binder/ and the Zero to JupyterHub values are checked too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import re
import secrets
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import yaml
from browser_helpers import CHROMIUM, REPO
from hub_helpers import ACCOUNTS, PROXY, chromium_browser, log_in, serve_hub, student_processes, submit_login, unique_names, wait_for_servers
from test_browser import LAST_FINISHED_RUN, RUN_SECONDS, drag_group_size_to, plot_source, screenshot_on_failure, wait_for_next_finished_run
from test_makefile import dry_run

# each student moves the group-size slider (2, 4, 8, 16, 32, 64) to an option of their own; the names
# become system users of this machine for the test, with a prefix of this run's own
STUDENTS = dict(zip(unique_names(["alice", "bob", "carol"]), [(0, "G=2"), (1, "G=4"), (3, "G=16")]))
KERNEL_ID = re.compile(r"kernel-([0-9a-f-]+)\.json")

# in the lab page of a student: open its kernel's websocket (the student's cookies) and send an
# execute_request and then a kernel_info_request; resolves with the message types that answered the
# execute_request, once the kernel_info_reply has come and 3 s more have passed
SCRIPTED_EXECUTE = """async ([url, code]) => {
    const id = () => Math.random().toString(36).slice(2);
    const session = id();
    const message = (type, content) => ({
        header: {msg_id: id(), username: "", session, msg_type: type, version: "5.3", date: new Date().toISOString()},
        parent_header: {}, metadata: {}, content, channel: "shell", buffers: []});
    const execute = message("execute_request", {code, silent: false, store_history: false, user_expressions: {}, allow_stdin: false, stop_on_error: true});
    const info = message("kernel_info_request", {});
    const answers = [];
    const ws = new WebSocket(url);
    return await new Promise((resolve, reject) => {
        ws.onerror = () => reject(new Error("the kernel's websocket refused the connection"));
        ws.onopen = () => { ws.send(JSON.stringify(execute)); ws.send(JSON.stringify(info)); };
        ws.onmessage = (event) => {
            if (typeof event.data !== "string") return;
            const reply = JSON.parse(event.data);
            const parent = reply.parent_header ? reply.parent_header.msg_id : null;
            if (parent === execute.header.msg_id) answers.push(reply.header.msg_type);
            if (parent === info.header.msg_id && reply.header.msg_type === "kernel_info_reply") {
                setTimeout(() => { ws.close(); resolve(answers); }, 3000);
            }
        };
    });
}"""

# in the lab page of a student: a REST request to their own server with its XSRF cookie, as the
# page's own requests send it (what a student could type into the browser's console); the status
FETCH_WITH_XSRF = """async ([url, method, body]) => {
    const xsrf = document.cookie.split("; ").find((cookie) => cookie.startsWith("_xsrf="));
    const response = await fetch(url, {method, body, headers: {"X-XSRFToken": xsrf ? xsrf.slice(6) : ""}});
    return response.status;
}"""


def running_hub_needs() -> str | None:
    """Why the hub test cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root: the hub starts each student's server as the student's own system user, which the test creates"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    if not PROXY.exists():
        return f"no configurable-http-proxy at {PROXY} (make hub-proxy; .ci/run does)"
    if importlib.util.find_spec("jupyterhub") is None:
        return "jupyterhub is not installed (pip install -e '.[dev]')"
    return None


needs_a_running_hub = pytest.mark.skipif(running_hub_needs() is not None, reason=str(running_hub_needs()))


@pytest.fixture(scope="module")
def class_hub(tmp_path_factory):
    """The hub with the three students logged in (all before any lab is ready: the kernels start
    together, as in a class) and each page's first run finished: (hub, browser, {student: page})."""
    with serve_hub(tmp_path_factory.mktemp("hub"), list(STUDENTS)) as hub, chromium_browser() as browser:
        pages = {}
        for user in STUDENTS:
            pages[user] = log_in(browser.new_context(viewport={"width": 1400, "height": 1200}), hub, user, timeout_ms=RUN_SECONDS)
        for user, page in pages.items():
            with screenshot_on_failure(page, f"hub_{user}_failure.png"):
                page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
                assert "Failed" not in page.locator(".grpo-status").text_content()
        yield hub, browser, pages


@pytest.mark.browser
@pytest.mark.timeout(600)
@needs_a_running_hub
def test_three_students_each_run_their_own_lab_on_a_local_jupyterhub(class_hub):
    hub, _, pages = class_hub
    first_runs = {user: page.evaluate(LAST_FINISHED_RUN) for user, page in pages.items()}
    # the same notebook makes the same runs on every page: a shared kernel would number them on
    assert len(set(first_runs.values())) == 1, first_runs

    sources = {user: plot_source(page) for user, page in pages.items()}
    for user, (index, _) in STUDENTS.items():  # the three re-runs train at the same time
        pages[user].locator(".grpo-group-size").scroll_into_view_if_needed()
        drag_group_size_to(pages[user], index=index, count=6)
    for user, (_, group) in STUDENTS.items():
        with screenshot_on_failure(pages[user], f"hub_{user}_failure.png"):
            run, shown_group = wait_for_next_finished_run(pages[user], first_runs[user], sources[user])
            # the page's newest run is the student's own, and it is the only one added to its runs
            assert (run, shown_group) == (first_runs[user] + 1, group), pages[user].locator(".grpo-status").text_content()

    processes = wait_for_servers(hub, list(STUDENTS), timeout_s=30)
    assert sorted(processes) == sorted(STUDENTS), processes
    kernel_pids = set()
    for user, student in processes.items():
        assert len(student.kernels) == 1, (user, student.kernels)  # one open page, one kernel
        (kernel,) = student.kernels
        environment = kernel.environ()
        home = hub.homes / user
        assert environment["JUPYTERHUB_USER"] == user and environment["HOME"] == str(home)
        assert Path(kernel.cwd()) == home / "notebooks"  # the student's own copy of the lab
        # server and kernel run as the student's own system user, not as the hub's root
        assert {student.server.username(), kernel.username()} == {user}, (student.server.username(), kernel.username())
        kernel_pids.add(kernel.pid)

        # the student's cookies open their own server, and no one else's
        own = pages[user].request.get(f"{hub.url}/user/{user}/api/kernels")
        assert own.status == 200, own.status
        (listed,) = own.json()
        assert KERNEL_ID.search(" ".join(kernel.cmdline())).group(1) == listed["id"]
        for other in STUDENTS.keys() - {user}:
            # a page (not the API, which refuses any request without the server's own cookie) goes
            # through the hub's OAuth: the hub must refuse this student the other's server
            foreign = pages[user].request.get(f"{hub.url}/user/{other}/voila/tree", max_redirects=10)
            assert foreign.status == 403 and "/hub/api/oauth2/authorize" in foreign.url, (user, other, foreign.status, foreign.url)
    assert len(kernel_pids) == len(STUDENTS)


@pytest.mark.browser
@pytest.mark.timeout(600)
@needs_a_running_hub
def test_a_student_logs_in_only_as_themselves_and_reaches_only_their_own_lab_page(class_hub):
    hub, browser, pages = class_hub
    alice, bob = list(STUDENTS)[:2]
    page = pages[alice]
    base = f"{hub.url}/user/{alice}"

    # logging in: another's name with one's own password, one's name with a wrong password, a name with
    # no account: each refused, and no login cookie set (the fixture logged each in with their own)
    for user, password in ((bob, hub.passwords[alice]), (alice, hub.passwords[alice][::-1]), (f"{alice}x", hub.passwords[alice])):
        context = browser.new_context()
        response = submit_login(context.new_page(), hub, user, password)
        cookies = {cookie["name"] for cookie in context.cookies()}
        assert response.status == 403 and "jupyterhub-hub-login" not in cookies, (user, response.status, cookies)
        context.close()

    # another's files by URL, with this student's cookies: bob's server refuses alice, and no byte
    # of bob's file comes back (the pages go through the hub's OAuth, which refuses her)
    secret = secrets.token_hex(16)
    bob_home = hub.homes / bob
    secret_file = bob_home / "notebooks" / "secret.txt"
    secret_file.write_text(secret)
    secret_file.chmod(0o644)  # readable in itself: only bob's home (0700) keeps others out
    os.chown(secret_file, pwd.getpwnam(bob).pw_uid, pwd.getpwnam(bob).pw_gid)
    for path in ("api/contents/notebooks/secret.txt", "files/notebooks/secret.txt", "voila/render/notebooks/03_interactive_lab.ipynb"):
        foreign = page.request.get(f"{hub.url}/user/{bob}/{path}", max_redirects=10)
        assert foreign.status == 403 and secret not in foreign.text(), (path, foreign.status, foreign.url)

    # her own server: no JupyterLab, notebook tree, terminal or terminals API; no new or uploaded file
    for path in ("lab", "tree", "terminals/1", "api/terminals"):
        assert page.request.get(f"{base}/{path}").status == 404, path
    assert page.evaluate(FETCH_WITH_XSRF, [f"{base}/api/terminals", "POST", None]) in (403, 404)
    uploaded = json.dumps({"type": "notebook", "format": "json", "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}})
    assert page.evaluate(FETCH_WITH_XSRF, [f"{base}/api/contents/notebooks/mine.ipynb", "PUT", uploaded]) == 403
    assert page.evaluate(FETCH_WITH_XSRF, [f"{base}/api/contents/notebooks", "POST", json.dumps({"type": "notebook"})]) == 403
    assert sorted(path.name for path in (hub.homes / alice / "notebooks").iterdir()) == ["03_interactive_lab.ipynb"]
    # the same requests do reach the server: the kernels (the page's own) may be started and shut down
    started = {kernel["id"] for kernel in page.request.get(f"{base}/api/kernels").json()}
    assert page.evaluate(FETCH_WITH_XSRF, [f"{base}/api/kernels", "POST", "{}"]) == 201
    (extra,) = {kernel["id"] for kernel in page.request.get(f"{base}/api/kernels").json()} - started
    assert page.evaluate(FETCH_WITH_XSRF, [f"{base}/api/kernels/{extra}", "DELETE", None]) == 204

    # code sent to her page's kernel over its websocket is dropped, while the kernel still answers
    (kernel_id,) = started  # the page's
    marker = hub.homes / alice / "executed"
    url = f"{base.replace('http://', 'ws://')}/api/kernels/{kernel_id}/channels?session_id={secrets.token_hex(8)}"
    answers = page.evaluate(SCRIPTED_EXECUTE, [url, f"open({str(marker)!r}, 'w').close()"])
    assert answers == [] and not marker.exists(), answers

    # from code: what runs as alice's system user cannot read bob's home nor the hub's accounts,
    # while bob's own user reads his file
    as_bob = subprocess.run(["runuser", "-u", bob, "--", "cat", str(secret_file)], capture_output=True, text=True)
    assert as_bob.returncode == 0 and as_bob.stdout == secret, as_bob
    for path in (secret_file, bob_home, hub.state / "accounts.json"):
        as_alice = subprocess.run(["runuser", "-u", alice, "--", "cat", str(path)], capture_output=True, text=True)
        assert as_alice.returncode != 0 and secret not in as_alice.stdout and "scrypt" not in as_alice.stdout, (path, as_alice)
    listing = subprocess.run(["runuser", "-u", alice, "--", "ls", str(bob_home)], capture_output=True, text=True)
    assert listing.returncode != 0 and "notebooks" not in listing.stdout, listing


@pytest.mark.browser
@pytest.mark.timeout(600)
@needs_a_running_hub
def test_a_student_who_reloads_the_lab_page_leaves_no_kernel_behind(class_hub):
    """The page's Voila posts its kernel's shutdown as the page unloads; on the hub that request carries
    the student's server's XSRF cookie, so a reload gives the old kernel back at once (not at the cull,
    5 minutes later), and a class that reloads does not pile up kernels of about 450 MB each."""
    hub, _, pages = class_hub
    user = list(STUDENTS)[2]
    page = pages[user]
    for _ in range(2):
        before = {kernel.pid for kernel in wait_for_servers(hub, [user], timeout_s=30)[user].kernels}
        page.reload(timeout=RUN_SECONDS)
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        deadline = time.monotonic() + 20
        while (
            left := {kernel.pid for kernel in student_processes(hub)[user].kernels if kernel.is_running()} & before
        ) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not left, f"the kernel of the page before the reload is still running: {left}"
    assert len(student_processes(hub)[user].kernels) == 1  # the open page's own


def test_the_accounts_command_refuses_a_bad_name_in_one_line(tmp_path):
    """Empty, not a user name, a name of this machine's own users, twice, or removing a name with no
    account: one line naming it, and no accounts file written."""
    for names in ([""], ["Bob!"], ["a" * 33], ["root"], ["alice", "alice"], ["--remove", "alice"]):
        made = subprocess.run([sys.executable, str(ACCOUNTS), "--hub-dir", str(tmp_path / "hub"), *names], capture_output=True, text=True)
        assert made.returncode == 1 and made.stdout == "", (names, made)
        assert len(made.stderr.strip().splitlines()) == 1 and repr(names[-1]) in made.stderr, (names, made.stderr)
        assert not (tmp_path / "hub" / "accounts.json").exists()


def test_the_image_recipe_installs_the_course_with_the_pinned_torch_and_the_hub():
    """binder/ (what repo2docker reads): torch pinned to the CPU release, the repository itself with
    its lab extra (Voila), JupyterHub for the single-user server, and environment.yml's Python."""
    lines = [line.split("#")[0].strip() for line in (REPO / "binder" / "requirements.txt").read_text().splitlines()]
    lines = [line for line in lines if line]
    dev = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    (hub_spec,) = [spec for spec in dev if spec.startswith("jupyterhub")]
    assert "torch==2.13.0" in lines and "-e .[lab]" in lines and hub_spec in lines, lines
    python = re.search(r"- python=(\S+)", (REPO / "environment.yml").read_text()).group(1)
    assert (REPO / "binder" / "runtime.txt").read_text().strip() == f"python-{python}"


def test_make_hub_starts_the_tested_config_on_the_projects_address():
    """`make hub` runs the config the tests above start, in its local route, on GRPO_LAB_HOST and
    GRPO_LAB_PORT (never the shell's HOST or PORT: a hub on the network is a choice, not an accident)."""
    for environment, address in (
        ({"HOST": "0.0.0.0", "PORT": "1234"}, "127.0.0.1:8888"),
        ({"GRPO_LAB_HOST": "0.0.0.0", "GRPO_LAB_PORT": "9999"}, "0.0.0.0:9999"),
    ):
        command = next(line for line in dry_run("hub", **environment).splitlines() if "-m jupyterhub" in line)
        assert f"GRPO_LAB_HUB=local GRPO_LAB_HUB_URL=http://{address} " in command, command
        assert command.endswith("-f " + str(REPO / "deploy" / "jupyterhub" / "jupyterhub_config.py")), command


def test_the_zero_to_jupyterhub_values_run_the_lab_page_of_the_image_within_per_student_limits():
    """deploy/jupyterhub/z2jh-values.yaml (untested on Kubernetes): it parses; the image is named; each
    student's server opens the lab page with this repository's student-server config, which the
    image holds where repo2docker puts the repository (/home/jovyan); memory guaranteed below its
    limit, at most one core; no persistent home hiding the image's."""
    values = yaml.safe_load((REPO / "deploy" / "jupyterhub" / "z2jh-values.yaml").read_text())
    single = values["singleuser"]
    assert single["image"]["name"] and single["image"]["tag"], single["image"]
    (config_file,) = [argument.split("=", 1)[1] for argument in single["cmd"] if argument.startswith("--ServerApp.config_file=")]
    assert (REPO / Path(config_file).relative_to("/home/jovyan")).is_file(), config_file
    assert (REPO / single["defaultUrl"].removeprefix("/voila/render/")).is_file(), single["defaultUrl"]
    gigabytes = {name: float(size.removesuffix("G")) for name, size in single["memory"].items()}
    assert 0 < gigabytes["guarantee"] <= gigabytes["limit"], single["memory"]
    assert 0 < single["cpu"]["guarantee"] <= single["cpu"]["limit"] <= 1, single["cpu"]
    assert single["storage"]["type"] == "none" and single["extraEnv"]["OMP_NUM_THREADS"] == "1"
