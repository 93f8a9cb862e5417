"""``python -m grpo_lab train | sweep | pretrain``: the headless route, used by CI and the benchmarks.

The flags of ``train`` are TrainConfig's fields with '-' for '_' (the dataclass *is* the
command line). A bad value prints one line naming the flag and the allowed range, and exits 2.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing.pool
import os
import re
import shlex
import signal
import sys
from dataclasses import fields
from pathlib import Path

import torch
from tqdm import tqdm

from .checks.config_rules import validate_config
from .checks.files import SavedElsewhere, check_destination, file_kind, json_text, save_with_fallback, write_atomically
from .checks.paths import REFERENCE_NAMES
from .core.config import TrainConfig
from .errors import ConfigError, shortened
from .trainer import train

USAGE_ERROR = 2


class UsageError(Exception):
    """A bad command line: printed as one line, exit status 2."""


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SweepStopped(BaseException):
    """SIGINT or SIGTERM during a sweep, raised in the main thread so that the worker pool is
    terminated on the way out (a BaseException, like KeyboardInterrupt: no ``except Exception`` in a
    unit swallows it). Left to the default, SIGTERM kills the parent at once and the orphaned workers
    print BrokenPipeError tracebacks when they finish their unit."""

    def __init__(self, signal_number: int):
        super().__init__(signal_number)
        self.signal_number = signal_number
        self.partial: Path | None = None  # the partial file of the experiment it stopped (sweep_each sets it)


def stop_sweep(signal_number: int, frame: object) -> None:
    for number in STOP_SIGNALS:
        # a second signal while the pool is terminated is let go; a handler, not SIG_IGN, which a
        # worker started meanwhile would inherit and then ignore the pool's terminate
        signal.signal(number, lambda *_: None)
    raise SweepStopped(signal_number)


QUOTED = re.compile(r"'[^']*'")


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage and a second line; we want one line
        raise UsageError(QUOTED.sub(lambda quoted: shortened(quoted.group()), message))  # a 5,000-character value is not echoed whole


def parses_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def join_negative_values(argv: list[str]) -> list[str]:
    """``--reward-offset -1e3`` as ``--reward-offset=-1e3``: argparse takes '-1e3', '-inf' and '-nan'
    for flags (it knows only '-1' and '-1.5' as numbers) and would say "expected one argument"."""
    joined: list[str] = []
    for token in argv:
        previous = joined[-1] if joined else ""
        if token.startswith("-") and parses_as_number(token) and previous.startswith("--") and "=" not in previous:
            joined[-1] = f"{previous}={token}"
        else:
            joined.append(token)
    return joined


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def flag_message(error: ValueError) -> str:
    """The line to print for a bad value: a ConfigError's in flag form, built from its parts
    (knob 'group_size', value 1 -> '--group-size=1 is not valid: ...'); a ConfigError whose knob is
    not one word (e.g. "pretrain's output folder") and any other ValueError as they read."""
    if isinstance(error, ConfigError) and error.knob.isidentifier():
        return error.message_for(flag(error.knob))
    return str(error)


def parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per TrainConfig field, with its help line (the field's ``metadata["help"]``) and its default."""
    defaults = TrainConfig()
    for config_field in fields(TrainConfig):
        default = getattr(defaults, config_field.name)
        kind = {"int": int, "float": float, "bool": parse_bool}.get(type(default).__name__, str)
        extra = {"nargs": "?", "const": True} if kind is parse_bool else {}
        parser.add_argument(
            flag(config_field.name),
            type=kind,
            default=default,
            metavar=type(default).__name__.upper(),
            help=config_field.metadata.get("help", "").replace("%", "%%") + f" (default {default!r})",
            **extra,
        )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m grpo_lab", description="grpo-lab: GRPO by experiment on a CPU.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    train_parser = commands.add_parser("train", help="train one policy and write its metrics")
    add_config_flags(train_parser)
    train_parser.add_argument("--out", type=Path, help="write {config, history, final} as JSON here")
    train_parser.add_argument(
        "--plot",
        type=Path,
        help="write the run's figure (reward and accuracy, gradient variance, zero-std groups: plots.run_figure) here (.png, .svg or .pdf)",
    )
    train_parser.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep_parser = commands.add_parser("sweep", help="run a named experiment over seeds; write data/results/NAME.json and .png")
    sweep_parser.add_argument(
        "name", metavar="NAME", help="an experiment (see grpo_lab/experiments/catalog.py), 'all', or 'claims' (rebuild claims.md)"
    )
    sweep_parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds per cell (default: the experiment's own in the regime, catalog.SEEDS from the written seed plan)",
    )
    sweep_parser.add_argument("--fast", action="store_true", help="the small version (CI); results go to data/results/fast/")
    sweep_parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    sweep_parser.add_argument("--out", type=Path, default=None, help="write the results here instead of data/results/")
    sweep_parser.add_argument(
        "--regime",
        default=None,
        help="run in this regime (grpo_lab/experiments/catalog.py: REGIMES; default: gentle, and every regime for 'all'); "
        "results go to regimes/REGIME/",
    )
    sweep_parser.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep_parser.add_argument("--replot", action="store_true", help="redraw the figure(s) from the saved result(s) instead of running")
    sweep_parser.add_argument(
        "--replicate",
        action="store_true",
        help="re-run on the replication seeds (from catalog.REPLICATION_SEED_BASE, disjoint from the main run's); "
        "results go to replication/ under the results folder, with no figure",
    )
    pretrain_parser = commands.add_parser("pretrain", help="regenerate data/: the eval sets, and the reference policies that are missing")
    pretrain_parser.add_argument(
        "--only",
        choices=REFERENCE_NAMES,
        help="rebuild this reference policy even if it exists (a rebuild may differ from the shipped file: see data/README.md)",
    )
    pretrain_parser.add_argument(
        "--out", type=Path, help="with --only: write the rebuilt policy to this file instead, leaving data/reference/ and the eval sets as they are"
    )
    return parser


