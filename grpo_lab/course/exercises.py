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

import contextlib
import copy
import ctypes
import io
import math
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

import torch

from ..checks.arguments import compute_advantages
from ..core.critic import gae
from ..core.losses import kl_k3
from ..errors import shortened

PASS, FAIL, NOT_ATTEMPTED, RECORDED = "PASS", "FAIL", "NOT ATTEMPTED", "PREDICTION RECORDED"
TENSOR_ATOL, TENSOR_RTOL = 1e-5, 1e-4  # float32 rounding passes; a slip in the 4th significant digit does not
BY_HAND_ATOL = 1e-3  # a number worked out by hand: right to three decimals (in Python, 1/3 and math.log(3) need no rounding)
PREDICTION_RTOL = 0.02  # a predicted number (not worked out exactly) may be rounded to two significant digits
ZSCORE_WEIGHT_RTOL = 0.03  # the large-G formula is within 2% of the exact expectation at G = 256
TIME_LIMIT_S = 5.0  # seconds one call of a learner's function may run (the reference answers take milliseconds)
OUTPUT_LIMIT = 2_000  # characters one call of a learner's function may print
SOLUTIONS_DIR = "notebooks/solutions"


def verdict(exercise: str, outcome: str, detail: str = "") -> None:
    """Print ``[exercise] OUTCOME: detail`` (with where the worked solution is, unless it passed)."""
    hint = f" (worked solution: {SOLUTIONS_DIR}/{exercise}.py)" if outcome in (FAIL, NOT_ATTEMPTED) else ""
    print(f"[{exercise}] {outcome}: {detail}{hint}")


STUB_HINT = "the cell above still raises NotImplementedError; replace it with your code"
TEXT_LIMIT = 80  # characters of a learner's value shown in a verdict


def call_learner(exercise: str, function: Callable, *args, **options) -> tuple[object, bool]:
    """Call the learner's function on copies of the inputs (an in-place edit cannot change the
    reference's): (its value, True), or (None, False) after printing the verdict. Every way it can go
    wrong is one FAIL line: an exception (a bare NotImplementedError, the untouched cell, is NOT
    ATTEMPTED), exit(), Ctrl-C, more than TIME_LIMIT_S seconds, more than OUTPUT_LIMIT characters printed.
    What it prints within that limit is shown above the verdict."""
    if not callable(function):
        verdict(exercise, FAIL, f"pass your function itself (its name, without calling it), not {short_repr(function)}")
        return None, False
    call = LearnerCall(function, copy.deepcopy(args), options)
    calling = f"calling it with {format_args(args)}"
    if call.printed > OUTPUT_LIMIT:
        verdict(exercise, FAIL, f"{calling} printed {call.printed:,} characters (more than {OUTPUT_LIMIT:,}): print less, or remove the print")
        return None, False
    if call.output:
        print(call.output, end="" if call.output.endswith("\n") else "\n")
    still = "" if call.stopped else "; it runs on in the background until its current call returns (restart the kernel if it slows you down)"
    if call.timed_out:
        verdict(exercise, FAIL, f"{calling} did not return within {TIME_LIMIT_S:g} s (an endless loop, or a sleep?){still}")
        return None, False
    error = call.error
    if error is None:
        return call.value, True
    if isinstance(error, NotImplementedError) and not str(error):
        verdict(exercise, NOT_ATTEMPTED, STUB_HINT)
    elif isinstance(error, SystemExit):
        verdict(exercise, FAIL, f"{calling} called exit() (SystemExit): a checked function must return its answer, not end the program")
    elif isinstance(error, KeyboardInterrupt):
        verdict(exercise, FAIL, f"{calling} was interrupted (KeyboardInterrupt) before it returned{still}")
    else:  # a learner's bug: show it as a verdict, not as a traceback
        verdict(exercise, FAIL, f"{calling} raised {type(error).__name__}: {cut(str(error))}")
    return None, False


class TimeLimitExceeded(BaseException):
    """Raised inside a learner's function that ran past TIME_LIMIT_S (a BaseException, so that an
    ``except Exception`` in the function cannot swallow it)."""


class CappedText(io.StringIO):
    """A text stream that keeps the first OUTPUT_LIMIT characters written to it and counts them all."""

    def __init__(self) -> None:
        super().__init__()
        self.size = 0

    def write(self, text: str) -> int:
        room = OUTPUT_LIMIT - self.size
        if room > 0:
            super().write(text[:room])
        self.size += len(text)
        return len(text)


