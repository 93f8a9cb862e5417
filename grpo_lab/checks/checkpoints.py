"""Policy files: saving and loading a TinyTransformer with a checksum of its contents, the shipped
reference policies and their SHA-256s, and whether a policy can read a task. Every problem with a
file is one ValueError naming the file and what is wrong."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import asdict, fields, replace
from pathlib import Path

import torch

from ..core.model import VOCAB, Block, PolicyConfig, TinyTransformer
from ..errors import ConfigError, shortened
from ..task import Task
from . import files, paths
from .devices import resolve_device
from .files import checksum_problem, read_checksums, write_atomically
from .paths import REFERENCE_NAMES

DATA_DIR = paths.DATA_DIR


def positions_needed(task: Task) -> int:
    """Positions a policy must read to answer ``task``: the prompt, then each answer token but the last."""
    return task.prompt_length + task.max_answer_length - 1


def context_problem(policy: TinyTransformer, task: Task) -> str | None:
    """Why ``policy`` cannot answer ``task`` (its context is too short), or None. The shipped
    default.pt reads 16 positions (every task up to 3 digits); long.pt reads 24 (up to 5-digit addition)."""
    needed = positions_needed(task)
    if policy.config.max_len < needed:
        return f"it needs {needed} positions and this policy reads at most max_len={policy.config.max_len} (reference 'long' reads 24)"
    return None


CHECKPOINT_FORMAT = "grpo-lab-policy-v2"  # v2 carries a checksum of its contents
UNCHECKED_FORMAT = "grpo-lab-policy-v1"  # no checksum inside: a flipped bit in a copy loaded with changed weights, so it is refused
CHECKSUMS_PATH = DATA_DIR / "reference" / "checksums.json"  # SHA-256 of each shipped reference policy
LARGEST_WEIGHT = 1e4  # a trained TinyTransformer's weights are of order 1; beyond this a forward pass overflows
SMALLEST_WEIGHT_BYTES = 2  # float16 / bfloat16: a checkpoint holds at least this many bytes per parameter


def contents_checksum(config: dict, metadata: object, state_dict: dict[str, torch.Tensor]) -> str:
    """SHA-256 of what a checkpoint says: its architecture, its metadata and every weight's name,
    dtype, shape and bytes. A flipped bit in a weight changes it (torch's zip reader does not check
    its CRCs, so such a file would load with changed weights)."""
    digest = hashlib.sha256(json.dumps({"config": config, "metadata": metadata}, sort_keys=True, default=repr).encode())
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().cpu().contiguous()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}:".encode())
        digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def save_policy(policy: TinyTransformer, path: str | Path, metadata: dict | None = None) -> Path:
    """Write the weights, the architecture, free-form metadata (plain types only) and a checksum of
    them, atomically (``files.write_atomically``: an interrupted save leaves the previous file, never
    half a file). The checkpoint is built in memory first, so a full disk is an OSError (ENOSPC),
    not torch's RuntimeError from inside its zip writer."""
    state = {k: v.detach().cpu() for k, v in policy.state_dict().items()}
    config, metadata = asdict(policy.config), metadata or {}
    checkpoint = {
        "format": CHECKPOINT_FORMAT,
        "config": config,
        "metadata": metadata,
        "state_dict": state,
        "checksum": contents_checksum(config, metadata, state),
    }
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    return write_atomically(path, buffer.getvalue())


RESTORE_CHECKSUMS = "restore it with `git checkout checksums.json` or regenerate the references with: python -m grpo_lab pretrain"


def shipped_checksums() -> dict[str, str]:
    """{file name: SHA-256} of the reference policies in data/reference (written by ``pretrain``).
    A damaged checksums.json is one ValueError naming the file and what is wrong."""
    return read_checksums(CHECKSUMS_PATH, RESTORE_CHECKSUMS)


def record_checksum(path: str | Path) -> Path:
    """Store the SHA-256 of the reference policy at ``path`` in data/reference/checksums.json."""
    return files.record_checksum(CHECKSUMS_PATH, path, RESTORE_CHECKSUMS)