def destination(path: Path | None, option: str, folder: bool = False) -> Path | None:
    """Check an output path before any work is done (files.check_destination); a bad one is a usage error."""
    if path is None:
        return None
    try:
        if option == "plot":
            from .plots import figure_format

            figure_format(path)
        return check_destination(path, option, folder)
    except ValueError as error:
        raise UsageError(flag_message(error)) from None


def use_lab_threads() -> None:
    """Train with as many torch threads as the lab does (one core fewer than the machine has): with
    every core busy, torch's default team waits on its own threads and a run gets several times slower."""
    from .checks.threads import default_training_threads

    torch.set_num_threads(default_training_threads())


def check_distinct(out: Path | None, plot: Path | None) -> None:
    """--out and --plot must name two files (the PNG would overwrite the JSON); a stream such as
    /dev/null may take both."""
    if out and plot and os.path.realpath(out) == os.path.realpath(plot) and file_kind(out) != "stream":
        raise UsageError(f"--plot={shortened(repr(str(plot)))} is not valid: it is the file --out writes; give the plot its own name")


def save_outputs(saves: list[tuple[Path | None, object]]) -> list[str]:
    """Save each (path, save function) whose path is given, each with a fallback
    (files.save_with_fallback); returns one line per output that went elsewhere or was lost."""
    problems = []
    for path, save in saves:
        if path is None:
            continue
        try:
            save_with_fallback(path, save)
        except SavedElsewhere as error:
            problems.append(str(error))
    return problems


def run_train(args: argparse.Namespace) -> int:
    values = {f.name: getattr(args, f.name) for f in fields(TrainConfig)}
    try:
        config = validate_config(TrainConfig(**values))
    except ValueError as error:
        raise UsageError(flag_message(error)) from None
    out, plot = destination(args.out, "out"), destination(args.plot, "plot")
    check_distinct(out, plot)
    use_lab_threads()
    bars = []  # the progress bar starts with step 0, once the reference has loaded: an error before it stays one line

    def on_step(record: dict) -> None:
        if not bars:
            bars.append(tqdm(total=config.steps, desc="train", unit="step", disable=args.quiet, file=sys.stderr))
        if record["step"] > 0:
            bars[0].update(1)
            shown = {"reward": record["reward"], "acc": record.get("eval_accuracy")}
            bars[0].set_postfix({k: f"{v:.3f}" for k, v in shown.items() if v is not None})

    result = train(config, on_step=on_step)
    for bar in bars:
        bar.close()
    final = result.final
    print(
        f"{result.status}: held-out accuracy {final['initial_eval_accuracy']:.3f} -> {final.get('eval_accuracy', float('nan')):.3f} "
        f"after {final.get('step', 0)} steps, {final.get('samples', 0)} responses, {final.get('wall_time', 0):.1f} s"
    )
    if result.message:
        print(result.message)
    # histories are identical for the same config, seed, torch build and thread count; with 1 and 2
    # threads they differ around the 7th digit (float sums split differently), so the file says which
    environment = {"torch_threads": torch.get_num_threads(), "torch_version": str(torch.__version__)}
    text = json_text({**result.to_json(), "environment": environment}, indent=1)
    problems = save_outputs([(out, lambda path: write_atomically(path, text))])
    if plot:
        from .lab.describe import run_label
        from .plots import run_figure, save_figure

        figure = run_figure([(f"{run_label(config, [])}, seed {config.seed}", result.history)])  # the notebooks' run figure
        problems += save_outputs([(plot, lambda path: save_figure(figure, path))])
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 0 if result.status != "failed" and not problems else 1


