"""What `make start` and `make voila` would run (`make -n`, nothing is started): the address they
bind comes from the project's own variables, never from HOST or PORT in the shell; `make start`'s
printed URL leads to 00_start_here; Voila culls the kernels of closed tabs."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dry_run(target: str, **environment: str) -> str:
    """The commands `make -n TARGET` prints, continuation lines joined."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("GRPO_LAB_")}
    env.update(environment)
    output = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True, env=env).stdout
    return output.replace("\\\n", " ")


def server_command(target: str, **environment: str) -> str:
    program = {"start": "jupyter lab", "voila": "/voila "}[target]
    return next(line for line in dry_run(target, **environment).splitlines() if program in line)


def test_host_and_port_from_the_shell_do_not_move_the_servers():
    for target, ip_flag, port_flag in (("start", "--ServerApp.ip=", "--ServerApp.port="), ("voila", "--Voila.ip=", "--port=")):
        command = server_command(target, HOST="0.0.0.0", PORT="1234")
        assert f"{ip_flag}127.0.0.1 " in command and f"{port_flag}8888 " in command, command
        command = server_command(target, GRPO_LAB_HOST="0.0.0.0", GRPO_LAB_PORT="9999")
        assert f"{ip_flag}0.0.0.0 " in command and f"{port_flag}9999 " in command, command


def test_both_targets_print_the_address_they_bind():
    for target in ("start", "voila"):
        assert "on http://10.1.2.3:9000/" in dry_run(target, GRPO_LAB_HOST="10.1.2.3", GRPO_LAB_PORT="9000")


def test_make_start_leads_to_the_first_notebook_even_without_a_browser():
    # Jupyter prints (and opens) its default URL: it must be 00_start_here, not the bare /lab
    command = server_command("start")
    assert "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb" in command
    assert (ROOT / "notebooks" / "00_start_here.ipynb").exists()


def test_voila_culls_the_kernels_of_closed_tabs():
    command = server_command("voila")
    assert "--MappingKernelManager.cull_idle_timeout=300" in command
    assert "--MappingKernelManager.cull_connected=False" in command


def test_voila_serves_the_classroom_notebook_with_kernels_warmed_in_advance():
    lines = dry_run("voila").splitlines()
    writes = next(index for index, line in enumerate(lines) if "classroom_page.py notebooks/03_interactive_lab.ipynb build/classroom/" in line)
    serves = next(index for index, line in enumerate(lines) if "/voila " in line)
    assert writes < serves  # the notebook without its voila-skip cells exists before Voila starts
    assert "--Voila.config_file_paths=grpo_lab/lab/voila_page/warm" in lines[serves]
    assert lines[serves].rstrip().endswith("build/classroom/03_interactive_lab.ipynb")