class LearnerCall:
    """``function(*args, **options)`` run once, in a thread of its own with TIME_LIMIT_S seconds to
    return, its printing captured: ``value`` or ``error`` (any BaseException: SystemExit, KeyboardInterrupt
    too), ``timed_out``, ``stopped`` (False while it still runs), ``output`` (kept) and ``printed``
    (its length in all). A thread, not a signal, so that it works on any platform and off the main thread."""

    def __init__(self, function: Callable, args: tuple, options: dict) -> None:
        self.value, self.error, self.timed_out, self.stopped = None, None, False, True
        self.done = threading.Event()  # not thread.join: Ctrl-C during a join can mark a running thread as ended
        captured = CappedText()
        thread = threading.Thread(target=self.run, args=(function, args, options), name="learner function", daemon=True)
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured), exit_raises():
            try:
                thread.start()
                self.done.wait(TIME_LIMIT_S)
            except KeyboardInterrupt as interrupt:  # the notebook's stop button while the function runs
                self.error = interrupt
            if not self.done.is_set():
                self.timed_out = self.error is None
                self.stopped = self.stop(thread)
        self.output, self.printed = captured.getvalue(), captured.size

    def run(self, function: Callable, args: tuple, options: dict) -> None:
        try:
            self.value = function(*args, **options)
        except BaseException as error:  # exit(), Ctrl-C and the time limit end it too, each with a verdict
            if self.error is None:
                self.error = error
        finally:
            self.done.set()

    def stop(self, thread: threading.Thread) -> bool:
        """Raise TimeLimitExceeded inside ``thread``; True once the function has ended (a Python loop
        ends at once, a long call into C, such as time.sleep, only when it returns)."""
        if thread.ident is not None:  # None only if Ctrl-C came before the thread began
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(TimeLimitExceeded))
        return self.done.wait(1.0)


@contextlib.contextmanager
def exit_raises() -> Iterator[None]:
    """In an IPython shell (a Jupyter kernel), exit() raises nothing: it asks the kernel to shut down.
    Within this block it raises SystemExit instead, as in plain Python, so that the checker sees it."""
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    if shell is None:
        yield
        return

    def refuse() -> None:
        raise SystemExit

    shell.ask_exit = refuse  # exit() and quit() call shell.ask_exit()
    try:
        yield
    finally:
        del shell.ask_exit


def short_repr(value: object) -> str:
    """repr(value) cut to TEXT_LIMIT characters (a verdict stays readable)."""
    try:
        text = repr(value)
    except Exception:  # a learner's object whose repr is broken
        text = f"<a {type(value).__name__}>"
    return cut(text)


def cut(text: str) -> str:
    """text on one line (a tensor's repr spans several), shortened to TEXT_LIMIT characters."""
    return shortened(" ".join(text.split()), TEXT_LIMIT)


def format_args(args: Sequence) -> str:
    return ", ".join(readable_value(a) for a in args)


def readable_value(value: object) -> str:
    """A number or tensor as a learner should read it: 7 significant digits (what float32 holds), so
    that 0.5 + 1e-6 does not print as 0.5 and float32's 0.6667 does not print as 0.666700005531311;
    anything else as its (cut) repr."""
    if isinstance(value, torch.Tensor):
        return short_repr(nested_significant(value.detach().cpu().tolist()))
    if isinstance(value, float):
        return f"{value:.7g}"
    return short_repr(value)


def distinct(*numbers: float, digits: int = 4) -> list[str]:
    """Numbers with the fewest significant digits (at least ``digits``, at most 7, what float32 holds)
    at which the ones that differ print differently, so that a verdict's "you give 0.5, expected 0.5"
    cannot happen, and float32 noise (0.666700005531311) never shows."""
    for width in range(digits, 8):
        texts = [f"{float(n):.{width}g}" for n in numbers]
        if all(texts[i] != texts[j] for i in range(len(numbers)) for j in range(i) if float(numbers[i]) != float(numbers[j])):
            return texts
    return texts


def as_tensor_like(value: object, expected: torch.Tensor) -> torch.Tensor | str:
    """The learner's value as a CPU tensor of ``expected``'s dtype (a number, a list, a numpy array
    or a tensor of any real dtype will do), or what is wrong with it, as words for a FAIL."""
    if value is None:
        return "None (does your function end with `return ...`?)"
    if isinstance(value, (str, bytes)):
        return f"the text {short_repr(value)}, not numbers"
    try:
        tensor = value.detach() if isinstance(value, torch.Tensor) else torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return f"{short_repr(value)}, which is not a tensor of numbers"
    if tensor.is_complex():
        return f"complex numbers ({readable_value(tensor)}); the answer is real"
    if tensor.dtype == expected.dtype:
        return tensor.cpu()
    if not expected.is_floating_point() and tensor.is_floating_point() and not torch.isfinite(tensor).all():
        return f"{readable_value(tensor)}, which holds NaN or infinity where True/False is expected"
    return tensor.cpu().to(expected.dtype)


def as_number(value: object) -> float | str:
    """The learner's value as one Python float (a number, a numpy number or a one-element tensor),
    or what is wrong with it, as words for a FAIL. True/False and text are not numbers here."""
    if value is None:
        return "None (does your function end with `return ...`?)"
    if isinstance(value, (str, bytes)):
        return f"the text {short_repr(value)}: write the number itself, without quotes"
    if isinstance(value, bool):
        return f"{value}, not a number"
    if isinstance(value, torch.Tensor) or hasattr(value, "__array__"):
        try:
            tensor = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            return f"{short_repr(value)}, which is not a number"
        if tensor.numel() != 1:
            return f"{tensor.numel()} numbers ({readable_value(tensor)}); give one"
        if tensor.is_complex() or tensor.dtype == torch.bool:
            return f"{readable_value(tensor)}, not a real number"
        value = tensor.item()
    if isinstance(value, complex):
        return f"the complex number {value}; the answer is real"
    try:
        number = float(value)
    except OverflowError:
        return f"{short_repr(value)}, too large for a float"
    except (TypeError, ValueError):
        return f"{short_repr(value)}, which is not a number"
    if not math.isfinite(number):
        return f"{number}, not a finite number"
    return number


