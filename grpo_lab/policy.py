"""The tiny policy: a causal transformer small enough to read in one screen.

Shapes: B batch, T sequence length, D model width, V vocabulary size (16).
A sequence is ``prompt tokens + answer tokens``; the policy is trained and scored only on the
answer tokens, up to and including the first EOS (``answer_mask``).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import paths
from .devices import available_devices as available_devices  # moved to devices.py; still importable from here
from .devices import resolve_device
from .errors import ConfigError, shortened
from .files import read_strict_json, write_atomically
from .paths import REFERENCE_NAMES
from .task import EOS_ID, PAD_ID, VOCAB, Task

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


@dataclass(frozen=True)
class PolicyConfig:
    vocab_size: int = len(VOCAB)
    max_len: int = 16
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4


class Block(nn.Module):
    """Pre-norm transformer block: causal self-attention, then an MLP, each with a residual."""

    def __init__(self, config: PolicyConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.norm1 = nn.LayerNorm(config.d_model)
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(nn.Linear(config.d_model, 4 * config.d_model), nn.GELU(), nn.Linear(4 * config.d_model, config.d_model))

    def forward(self, x: torch.Tensor, cache: dict | None = None, visible: torch.Tensor | None = None) -> torch.Tensor:
        """x: [B, T, D]. With a ``cache``, keys and values of earlier positions are kept in it, so
        new tokens attend to the past (a shared prompt, or the tokens sampled so far) without
        recomputing it. ``visible`` [T, T]: which positions each position attends to (True: it
        may), for packed sequences (``pack_answers``); without it attention is causal."""
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
        q, k, v = (t.view(batch, length, self.n_heads, -1).transpose(1, 2) for t in (q, k, v))
        if cache is not None and "k" in cache:
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
        if cache is not None:
            cache["k"], cache["v"] = k, v
        past = k.shape[2] - length  # positions already in the cache
        if visible is not None:
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=visible)
        elif past == 0:  # a block that starts at position 0: SDPA's own causal mask
            attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # new tokens after cached ones see all of the past, and the new tokens up to their own
            visible = torch.ones(length, k.shape[2], dtype=torch.bool, device=x.device).tril(past)
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=visible)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    """tokens [B, T] -> next-token logits [B, T, V]. About 100k parameters by default."""

    def __init__(self, config: PolicyConfig = PolicyConfig()):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.position_embedding = nn.Embedding(config.max_len, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size)

    def forward(self, tokens: torch.Tensor, caches: list[dict] | None = None, start: int = 0, packing: PackedAnswers | None = None) -> torch.Tensor:
        """tokens [B, T] at positions start..start+T-1 -> logits [B, T, V]. ``caches``: one dict
        per block, filled and reused by ``sample``. ``packing``: the tokens are packed answers
        (``pack_answers``), with their own positions and attention mask."""
        if packing is None:
            positions, visible = torch.arange(start, start + tokens.shape[1], device=tokens.device), None
        else:
            positions, visible = packing.positions, packing.visible
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        for index, block in enumerate(self.blocks):
            x = block(x, caches[index] if caches is not None else None, visible)
        return self.head(self.norm(x))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def answer_mask(answers: torch.Tensor) -> torch.Tensor:
    """1.0 on answer tokens up to and including the first EOS, 0.0 after it. [B, L] -> [B, L]."""
    is_eos = (answers == EOS_ID).long()
    eos_before = torch.cumsum(is_eos, dim=1) - is_eos
    return (eos_before == 0).float()


def run_starts(prompts: torch.Tensor) -> torch.Tensor:
    """prompts [B, Lp] -> [B] bool: True where a row's prompt differs from the row before (a run of
    equal prompts, GRPO's group, starts there)."""
    starts = torch.ones(len(prompts), dtype=torch.bool, device=prompts.device)
    starts[1:] = (prompts[1:] != prompts[:-1]).any(dim=1)
    return starts


