"""The tiny policy: a causal transformer small enough to read in one screen, how it samples answers,
and the log-probability of each answer token (the plain form first, then the packed fast path).

Shapes: B batch, T sequence length, D model width, V vocabulary size (16).
A sequence is ``prompt tokens + answer tokens``; the policy is trained and scored only on the
answer tokens, up to and including the first EOS (``answer_mask``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

# The vocabulary: digits, the three operations, '=' and two special tokens. A prompt is "07+35=",
# an answer "42" then EOS (task.py poses the problems).
PAD, EOS = "<pad>", "<eos>"
VOCAB: list[str] = [PAD, EOS, *"0123456789", "+", "-", "*", "="]
TOKEN_ID: dict[str, int] = {token: index for index, token in enumerate(VOCAB)}
PAD_ID, EOS_ID = TOKEN_ID[PAD], TOKEN_ID[EOS]


def encode(text: str) -> list[int]:
    """Characters to token ids (prompts and answers contain only single-character tokens)."""
    return [TOKEN_ID[char] for char in text]


def decode(token_ids: Iterable[int] | torch.Tensor) -> str:
    """Token ids to text, stopping at EOS and dropping padding."""
    chars = []
    for token_id in token_ids:
        token_id = int(token_id)
        if token_id == EOS_ID:
            break
        if token_id != PAD_ID:
            chars.append(VOCAB[token_id])
    return "".join(chars)


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


def token_logprobs(
    policy: nn.Module, prompts: torch.Tensor, answers: torch.Tensor, with_entropy: bool = False, packed: bool = True, temperature: float = 1.0
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Log-probability of each answer token under the policy, at the sampling ``temperature``: the
    distribution the answers were drawn from is softmax(logits / T) (``draw``), so the ratio and the
    KL are taken under that one (as TRL divides the logits by the temperature).

    prompts: [B, Lp], answers: [B, La] -> logprobs [B, La] (and entropy [B, La] of the
    next-token distribution at each answer position when ``with_entropy``). ``packed``: the same
    numbers by the fast path (``packed_answer_logits``), which reads each group's prompt once.
    """
    logits = (packed_answer_logits if packed else answer_logits)(policy, prompts, answers)  # [B, La, V]
    log_probs = torch.log_softmax(logits.float() / temperature, dim=-1)
    chosen = log_probs.gather(-1, answers[:, :, None]).squeeze(-1)
    if not with_entropy:
        return chosen
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    return chosen, entropy


def answer_logits(policy: nn.Module, prompts: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """The plain form: one forward over each row's prompt + answer. prompts [B, Lp], answers [B, La]
    -> logits [B, La, V], row t predicting answer token t from the prompt and the tokens before it."""
    sequence = torch.cat([prompts, answers], dim=1)
    return policy(sequence[:, :-1])[:, prompts.shape[1] - 1 :]


# The fast path. GRPO's batch repeats each prompt G times in a row: computing the prompt once per
# group, with its answers packed side by side behind it, gives the same logits for about half the work.


def packed_answer_logits(policy: nn.Module, prompts: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """``answer_logits``, with rows that repeat a prompt run packed (``pack_answers``)."""
    packing = pack_answers(prompts, answers)
    return packing.unpack(policy(packing.tokens, packing=packing))


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
