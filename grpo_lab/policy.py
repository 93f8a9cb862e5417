"""The tiny policy: a causal transformer small enough to read in one screen.

Shapes: B batch, T sequence length, D model width, V vocabulary size (16).
A sequence is ``prompt tokens + answer tokens``; the policy is trained and scored only on the
answer tokens, up to and including the first EOS (``answer_mask``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from .task import EOS_ID, PAD_ID, VOCAB

REFERENCE_NAMES = ("default", "weak")
DATA_DIR = Path(__file__).resolve().parent.parent / "data"


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
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, 4 * config.d_model), nn.GELU(), nn.Linear(4 * config.d_model, config.d_model)
        )

    def forward(self, x: torch.Tensor, cache: dict | None = None) -> torch.Tensor:
        """x: [B, T, D]. With a ``cache``, keys and values of earlier positions are kept in it, so
        new tokens attend to the past (a shared prompt, or the tokens sampled so far) without
        recomputing it."""
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
        q, k, v = (t.view(batch, length, self.n_heads, -1).transpose(1, 2) for t in (q, k, v))
        if cache is not None and "k" in cache:
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
        if cache is not None:
            cache["k"], cache["v"] = k, v
        past = k.shape[2] - length  # positions already in the cache
        if past == 0:  # a block that starts at position 0: SDPA's own causal mask
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

    def forward(self, tokens: torch.Tensor, caches: list[dict] | None = None, start: int = 0) -> torch.Tensor:
        """tokens [B, T] at positions start..start+T-1 -> logits [B, T, V]. ``caches``: one dict
        per block, filled and reused by ``sample``."""
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        for index, block in enumerate(self.blocks):
            x = block(x, caches[index] if caches is not None else None)
        return self.head(self.norm(x))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def answer_mask(answers: torch.Tensor) -> torch.Tensor:
    """1.0 on answer tokens up to and including the first EOS, 0.0 after it. [B, L] -> [B, L]."""
    is_eos = (answers == EOS_ID).long()
    eos_before = torch.cumsum(is_eos, dim=1) - is_eos
    return (eos_before == 0).float()


def run_prompts(policy: TinyTransformer, prompts: torch.Tensor) -> tuple[torch.Tensor, list[dict]]:
    """Run the prompts through the policy once per *distinct* prompt, and fill the caches.

    prompts [B, Lp] -> (next-token logits at the last prompt position [B, V], one cache per block
    holding keys and values [B, H, Lp, D/H]). GRPO's batch repeats each prompt G times in a row,
    so consecutive equal rows are computed once and their keys and values shared (gradients flow
    back through the sharing); the result is the same as running every row.
    """
    starts_run = torch.ones(len(prompts), dtype=torch.bool, device=prompts.device)
    starts_run[1:] = (prompts[1:] != prompts[:-1]).any(dim=1)
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
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample answers for a batch of same-length prompts.

    prompts: [B, Lp] -> (answers [B, max_new_tokens] token ids, mask [B, max_new_tokens]).
    ``temperature=0`` decodes greedily. Tokens after a sequence's EOS are set to PAD and masked;
    decoding stops once every sequence has ended. Sampling draws on the CPU generator so a seed
    gives the same answers on any device.
    """
    logits, caches = run_prompts(policy, prompts)
    answers = torch.full((len(prompts), max_new_tokens), PAD_ID, dtype=torch.long, device=prompts.device)
    ended = torch.zeros(len(prompts), dtype=torch.bool, device=prompts.device)
    for index in range(max_new_tokens):
        if temperature == 0:
            next_token = logits.argmax(dim=-1)
        else:
            probs = torch.softmax(logits.float() / temperature, dim=-1).cpu()
            next_token = torch.multinomial(probs, 1, generator=generator).squeeze(1).to(prompts.device)
        answers[:, index] = next_token
        ended |= next_token == EOS_ID
        if index + 1 == max_new_tokens or bool(ended.all()):
            break
        logits = policy(next_token[:, None], caches, start=prompts.shape[1] + index)[:, -1, :]
    mask = answer_mask(answers)
    return answers.masked_fill(mask == 0, PAD_ID), mask


def token_logprobs(policy: nn.Module, prompts: torch.Tensor, answers: torch.Tensor, with_entropy: bool = False):
    """Log-probability of each answer token under the policy.

    prompts: [B, Lp], answers: [B, La] -> logprobs [B, La] (and entropy [B, La] of the
    next-token distribution at each answer position when ``with_entropy``). Each distinct
    prompt is run once (``run_prompts``), then the answers attend to its cached keys and values.
    """
    first_logits, caches = run_prompts(policy, prompts)
    logits = first_logits[:, None, :]  # [B, 1, V]: the first answer token's distribution
    if answers.shape[1] > 1:
        rest = policy(answers[:, :-1], caches, start=prompts.shape[1])  # [B, La - 1, V]
        logits = torch.cat([logits, rest], dim=1)
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    chosen = log_probs.gather(-1, answers[:, :, None]).squeeze(-1)
    if not with_entropy:
        return chosen
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    return chosen, entropy


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` -> CUDA if present, else Apple's MPS, else CPU; anything else is passed to torch."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        return torch.device(device)
    except RuntimeError as error:
        raise ValueError(f"device={device!r} is not valid: use 'auto', 'cpu', 'cuda' or 'mps' ({error})") from None


def save_policy(policy: TinyTransformer, path: str | Path, metadata: dict | None = None) -> Path:
    """Write the weights, the architecture and free-form metadata (plain types only)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu() for k, v in policy.state_dict().items()}
    torch.save({"format": "grpo-lab-policy-v1", "config": asdict(policy.config), "metadata": metadata or {}, "state_dict": state}, path)
    return path


def load_policy(path: str | Path, device: str = "cpu") -> TinyTransformer:
    """Read a file written by ``save_policy``. Missing, corrupt or mismatched files raise one clear error."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"policy file {path} does not exist (regenerate the references with: python -m grpo_lab pretrain)")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise ValueError(f"policy file {path} is not a readable checkpoint ({type(error).__name__}); it may be corrupt or truncated") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != "grpo-lab-policy-v1":
        raise ValueError(f"policy file {path} is not a grpo-lab policy (no 'grpo-lab-policy-v1' format tag)")
    try:
        policy = TinyTransformer(PolicyConfig(**checkpoint["config"]))
        policy.load_state_dict(checkpoint["state_dict"])
    except (TypeError, RuntimeError) as error:
        first_line = str(error).strip().splitlines()[0]
        raise ValueError(f"policy file {path} does not match the TinyTransformer architecture: {first_line}") from None
    policy.metadata = checkpoint.get("metadata", {})
    return policy.to(resolve_device(device))


def reference_path(name: str) -> Path:
    return DATA_DIR / "reference" / f"{name}.pt"


def load_reference_policy(name: str = "default", device: str = "cpu") -> TinyTransformer:
    """A shipped reference policy: ``default`` (mixed groups) or ``weak`` (mostly all-wrong groups),
    or a path to a file written by ``save_policy``."""
    if name in REFERENCE_NAMES:
        return load_policy(reference_path(name), device)
    if name.endswith(".pt"):
        return load_policy(name, device)
    raise ValueError(f"reference={name!r} is not valid: choose one of {', '.join(REFERENCE_NAMES)} or a path to a .pt file")
