"""Where the package finds its data: the reference policies, the fixed eval sets, the cached
experiment results.

The repository's ``data/`` folder is their home (``python -m grpo_lab pretrain`` and ``sweep``
write there). A wheel installed without the repository (``pip install .``, or from a git URL as
on Colab) carries a copy of the reference policies, eval sets and cached results inside the
package, as ``grpo_lab/_data/`` (pyproject.toml maps that package name onto ``data/``, so the files
are copied only when a wheel is built); that copy is used when it exists.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # grpo_lab/
REPO_ROOT = PACKAGE_DIR.parent  # the checkout, when the package is used from one
INSTALLED_DATA_DIR = PACKAGE_DIR / "_data"  # the copy a non-editable install ships


def find_data_dir() -> Path:
    """The installed copy when the package was installed from a wheel, else the checkout's data/
    (a checkout never has grpo_lab/_data: only building a wheel makes it)."""
    return INSTALLED_DATA_DIR if INSTALLED_DATA_DIR.is_dir() else REPO_ROOT / "data"


DATA_DIR = find_data_dir()
REFERENCE_NAMES = ("default", "weak", "sparse", "long", "practice")  # the shipped reference policies
# the task each was pretrained on (its metadata says so too)
REFERENCE_TASKS = {"default": "2d+", "weak": "2d+", "sparse": "2d+", "long": "5d+", "practice": "3d+w"}
REFERENCE_DIR = DATA_DIR / "reference"  # {name}.pt and checksums.json
EVAL_DIR = DATA_DIR / "eval"  # {task}.json, the held-out problems
RESULTS_DIR = DATA_DIR / "results"  # cached experiments ({name}.json, .png), claims.md
