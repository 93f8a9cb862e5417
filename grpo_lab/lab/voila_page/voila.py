"""Voila's configuration for the classroom page (`make voila`: ``--Voila.config_file_paths`` names
this folder; the JupyterHub config loads it with ``--ServerApp.config_file``): cells tagged
``voila-skip`` (the prediction checks, the notebook's clock) are neither run nor shown, so the page is
live within seconds and nothing trains that the class did not ask for.

The hook lives here, not in grpo_lab: importing anything of grpo_lab imports torch, and this file is
loaded by the Jupyter server itself, which would then hold torch (about 190 MB a student on a hub)
besides the kernel's copy."""

VOILA_SKIP_TAG = "voila-skip"


def without_voila_skip_cells(request_handler, notebook, cwd):
    """Voila's ``prelaunch_hook``: the notebook without its cells tagged ``voila-skip``."""
    notebook.cells = [cell for cell in notebook.cells if VOILA_SKIP_TAG not in cell.get("metadata", {}).get("tags", [])]
    return notebook


c = get_config()  # noqa: F821 (traitlets defines it when it loads a config file)
c.VoilaConfiguration.prelaunch_hook = without_voila_skip_cells
