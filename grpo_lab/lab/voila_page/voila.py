"""Voila's configuration for the classroom page (`make voila`: ``--Voila.config_file_paths`` names
this folder): cells tagged ``voila-skip`` (the prediction checks, the notebook's clock) are neither
run nor shown, so the page is live within seconds and nothing trains that the class did not ask for."""

from grpo_lab.lab.classroom import without_voila_skip_cells

c = get_config()  # noqa: F821 (traitlets defines it when it loads a config file)
c.VoilaConfiguration.prelaunch_hook = without_voila_skip_cells
