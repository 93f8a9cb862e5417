"""Checkers for the course's exercises: each prints one clear verdict (and returns nothing, so a
notebook cell shows the verdict alone).

Verdicts: ``PASS``, ``FAIL`` (with the first input that went wrong and a hint) and
``NOT ATTEMPTED`` (the exercise cell still raises NotImplementedError, or the answer is still
None). Code exercises are checked against the library's own functions (the reference
implementation a learner can read afterwards); the worked solutions live in
``notebooks/solutions/``, away from the exercises. Prediction exercises record the prediction
next to the measurement instead of grading it: a wrong prediction is how one learns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from .advantages import compute_advantages
from .critic import gae
from .trainer import kl_k3

PASS, FAIL, NOT_ATTEMPTED, RECORDED = "PASS", "FAIL", "NOT ATTEMPTED", "PREDICTION RECORDED"
SOLUTIONS_DIR = "notebooks/solutions"


def verdict(exercise: str, outcome: str, detail: str = "") -> None:
    """Print ``[exercise] OUTCOME: detail`` (with where the worked solution is, unless it passed)."""
    hint = f" (worked solution: {SOLUTIONS_DIR}/{exercise}.py)" if outcome in (FAIL, NOT_ATTEMPTED) else ""
    print(f"[{exercise}] {outcome}: {detail}{hint}")


def call_learner(exercise: str, function: Callable, *args) -> tuple[object, bool]:
    """Call the learner's function: (its value, True), or (None, False) after printing the verdict."""
    try:
        return function(*args), True
    except NotImplementedError:
        verdict(exercise, NOT_ATTEMPTED, "the cell above still raises NotImplementedError; replace it with your code")
    except Exception as error:  # a learner's bug: show it as a verdict, not as a traceback
        verdict(exercise, FAIL, f"calling it with {format_args(args)} raised {type(error).__name__}: {error}")
    return None, False


def format_args(args: Sequence) -> str:
    return ", ".join(format_value(a) for a in args)


def format_value(value) -> str:
    if isinstance(value, torch.Tensor):
        return str([round(v, 4) for v in value.tolist()]) if value.ndim == 1 else str(torch.round(value, decimals=4).tolist())
    return repr(value)


def compare(exercise: str, function: Callable, cases: list[tuple], reference: Callable, hint: str, atol: float = 1e-5) -> None:
    """Run ``function(*case)`` against ``reference(*case)`` for every case; one verdict."""
    for case in cases:
        got, ok = call_learner(exercise, function, *case)
        if not ok:
            return
        expected = reference(*case)
        try:
            got = torch.as_tensor(got, dtype=expected.dtype) if not isinstance(got, torch.Tensor) else got
        except (TypeError, ValueError, RuntimeError):
            return verdict(exercise, FAIL, f"for input {format_args(case)} you return {got!r}, which is not a tensor of numbers")
        if got.shape != expected.shape:
            return verdict(exercise, FAIL, f"for input {format_args(case)} the shape is {tuple(got.shape)}, expected {tuple(expected.shape)}")
        if not torch.allclose(got.to(expected.dtype), expected, atol=atol, rtol=1e-4, equal_nan=True):
            return verdict(exercise, FAIL, f"for input {format_args(case)} you return {format_value(got)}, expected {format_value(expected)}. Hint: {hint}")
    return verdict(exercise, PASS, f"matches the reference on all {len(cases)} test inputs")


def check_score_function(function: Callable[[torch.Tensor, int], torch.Tensor]) -> None:
    """Exercise 01: ``function(logits [K], action)`` -> d log softmax(logits)[action] / d logits, [K]."""

    def reference(logits: torch.Tensor, action: int) -> torch.Tensor:
        leaf = logits.clone().requires_grad_(True)
        torch.log_softmax(leaf, dim=0)[action].backward()
        return leaf.grad

    cases = [(torch.tensor([0.0, 0.0, 0.0, 0.0]), 0), (torch.tensor([2.0, -1.0, 0.5]), 2), (torch.tensor([0.3, 1.7, -2.0, 0.0, 4.0]), 4)]
    return compare("01_score_function", function, cases, reference,
                   "the gradient of log softmax(theta)[a] is onehot(a) - softmax(theta)")