def nested_significant(values: object) -> object:
    """Floats, in nested lists, cut to 7 significant digits (a float's repr then shows no float32 noise)."""
    if isinstance(values, list):
        return [nested_significant(v) for v in values]
    return float(f"{values:.7g}") if isinstance(values, float) else values


def close_enough(mine: torch.Tensor, expected: torch.Tensor) -> bool:
    """Equal within TENSOR_ATOL + TENSOR_RTOL * |expected| everywhere (NaN where NaN is expected)."""
    return torch.allclose(mine, expected, atol=TENSOR_ATOL, rtol=TENSOR_RTOL, equal_nan=True)


def check_against_reference(exercise: str, function: Callable, cases: list[tuple], reference: Callable, hint: str, why: str = "") -> None:
    """Run ``function(*case)`` against ``reference(*case)`` for every case; one verdict (a PASS adds ``why``,
    what the text above the exercise must not give away)."""
    for case in cases:
        expected = reference(*case)
        got, ok = call_learner(exercise, function, *case)
        if not ok:
            return
        mine = as_tensor_like(got, expected)
        if isinstance(mine, str):
            return verdict(exercise, FAIL, f"for input {format_args(case)} you return {mine}. Hint: {hint}")
        if mine.shape != expected.shape:
            return verdict(exercise, FAIL, f"for input {format_args(case)} the shape is {tuple(mine.shape)}, expected {tuple(expected.shape)}")
        if not close_enough(mine, expected):
            return verdict(
                exercise, FAIL, f"for input {format_args(case)} you return {readable_value(mine)}, expected {readable_value(expected)}. Hint: {hint}"
            )
    return verdict(exercise, PASS, f"matches the reference on all {len(cases)} test inputs" + (f". {why}" if why else ""))


def check_score_function(function: Callable[[torch.Tensor, int], torch.Tensor]) -> None:
    """Exercise 01: ``function(logits [K], action)`` -> d log softmax(logits)[action] / d logits, [K]."""

    def reference(logits: torch.Tensor, action: int) -> torch.Tensor:
        leaf = logits.clone().requires_grad_(True)
        torch.log_softmax(leaf, dim=0)[action].backward()
        return leaf.grad

    cases = [(torch.tensor([0.0, 0.0, 0.0, 0.0]), 0), (torch.tensor([2.0, -1.0, 0.5]), 2), (torch.tensor([0.3, 1.7, -2.0, 0.0, 4.0]), 4)]
    return check_against_reference(
        "01_score_function",
        function,
        cases,
        reference,
        "differentiate log pi(a) = theta_a - log sum_k exp(theta_k) with respect to each theta_k",
        "The score of a softmax policy is onehot(a) - softmax(theta): push the chosen answer up, every answer down by its probability",
    )