def verify_shipped_checksum(path: Path) -> None:
    """A shipped reference policy must have the bytes it shipped with: a flipped byte can load and
    run, silently worse (a 2-byte flip in default.pt took its accuracy from 0.51 to 0.30)."""
    problem = checksum_problem(CHECKSUMS_PATH, path, RESTORE_CHECKSUMS)
    if problem is not None:
        raise ValueError(
            f"policy file {path} {problem}; restore it (git checkout {path.name}) or rebuild it with: python -m grpo_lab pretrain --only {path.stem}"
        )


def architecture_problem(config: dict) -> str | None:
    """What is wrong with a checkpoint's architecture (its ``config`` dict), or None."""
    if not isinstance(config, dict):
        return f"its 'config' is a {type(config).__name__}, not a dict"
    known = [f.name for f in fields(PolicyConfig)]
    unknown = [repr(key) for key in config if key not in known]
    if unknown:
        return f"unknown architecture key(s) {', '.join(unknown)} (known: {', '.join(known)})"
    for name, value in config.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
            return f"architecture {name}={value!r} is not a whole number from 1 to 100000"
    merged = {**asdict(PolicyConfig()), **config}
    if merged["vocab_size"] != len(VOCAB):
        return f"its vocabulary has {merged['vocab_size']} tokens, the task's has {len(VOCAB)}"
    if merged["d_model"] % merged["n_heads"]:
        return f"its {merged['n_heads']} attention heads do not divide its width d_model={merged['d_model']}"
    if merged["max_len"] < positions_needed(Task(1, "+")):
        return f"it reads at most max_len={merged['max_len']} tokens; the shortest task needs {positions_needed(Task(1, '+'))}"
    return None


def weights_problem(state_dict: dict, expected: dict[str, torch.Size]) -> str | None:
    """What is wrong with a checkpoint's weights against the shapes of the architecture it names, or None."""
    if not isinstance(state_dict, dict):
        return f"its 'state_dict' is a {type(state_dict).__name__}, not a dict"
    missing = [name for name in expected if name not in state_dict]
    unexpected = [str(name) for name in state_dict if name not in expected]
    if missing or unexpected:
        return "it does not match the TinyTransformer architecture it names: " + "; ".join(
            part
            for part in (f"missing {', '.join(missing[:3])}" if missing else "", f"unexpected {', '.join(unexpected[:3])}" if unexpected else "")
            if part
        )
    for name, shape in expected.items():
        tensor = state_dict[name]
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
            return f"weight {name} is not a float tensor"
        if tensor.shape != shape:
            return f"it does not match the TinyTransformer architecture it names: weight {name} has shape {tuple(tensor.shape)}, not {tuple(shape)}"
        if not torch.isfinite(tensor).all():
            return f"weight {name} contains NaN or infinity"
        largest = float(tensor.abs().max()) if tensor.numel() else 0.0
        if largest > LARGEST_WEIGHT:
            return f"weight {name} has a value of magnitude {largest:.3g} (more than {LARGEST_WEIGHT:g}: its forward pass would overflow)"
    return None


def architecture_size(config: PolicyConfig) -> tuple[dict[str, torch.Size], dict[str, torch.Size]]:
    """(shapes of the weights outside the blocks, shapes of one block's weights), from modules on the
    meta device: nothing is allocated and the cost does not grow with n_layers."""
    with torch.device("meta"):
        outer = TinyTransformer(replace(config, n_layers=0)).state_dict()
        block = Block(config).state_dict()
    return {name: t.shape for name, t in outer.items()}, {name: t.shape for name, t in block.items()}


def expected_shapes(config: PolicyConfig, file_bytes: int) -> dict[str, torch.Size] | str:
    """{weight name: shape} of the architecture ``config`` names, or what is wrong when a file of
    ``file_bytes`` cannot hold that many weights (checked first: a header with n_layers=100000
    would otherwise take minutes to build before it is refused)."""
    outer, block = architecture_size(config)
    parameters = sum(s.numel() for s in outer.values()) + config.n_layers * sum(s.numel() for s in block.values())
    if parameters * SMALLEST_WEIGHT_BYTES > file_bytes:
        return (
            f"it does not match the TinyTransformer architecture it names: {', '.join(f'{k}={v}' for k, v in asdict(config).items())} "
            f"has {parameters:,} weights, more than a file of {file_bytes:,} bytes can hold"
        )
    shapes = {name: shape for name, shape in outer.items() if not name.startswith("norm.") and not name.startswith("head.")}
    for index in range(config.n_layers):
        shapes.update({f"blocks.{index}.{name}": shape for name, shape in block.items()})
    shapes.update({name: shape for name, shape in outer.items() if name.startswith(("norm.", "head."))})
    return shapes


