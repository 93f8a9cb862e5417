"""Throw bad inputs at grpo-lab and count how many end in a traceback instead of one clear line.

    python scripts/fuzz_inputs.py            # about a minute on 2 cores; prints a tally per target

Targets: TrainConfig (every knob x odd values), the ``train`` command line (every flag x odd
strings; training itself is stubbed out, so a value that passes counts as "accepted"),
compute_advantages (odd arguments and reward tensors), the exercise checkers (learner functions
returning odd values or raising, odd predictions: the outcome must be one verdict), load_policy (byte flips, truncations and
edits of a saved checkpoint), load_result (damaged result files), resolve_device. An outcome is
"clean" when it is accepted, or refused with one line (ValueError / FileNotFoundError naming what
is wrong, or exit 2 with one line on stderr); anything else is a "traceback".
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
import tempfile
from collections import Counter
from dataclasses import fields
from pathlib import Path

import numpy as np
import torch

import grpo_lab.cli as cli
from grpo_lab import TrainConfig, compute_advantages
from grpo_lab.course import exercises
from grpo_lab.experiments import load_result
from grpo_lab.policy import TinyTransformer, load_policy, resolve_device, save_policy

ROOT = Path(__file__).resolve().parent.parent
ODD_VALUES = [
    "x",
    "",
    None,
    True,
    False,
    float("nan"),
    float("inf"),
    -float("inf"),
    -1,
    0,
    1,
    2**31,
    10**400,
    -(10**400),
    1e-300,
    0.5,
    [],
    {},
    (1,),
    b"1",
    object(),
    "default",
    "1e-4",
    " 8",
    "cuda",
    "nan",
]
ODD_STRINGS = [
    "",
    "x",
    "-1",
    "0",
    "1",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "1e999",
    "True",
    "no",
    "maybe",
    "999999999999999999999",
    "cuda",
    "cuda:99",
    "mps",
    "tpu",
    "..",
    "/",
    "2d/",
    "9d+",
    "🙂",
]
tally: dict[str, Counter] = {}


def record(target: str, outcome: str, detail: str = "") -> None:
    tally.setdefault(target, Counter())[outcome] += 1
    if outcome == "traceback":
        print(f"  traceback in {target}: {detail}", file=sys.stderr)


def attempt(target: str, action, detail: str) -> None:
    try:
        action()
        record(target, "accepted")
    except (ValueError, FileNotFoundError) as error:
        record(target, "clean" if "\n" not in str(error) else "traceback", f"{detail}: multi-line {error!r}")
    except Exception as error:  # noqa: BLE001 - counting exactly these is the point
        record(target, "traceback", f"{detail}: {type(error).__name__}: {error}")


def fuzz_config() -> None:
    for config_field in fields(TrainConfig):
        for value in ODD_VALUES:
            attempt(
                "TrainConfig",
                lambda name=config_field.name, value=value: TrainConfig(**{name: value}).validate().to_dict(),
                f"{config_field.name}={value!r}",
            )


def fuzz_cli() -> None:
    def stub_train(config, on_step=None):
        raise SystemExit(0)  # the input passed every check: do not spend minutes training it

    cli.train = stub_train
    for config_field in fields(TrainConfig):
        for text in ODD_STRINGS:
            argv = ["train", "--quiet", "--" + config_field.name.replace("_", "-"), text]
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    code = cli.main(argv)
            except SystemExit as done:
                code = done.code
            except Exception as error:  # noqa: BLE001
                record("CLI train", "traceback", f"{argv}: {type(error).__name__}: {error}")
                continue
            lines = err.getvalue().strip().splitlines()
            if code == 0:
                record("CLI train", "accepted")
            else:
                record("CLI train", "clean" if code == 2 and len(lines) == 1 else "traceback", f"{argv}: exit {code}, {lines}")


def fuzz_advantages() -> None:
    rewards = [
        torch.rand(4, 8),
        torch.full((4, 8), 5 + 1 / 3),
        torch.zeros(0, 8),
        torch.rand(8),
        torch.rand(2, 1),
        torch.tensor([[1.0, float("nan")]]),
        torch.tensor([[1e39, 0.0]], dtype=torch.float64),
        torch.ones(3, 4, dtype=torch.long),
        torch.rand(2, 3, 4),
        torch.rand(2, 4).to(torch.complex64),
        torch.tensor([[3e38, -3e38, 0.0, 3e38]]),
        torch.tensor([[1e20, 0.0, 1e20, -1e20]]),
    ]
    options = (
        [{"baseline": b} for b in ("mean", "zscore", "rloo", "none", "ema", "critic", "median", None, 3)]
        + [{"std_eps": e} for e in (0.0, -1.0, float("nan"), "1e-4", 1e-46, 5e-324, 10**400, np.float32(1e-4), torch.tensor(1e-4))]
        + [{"baseline": "ema", "ema_value": v} for v in (float("nan"), float("inf"), "0.5", None, np.float32(0.5))]
        + [{"std_ddof": d} for d in (0, 1, 2, True)]
        + [{"std_scope": s} for s in ("group", "batch", "prompt")]
        + [{"eps_mode": m} for m in ("add", "clamp", "max")]
    )
    for reward in rewards:
        for option in options:
            attempt(
                "compute_advantages", lambda reward=reward, option=option: compute_advantages(reward, **option), f"{tuple(reward.shape)} {option}"
            )


def fuzz_checkers() -> None:
    """Every exercise checker given learner functions that return each odd value (or raise), and every
    prediction checker given each odd value: the outcome must be one verdict line, never an exception."""
    code_checkers = [getattr(exercises, name) for name in dir(exercises) if name.startswith("check_") and name not in NOT_CODE_CHECKERS]
    answers = [lambda *args, value=value, **options: value for value in ODD_VALUES] + [
        lambda *args, **options: torch.tensor([1, 0]),
        lambda *args, **options: torch.ones(2, 2, dtype=torch.complex64),
        lambda *args, **options: (None, None, None),
        lambda *args, **options: [None] * 5,
        lambda *args, **options: 1 / 0,
        lambda *args, **options: torch.round(torch.tensor([1]), decimals=2),  # torch's own NotImplementedError
        "not a function",
    ]
    tries = [(checker.__name__, checker, answer) for checker in code_checkers for answer in answers]
    tries += [("check_largest_zscore", exercises.check_largest_zscore, value) for value in ODD_VALUES + [np.float32(2.47), torch.tensor([2.5, 1.0])]]
    tries += [("check_prediction", lambda value: exercises.check_prediction("x", value, ("a", "b"), "a", ""), value) for value in ODD_VALUES]
    for name, checker, answer in tries:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                checker(answer)
        except Exception as error:  # noqa: BLE001 - counting exactly these is the point
            record("exercise checkers", "traceback", f"{name}({answer!r:.60}): {type(error).__name__}: {error}")
            continue
        lines = out.getvalue().strip().splitlines()
        one_verdict = len(lines) == 1 and lines[0].startswith("[")
        record("exercise checkers", "clean" if one_verdict else "traceback", f"{name}({answer!r:.60}): {lines}")


NOT_CODE_CHECKERS = ("check_largest_zscore", "check_prediction", "check_run_prediction")  # they take values, not functions


def fuzz_checkpoints(folder: Path, count: int) -> None:
    source = save_policy(TinyTransformer(), folder / "good.pt")
    data = source.read_bytes()
    generator = random.Random(0)
    for index in range(count):
        damaged = bytearray(data)
        kind = index % 3
        if kind == 0:  # flip a few bytes anywhere
            for _ in range(generator.randint(1, 4)):
                damaged[generator.randrange(len(damaged))] ^= 1 << generator.randrange(8)
        elif kind == 1:  # cut the file short
            damaged = damaged[: generator.randrange(len(damaged))]
        else:  # overwrite a run of bytes with noise
            start = generator.randrange(len(damaged) - 64)
            damaged[start : start + 64] = bytes(generator.randrange(256) for _ in range(64))
        path = folder / f"damaged{index}.pt"
        path.write_bytes(bytes(damaged))

        def load_and_run(path=path):
            policy = load_policy(path)
            with torch.no_grad():
                logits = policy(torch.randint(0, 16, (2, 12)))
            if not torch.isfinite(logits).all():  # loaded without complaint but cannot run: the failure counted here
                raise RuntimeError("loaded, but the forward pass is not finite")

        attempt("load_policy", load_and_run, f"{path.name} (kind {kind})")


def fuzz_results(folder: Path) -> None:
    good = (ROOT / "data" / "results" / "variance.json").read_text()
    variants = [
        "",
        " ",
        "{",
        "[]",
        "null",
        "1",
        '"x"',
        "{}",
        '{"name": "variance"}',
        good[: len(good) // 2],
        good.replace('"cells"', '"cellz"'),
        good.replace('"seeds":', '"seeds": "many", "x":'),
        "\x00\x01",
        good.replace('"summary"', '"summ"'),
    ]
    for index, text in enumerate(variants):
        directory = folder / f"results{index}"
        directory.mkdir()
        (directory / "variance.json").write_text(text)
        attempt("load_result", lambda directory=directory: load_result("variance", directory=directory), f"variant {index}")


def fuzz_devices() -> None:
    for device in ["auto", "cpu", "cuda", "cuda:0", "cuda:99", "mps", "tpu", "", "cpu:0", "cuda:-1", "meta", 0, None, "CUDA", "gpu"]:
        attempt("resolve_device", lambda device=device: resolve_device(device), repr(device))


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        fuzz_config()
        fuzz_cli()
        fuzz_advantages()
        fuzz_checkers()
        fuzz_checkpoints(Path(folder), 300)
        fuzz_results(Path(folder))
        fuzz_devices()
    print(f"{'target':20} {'tried':>6} {'accepted':>9} {'clean':>6} {'traceback':>10}")
    for target, counts in tally.items():
        print(f"{target:20} {sum(counts.values()):6} {counts['accepted']:9} {counts['clean']:6} {counts['traceback']:10}")
    total = sum((counts for counts in tally.values()), Counter())
    print(f"{'all':20} {sum(total.values()):6} {total['accepted']:9} {total['clean']:6} {total['traceback']:10}")
    print(json.dumps({"tried": sum(total.values()), "tracebacks": total["traceback"]}))
    return 1 if total["traceback"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
