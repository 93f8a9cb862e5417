"""JupyterHub for a class: every student logs in and gets a Jupyter server of their own (their own
kernel, their own runs) that shows only the lab, notebooks/03_interactive_lab.ipynb, in Voila
(student_server_config.py: no JupyterLab, no terminal, no code of the student's own).

A school's hub (its own authenticator; a container spawner such as KubeSpawner running the image that
repo2docker builds from binder/, as z2jh-values.yaml sets up for Zero to JupyterHub) loads this file
for the students' servers (``load_subconfig("deploy/jupyterhub/jupyterhub_config.py")``). On one
machine, as root, with the accounts the teacher made (accounts.py: a password each, and a system user
each that the student's server runs as):

    GRPO_LAB_HUB=local jupyterhub -f deploy/jupyterhub/jupyterhub_config.py    # `make hub` runs this

Environment variables (local route): GRPO_LAB_HUB_URL, where the hub listens (default
http://127.0.0.1:8000; a different port or 0.0.0.0 on purpose); GRPO_LAB_HUB_PROXY, the
configurable-http-proxy command (default the one `make hub-proxy` installs under build/hub-proxy).
The accounts file is accounts.json in the hub's working folder (build/hub for `make hub`;
``--PasswordFileAuthenticator.accounts_file`` names another). tests/test_jupyterhub.py runs this file
with three accounts; docs/classroom.md gives the memory and CPU a student costs.
"""

import os
import stat
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub's config loader defines get_config)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LAB_NOTEBOOK = "notebooks/03_interactive_lab.ipynb"

# -- what every student's server does, whatever spawns it --
c.Spawner.default_url = f"/voila/render/{LAB_NOTEBOOK}"  # the voila package's server extension serves this page
c.Spawner.args = [
    # a tab's kernel (the page's runs) is shut down 5 idle minutes after the tab is closed, as `make voila` does
    "--MappingKernelManager.cull_idle_timeout=300",
    "--MappingKernelManager.cull_interval=60",
    "--MappingKernelManager.cull_connected=False",
    # and the student's whole server 20 minutes after the last page went away, which gives its memory back
    "--ServerApp.shutdown_no_activity_timeout=1200",
    # the lab page only: Voila's classroom settings, no JupyterLab or terminal, no code of the student's own
    f"--ServerApp.config_file={HERE / 'student_server_config.py'}",
]
# one torch thread per student: a class shares the cores, and OpenMP threads spinning against each
# other cost more than they give (benchmarks/README.md measures the same on 2 cores)
c.Spawner.environment = {"OMP_NUM_THREADS": "1"}
# honoured by container spawners (DockerSpawner, KubeSpawner); a local process spawner ignores them.
# Measured per student (docs/classroom.md: 0.58 GB after the first run, server + kernel, up to about 0.8 GB after many runs at G = 64): one tab fits 1G, two are tight
c.Spawner.mem_limit = "1G"
c.Spawner.cpu_limit = 1.0
# the first page imports torch and trains a run before Voila shows it: give a busy machine time
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.bind_url = os.environ.get("GRPO_LAB_HUB_URL", "http://127.0.0.1:8000")


def unreadable_by_students(path: Path) -> Path | None:
    """The first folder from / down to ``path`` that other users cannot enter, or None: a student's
    server, run as the student, needs the hub's Python (its virtual environment and the Python that
    made it: pyenv's under /root, say) and this repository."""
    for folder in (*reversed(path.parents), path):
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


if os.environ.get("GRPO_LAB_HUB") == "local":
    if os.geteuid() != 0:
        sys.exit("jupyterhub_config.py: GRPO_LAB_HUB=local must run as root: it starts each student's server as that student's own system user")
    for needed in (REPO, Path(sys.prefix), Path(sys.base_prefix)):
        if blocked := unreadable_by_students(needed):
            sys.exit(f"jupyterhub_config.py: students' servers cannot reach {needed}: {blocked} is closed to other users (chmod o+x {blocked})")
    sys.path.insert(0, str(HERE))  # accounts.py and the authenticator beside this file
    from password_file_authenticator import PasswordFileAuthenticator

    c.JupyterHub.authenticator_class = PasswordFileAuthenticator
    c.Authenticator.allow_all = True  # every account in the file: only those names authenticate
    # each student's server runs as the student's system user (accounts.py made it), in their home (0700)
    c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
    # the hub's own Python runs each student's server (grpo_lab, torch and voila come from it)
    c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
    # fast mode, where the hub was started with it (tests), reaches the students' kernels too
    c.Spawner.environment.update({name: os.environ[name] for name in ("GRPO_LAB_FAST",) if name in os.environ})
    c.ConfigurableHTTPProxy.command = [
        os.environ.get("GRPO_LAB_HUB_PROXY", str(REPO / "build" / "hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"))
    ]