def checkpoint_problem(checkpoint: object, file_bytes: int) -> str | None:
    """What is wrong with a loaded checkpoint (format, architecture, weights, checksum), or None."""
    if isinstance(checkpoint, dict) and checkpoint.get("format") == UNCHECKED_FORMAT:
        return (
            f"it is in the old format '{UNCHECKED_FORMAT}', which carries no checksum; re-save it with "
            f"grpo_lab.checks.checkpoints.save_policy or rebuild it with: python -m grpo_lab pretrain --only NAME"
        )
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        return f"it is not a grpo-lab policy (no '{CHECKPOINT_FORMAT}' format tag)"
    absent = [key for key in ("config", "state_dict", "checksum") if key not in checkpoint]
    if absent:
        return f"it has the format tag but no {' or '.join(repr(key) for key in absent)}"
    problem = architecture_problem(checkpoint["config"])
    if problem is not None:
        return problem
    expected = expected_shapes(PolicyConfig(**checkpoint["config"]), file_bytes)
    if isinstance(expected, str):
        return expected
    problem = weights_problem(checkpoint["state_dict"], expected)
    if problem is not None:
        return problem
    if checkpoint["checksum"] != contents_checksum(checkpoint["config"], checkpoint.get("metadata", {}), checkpoint["state_dict"]):
        return "it is damaged or changed: its contents do not match the checksum saved with them"
    return None


def load_policy(path: str | Path, device: str = "cpu") -> TinyTransformer:
    """Read a file written by ``save_policy``. A missing, corrupt or mismatched file raises one
    ValueError (FileNotFoundError when missing) naming the file and what is wrong with it:
    not a checkpoint, no format tag, no config or state_dict, another vocabulary, a max length
    too short for the tasks, heads that do not divide the width, an architecture larger than the
    file can hold, weights of the wrong shape, NaN, infinite or huge weights, contents that do not
    match the checksum saved with them. Shipped reference policies must also match checksums.json."""
    path = Path(path)
    shown = shortened(str(path))
    try:
        exists = path.is_file()
        file_bytes = path.stat().st_size if exists else 0
    except OSError as error:  # e.g. a 300-character name: [Errno 36] File name too long
        raise ValueError(f"policy file {shown} cannot be read: {error.strerror or error}") from None
    if not exists:
        raise FileNotFoundError(f"policy file {shown} does not exist (regenerate the references with: python -m grpo_lab pretrain)")
    if path.resolve().parent == CHECKSUMS_PATH.parent.resolve() and path.stem in REFERENCE_NAMES:
        verify_shipped_checksum(path)
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise ValueError(f"policy file {shown} is not a readable checkpoint ({type(error).__name__}); it may be corrupt or truncated") from None
    problem = checkpoint_problem(checkpoint, file_bytes)
    if problem is not None:
        raise ValueError(f"policy file {shown} cannot be used: {problem}")
    policy = TinyTransformer(PolicyConfig(**checkpoint["config"]))
    policy.load_state_dict(checkpoint["state_dict"])
    metadata = checkpoint.get("metadata", {})
    policy.metadata = metadata if isinstance(metadata, dict) else {}
    return policy.to(resolve_device(device))


def reference_path(name: str) -> Path:
    return DATA_DIR / "reference" / f"{name}.pt"


def load_reference_policy(name: str = "default", device: str = "cpu") -> TinyTransformer:
    """A shipped reference policy: ``default`` (mixed groups) or ``weak`` (mostly all-wrong groups),
    or a path to a file written by ``save_policy``."""
    if name in REFERENCE_NAMES:
        return load_policy(reference_path(name), device)
    if isinstance(name, (str, Path)) and str(name).endswith(".pt"):
        return load_policy(name, device)
    raise ConfigError("reference", name, f"choose one of {', '.join(REFERENCE_NAMES)} or a path to a .pt file")
