"""grpo-lab: GRPO by experiment, on a tiny transformer that learns toy arithmetic on a CPU."""

from .checks.arguments import compute_advantages
from .checks.checkpoints import load_reference_policy
from .core.config import TrainConfig
from .trainer import TrainResult, train

__version__ = "0.1.0"
__all__ = ["GRPOLab", "TrainConfig", "TrainResult", "compute_advantages", "load_reference_policy", "train", "__version__"]


def __getattr__(name: str):
    # the lab pulls in ipywidgets; import it only when asked for, so the library and CLI stay light
    if name == "GRPOLab":
        from .lab import GRPOLab

        return GRPOLab
    raise AttributeError(f"module 'grpo_lab' has no attribute {name!r}")
