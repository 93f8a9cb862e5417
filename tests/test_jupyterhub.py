"""Every student their own lab: the shipped JupyterHub configuration (deploy/jupyterhub/jupyterhub_config.py,
its local route) started on this machine, three students logged in from headless Chromium, each
lab trained and re-run with a group size of the student's own, and nothing of one student's runs
reaching another's: not the pages (each counts and shows its own runs only), not the processes
(a server and a kernel per student, each kernel under its student's server, home and name), not
the servers (a student's cookies open no other student's server). The image recipe in binder/ is
checked against pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest
from browser_helpers import CHROMIUM, REPO
from hub_helpers import PROXY, chromium_browser, log_in, serve_hub, wait_for_servers
from test_browser import LAST_FINISHED_RUN, RUN_SECONDS, drag_group_size_to, plot_source, screenshot_on_failure, wait_for_next_finished_run
from test_makefile import dry_run

# each student moves the group-size slider (2, 4, 8, 16, 32, 64) to an option of their own
STUDENTS = {"alice": (0, "G=2"), "bob": (1, "G=4"), "carol": (3, "G=16")}
KERNEL_ID = re.compile(r"kernel-([0-9a-f-]+)\.json")


def running_hub_needs() -> str | None:
    """Why the hub test cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    if not PROXY.exists():
        return f"no configurable-http-proxy at {PROXY} (make hub-proxy; .ci/run does)"
    if importlib.util.find_spec("jupyterhub") is None:
        return "jupyterhub is not installed (pip install -e '.[dev]')"
    return None


@pytest.mark.browser
@pytest.mark.timeout(600)
@pytest.mark.skipif(running_hub_needs() is not None, reason=str(running_hub_needs()))
def test_three_students_each_run_their_own_lab_on_a_local_jupyterhub(tmp_path):
    with serve_hub(tmp_path) as hub, chromium_browser() as browser:
        pages = {}
        for user in STUDENTS:  # all three log in before any lab is ready: the kernels start together, as in a class
            pages[user] = log_in(browser.new_context(viewport={"width": 1400, "height": 1200}), hub, user, timeout_ms=RUN_SECONDS)
        first_runs = {}
        for user, page in pages.items():
            with screenshot_on_failure(page, f"hub_{user}_failure.png"):
                page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
                first_runs[user] = page.evaluate(LAST_FINISHED_RUN)
                assert "Failed" not in page.locator(".grpo-status").text_content()
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
            assert Path(kernel.cwd()) == home / "notebooks"  # the student's own copy of the course
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
    """`make hub` runs the config the test above starts, in its local route, on GRPO_LAB_HOST and
    GRPO_LAB_PORT (never the shell's HOST or PORT: any name logs in to that hub)."""
    for environment, address in (
        ({"HOST": "0.0.0.0", "PORT": "1234"}, "127.0.0.1:8888"),
        ({"GRPO_LAB_HOST": "0.0.0.0", "GRPO_LAB_PORT": "9999"}, "0.0.0.0:9999"),
    ):
        command = next(line for line in dry_run("hub", **environment).splitlines() if "-m jupyterhub" in line)
        assert f"GRPO_LAB_HUB=local GRPO_LAB_HUB_URL=http://{address} " in command, command
        assert command.endswith("-f " + str(REPO / "deploy" / "jupyterhub" / "jupyterhub_config.py")), command
