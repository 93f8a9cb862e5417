"""Throw bad inputs at grpo-lab and count how many end in a traceback instead of one clear line.

    python scripts/fuzz_inputs.py            # about a minute on 2 cores; prints a tally per target

Targets: TrainConfig (every knob x odd values), the ``train`` command line (every flag x odd
strings; training itself is stubbed out, so a value that passes counts as "accepted"),
compute_advantages (odd arguments and reward tensors), the exercise checkers (learner functions
returning odd values or raising, odd predictions: the outcome must be one verdict), load_policy
(byte flips, truncations and edits of a saved checkpoint; a single-bit flip that loads with changed
weights counts as a traceback: silent corruption), load_result (damaged result files, then their
figure and the claims that read them), resolve_device, destinations (character devices and FIFOs,
names around the file system's limit; a device replaced by a regular file, or a write that fails
after the check passed, counts as a traceback), data/reference/checksums.json, eval sets and the
course's text files (random values put in random places). An outcome is "clean" when it is
accepted, or refused with one line (ValueError / FileNotFoundError naming what is wrong, or exit 2
with one line on stderr); anything else is a "traceback".
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import stat
import sys
import tempfile
from collections import Counter
from dataclasses import fields
from pathlib import Path

import matplotlib
import numpy as np
import torch

matplotlib.use("Agg")

import grpo_lab.checks.checkpoints as policy_module  # noqa: E402
import grpo_lab.cli as cli  # noqa: E402
import grpo_lab.course.drill as drill  # noqa: E402
import grpo_lab.course.drill_answers as drill_answers  # noqa: E402
import grpo_lab.course.text_files as text_files  # noqa: E402
from grpo_lab import TrainConfig, TrainResult, compute_advantages  # noqa: E402
from grpo_lab.checks.checkpoints import load_policy, reference_path, save_policy, shipped_checksums  # noqa: E402
from grpo_lab.checks.config_rules import validate_config
from grpo_lab.checks.devices import resolve_device  # noqa: E402
from grpo_lab.checks.files import check_destination, name_max, write_atomically  # noqa: E402
from grpo_lab.core.model import TinyTransformer  # noqa: E402
from grpo_lab.course import exercises  # noqa: E402
from grpo_lab.experiments import EXPERIMENTS, experiment_figure, load_result  # noqa: E402
from grpo_lab.experiments.claims import CLAIMS, finding_in, judged  # noqa: E402
from grpo_lab.task import Task, read_eval_set  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from bad_values import ODD_VALUES  # noqa: E402  (the tests' table: one list of odd values)

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
                lambda name=config_field.name, value=value: validate_config(TrainConfig(**{name: value})).to_dict(),
                f"{config_field.name}={value!r}",
            )


def fuzz_cli() -> None:
    def stub_train(config, on_step=None, on_batch=None):
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
    original = TinyTransformer()
    source = save_policy(original, folder / "good.pt")
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
            if any(not torch.equal(a, b) for a, b in zip(original.state_dict().values(), policy.state_dict().values())):
                raise RuntimeError("loaded with changed weights (silent corruption)")

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


REPLACEMENTS = [5, None, "x", [], {}, -1, True, 1e308, [1, 2], {"a": 1}, "NaN-token", "deep"]


def json_places(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value (keys of dicts, the first three items of lists), as key paths."""
    places = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            places += json_places(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            places += json_places(item, prefix + (index,))
    return places


def damaged_json(value: object, generator: random.Random) -> str:
    """``value`` as JSON text with one random place replaced by a random odd value (NaN, a deep nest, ...)."""
    place, new = generator.choice(json_places(value)), generator.choice(REPLACEMENTS)
    marker = "__damage__"
    if place:
        value = copy.deepcopy(value)
        node = value
        for key in place[:-1]:
            node = node[key]
        node[place[-1]] = marker if new in ("NaN-token", "deep") else new
    else:
        value = marker if new in ("NaN-token", "deep") else new
    text = json.dumps(value, ensure_ascii=False)
    return text.replace(f'"{marker}"', "NaN" if new == "NaN-token" else "[" * 50_000 + "]" * 50_000)


def fuzz_damaged_results(folder: Path, per_experiment: int) -> None:
    """Random damage in every experiment's result file: load it, draw its figure, evaluate the claims
    that read it; each step must work or refuse with one line."""
    generator = random.Random(1)
    shipped = {other: load_result(other) for claim in CLAIMS for other in claim.experiments}
    for name in EXPERIMENTS:
        good = json.loads((ROOT / "data" / "results" / f"{name}.json").read_text())
        for index in range(per_experiment):
            directory = folder / f"damaged-{name}-{index}"
            directory.mkdir()
            (directory / f"{name}.json").write_text(damaged_json(good, generator))

            def use(directory=directory, name=name):
                result = load_result(name, directory=directory)
                experiment_figure(name, result)
                for claim in CLAIMS:
                    if name in claim.experiments:
                        judged(claim, finding_in(claim, {**shipped, name: result}), 0.05)

            attempt("damaged results", use, f"{name} damage {index}")


def fuzz_destinations(folder: Path) -> None:
    """Character devices (a null and a full one, made with mknod when root), a FIFO, and file names
    around the file system's limit, as --out of ``train`` (training stubbed to two steps)."""

    def quick_train(config, on_step=None, on_batch=None):
        return TrainResult(config=config, history=[{"step": 0, "eval_accuracy": 0.5}, {"step": 1, "reward": 0.5}])

    cli.train = quick_train
    targets = []
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        for name, minor in (("null", 3), ("full", 7)):
            os.mknod(folder / name, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
            targets.append(folder / name)
    longest = name_max(folder)
    targets += [folder / ("n" * length + ".json") for length in range(longest - 30, longest + 3, 3)]
    for target in targets:
        was_device = target.name in ("null", "full")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["train", "--quiet", "--out", str(target)])
        lines = err.getvalue().strip().splitlines()
        replaced = was_device and not stat.S_ISCHR(os.stat(target).st_mode)
        lost = code == 1 and not any("saved to" in line for line in lines)
        clean = not replaced and not lost and (code == 0 or len(lines) == 1)
        record("destinations", "accepted" if clean and code == 0 else "clean" if clean else "traceback", f"{target.name[:40]}: exit {code}, {lines}")
    for suffix in ("", ".tmp"):  # the write itself, after the check: never a late failure
        for length in range(longest - 25, longest + 1, 5):
            path = folder / ("w" * (length - len(suffix)) + suffix)

            def check_then_write(path=path):
                check_destination(path, "out")
                write_atomically(path, "{}\n")

            attempt("destinations", check_then_write, f"{len(path.name)}-byte name")


def fuzz_checksums(folder: Path, count: int) -> None:
    good = json.loads(policy_module.CHECKSUMS_PATH.read_text())
    reference = folder / "reference"
    reference.mkdir()
    copy_path = reference / "default.pt"
    copy_path.write_bytes(reference_path("default").read_bytes())
    shipped, policy_module.CHECKSUMS_PATH = policy_module.CHECKSUMS_PATH, reference / "checksums.json"
    generator = random.Random(2)
    try:
        for index in range(count):
            policy_module.CHECKSUMS_PATH.write_text(damaged_json(good, generator))
            attempt("checksums.json", lambda: (shipped_checksums(), load_policy(copy_path)), f"damage {index}")
        policy_module.CHECKSUMS_PATH.write_bytes(b"\xff\xfe{")
        attempt("checksums.json", shipped_checksums, "not UTF-8")
    finally:
        policy_module.CHECKSUMS_PATH = shipped


def fuzz_eval_sets(folder: Path, count: int) -> None:
    task = Task.parse("2d+")
    good = json.loads((ROOT / "data" / "eval" / "2d+.json").read_text())
    good["problems"] = good["problems"][:5]  # the damage lands in the structure more often
    generator = random.Random(3)
    for index in range(count):
        path = folder / f"eval-{index}.json"
        path.write_text(damaged_json(good, generator))
        attempt("eval sets", lambda path=path: read_eval_set(task, path), f"damage {index}")


TEXT_BUILDERS = {  # each text file with the function its module builds the course's objects with
    "answers.json": drill_answers.answers_from_text,
    "follow_ups.json": lambda items: tuple(drill_answers.FollowUp(**item) for item in items),
    "claims_zh.json": drill.claims_zh_from_text,
    "quiz.json": drill.quiz_from_text,
    "claim_notebooks.json": dict,
}


def fuzz_text(folder: Path, count: int) -> None:
    generator = random.Random(4)
    shipped, text_files.TEXT_DIR = text_files.TEXT_DIR, folder
    try:
        for name, build in TEXT_BUILDERS.items():
            good = json.loads((shipped / name).read_text(encoding="utf-8"))
            for index in range(count):
                (folder / name).write_text(damaged_json(good, generator), encoding="utf-8")
                attempt("course text", lambda name=name, build=build: text_files.load_text(name, build), f"{name} damage {index}")
            (folder / name).write_bytes((shipped / name).read_text(encoding="utf-8").encode("latin-1", "replace") + "é".encode("latin-1"))
            attempt("course text", lambda name=name, build=build: text_files.load_text(name, build), f"{name} as Latin-1")
    finally:
        text_files.TEXT_DIR = shipped


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        fuzz_config()
        fuzz_cli()
        fuzz_advantages()
        fuzz_checkers()
        fuzz_checkpoints(Path(folder), 300)
        fuzz_results(Path(folder))
        fuzz_devices()
        fuzz_damaged_results(Path(folder), 20)
        fuzz_destinations(Path(folder))
        fuzz_checksums(Path(folder), 30)
        fuzz_eval_sets(Path(folder), 40)
        fuzz_text(Path(folder), 20)
    print(f"{'target':20} {'tried':>6} {'accepted':>9} {'clean':>6} {'traceback':>10}")
    for target, counts in tally.items():
        print(f"{target:20} {sum(counts.values()):6} {counts['accepted']:9} {counts['clean']:6} {counts['traceback']:10}")
    total = sum((counts for counts in tally.values()), Counter())
    print(f"{'all':20} {sum(total.values()):6} {total['accepted']:9} {total['clean']:6} {total['traceback']:10}")
    print(json.dumps({"tried": sum(total.values()), "tracebacks": total["traceback"]}))
    return 1 if total["traceback"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
