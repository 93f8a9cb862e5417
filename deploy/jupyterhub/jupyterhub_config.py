"""JupyterHub for a class: every student logs in and gets a Jupyter server of their own (their own
kernel, their own runs) that opens the lab, notebooks/03_interactive_lab.ipynb, in Voila.

A school's hub (its own authenticator; a container spawner such as DockerSpawner or KubeSpawner
running the image that repo2docker builds from binder/):

    jupyterhub -f deploy/jupyterhub/jupyterhub_config.py

then set the school's authenticator and spawner in a config that loads this one
(``load_subconfig("deploy/jupyterhub/jupyterhub_config.py")``). On one machine, with no accounts
(anyone who reaches the address can log in under any name: for a laptop, a test or a trusted room):

    GRPO_LAB_HUB=local jupyterhub -f deploy/jupyterhub/jupyterhub_config.py    # `make hub` runs this

Environment variables (local route): GRPO_LAB_HUB_URL, where the hub listens (default
http://127.0.0.1:8000; a different port or 0.0.0.0 on purpose); GRPO_LAB_HUB_HOMES, the folder that
holds one home per student (default ./homes, next to the hub's database), each with its own copy of
the course's notebooks; GRPO_LAB_HUB_PROXY, the configurable-http-proxy command (default the one
`make hub-proxy` installs under build/hub-proxy). tests/test_jupyterhub.py runs this file with three
users; README's "Classroom mode" gives the memory and CPU a student costs.
"""

import os
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub's config loader defines get_config)

REPO = Path(__file__).resolve().parents[2]
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
    # the classroom page: cells tagged voila-skip (the prediction checks, which train seven runs) are
    # neither run nor shown, as `make voila` does (its --Voila.config_file_paths names the same file)
    f"--ServerApp.config_file={REPO / 'grpo_lab' / 'lab' / 'voila_page' / 'voila.py'}",
]
# one torch thread per student: a class shares the cores, and OpenMP threads spinning against each
# other cost more than they give (benchmarks/README.md measures the same on 2 cores)
c.Spawner.environment = {"OMP_NUM_THREADS": "1"}
# honoured by container spawners (DockerSpawner, KubeSpawner); a local process spawner ignores them.
# Measured per student (benchmarks/bench_hub_students.py, README's "What a student costs"): 0.61 GB
# RSS at the peak of a run (server + kernel), at most one core while a run trains
c.Spawner.mem_limit = "1G"
c.Spawner.cpu_limit = 1.0
# the first page imports torch and trains a run before Voila shows it: give a busy machine time
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.bind_url = os.environ.get("GRPO_LAB_HUB_URL", "http://127.0.0.1:8000")


def copy_course_into_home(spawner) -> None:
    """Give the student a copy of the course's notebooks in their home (once): Voila runs the lab
    there, and nothing one student changes reaches another's."""
    notebooks = Path(spawner.home_dir) / "notebooks"
    if not notebooks.exists():
        shutil.copytree(REPO / "notebooks", notebooks, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "solutions"))


if os.environ.get("GRPO_LAB_HUB") == "local":
    c.JupyterHub.authenticator_class = "jupyterhub.auth.DummyAuthenticator"
    c.Authenticator.allow_all = True  # any name logs in (JupyterHub 5 admits no one by default)
    c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
    c.SimpleLocalProcessSpawner.home_dir_template = str(Path(os.environ.get("GRPO_LAB_HUB_HOMES", "homes")).resolve() / "{username}")
    c.Spawner.pre_spawn_hook = copy_course_into_home
    # the hub's own Python runs each student's server (grpo_lab, torch and voila come from it)
    c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
    if os.geteuid() == 0:  # Jupyter refuses to run as root unless told to (containers, CI machines)
        c.Spawner.args.append("--ServerApp.allow_root=True")
    # fast mode, where the hub was started with it (tests), reaches the students' kernels too
    c.Spawner.environment.update({name: os.environ[name] for name in ("GRPO_LAB_FAST",) if name in os.environ})
    c.ConfigurableHTTPProxy.command = [
        os.environ.get("GRPO_LAB_HUB_PROXY", str(REPO / "build" / "hub-proxy" / "node_modules" / ".bin" / "configurable-http-proxy"))
    ]
