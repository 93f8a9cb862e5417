"""Voila's configuration for the classroom page on a JupyterHub (the hub's config loads it with
``--ServerApp.config_file``; `make voila` loads it through warm/voila.py): cells tagged
``voila-skip`` (the prediction checks, the notebook's clock) are neither run nor shown, so the page is
live within seconds and nothing trains that the class did not ask for; and the page's template loads
nothing from the internet (Voila's own lab template fetches FontAwesome from a CDN).

The hook is loaded by path, not imported from grpo_lab: importing anything of grpo_lab imports torch,
and this file is loaded by the Jupyter server itself, which would then hold torch (about 190 MB a
student on a hub) besides the kernel's copy."""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))
# the page's template (jupyter/voila/templates/grpo-classroom: the lab template with no CDN stylesheet),
# found where Voila looks for templates: a Jupyter data folder, here added in front of the others
TEMPLATE_ROOT = os.path.join(HERE, "jupyter")
TEMPLATE = "grpo-classroom"
CLASSROOM_PAGE = runpy.run_path(os.path.join(HERE, "classroom_page.py"))


def without_voila_skip_cells(request_handler, notebook, cwd):
    """Voila's ``prelaunch_hook``: the notebook without its cells tagged ``voila-skip``."""
    return CLASSROOM_PAGE["without_voila_skip_cells"](notebook)


c = get_config()  # noqa: F821 (traitlets defines it when it loads a config file)
c.VoilaConfiguration.prelaunch_hook = without_voila_skip_cells
if TEMPLATE_ROOT not in os.environ.get("JUPYTER_PATH", "").split(os.pathsep):
    os.environ["JUPYTER_PATH"] = os.pathsep.join(path for path in (TEMPLATE_ROOT, os.environ.get("JUPYTER_PATH", "")) if path)
c.VoilaConfiguration.template = TEMPLATE
# A page shows a cell's output once the kernel has sent it and said it is idle; after each cell Voila (nbclient)
# waits IOPUB_TIMEOUT_S for that, then renders without what is late. Its default, 4 s, is too short for a class
# that opens pages together on a few cores: with six warm kernels starting their first runs on 2 cores, five or
# all six pages came up without the lab (benchmarks/README.md, "Voila: a class arriving at once"). The wait ends
# as soon as the kernel is idle, so a longer limit costs nothing when the cores are free.
IOPUB_TIMEOUT_S = 120
c.VoilaExecutor.iopub_timeout = IOPUB_TIMEOUT_S
