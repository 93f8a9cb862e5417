"""Which devices this machine has, and the device a name stands for ('auto': CUDA, then MPS, then CPU).

Bottom floor: it imports only torch and the errors, so the config's rules (config_rules.py) can use it.
"""

from __future__ import annotations

import torch

from ..errors import ConfigError


def available_devices() -> list[str]:
    """The device names this machine accepts: 'auto', 'cpu', then 'cuda', 'cuda:0'... and 'mps' where present."""
    names = ["auto", "cpu"]
    if torch.cuda.is_available():
        names += ["cuda", *(f"cuda:{index}" for index in range(torch.cuda.device_count()))]
    if torch.backends.mps.is_available():
        names.append("mps")
    return names


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``auto`` -> CUDA if present, else Apple's MPS, else CPU. Any other name must be a device this
    machine has (``available_devices``); else one ValueError that lists the ones it has."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if isinstance(device, torch.device):
        device = str(device)
    here = available_devices()
    allowed = f"this machine has {', '.join(here)}"
    if not isinstance(device, str):
        raise ConfigError("device", device, allowed)
    try:
        resolved = torch.device(device)
    except (RuntimeError, ValueError):
        raise ConfigError("device", device, allowed) from None
    if resolved.type == "cpu" or (resolved.type == "mps" and "mps" in here):
        return resolved
    if resolved.type == "cuda" and "cuda" in here and (resolved.index is None or f"cuda:{resolved.index}" in here):
        return resolved
    raise ConfigError("device", device, allowed + (f" ({device!r} is not available here)" if resolved.type in ("cuda", "mps") else ""))