def check_rloo(function: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Exercise 02: ``function(rewards [P, G])`` -> leave-one-out advantages [P, G]."""
    cases = [
        (torch.tensor([[1.0, 0.0, 0.0, 1.0]]),),
        (torch.tensor([[1.0, 0.0], [0.0, 0.0]]),),
        (torch.tensor([[0.2, 0.9, 0.4], [5.0, 5.0, 6.0]]),),
        (torch.rand(4, 8, generator=torch.Generator().manual_seed(0)),),
    ]
    return check_against_reference(
        "02_rloo",
        function,
        cases,
        lambda rewards: compute_advantages(rewards, "rloo"),
        "subtract from r_i the mean of the *other* G-1 rewards: (sum(r) - r_i) / (G - 1)",
    )


def check_k3(function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Exercise 02: ``function(logprobs, ref_logprobs)`` (same shape) -> per-token k3 KL estimate."""
    generator = torch.Generator().manual_seed(1)
    cases = [
        (torch.tensor([-1.0, -0.5, -2.0]), torch.tensor([-1.0, -0.7, -1.2])),
        (-torch.rand(2, 5, generator=generator) * 3, -torch.rand(2, 5, generator=generator) * 3),
    ]
    return check_against_reference(
        "02_k3", function, cases, kl_k3, "with log_ratio = ref_logprobs - logprobs, k3 = exp(log_ratio) - log_ratio - 1 (never negative)"
    )


def check_predicted_numbers(exercise: str, predictions: dict | None, expected: dict[str, float], hints: dict[str, str], why: str) -> None:
    """An exercise with several numbers worked out by hand: ``predictions`` {name: number} against
    ``expected`` (each within BY_HAND_ATOL: rounded to two decimals is not enough); the first wrong one
    fails with its hint; all right prints ``why``, the idea the numbers show."""
    names = ", ".join(expected)
    if predictions is None:
        return verdict(exercise, NOT_ATTEMPTED, f"set the prediction to a dict of numbers with the keys {names}")
    if not isinstance(predictions, dict) or set(predictions) != set(expected):
        keys = sorted(map(str, predictions)) if isinstance(predictions, dict) else None
        given = f"the keys {', '.join(keys)}" if keys is not None else short_repr(predictions)
        return verdict(exercise, FAIL, f"you gave {given}. Hint: give a dict with exactly the keys {names}")
    for name, exact in expected.items():
        number = as_number(predictions[name])
        if isinstance(number, str):
            return verdict(exercise, FAIL, f"{name} is {number}. Hint: {hints[name]}")
        if abs(number - exact) > BY_HAND_ATOL:
            if abs(number - exact) < 10 * BY_HAND_ATOL:  # rounded to two decimals, or a digit off in the third
                return verdict(
                    exercise,
                    FAIL,
                    f"{name} = {number:.7g} is close but not right to three decimals: keep more digits, or let Python "
                    "work it out (write 1/3, not 0.33)",
                )
            return verdict(exercise, FAIL, f"{name} = {distinct(number, exact)[0]} is not it. Hint: {hints[name]}")
    return verdict(exercise, PASS, ", ".join(f"{name} = {exact:.4g}" for name, exact in expected.items()) + f". {why}")


def check_rloo_by_hand(predictions: dict | None) -> None:
    """Exercise 02c: the group [1, 0, 0, 0] by hand: the RLOO advantage of the right answer and of a
    wrong one, and how much larger RLOO's advantages are than mean-only's (G / (G - 1), whatever the rewards)."""
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    rloo, mean_only = compute_advantages(rewards, "rloo"), compute_advantages(rewards, "mean")
    expected = {"right": float(rloo[0, 0]), "wrong": float(rloo[0, 1]), "ratio_to_mean": float(rloo[0, 1] / mean_only[0, 1])}
    hints = {
        "right": "the right answer's baseline is the mean of the *other* three rewards, all 0",
        "wrong": "a wrong answer's others are one 1 and two 0s: its baseline is 1/3",
        "ratio_to_mean": "mean-only subtracts the mean of all four (1/4); write r_i - mean(others) in terms of r_i - mean(all)",
    }
    why = (
        "RLOO is mean-only scaled by G/(G-1) in every group: the same direction, only a larger step at small G "
        "(4/3 at G=4, 2 at G=2). So mean-only's gradient is RLOO's (unbiased) one shrunk by (G-1)/G, and at a fixed lr "
        "RLOO trains like mean-only with a G/(G-1) larger lr."
    )
    return check_predicted_numbers("02c_rloo_by_hand", predictions, expected, hints, why)


def check_k3_by_hand(predictions: dict | None) -> None:
    """Exercise 02: k1 and k3 for two sampled tokens by hand, one the policy now likes more than the
    reference (pi 0.9, pi_ref 0.3) and one it likes less (pi 0.1, pi_ref 0.3)."""
    pi, ref = torch.tensor([0.9, 0.1]), torch.tensor([0.3, 0.3])
    k1, k3 = (pi.log() - ref.log()).tolist(), kl_k3(pi.log(), ref.log()).tolist()
    expected = {"k1_liked": k1[0], "k3_liked": k3[0], "k1_disliked": k1[1], "k3_disliked": k3[1]}
    hints = {
        "k1_liked": "k1 = log pi - log pi_ref = log(0.9 / 0.3)",
        "k3_liked": "k3 = x - log x - 1 with x = pi_ref / pi = 1/3 (the reference over the policy, not the other way round)",
        "k1_disliked": "k1 = log(0.1 / 0.3): a token the policy likes less than the reference gives a negative k1",
        "k3_disliked": "x = pi_ref / pi = 3 here: k3 = 3 - log 3 - 1",
    }
    why = (
        "k1 is negative for a token the policy likes less than the reference, so single tokens can cancel; "
        "k3 is never negative and weighs that token more (0.90 against 0.43), though both average to the same KL over tokens sampled from pi."
    )
    return check_predicted_numbers("02_k3_by_hand", predictions, expected, hints, why)


def check_zero_std_groups(function: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Exercise 04: ``function(rewards [P, G])`` -> bool [P], True where a group's rewards are all equal.
    Float32 copies of one reward are equal, yet torch's std of them need not be 0 (04b), so a test on
    the std fails here, with or without a threshold."""
    copies, close_pair = torch.full((1, 16), 100.7), torch.tensor([[0.5, 0.5 + 1e-6]])
    cases = [
        (torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]),),
        (torch.tensor([[0.0, 0.0], [0.5, 0.5 + 1e-6], [3.0, 3.0]]),),
        (torch.tensor([[0.25, 0.25, 0.25, 0.25]]),),
        (copies,),  # one group per case: torch takes a rounding path for a single row
        (torch.full((1, 8), 5 + 1 / 3),),
    ]

    def reference(rewards: torch.Tensor) -> torch.Tensor:
        return (rewards == rewards[:, :1]).all(dim=1)

    return check_against_reference(
        "04_zero_std_groups",
        function,
        cases,
        reference,
        "a group has no spread exactly when every reward equals the first one; compare the rewards, not their std: "
        f"torch gives 16 float32 copies of 100.7 a std of {float(copies.std(dim=1)[0]):.1e} (the mean is rounded), "
        f"more than that of 0.5 and 0.5 + 1e-6 ({float(close_pair.std(dim=1)[0]):.1e}), which do differ",
    )


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
    number = as_number(prediction)
    if isinstance(number, str):
        return verdict(exercise, FAIL, f"your prediction is {number}. Hint: set it to one number, e.g. largest = 3.1")
    # a numeric cross-check of the formula: one odd reward out, computed by the library
    rewards = torch.zeros(1, group_size)
    rewards[0, 0] = 1.0
    measured = float(compute_advantages(rewards, "zscore", std_eps=0.0).abs().max())
    exact = largest_zscore(group_size)
    if abs(number - exact) <= PREDICTION_RTOL * exact:  # 2.5 (two significant digits) passes, 2.4 does not
        return verdict(
            exercise, PASS, f"for G={group_size} the bound is (G-1)/sqrt(G) = {exact:.4f} (the library gives {measured:.4f} for one 1 among 0s)"
        )
    if number > exact:
        return verdict(
            exercise,
            FAIL,
            f"you predicted {number:.7g}, above the bound: no group of {group_size} rewards reaches it, whatever the rewards. "
            "Hint: the extreme group is one reward apart from G-1 equal others, say one 1 among G-1 zeros: its mean is 1/G and "
            "its Bessel std is 1/sqrt(G); work out (1 - 1/G) / std",
        )
    return verdict(
        exercise,
        FAIL,
        f"you predicted {distinct(number, measured)[0]}; one 1 among {group_size - 1} zeros already gives more. "
        "Hint: the extreme group is one 1 among G-1 zeros: its mean is 1/G and its Bessel std is 1/sqrt(G); work out (1 - 1/G) / std",
    )


# --- exercise 02: the whole GRPO loss ----------------------------------------------------------------------

LOSS_HINTS = {
    "advantages": "A = (r - mean of its group) / (std + std_eps), with torch.std's Bessel correction (std_ddof=1), one group per row",
    "per_token": "per token: -min(ratio * A, clip(ratio, 1 - clip_eps, 1 + clip_eps) * A) + kl_coef * k3, with "
    "ratio = exp(logprobs - old_logprobs) and each answer's A on every one of its tokens",
    "loss": "seq_mean: each answer's mean over its own tokens (mask), then the mean over answers; token_mean: the sum over "
    "all answer tokens / their number; token_sum_norm: the token sum / (answers x La)",
}
# (what the case tests, the options that differ from the defaults, which inputs: rewards and whether pi_old is stale,
#  the hint for the piece it tests)
LOSS_CASES = (
    ("0/1 rewards, Bessel's std, eps added", {"kl_coef": 0.0}, ("binary", False), ("advantages", LOSS_HINTS["advantages"])),
    (
        "a group of equal rewards",
        {"kl_coef": 0.0},
        ("with a tied group", False),
        ("advantages", "a group whose rewards are all equal has std 0: (r - mean) / (0 + std_eps) must be exactly 0, not 0/0"),
    ),
    (
        "partial credit, population std",
        {"std_ddof": 0, "kl_coef": 0.0},
        ("partial credit", False),
        ("advantages", "std_ddof=0 divides the variance by G, std_ddof=1 by G - 1: torch.std(..., correction=std_ddof)"),
    ),
    (
        "partial credit, batch std",
        {"std_scope": "batch", "kl_coef": 0.0},
        ("partial credit", False),
        ("advantages", "std_scope='batch': centre by each group's own mean, but divide by ONE std of all P*G rewards"),
    ),
    (
        "ratio 1 (old_logprobs = logprobs), no KL",
        {"kl_coef": 0.0},
        ("binary", False),
        ("per_token", "with old_logprobs equal to logprobs the ratio is 1 and the per-token loss is just -A on the answer's tokens"),
    ),
    (
        "a stale sampler (ratios leave the clip range), no KL",
        {"kl_coef": 0.0},
        ("binary", True),
        (
            "per_token",
            "ratio = exp(logprobs - old_logprobs); take the min of ratio * A and clip(ratio, 1 - clip_eps, 1 + clip_eps) * A, "
            "then negate (a loss is minimised)",
        ),
    ),
    (
        "a stale sampler, with the k3 KL",
        {"kl_coef": 0.04},
        ("binary", True),
        ("per_token", "add kl_coef * k3 with k3 = exp(ref_logprobs - logprobs) - (ref_logprobs - logprobs) - 1"),
    ),
    ("aggregation seq_mean (GRPO)", {"loss_agg": "seq_mean"}, ("binary", True), ("loss", LOSS_HINTS["loss"])),
    ("aggregation token_mean (DAPO)", {"loss_agg": "token_mean"}, ("binary", True), ("loss", LOSS_HINTS["loss"])),
    ("aggregation token_sum_norm (Dr. GRPO)", {"loss_agg": "token_sum_norm"}, ("binary", True), ("loss", LOSS_HINTS["loss"])),
)
PIECES = {"advantages": "advantages", "per_token": "per-token loss", "loss": "aggregated loss"}
LOSS_DEFAULTS = {"std_eps": 1e-4, "std_ddof": 1, "std_scope": "group", "clip_eps": 0.2, "kl_coef": 0.04, "loss_agg": "seq_mean"}


def loss_batch(prompts_per_step: int = 4, group_size: int = 4, seed: int = 0) -> dict:
    """A real batch for the loss exercise: answers sampled from a slightly perturbed reference policy,
    their log-probs under it (``logprobs``), under the reference (``ref_logprobs``) and under a
    stale sampler (``stale_logprobs``, so that ratios leave the clip range), three kinds of rewards
    [P, G] and the mask [P*G, La]; responses are grouped by prompt (row p*G + i)."""
    from ..checks.checkpoints import load_reference_policy
    from ..core.model import sample, token_logprobs
    from ..task import ProblemSampler, Task

    generator = torch.Generator().manual_seed(seed)
    task = Task.parse("2d+")
    policy, reference = load_reference_policy("default"), load_reference_policy("default")
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator))
        prompts = ProblemSampler(task, seed).sample(prompts_per_step).prompts.repeat_interleave(group_size, dim=0)
        answers, mask = sample(policy, prompts, task.max_answer_length, 1.0, torch.Generator().manual_seed(seed + 1))
        logprobs = token_logprobs(policy, prompts, answers)
        ref_logprobs = token_logprobs(reference, prompts, answers)
    shape = (prompts_per_step, group_size)
    binary = (torch.rand(shape, generator=generator) < 0.5).float()
    binary[0] = torch.tensor([1.0, 0.0] * (group_size // 2) + [1.0] * (group_size % 2))  # at least one mixed group
    tied = binary.clone()
    tied[-1] = 1.0
    return {
        "policy": policy,
        "prompts": prompts,
        "answers": answers,
        "mask": mask,
        "logprobs": logprobs,
        "ref_logprobs": ref_logprobs,
        "stale_logprobs": logprobs + 0.3 * torch.randn(logprobs.shape, generator=generator),
        "rewards": {"binary": binary, "with a tied group": tied, "partial credit": torch.rand(shape, generator=generator)},
    }


def reference_grpo_loss(batch: dict, rewards: torch.Tensor, old_logprobs: torch.Tensor, options: dict) -> tuple:
    """The library's answer: compute_advantages, then losses.py's policy_loss_terms and aggregate."""
    from ..core.config import TrainConfig
    from ..core.losses import aggregate, policy_loss_terms

    advantages = compute_advantages(rewards, "zscore", options["std_eps"], std_scope=options["std_scope"], std_ddof=options["std_ddof"])
    mask = batch["mask"]
    config = TrainConfig(clip_eps=options["clip_eps"], kl_coef=options["kl_coef"], loss_agg=options["loss_agg"])
    with torch.no_grad():
        per_token, _ = policy_loss_terms(
            batch["policy"], batch["prompts"], batch["answers"], mask, old_logprobs, batch["ref_logprobs"], advantages.reshape(-1, 1) * mask, config
        )
        loss = aggregate(per_token, mask, options["loss_agg"], mask.shape[0], float(mask.sum()), mask.shape[1])
    return advantages, per_token * mask, loss


def first_difference(got: torch.Tensor, expected: torch.Tensor) -> str:
    index = tuple(int(i) for i in torch.nonzero(~torch.isclose(got, expected, atol=TENSOR_ATOL, rtol=TENSOR_RTOL, equal_nan=True))[0])
    where = f" at index {list(index)}" if index else ""
    mine, theirs = distinct(float(got[index]), float(expected[index]), digits=5)
    return f"{mine}{where}, expected {theirs}"


def check_grpo_loss(function: Callable) -> None:
    """Exercise 02: ``function(rewards [P, G], logprobs, old_logprobs, ref_logprobs, mask [P*G, La], **options)``
    -> (advantages [P, G], per_token [P*G, La], loss []), checked against the trainer on a real batch,
    piece by piece: the verdict names the first piece that is wrong."""
    exercise = "02_grpo_loss"
    batch = loss_batch()
    for description, changes, (rewards_kind, stale), (piece, hint) in LOSS_CASES:
        options = {**LOSS_DEFAULTS, **changes}
        rewards = batch["rewards"][rewards_kind]
        old_logprobs = batch["stale_logprobs"] if stale else batch["logprobs"]
        args = (rewards, batch["logprobs"], old_logprobs, batch["ref_logprobs"], batch["mask"])
        expected = reference_grpo_loss(batch, rewards, old_logprobs, options)
        got, ok = call_learner(exercise, function, *args, **options)
        if not ok:
            return
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            return verdict(exercise, FAIL, "return three things: (advantages [P, G], per_token [P*G, La], loss, a number)")
        for name, value, theirs in zip(("advantages", "per_token", "loss"), got, expected):
            mine = as_tensor_like(value, theirs)
            if isinstance(mine, str):
                return verdict(exercise, FAIL, f"case '{description}': your {PIECES[name]} is {mine}. Hint: {LOSS_HINTS[name]}")
            if name == "per_token" and mine.shape == theirs.shape:
                mine = mine * batch["mask"]  # padding after the end of an answer does not count
            if mine.shape != theirs.shape:
                return verdict(exercise, FAIL, f"case '{description}': {name} has shape {tuple(mine.shape)}, expected {tuple(theirs.shape)}")
            if not close_enough(mine, theirs):
                piece_hint = hint if name == piece else LOSS_HINTS[name]
                shown = f"rewards {readable_value(rewards)}; " if name == "advantages" else ""
                return verdict(
                    exercise,
                    FAIL,
                    f"the first wrong piece is the {PIECES[name]} in case '{description}' "
                    f"(options {changes or 'the defaults'}; {shown}you give {first_difference(mine, theirs)}). Hint: {piece_hint}",
                )
    return verdict(exercise, PASS, f"advantages, per-token loss and all three aggregations match the trainer on {len(LOSS_CASES)} cases")


# --- exercise 04: the weight z-scoring puts on a prompt -------------------------------------------------------


def zscore_weight_exact(p: float, group_size: int) -> float:
    """E[z-scored group gradient] / E[mean-centred group gradient] for a prompt answered right with
    probability p, by enumerating the number k of right answers (0/1 rewards, Bessel's std, eps 1e-4)."""
    from math import comb

    totals = {"zscore": 0.0, "mean": 0.0}
    for k in range(group_size + 1):
        rewards = torch.tensor([[1.0] * k + [0.0] * (group_size - k)])
        for baseline in totals:
            advantages = compute_advantages(rewards, baseline, std_eps=1e-4)[0]
            totals[baseline] += comb(group_size, k) * p**k * (1 - p) ** (group_size - k) * float((advantages * (rewards[0] - p)).mean())
    return totals["zscore"] / totals["mean"]


def check_zscore_weight(function: Callable[[float], float]) -> None:
    """Exercise 04: ``function(p)`` -> the weight z-scoring gives a prompt with success rate p, relative to
    mean-centring, for large G; checked against the exact expectation at G = 256 (within 3%)."""
    exercise, group_size = "04_zscore_weight", 256
    for p in (0.5, 0.2, 0.9, 0.05):
        got, ok = call_learner(exercise, function, p)
        if not ok:
            return
        expected = zscore_weight_exact(p, group_size)
        value = as_number(got)
        if isinstance(value, str):
            return verdict(exercise, FAIL, f"for p={p} you return {value}. Hint: return one number, the relative weight")
        if not abs(value - expected) <= ZSCORE_WEIGHT_RTOL * expected:
            mine, exact = distinct(value, expected)
            return verdict(
                exercise,
                FAIL,
                f"for p={p} you return {mine}; the exact expectation at G={group_size} is {exact}. "
                "Hint: for large G the group's std is close to the Bernoulli std sqrt(p (1 - p)), and z-scoring is "
                "mean-centring divided by it",
            )
    return verdict(
        exercise,
        PASS,
        f"matches the exact expectation at G={group_size} for p = 0.05, 0.2, 0.5, 0.9 "
        f"(p=0.05 weighs {zscore_weight_exact(0.05, group_size) / zscore_weight_exact(0.5, group_size):.2f}x a balanced prompt)",
    )


# --- exercise 05: the EMA baseline ----------------------------------------------------------------------------


def check_ema_baseline(function: Callable[[list, float], list]) -> None:
    """Exercise 05: ``function(reward_batches, decay)``: a list of [P, G] reward tensors, one per step ->
    the list of advantages the EMA baseline gives at each step (the trainer's ``EMABaseline``)."""
    from ..core.advantages import EMABaseline

    def reference(batches: list, decay: float) -> list:
        ema, out = EMABaseline(decay), []
        for rewards in batches:
            out.append(compute_advantages(rewards, "ema", ema_value=ema.current(rewards)))
            ema.update(rewards)
        return out

    generator = torch.Generator().manual_seed(3)
    cases = [
        ([torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]]), torch.tensor([[0.0, 0.0]])], 0.9),
        ([(torch.rand(4, 2, generator=generator) < 0.6).float() for _ in range(5)], 0.5),
        ([torch.rand(2, 3, generator=generator) for _ in range(4)], 0.0),
    ]
    hint = (
        "the baseline starts at the first batch's mean; each step uses the current b (A = r - b) and only then updates "
        "b <- decay * b + (1 - decay) * mean of this batch"
    )
    for batches, decay in cases:
        expected = reference(batches, decay)
        got, ok = call_learner("05_ema_baseline", function, batches, decay)
        if not ok:
            return
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            return verdict("05_ema_baseline", FAIL, f"return one advantage tensor per step ({len(expected)} for this input), got {short_repr(got)}")
        for step, (value, theirs) in enumerate(zip(got, expected)):
            mine = as_tensor_like(value, theirs)
            if isinstance(mine, str):
                return verdict("05_ema_baseline", FAIL, f"decay={decay}: at step {step} you return {mine}. Hint: {hint}")
            if mine.shape != theirs.shape or not close_enough(mine, theirs):
                return verdict(
                    "05_ema_baseline",
                    FAIL,
                    f"decay={decay}, rewards per step {'; '.join(readable_value(b) for b in batches)}: at step {step} "
                    f"you return {readable_value(mine)}, expected {readable_value(theirs)}. Hint: {hint}",
                )
    return verdict("05_ema_baseline", PASS, f"matches the trainer's EMABaseline on all {len(cases)} reward sequences")