def run_prompts(policy: TinyTransformer, prompts: torch.Tensor) -> tuple[torch.Tensor, list[dict]]:
    """Run the prompts through the policy once per *distinct* prompt, and fill the caches.

    prompts [B, Lp] -> (next-token logits at the last prompt position [B, V], one cache per block
    holding keys and values [B, H, Lp, D/H]). GRPO's batch repeats each prompt G times in a row,
    so consecutive equal rows are computed once and their keys and values shared; the result is the
    same as running every row. Sampling starts here (``generate``); the loss packs its rows instead
    (``pack_answers``), which also saves copying the keys and values to every row.
    """
    starts_run = run_starts(prompts)
    caches: list[dict] = [{} for _ in policy.blocks]
    logits = policy(prompts[starts_run], caches)[:, -1, :]
    if not bool(starts_run.all()):
        run_of_row = torch.cumsum(starts_run, dim=0) - 1  # [B]: which distinct prompt each row repeats
        for cache in caches:
            cache["k"], cache["v"] = cache["k"].index_select(0, run_of_row), cache["v"].index_select(0, run_of_row)
        logits = logits.index_select(0, run_of_row)
    return logits, caches


@torch.no_grad()
def sample(
    policy: TinyTransformer,
    prompts: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    chunk_size: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample answers for a batch of same-length prompts.

    prompts: [B, Lp] -> (answers [B, max_new_tokens] token ids, mask [B, max_new_tokens]).
    ``temperature=0`` decodes greedily. Tokens after a sequence's EOS are set to PAD and masked;
    decoding stops once every sequence has ended. Sampling draws on the CPU generator so a seed
    gives the same answers on any device. ``chunk_size``: decode that many rows at a time, so the
    keys and values held are a chunk's, not the batch's; the answers and the generator's state
    afterwards are those of the whole batch at once (``sample_in_chunks``).
    """
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not (temperature == 0 or 0 < temperature < math.inf):
        raise ConfigError("temperature", temperature, "must be 0 (greedy) or a finite number > 0")
    if chunk_size is None or chunk_size >= len(prompts):
        answers, _ = generate(policy, prompts, max_new_tokens, chooser(temperature, generator))
    else:
        answers = sample_in_chunks(policy, prompts, max_new_tokens, temperature, generator, chunk_size)
    mask = answer_mask(answers)
    return answers.masked_fill(mask == 0, PAD_ID), mask


def draw(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> torch.Tensor:
    """One token per row from softmax(logits / temperature): [B, V] -> [B]."""
    probs = torch.softmax(logits.float() / temperature, dim=-1).cpu()
    return torch.multinomial(probs, 1, generator=generator).squeeze(1).to(logits.device)


def generate(
    policy: TinyTransformer, prompts: torch.Tensor, max_new_tokens: int, choose: Callable[[torch.Tensor, int], torch.Tensor]
) -> tuple[torch.Tensor, int]:
    """Decode token by token with the shared-prompt cache: ``choose(logits [B, V], index) -> tokens [B]``
    picks each answer token. Returns (answers [B, max_new_tokens], PAD after the last one decoded;
    the number of tokens decoded, fewer than max_new_tokens when every row ended early)."""
    logits, caches = run_prompts(policy, prompts)
    answers = torch.full((len(prompts), max_new_tokens), PAD_ID, dtype=torch.long, device=prompts.device)
    ended = torch.zeros(len(prompts), dtype=torch.bool, device=prompts.device)
    for index in range(max_new_tokens):
        next_token = choose(logits, index)
        answers[:, index] = next_token
        ended |= next_token == EOS_ID
        if index + 1 == max_new_tokens or bool(ended.all()):
            break
        logits = policy(next_token[:, None], caches, start=prompts.shape[1] + index)[:, -1, :]
    return answers, index + 1


def chooser(temperature: float, generator: torch.Generator | None) -> Callable[[torch.Tensor, int], torch.Tensor]:
    """How ``generate`` picks a token from logits [B, V]: the argmax (temperature 0), or a draw."""
    if temperature == 0:
        return lambda logits, index: logits.argmax(dim=-1)
    return lambda logits, index: draw(logits, temperature, generator)


def sample_in_chunks(
    policy: TinyTransformer, prompts: torch.Tensor, max_new_tokens: int, temperature: float, generator: torch.Generator | None, chunk_size: int
) -> torch.Tensor:
    """``sample``'s answers [B, max_new_tokens], decoded ``chunk_size`` rows at a time, token for token
    the same as the whole batch at once, and leaving ``generator`` in the same state.

    For one sample per row ``torch.multinomial`` draws q ~ Exp(1) in the probabilities' shape
    [B, V] and takes argmax(p / q) (the exponential race), once per token. Those draws are made up
    front for the whole batch (B x max_new_tokens x V numbers, a few MB at most), each chunk reads
    its rows, and the generator is then set back to where the whole batch's decode would have
    left it (as many draws as the longest answer has tokens)."""
    if temperature == 0:  # nothing random: chunks decode as the batch does
        return torch.cat(
            [
                generate(policy, prompts[start : start + chunk_size], max_new_tokens, chooser(0, None))[0]
                for start in range(0, len(prompts), chunk_size)
            ]
        )
    generator = generator if generator is not None else torch.default_generator
    states, noise = [generator.get_state()], []
    for _ in range(max_new_tokens):
        noise.append(torch.empty(len(prompts), policy.config.vocab_size).exponential_(1, generator=generator))
        states.append(generator.get_state())
    pieces, tokens_drawn = [], 0
    for start in range(0, len(prompts), chunk_size):
        rows = slice(start, start + chunk_size)

        def race(logits: torch.Tensor, index: int, rows: slice = rows) -> torch.Tensor:
            probs = torch.softmax(logits.float() / temperature, dim=-1).cpu()
            return (probs / noise[index][rows]).argmax(dim=-1).to(logits.device)

        piece, drawn = generate(policy, prompts[rows], max_new_tokens, race)
        pieces.append(piece)
        tokens_drawn = max(tokens_drawn, drawn)
    generator.set_state(states[tokens_drawn])
    return torch.cat(pieces)


MAX_PACKED_ANSWERS = 8  # answers per packed sequence: its attention grows with the square of its length


@dataclass
class PackedAnswers:
    """Rows that repeat a prompt, g at a time, packed into one sequence each: the prompt once, then
    the g answers (all but each answer's last token, which is only predicted).

    tokens [S, Lp + g (La - 1)] (S = B / g sequences); positions [Lp + g (La - 1)]: each answer
    restarts at Lp, as if it followed the prompt alone; visible [L, L]: the prompt is causal, and an
    answer token sees the prompt and its own answer's tokens up to itself, never another answer's
    (None when g = 1: a plain causal sequence).
    """

    tokens: torch.Tensor
    positions: torch.Tensor
    visible: torch.Tensor | None
    rows_per_sequence: int
    prompt_length: int
    fed: int  # La - 1

    def unpack(self, logits: torch.Tensor) -> torch.Tensor:
        """The packed forward's logits [S, L, V] -> each row's answer-token logits [B, La, V] (the
        distribution of answer token t, predicted from the prompt and tokens before t)."""
        g, Lp = self.rows_per_sequence, self.prompt_length
        first = logits[:, Lp - 1].repeat_interleave(g, dim=0)[:, None]  # [B, 1, V]: after the prompt
        rest = logits[:, Lp:].reshape(len(logits) * g, self.fed, logits.shape[-1])  # [B, La - 1, V]
        return torch.cat([first, rest], dim=1)


def pack_answers(prompts: torch.Tensor, answers: torch.Tensor) -> PackedAnswers:
    """Pack a batch for ``token_logprobs``. prompts [B, Lp], answers [B, La].

    GRPO's batch repeats each prompt G times in a row. The rows are cut into pieces of g rows with
    one prompt, g the largest divisor of every run of equal prompts' length up to
    MAX_PACKED_ANSWERS (g = 1 when some prompt appears once: a plain causal sequence per row), and
    each piece becomes one sequence. The prompt is computed once per piece instead of once per
    row, and the answers, kept apart by the mask, give what each row would give on its own.
    """
    rows, Lp = prompts.shape
    fed = answers.shape[1] - 1  # answer tokens that are input to the next prediction
    run_lengths = torch.diff(torch.cat([run_starts(prompts).nonzero().squeeze(1), torch.tensor([rows], device=prompts.device)]))
    common = math.gcd(*run_lengths.tolist())
    g = max(d for d in range(1, min(common, MAX_PACKED_ANSWERS) + 1) if common % d == 0)
    owner = torch.arange(g, device=prompts.device).repeat_interleave(fed)  # which answer each packed token belongs to
    owner = torch.cat([torch.full((Lp,), -1, device=prompts.device), owner])  # -1: the prompt
    positions = torch.cat([torch.arange(Lp, device=prompts.device), Lp + torch.arange(fed, device=prompts.device).repeat(g)])
    same_or_prompt = (owner[None, :] == owner[:, None]) | (owner[None, :] == -1)
    visible = same_or_prompt & (positions[None, :] <= positions[:, None]) if g > 1 else None
    tokens = torch.cat([prompts[::g], answers[:, :fed].reshape(rows // g, g * fed)], dim=1)
    return PackedAnswers(tokens, positions, visible, g, Lp, fed)


def token_logprobs(
    policy: nn.Module, prompts: torch.Tensor, answers: torch.Tensor, with_entropy: bool = False
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Log-probability of each answer token under the policy.

    prompts: [B, Lp], answers: [B, La] -> logprobs [B, La] (and entropy [B, La] of the
    next-token distribution at each answer position when ``with_entropy``). Rows that repeat a
    prompt are run packed (``pack_answers``): the prompt once, then its answers side by side.
    """
    packing = pack_answers(prompts, answers)
    logits = packing.unpack(policy(packing.tokens, packing=packing))  # [B, La, V]
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    chosen = log_probs.gather(-1, answers[:, :, None]).squeeze(-1)
    if not with_entropy:
        return chosen
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    return chosen, entropy


CHECKPOINT_FORMAT = "grpo-lab-policy-v2"  # v2 carries a checksum of its contents
LEGACY_FORMATS = ("grpo-lab-policy-v1",)  # read as before: no checksum inside (the shipped references have checksums.json)
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


def sha256_of(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def shipped_checksums() -> dict[str, str]:
    """{file name: SHA-256} of the reference policies in data/reference (written by ``pretrain``).
    A damaged checksums.json (not JSON, NaN, deeply nested, a value that is not a SHA-256) is one
    ValueError naming the file and what is wrong."""
    if not CHECKSUMS_PATH.is_file():
        return {}
    restore = f"restore it with `git checkout {CHECKSUMS_PATH.name}` or regenerate the references with: python -m grpo_lab pretrain"
    try:
        checksums = read_strict_json(CHECKSUMS_PATH)
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, NaN and nesting are ValueErrors
        raise ValueError(f"{CHECKSUMS_PATH} is not valid JSON ({str(error).splitlines()[0][:80]}): {restore}") from None
    if not isinstance(checksums, dict):
        raise ValueError(f"{CHECKSUMS_PATH} is not valid: it holds a JSON {type(checksums).__name__}, not {{file name: SHA-256}}; {restore}")
    for name, value in checksums.items():
        if not (isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)):
            raise ValueError(
                f"{CHECKSUMS_PATH} is not valid: the checksum of {shortened(repr(name))} is {shortened(repr(value))}, not a SHA-256 (64 hex digits); {restore}"
            )
    return checksums


def record_checksum(path: str | Path) -> Path:
    """Store the SHA-256 of the reference policy at ``path`` in data/reference/checksums.json."""
    checksums = shipped_checksums()
    checksums[Path(path).name] = sha256_of(path)
    return write_atomically(CHECKSUMS_PATH, json.dumps(dict(sorted(checksums.items())), indent=1) + "\n")


def verify_shipped_checksum(path: Path) -> None:
    """A shipped reference policy must have the bytes it shipped with: a flipped byte can load and
    run, silently worse (a 2-byte flip in default.pt took its accuracy from 0.51 to 0.30)."""
    expected = shipped_checksums().get(path.name)
    if expected is None:
        raise ValueError(f"policy file {path} has no checksum in {CHECKSUMS_PATH}: regenerate the references with: python -m grpo_lab pretrain")
    actual = sha256_of(path)
    if actual != expected:
        raise ValueError(
            f"policy file {path} is damaged or changed: its SHA-256 is {actual[:12]}..., {CHECKSUMS_PATH.name} says "
            f"{expected[:12]}...; restore it (git checkout {path.name}) or rebuild it with: python -m grpo_lab pretrain --only {path.stem}"
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
    """What is wrong with a loaded checkpoint (architecture, weights, checksum), or None."""
    if not isinstance(checkpoint, dict) or checkpoint.get("format") not in (CHECKPOINT_FORMAT, *LEGACY_FORMATS):
        return f"it is not a grpo-lab policy (no '{CHECKPOINT_FORMAT}' format tag)"
    needed = ("config", "state_dict", "checksum") if checkpoint["format"] == CHECKPOINT_FORMAT else ("config", "state_dict")
    absent = [key for key in needed if key not in checkpoint]
    if absent:
        return f"it has the format tag but no {' or '.join(repr(key) for key in absent)}"
    problem = architecture_problem(checkpoint["config"])
    if problem is not None:
        return problem
    expected = expected_shapes(PolicyConfig(**checkpoint["config"]), file_bytes)
    if isinstance(expected, str):
        return expected
    problem = weights_problem(checkpoint["state_dict"], expected)
    if problem is not None or checkpoint["format"] != CHECKPOINT_FORMAT:
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