def run_sweep(args: argparse.Namespace) -> int:
    from .experiments import EXPERIMENTS, result_path, write_claims
    from .experiments.catalog import DEFAULT_REGIME, REGIMES, experiments_in
    from .experiments.runner import check_options, worker_pool

    if args.name not in (*EXPERIMENTS, "all", "claims"):
        raise UsageError(f"NAME={args.name!r} is not valid: choose one of {', '.join(EXPERIMENTS)}, all, claims")
    if args.replicate and (args.name == "claims" or args.replot):
        given = "NAME=claims" if args.name == "claims" else "--replot"
        raise UsageError(f"--replicate is not valid with {given}: a replication runs experiments on fresh seeds and draws no figure")
    names = list(EXPERIMENTS) if args.name == "all" else [] if args.name == "claims" else [args.name]
    regimes = [args.regime] if args.regime is not None else list(REGIMES) if args.name in ("all", "claims") else [DEFAULT_REGIME]
    try:
        for regime in regimes:
            check_options(names[0] if len(names) == 1 else "variance", args.seeds, args.workers, regime)
    except ValueError as error:
        raise UsageError(flag_message(error)) from None
    destination(result_path("variance", args.fast, args.out, replicate=args.replicate).parent, "out", folder=True)
    done: dict = {}  # units run by this command, reused where a later regime asks for the same one
    runs = [(regime, name) for regime in regimes for name in (names if args.name != "all" else experiments_in(regime))]
    handlers = {number: signal.signal(number, stop_sweep) for number in STOP_SIGNALS}
    try:
        with contextlib.ExitStack() as stack:
            # one set of worker processes for every experiment of the command: each start costs about 3 s
            pool = stack.enter_context(worker_pool(args.workers)) if len(runs) > 1 and args.workers > 1 and not args.replot else None
            failed = sweep_each(args, runs, done, pool)
    except SweepStopped as stop:
        print(stopped_line(stop, args, several=len(runs) > 1), file=sys.stderr)
        return 128 + stop.signal_number  # the shell's code for a process ended by that signal: 130, 143
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    if failed is None:
        return 1
    if args.name in ("all", "claims") and not args.replicate:
        print(f"claims: {write_claims(directory=args.out, fast=args.fast)}")
        if args.out is None and not args.fast:  # the audit in Chinese, from the same shipped results and one judging
            from .checks.files import write_atomically
            from .course.drill import CLAIMS_ZH_FILE, claims_zh_markdown

            print(f"claims in Chinese: {write_atomically(result_path('claims', fast=False).with_name(CLAIMS_ZH_FILE), claims_zh_markdown())}")
    return 1 if failed else 0


def sweep_command(args: argparse.Namespace) -> str:
    """The command line of this sweep, to run it again: a stopped sweep resumes where it stopped."""
    words = ["python", "-m", "grpo_lab", "sweep", args.name]
    words += ["--regime", args.regime] if args.regime is not None else []
    words += ["--seeds", str(args.seeds)] if args.seeds is not None else []
    words += [option for option, given in (("--fast", args.fast), ("--replicate", args.replicate), ("--quiet", args.quiet)) if given]
    words += ["--workers", str(args.workers)] + (["--out", str(args.out)] if args.out is not None else [])
    return shlex.join(words)


def stopped_line(stop: SweepStopped, args: argparse.Namespace, several: bool) -> str:
    """The one line a stopped sweep prints: the signal, the units of the stopped experiment that finished and
    where they are kept, and the command that resumes it (``several``: the command ran several experiments)."""
    from .experiments.runner import read_partial

    identity, units, _ = read_partial(stop.partial) if stop.partial is not None else (None, {}, 0.0)
    written = " (results written before it are kept)" if several else ""
    stopped = f"sweep stopped by {signal.Signals(stop.signal_number).name}"
    if identity is None:
        return f"{stopped}{written}; re-run `{sweep_command(args)}` to run the rest"
    of_what = f"{identity.get('name')} ({identity.get('regime')})"
    return f"{stopped}: {len(units)} of {identity.get('units')} units of {of_what} finished, kept in {stop.partial}{written}; resume with `{sweep_command(args)}`"