def check_gae(function: Callable[[float, torch.Tensor, float], torch.Tensor]) -> None:
    """Exercise 05: ``function(reward, values [La], lam)`` -> GAE advantages [La] of one response
    whose reward arrives at its last token (gamma = 1, V after the last token = 0)."""
    cases = [
        (1.0, torch.tensor([0.5, 0.5, 0.5]), 1.0),
        (1.0, torch.tensor([0.2, 0.6, 0.9]), 0.95),
        (0.0, torch.tensor([0.4, 0.1, 0.3, 0.8]), 0.0),
        (1.0, torch.zeros(4), 0.5),
    ]

    def reference(reward: float, values: torch.Tensor, lam: float) -> torch.Tensor:
        advantages, _ = gae(torch.tensor([reward]), values[None, :], torch.ones(1, len(values)), 1.0, lam)
        return advantages[0]

    return check_against_reference(
        "05_gae",
        function,
        cases,
        reference,
        "go backwards: delta_t = r_t + V_{t+1} - V_t (r_t is 0 except at the last token, V after the end is 0), A_t = delta_t + lam * A_{t+1}",
    )


def check_prediction(exercise: str, prediction: str | None, choices: Sequence[str], measured: str, evidence: str) -> None:
    """Record a predict-then-run answer next to what the measurement says. ``measured`` is one of
    ``choices``, computed by the notebook from the run or the result file; ``evidence`` quotes the numbers."""
    if prediction is None:
        return verdict(exercise, NOT_ATTEMPTED, f"set your prediction to one of {', '.join(map(repr, choices))} before reading on")
    if not isinstance(prediction, str) or prediction not in choices:
        return verdict(exercise, FAIL, f"prediction={short_repr(prediction)} is not one of the choices {', '.join(map(repr, choices))}")
    outcome = "it matches the measurement" if prediction == measured else f"the measurement says {measured!r}; the next section explains why"
    return verdict(exercise, RECORDED, f"you predicted {prediction!r}: {outcome}. Evidence: {evidence}")


