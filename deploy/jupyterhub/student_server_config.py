"""A student's Jupyter server on the hub (``--ServerApp.config_file`` names this file): the lab page
in Voila and nothing else a browser could use to open files or run code of its own.

- the classroom page's Voila settings (grpo_lab/lab/voila_page/voila.py: cells tagged voila-skip
  neither run nor shown, the page's template);
- no JupyterLab, classic notebook, terminals or language server: their server extensions are off,
  so /lab, /tree, /terminals and /api/terminals do not exist;
- the kernel websocket passes only the messages widgets use (comms, kernel info): an
  ``execute_request`` a student scripts against their page's kernel is dropped, not run;
- the REST API reads, and writes only kernels (the page's own): no upload, new or changed file
  (/api/contents), session or config; a student cannot place a notebook of their own for
  /voila/render to run, and their home holds only the lab notebook (accounts.py copies it).
"""

from pathlib import Path

from jupyterhub.singleuser.extension import JupyterHubAuthorizer

REPO = Path(__file__).resolve().parents[2]
load_subconfig(str(REPO / "grpo_lab" / "lab" / "voila_page" / "voila.py"))  # noqa: F821 (traitlets defines it)

c = get_config()  # noqa: F821
c.ServerApp.jpserver_extensions.update(
    {name: False for name in ("jupyterlab", "notebook", "nbclassic", "notebook_shim", "jupyter_server_terminals", "jupyter_lsp")}
)
c.ServerApp.terminals_enabled = False
# what ipywidgets' front end sends a kernel: opening, messaging and closing a widget's comm, asking
# which comms exist, and the kernel's info when it connects
c.MappingKernelManager.allowed_message_types = ["comm_open", "comm_msg", "comm_close", "comm_info_request", "kernel_info_request"]


class LabPageAuthorizer(JupyterHubAuthorizer):
    """JupyterHub's check (this student's own server) and, on top, reads only, besides the kernels:
    ``execute`` (the page's websocket) and ``write`` (start, restart, shut down) on kernels alone."""

    def is_authorized(self, handler, user, action, resource):
        allowed = resource != "terminals" and (action == "read" or resource == "kernels")
        return allowed and super().is_authorized(handler, user, action, resource)


c.ServerApp.authorizer_class = LabPageAuthorizer