def check_rloo(function: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Exercise 02: ``function(rewards [P, G])`` -> leave-one-out advantages [P, G]."""
    cases = [(torch.tensor([[1.0, 0.0, 0.0, 1.0]]),), (torch.tensor([[1.0, 0.0], [0.0, 0.0]]),),
             (torch.tensor([[0.2, 0.9, 0.4], [5.0, 5.0, 6.0]]),), (torch.rand(4, 8, generator=torch.Generator().manual_seed(0)),)]
    return compare("02_rloo", function, cases, lambda rewards: compute_advantages(rewards, "rloo"),
                   "subtract from r_i the mean of the *other* G-1 rewards: (sum(r) - r_i) / (G - 1)")


def check_k3(function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Exercise 02: ``function(logprobs, ref_logprobs)`` (same shape) -> per-token k3 KL estimate."""
    generator = torch.Generator().manual_seed(1)
    cases = [(torch.tensor([-1.0, -0.5, -2.0]), torch.tensor([-1.0, -0.7, -1.2])),
             (-torch.rand(2, 5, generator=generator) * 3, -torch.rand(2, 5, generator=generator) * 3)]
    return compare("02_k3", function, cases, kl_k3,
                   "with log_ratio = ref_logprobs - logprobs, k3 = exp(log_ratio) - log_ratio - 1 (never negative)")


def check_zero_std_groups(function: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Exercise 04: ``function(rewards [P, G])`` -> bool [P], True where a group's rewards are all equal."""
    cases = [(torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]),), (torch.tensor([[0.0, 0.0], [0.5, 0.5 + 1e-6], [3.0, 3.0]]),),
             (torch.tensor([[0.25, 0.25, 0.25, 0.25]]),)]

    def reference(rewards: torch.Tensor) -> torch.Tensor:
        return (rewards == rewards[:, :1]).all(dim=1)

    return compare("04_zero_std_groups", lambda r: torch.as_tensor(function(r)).bool(), cases,
                   reference, "a group has zero std exactly when every reward equals the first one; 0.5 and 0.5 + 1e-6 are *not* equal")


def largest_zscore(group_size: int, std_ddof: int = 1) -> float:
    """The largest |z-score advantage| any group of ``group_size`` rewards can produce (eps -> 0):
    one reward apart from G-1 equal others gives (G-1)/sqrt(G) with Bessel's correction and
    sqrt(G-1) without, and no group does better (Samuelson's inequality)."""
    return (group_size - 1) / math.sqrt(group_size) if std_ddof == 1 else math.sqrt(group_size - 1)


def check_largest_zscore(prediction: float | None, group_size: int = 8) -> None:
    """Exercise 04: predict the largest |advantage| z-scoring (Bessel, eps -> 0) can give in a group of G."""
    exercise = "04_largest_zscore"
    if prediction is None:
        return verdict(exercise, NOT_ATTEMPTED, "set your prediction to a number")
    # a numeric cross-check of the formula: one odd reward out, computed by the library
    rewards = torch.zeros(1, group_size)
    rewards[0, 0] = 1.0
    measured = float(compute_advantages(rewards, "zscore", std_eps=0.0).abs().max())
    exact = largest_zscore(group_size)
    if abs(float(prediction) - exact) <= 0.01 * exact:
        return verdict(exercise, PASS, f"for G={group_size} the bound is (G-1)/sqrt(G) = {exact:.4f} (the library gives {measured:.4f} for one 1 among 0s)")
    return verdict(exercise, FAIL, f"you predicted {float(prediction):.4g}; one 1 among {group_size - 1} zeros already gives {measured:.4f}. "
                   "Hint: the extreme group is one 1 among G-1 zeros: its mean is 1/G and its Bessel std is 1/sqrt(G); work out (1 - 1/G) / std")


def check_gae(function: Callable[[float, torch.Tensor, float], torch.Tensor]) -> None:
    """Exercise 05: ``function(reward, values [La], lam)`` -> GAE advantages [La] of one response
    whose reward arrives at its last token (gamma = 1, V after the last token = 0)."""
    cases = [(1.0, torch.tensor([0.5, 0.5, 0.5]), 1.0), (1.0, torch.tensor([0.2, 0.6, 0.9]), 0.95),
             (0.0, torch.tensor([0.4, 0.1, 0.3, 0.8]), 0.0), (1.0, torch.zeros(4), 0.5)]

    def reference(reward: float, values: torch.Tensor, lam: float) -> torch.Tensor:
        advantages, _ = gae(torch.tensor([reward]), values[None, :], torch.ones(1, len(values)), 1.0, lam)
        return advantages[0]

    return compare("05_gae", function, cases, reference,
                   "go backwards: delta_t = r_t + V_{t+1} - V_t (r_t is 0 except at the last token, V after the end is 0), A_t = delta_t + lam * A_{t+1}")


def check_prediction(exercise: str, prediction: str | None, choices: Sequence[str], measured: str, evidence: str) -> None:
    """Record a predict-then-run answer next to what the measurement says. ``measured`` is one of
    ``choices``, computed by the notebook from the run or the result file; ``evidence`` quotes the numbers."""
    if prediction is None:
        return verdict(exercise, NOT_ATTEMPTED, f"set your prediction to one of {', '.join(map(repr, choices))} before reading on")
    if prediction not in choices:
        return verdict(exercise, FAIL, f"prediction={prediction!r} is not one of the choices {', '.join(map(repr, choices))}")
    outcome = "it matches the measurement" if prediction == measured else f"the measurement says {measured!r}; the next section explains why"
    return verdict(exercise, RECORDED, f"you predicted {prediction!r}: {outcome}. Evidence: {evidence}")