def check_run_prediction(
    exercise: str, prediction: str | None, configs: dict, metric: str, summary: str = "mean", tolerance: float = 0.0, same: str = "about the same"
) -> None:
    """The lab's predict-then-run exercises (notebook 03), headless: train each of the two ``configs``
    ({label: TrainConfig}), summarise ``metric`` over each run (``mean`` over the steps that log it,
    or its ``last`` value) and record the prediction against which label came out higher (``same``
    when they are within ``tolerance``)."""
    from ..trainer import train

    if len(configs) != 2:
        raise ValueError(f"configs has {len(configs)} runs: give exactly two, {{label: TrainConfig}}")
    values = {}
    for label, config in configs.items():
        result = train(config)
        series = [record[metric] for record in result.history if record.get(metric) is not None]
        if result.status == "failed" or not series:
            return verdict(exercise, FAIL, f"the run {label!r} did not produce {metric!r} ({result.status}: {result.message})")
        values[label] = series[-1] if summary == "last" else sum(series) / len(series)
    (first, a), (second, b) = values.items()
    measured = same if abs(a - b) <= tolerance else first if a > b else second
    steps = next(iter(configs.values())).steps
    shown_a, shown_b = distinct(a, b, digits=3)
    evidence = f"{metric} ({summary} over a {steps}-step run, seed {next(iter(configs.values())).seed}): {first} {shown_a}, {second} {shown_b}"
    if tolerance > 0:
        evidence += f" (a difference within {tolerance:g} counts as {same!r})"
    return check_prediction(exercise, prediction, (first, second, same), measured, evidence)


