"""`make voila`'s configuration: the classroom page (voila.py one folder up: its template) served from
the notebook that classroom_page.py writes (the voila-skip cells already left out; Voila refuses a
prelaunch hook beside warm kernels), with kernels **warmed in advance**: Voila keeps GRPO_LAB_POOL
kernels (default 3, about 400 MB each while they wait) that have run the notebook up to the lab, imported torch and
paid its first-use costs before anyone asks; the lab's constructor waits there for a page
(``grpo_lab.lab.classroom.wait_for_the_page``), then takes the page address's settings and starts
run 1. A used kernel is replaced after FILL_DELAY_S, when the class's first runs are over, so that
warming the next one does not slow them down. Each kernel trains with one torch thread."""

import os

FILL_DELAY_S = 20.0
MAX_POOL = 10


def pool_size(text: str) -> int:
    """GRPO_LAB_POOL's value as a number of warm kernels, or one line saying what is allowed."""
    if not text.strip().isdigit() or not 1 <= int(text) <= MAX_POOL:
        raise SystemExit(f"GRPO_LAB_POOL={text!r} is not valid: a whole number of warm kernels, 1 to {MAX_POOL} (about 400 MB each while they wait)")
    return int(text)


c = get_config()  # noqa: F821 (traitlets defines it when it loads a config file)
load_subconfig("voila.py", path=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # noqa: F821
c.VoilaConfiguration.prelaunch_hook = None
c.VoilaConfiguration.preheat_kernel = True
c.VoilaConfiguration.default_pool_size = pool_size(os.environ.get("GRPO_LAB_POOL", "3"))
c.VoilaKernelManager.fill_delay = FILL_DELAY_S
# one torch thread a kernel, as on the hub (Spawner.environment): a class's kernels share the cores, and
# OpenMP teams spinning against each other cost more than they give (benchmarks/README.md, "Lab"); an
# OMP_NUM_THREADS the teacher's shell sets wins (Voila adds these only where the environment lacks them)
c.VoilaKernelManager.default_env_variables = {"OMP_NUM_THREADS": "1"}
# a page that closes or reloads shuts its kernel down (Voila's page posts /voila/api/shutdown/KERNEL on
# beforeunload), or each reload would leave a kernel of 0.4-0.6 GB until the 5-minute cull. Standalone
# Voila never sets the _xsrf cookie that post must carry, so the server refused it (403); the check protects
# nothing here, where the page has no login at all, and a kernel's id is a random UUID no other site knows
c.Voila.tornado_settings = {"disable_check_xsrf": True}