def sweep_each(args: argparse.Namespace, runs: list[tuple[str, str]], done: dict, pool: multiprocessing.pool.Pool | None) -> bool | None:
    """Run (or with --replot, load) each (regime, experiment) of ``runs``, save its JSON and figure (a
    --replicate run: its JSON only) and print a line. True if a result had to be saved elsewhere, None
    if one could not be saved at all. Each experiment records its finished units in its partial file
    (runner.partial_path) and resumes from it. The partial files are deleted once every result of the command is
    written: a stopped ``sweep all`` keeps the finished experiments' units too, so that its re-run runs none of them
    again (it rebuilds their results from the kept units, and reuses their units shared with later experiments)."""
    from .experiments import load_result, result_path, run_experiment, write_result
    from .experiments.figures import save_experiment_figure
    from .experiments.runner import partial_path

    failed, written = False, []
    for regime, name in runs:
        if args.replot:
            result, path = load_result(name, args.fast, args.out, regime), result_path(name, args.fast, args.out, regime)
        else:
            partial = partial_path(name, args.fast, args.out, regime, args.replicate)
            path = result_path(name, args.fast, args.out, regime, args.replicate)
            try:
                result = run_experiment(
                    name,
                    args.seeds,
                    args.fast,
                    args.workers,
                    progress=not args.quiet,
                    regime=regime,
                    done=done,
                    pool=pool,
                    replicate=args.replicate,
                    partial=partial,
                )
                save_with_fallback(path, lambda target, result=result, name=name: write_result(name, result, path=target))
                written.append(partial)
            except SweepStopped as stop:
                stop.partial = partial
                raise
            except SavedElsewhere as error:  # hours of sweeping are not lost to a full disk at the end; the partial file stays
                print(f"error: {error}", file=sys.stderr)
                if error.saved_to is None:
                    return None
                path, failed = error.saved_to, True
        shape = f"{len(result['cells'])} cells x {result['seeds']} seeds in {result['wall_time_s']:.0f} s"
        if args.replicate:
            entries = result["cells"][0]["per_seed"]
            print(f"{name} ({regime}, replication on seeds {entries[0]['seed']}-{entries[-1]['seed']}): {shape} -> {path}")
            continue
        try:
            figure_path = save_experiment_figure(name, result, path.with_suffix(".png"))
        except ValueError as error:  # a damaged result that passed the schema: name the file
            raise UsageError(f"{path}: {error}") from None
        print(f"{name} ({regime}): {shape} -> {path}, {figure_path}")
    for partial in written:
        partial.unlink(missing_ok=True)
    return failed


def run_pretrain(args: argparse.Namespace) -> int:
    from .checks.checkpoints import CHECKSUMS_PATH, reference_path
    from .pretrain import PRACTICE_TASK, RECIPES, write_reference
    from .task import MAX_DIGITS, OPERATIONS, Task, eval_path, write_eval_set

    if args.out is not None and args.only is None:
        raise UsageError(f"--out={shortened(repr(str(args.out)))} is not valid without --only: name the reference to write there")
    out = destination(args.out, "out")
    if out is None:
        for path in (eval_path(Task(1, "+")).parent, reference_path("default").parent):
            destination(path, "pretrain's output folder", folder=True)
        for path in (CHECKSUMS_PATH, *(reference_path(name) for name in RECIPES)):
            destination(path, "pretrain's output file")
        for digits in range(1, MAX_DIGITS + 1):
            for ops in (*OPERATIONS, OPERATIONS):
                write_eval_set(Task(digits, ops))
        write_eval_set(Task.parse(PRACTICE_TASK))  # the practice regime's worked answers (docs/practice-regime.md)
    use_lab_threads()
    for name, recipe in RECIPES.items():
        # every cached result starts from the shipped references, and a rebuild matches them only on
        # the CPU that built them (data/README.md): plain pretrain writes the missing ones only
        wanted = name == args.only if args.only else not reference_path(name).is_file()
        if not wanted:
            continue
        with tqdm(total=recipe.steps, desc=f"pretrain {name}", unit="step", file=sys.stderr) as bar:
            path, accuracy = write_reference(name, bar, out)
        print(f"{path}: greedy accuracy {accuracy:.3f} on the {recipe.task} eval set")
    return 0


def os_error_line(error: OSError) -> str:
    """An OSError as one line that names the file, shortened ('File name too long: 'aaa...' (304
    characters)'), not Python's '[Errno 36] ...' with the whole name."""
    if error.strerror and error.filename is not None:
        return f"{error.strerror}: {shortened(repr(str(error.filename)))}"
    return shortened(str(error), 300)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(join_negative_values(sys.argv[1:] if argv is None else argv))
        return {"train": run_train, "sweep": run_sweep, "pretrain": run_pretrain}[args.command](args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except (FileNotFoundError, ValueError) as error:  # e.g. a missing or corrupt reference policy
        print(f"error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as error:  # the disk filled up, a folder vanished mid-run: one line, not a traceback
        print(f"error: {os_error_line(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