# --- exercise 02b: find the bug in a GRPO loss ---------------------------------------------------

BUGGY_LOSS_LINES = (
    "advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)  # rewards [P, G]",
    "token_advantages = advantages.reshape(-1, 1) * mask  # [P*G, La]",
    "ratio = torch.exp(logprobs - logprobs.detach())",
    "loss = -((ratio * token_advantages).sum(dim=1) / mask.sum(dim=1).clamp(min=1)).mean()",
)
BUGGY_LINE = 1  # the batch's mean and std instead of each group's


def check_find_the_bug(bug_line: int | None) -> None:
    """Exercise 02b: which line of BUGGY_LOSS_LINES (1-4) is wrong? The verdict shows what the bug
    does to two groups, one all right but one answer, one all wrong but one answer."""
    exercise = "02b_find_the_bug"
    if bug_line is None:
        return verdict(exercise, NOT_ATTEMPTED, "set bug_line to 1, 2, 3 or 4")
    if bug_line not in (1, 2, 3, 4):
        return verdict(exercise, FAIL, f"bug_line={bug_line!r} is not one of 1, 2, 3, 4")
    rewards = torch.tensor([[1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    buggy = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    right = compute_advantages(rewards, "zscore")

    def rounded(advantages: torch.Tensor) -> str:  # 3 decimals: the pattern, not float32's last digits
        return str([[round(value, 3) for value in row] for row in advantages.tolist()])

    evidence = (
        f"for the groups {rounded(rewards)} line 1 gives {rounded(buggy)}, each group on its own gives {rounded(right)}: "
        "with the batch's mean (0.5), every answer of the mostly-right group counts as good and every answer of the mostly-wrong one as bad, "
        "so the update pushes on which prompt was easy, not on which answer was better"
    )
    if bug_line == BUGGY_LINE:
        return verdict(exercise, PASS, f"line 1 centres and scales by the whole batch, not by each group (dim=1, keepdim=True): {evidence}")
    why_fine = {
        2: "line 2 gives every token of answer i its answer's advantage and 0 after the answer ends, as GRPO does",
        3: "line 3 is the ratio with the sampling policy equal to this one: its value is 1 and its gradient is the score, as wanted",
        4: "line 4 is GRPO's aggregation: each answer's token mean, then the mean over answers",
    }
    return verdict(exercise, FAIL, f"{why_fine[bug_line]}. Hint: look at which rewards each mean and std is taken over")
