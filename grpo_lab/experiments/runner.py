"""Run an experiment's cells over seeds in worker processes, summarise, and read/write result files.

Result file (data/results/NAME.json; --fast results go to data/results/fast/):
``{"name", "question", "command", "version", "fast", "seeds", "workers", "created", "wall_time_s",
"train_defaults", "grid": [{"id", **axes}], "cells": [{"id", "axes", "config", "per_seed":
[{"seed", "status", "message", "metrics", "series"?}], "summary": {metric: {"mean", "std", "n"}}}],
"derived": {...}, "regime", "replicate", "rules_version", "machine"}``. ``std`` is over seeds (Bessel), ``n`` counts
the seeds with a value; the summary must be what the per-seed values give (checked on load).
``rules_version``: the digest of the rule code when the data were made (``rules_version()``); ``machine``: the CPU
(``machine()``); older files lack both.
A cell is named by its catalog id (catalog.cell_label gives its display label, which no file stores).
A result in a regime other than the gentle one (catalog.REGIMES) lives in ``regimes/REGIME/`` under
the same folder (data/results/regimes/large-step/NAME.json); files without "regime" are gentle.
A replication (``"replicate": true``) measures seeds from catalog.REPLICATION_SEED_BASE instead of 0 and
lives in ``replication/`` under its regime's folder (data/results/replication/NAME.json); files
without "replicate" are main runs.

Partial file (NAME.partial.jsonl beside NAME.json, ``partial_path``): a sweep's finished units while it runs,
one JSON object a line, so that a stopped sweep resumes where it stopped (``run_experiment``'s ``partial``).
The first line is ``{"sweep": identity}`` (``sweep_identity``); each later line is a unit, ``{"cell": id,
"seed", "entry": its per-seed entry, "elapsed_s"}``, or ``{"elapsed_s"}`` alone where a session stopped;
``elapsed_s``: the sweep's seconds so far, over all its sessions. The command line deletes the file once the
result is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import multiprocessing
import multiprocessing.pool
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import __version__
from ..checks import paths
from ..checks.files import finite_json, json_text, read_strict_json, write_atomically
from ..core.config import TrainConfig
from ..errors import ConfigError
from .catalog import (
    DEFAULT_REGIME,
    EXPERIMENTS,
    REGIMES,
    REPLICATION_SEED_BASE,
    cell_labels,
    default_seeds,
    experiments_in,
    grid_in,
    in_regime,
    only_in_words,
)
from .measures import UNITS
from .stats import summarize

RESULTS_DIR = paths.RESULTS_DIR
RESULT_KEYS = (
    "name",
    "question",
    "command",
    "version",
    "fast",
    "seeds",
    "workers",
    "created",
    "wall_time_s",
    "train_defaults",
    "grid",
    "cells",
    "derived",
)
CELL_KEYS = ("id", "axes", "config", "per_seed", "summary")
SIGNIFICANT_DIGITS = 6
# a stored summary agrees with its seeds within this fraction of (|summary| + the largest |value|): the file
# rounds each value and the summary to SIGNIFICANT_DIGITS, and the std of values close together (0.995 to
# 1.005) moves with their last digit by up to sqrt(2) x 5e-6 of their size
SUMMARY_TOLERANCE = 1e-5
# the code that turns results into verdicts: a result records its digest (rules_version), so that it shows which
# rules existed when its data were made
RULE_FILES = ("claims.py", "findings.py", "stats.py", "rules")


def check_name(name: str) -> None:
    if name not in EXPERIMENTS:
        raise ConfigError("experiment", name, f"choose one of {', '.join(EXPERIMENTS)}")


def check_regime(regime: str) -> None:
    if regime not in REGIMES:
        raise ConfigError("regime", regime, f"choose one of {', '.join(REGIMES)}")


def check_options(name: str, seeds: int | None, workers: int, regime: str = DEFAULT_REGIME) -> None:
    """One ConfigError (a ValueError) naming the option, the value and the allowed range."""
    check_name(name)
    check_regime(regime)
    if name not in experiments_in(regime):
        raise ConfigError("regime", regime, only_in_words(name))
    if seeds is not None and (not isinstance(seeds, int) or not 1 <= seeds <= 100):
        raise ConfigError("seeds", seeds, "must be an integer from 1 to 100")
    if not isinstance(workers, int) or not 1 <= workers <= 64:
        raise ConfigError("workers", workers, "must be an integer from 1 to 64")


def command_line(name: str, seeds: int, fast: bool, workers: int, regime: str = DEFAULT_REGIME, replicate: bool = False) -> str:
    """The command that makes this result (what the result file records)."""
    in_regime_flag = f" --regime {regime}" if regime != DEFAULT_REGIME else ""
    flags = (" --replicate" if replicate else "") + (" --fast" if fast else "")
    return f"python -m grpo_lab sweep {name}{in_regime_flag} --seeds {seeds}{flags} --workers {workers}"


def declared_seeds(seeds: int, replicate: bool = False) -> range:
    """The seeds of a result's cells, in order: 0..seeds-1, or REPLICATION_SEED_BASE.. for a replication."""
    first = REPLICATION_SEED_BASE if replicate else 0
    return range(first, first + seeds)


def rules_version() -> str:
    """The first 12 hex digits of the SHA-256 of the rule code (RULE_FILES: each file's path and bytes, in order):
    which rules existed when a result's data were made."""
    here = Path(__file__).parent
    paths = sorted(path for name in RULE_FILES for path in ((here / name).rglob("*.py") if (here / name).is_dir() else [here / name]))
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def machine() -> dict:
    """The CPU a result's numbers were made on: float results depend on its kernels (AVX2 and AVX512 differ in the
    last digits, and chaotic RL runs then drift), so every result records it. {"cpu", "cpu_capability", "torch"}."""
    import platform

    import torch

    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__}


def results_folder(fast: bool = False, directory: str | Path | None = None, regime: str = DEFAULT_REGIME, replicate: bool = False) -> Path:
    """Where a sweep's results go: ``directory`` or data/results (fast/ under it for --fast),
    regimes/REGIME/ under that for a regime other than the gentle one, and replication/ under that
    for a replication."""
    base = Path(directory) if directory is not None else RESULTS_DIR / "fast" if fast else RESULTS_DIR
    folder = base if regime == DEFAULT_REGIME else base / "regimes" / regime
    return folder / "replication" if replicate else folder


def result_path(name: str, fast: bool = False, directory: str | Path | None = None, regime: str = DEFAULT_REGIME, replicate: bool = False) -> Path:
    return results_folder(fast, directory, regime, replicate) / f"{name}.json"


def partial_path(name: str, fast: bool = False, directory: str | Path | None = None, regime: str = DEFAULT_REGIME, replicate: bool = False) -> Path:
    """Where a sweep records its finished units until its result is written: NAME.partial.jsonl beside NAME.json."""
    return results_folder(fast, directory, regime, replicate) / f"{name}.partial.jsonl"


def sweep_identity(name: str, regime: str, fast: bool, replicate: bool, seeds: int, cells: list[dict]) -> dict:
    """What a partial file's units depend on, beyond the cell and the seed: a file whose identity differs (other
    seeds, another grid, another machine or version) is not reused. ``grid``: the first 16 hex digits of the
    SHA-256 of the cells' ids and configs and TrainConfig's defaults; ``units``: the distinct units of the sweep."""
    grid = json.dumps([TrainConfig().to_dict(), [[cell["id"], cell["config"]] for cell in cells]], sort_keys=True)
    distinct = len({json.dumps(cell["config"], sort_keys=True) for cell in cells})
    return {
        "name": name,
        "regime": regime,
        "fast": fast,
        "replicate": replicate,
        "seeds": seeds,
        "grid": hashlib.sha256(grid.encode()).hexdigest()[:16],
        "units": distinct * seeds,
        "version": __version__,
        "machine": machine(),
    }


def read_partial(path: Path) -> tuple[dict | None, dict[tuple[str, int], dict], float]:
    """A partial file's sweep identity (None where there is no file or its first line is not one), its units
    {(cell id, seed): per-seed entry} and the seconds its sessions spent (the largest ``elapsed_s``). A line
    that does not parse, the one a kill cut short, is skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None, {}, 0.0
    records = []
    for line in lines:
        with contextlib.suppress(ValueError):  # JSONDecodeError: a line cut short
            records.append(json.loads(line))
    records = [record for record in records if isinstance(record, dict)]
    if not records or not isinstance(records[0].get("sweep"), dict):
        return None, {}, 0.0
    units, elapsed = {}, 0.0
    for record in records[1:]:
        if is_finite_number(record.get("elapsed_s")):
            elapsed = max(elapsed, float(record["elapsed_s"]))
        entry = record.get("entry")
        if (
            isinstance(record.get("cell"), str)
            and isinstance(record.get("seed"), int)
            and isinstance(entry, dict)
            and entry.get("seed") == record["seed"]
        ):
            units[(record["cell"], record["seed"])] = entry
    return records[0]["sweep"], units, elapsed


def start_partial(path: Path, identity: dict) -> tuple[dict[tuple[str, int], dict], float]:
    """Begin a session of the sweep ``identity`` in the partial file at ``path``: returns its units and the
    seconds already spent where the file was made by the same sweep, else ({}, 0.0), saying in one line on
    stderr why a file that exists is set aside. The file is rewritten at once with what is kept, so that no
    line of this session follows a line a kill cut short."""
    found, units, elapsed = read_partial(path)
    if found != identity:
        if found is not None:
            differs = next(key for key in {**identity, **found} if found.get(key) != identity.get(key))
            print(
                f"{path} was made by another sweep ({differs} {found.get(differs)!r} there, {identity.get(differs)!r} now): "
                "its units are not reused; starting over",
                file=sys.stderr,
            )
        elif path.exists():
            print(f"{path} is not a partial file of a sweep: starting over", file=sys.stderr)
        units, elapsed = {}, 0.0
    lines = [{"sweep": identity}, *({"cell": cell, "seed": seed, "entry": entry} for (cell, seed), entry in units.items()), {"elapsed_s": elapsed}]
    write_atomically(path, "".join(json.dumps(line) + "\n" for line in lines))
    return units, elapsed


def append_record(path: Path, record: dict) -> None:
    """One line added to a partial file and flushed to disk: a unit survives a kill once this returns."""
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(record) + "\n")
        file.flush()
        os.fsync(file.fileno())


def run_cell(config: dict, seed: int) -> dict:
    """One unit: a cell's config and a seed -> its per-seed entry (measures.py). Deterministic on a CPU."""
    return UNITS[config["kind"]](config, seed)


def _worker_init() -> None:
    # a Ctrl-C reaches the whole process group: the parent stops the sweep and terminates the pool, so
    # a worker ignores it (workers that start later, fresh_process, would otherwise print tracebacks)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # one thread per worker: the workers are the parallelism, and two threads per process on two
    # cores would only fight
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch

    torch.set_num_threads(1)


def _run_job(job: tuple[int, dict, int]) -> tuple[int, dict]:
    index, config, seed = job
    return index, run_cell(config, seed)


def _run_bundle(bundle: list[tuple[int, dict, int]]) -> list[tuple[int, dict]]:
    return [_run_job(job) for job in bundle]


def bundled(jobs: list[tuple[int, dict, int]], shares: Callable[[dict, int], Hashable] | None) -> list[list[tuple[int, dict, int]]]:
    """``jobs`` in bundles that one worker runs one after another: the units whose ``shares(config, seed)`` are equal
    (they reuse what the worker cached for the first), each unit alone where ``shares`` is None; the bundles in the
    order of their first unit."""
    if shares is None:
        return [[job] for job in jobs]
    bundles: dict[Hashable, list[tuple[int, dict, int]]] = {}
    for job in jobs:
        bundles.setdefault(shares(job[1], job[2]), []).append(job)
    return list(bundles.values())


def worker_pool(workers: int, fresh_process: bool = False) -> multiprocessing.pool.Pool:
    """``workers`` spawned processes with one torch thread each (a context manager); with
    ``fresh_process`` each runs one unit and is replaced (batch-blowup measures a process's memory)."""
    context = multiprocessing.get_context("spawn")
    with sigint_ignored_while_starting_processes():
        return context.Pool(workers, initializer=_worker_init, maxtasksperchild=1 if fresh_process else None)


@contextlib.contextmanager
def sigint_ignored_while_starting_processes() -> Iterator[None]:
    """SIGINT ignored while worker processes start: they inherit SIG_IGN, so a Ctrl-C in their first
    seconds (importing torch, before ``_worker_init``) prints no KeyboardInterrupt traceback. A
    SIGINT that arrives meanwhile is lost; only the main thread may set handlers (elsewhere: no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def unit_seconds_recorded(name: str, fast: bool = False, regime: str = DEFAULT_REGIME, replicate: bool = False) -> dict[tuple[str, int], float]:
    """{(config as JSON, seed): training seconds} from the shipped result of ``name`` in ``regime``, its
    replication's when ``replicate`` (other seeds): the per-seed ``wall_time_s`` of its trained units,
    the estimate ``longest_first`` orders by; {} where there is no readable file or a unit recorded no
    time (fixed-policy measures)."""
    try:
        result = read_strict_json(result_path(name, fast, regime=regime, replicate=replicate))
        return {
            (json.dumps(cell["config"], sort_keys=True), entry["seed"]): float(entry["metrics"]["wall_time_s"])
            for cell in result["cells"]
            for entry in cell["per_seed"]
            if is_finite_number(entry.get("metrics", {}).get("wall_time_s"))
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def longest_first(jobs: list[tuple[int, dict, int]], keys: list[str], seconds: dict[tuple[str, int], float]) -> list[tuple[int, dict, int]]:
    """``jobs`` [(cell index, config, seed)] ordered for two workers to finish together: the units with
    no recorded time first (in grid order), then the rest by recorded seconds, longest first (the
    longest-processing-time rule). keys: each cell's config as JSON. Units are deterministic, so the
    order changes no result."""
    return sorted(jobs, key=lambda job: -seconds.get((keys[job[0]], job[2]), math.inf))


def rounded(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """Floats to ``digits`` significant digits, non-finite floats to None (JSON has no NaN), recursively."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: rounded(item, digits) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(item, digits) for item in value]
    return value


def run_experiment(
    name: str,
    seeds: int | None = None,
    fast: bool = False,
    workers: int = 2,
    progress: bool = True,
    regime: str = DEFAULT_REGIME,
    done: dict[tuple[str, int], dict] | None = None,
    pool: multiprocessing.pool.Pool | None = None,
    replicate: bool = False,
    partial: Path | None = None,
) -> dict:
    """Run every cell of experiment ``name`` in ``regime`` (catalog.REGIMES) for ``seeds`` seeds
    (0..seeds-1, or from catalog.REPLICATION_SEED_BASE when ``replicate``; default count: the
    experiment's own), in ``workers`` processes, with a tqdm progress bar.
    Returns the result dict (the schema in this module's docstring); ``write_result`` saves it.

    ``done``: units already run in this command, {(config as JSON, seed): per-seed entry}; a unit
    found there is not run again (units are deterministic: e.g. ``sweep all`` measures the reference
    policy once for the gentle and the large-step regime, catalog.in_regime), and every unit run is
    added to it. ``pool``: worker processes to reuse (``worker_pool``), so that ``sweep all`` starts
    them once instead of once per experiment (about 3 s each); ignored by an experiment that needs a
    fresh process per unit. Units run longest first (``longest_first``), those that share a worker's cached inputs
    in one bundle (``bundled``, the experiment's ``shares``): the order changes no number, only the time.

    ``partial``: the sweep's partial file (``partial_path``; None: none). Each unit is recorded there as it
    finishes; a file left by a stopped run of the same sweep (``sweep_identity``) is resumed: its units are not
    run again, and the result is the one an uninterrupted run gives (units are deterministic), but for
    ``wall_time_s``, which then sums the seconds of every session (each up to its stop). The caller deletes
    the file once the result is saved."""
    check_options(name, seeds, workers, regime)
    spec = EXPERIMENTS[name]
    seeds = seeds or (spec.fast_seeds if fast else default_seeds(name, regime))
    seed_values = declared_seeds(seeds, replicate)
    # a result names each cell by its id; the label stays in the catalog, so rewording one touches no result
    cells = [{"id": cell["id"], "axes": cell["axes"], "config": in_regime(cell["config"], regime)} for cell in grid_in(name, regime, fast, replicate)]
    # identical configs (e.g. G=16 with 8 prompts in both regimes of group-size) run once
    done = {} if done is None else done
    identity = sweep_identity(name, regime, fast, replicate, seeds, cells)
    kept, before_s = start_partial(partial, identity) if partial is not None else ({}, 0.0)
    keys = [json.dumps(cell["config"], sort_keys=True) for cell in cells]
    unique: dict[str, int] = {}
    jobs, job_of, copied = [], {}, []
    outputs: dict[tuple[int, int], dict] = {}
    for index, key in enumerate(keys):
        unique.setdefault(key, index)
        for seed in seed_values:
            if unique[key] == index:
                if (cells[index]["id"], seed) in kept:
                    outputs[(index, seed)] = kept[(cells[index]["id"], seed)]
                elif (key, seed) in done:
                    copied.append((index, done[(key, seed)]))
                else:
                    jobs.append((index, cells[index]["config"], seed))
            job_of[(index, seed)] = (unique[key], seed)

    bundles = bundled(longest_first(jobs, keys, unit_seconds_recorded(name, fast, regime, replicate)), spec.shares)
    from tqdm.auto import tqdm

    started = time.perf_counter()
    in_regime_words = f" ({regime})" if regime != DEFAULT_REGIME else ""
    description = f"sweep {name}{in_regime_words}" + (" (replication)" if replicate else "") + (" (fast)" if fast else "")
    if outputs:
        print(f"{description}: resuming from {partial}: {len(outputs)} of {identity['units']} units kept, {len(jobs)} to run", file=sys.stderr)

    def finished(index: int, entry: dict) -> None:
        outputs[(index, entry["seed"])] = entry
        if partial is not None:
            seconds = before_s + time.perf_counter() - started
            append_record(partial, {"cell": cells[index]["id"], "seed": entry["seed"], "entry": entry, "elapsed_s": seconds})

    for index, entry in copied:
        finished(index, entry)
    try:
        # closed on every way out: a sweep stopped by a signal then prints its one line on a line of its own
        with tqdm(total=len(jobs), desc=description, unit="run", disable=not progress) as bar:
            if workers == 1 and not spec.fresh_process:
                import torch

                threads = torch.get_num_threads()
                torch.set_num_threads(1)
                try:
                    for job in itertools.chain.from_iterable(bundles):
                        finished(*_run_job(job))
                        bar.update(1)
                finally:
                    torch.set_num_threads(threads)
            else:
                with contextlib.ExitStack() as stack:
                    if pool is None or spec.fresh_process:
                        pool = stack.enter_context(worker_pool(workers, fresh_process=spec.fresh_process))
                    for units in pool.imap_unordered(_run_bundle, bundles):  # a bundle's units are kept when it ends
                        for index, entry in units:
                            finished(index, entry)
                            bar.update(1)
    except BaseException:  # a signal (the command line's SweepStopped), a failed unit: the time spent is kept too
        if partial is not None:
            with contextlib.suppress(OSError):
                append_record(partial, {"elapsed_s": before_s + time.perf_counter() - started})
        raise
    for (index, seed), entry in outputs.items():
        done[(keys[index], seed)] = entry

    result_cells = []
    for index, cell in enumerate(cells):
        per_seed = [outputs[job_of[(index, seed)]] for seed in seed_values]
        result_cells.append({**cell, "per_seed": per_seed, "summary": summarize(per_seed)})
    result = {
        "name": name,
        "question": spec.question,
        "command": command_line(name, seeds, fast, workers, regime, replicate),
        "regime": regime,
        "replicate": replicate,
        "rules_version": rules_version(),
        "machine": machine(),
        "version": __version__,
        "fast": fast,
        "seeds": seeds,
        "workers": workers,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_time_s": before_s + time.perf_counter() - started,
        "train_defaults": TrainConfig().to_dict(),
        "grid": [{"id": cell["id"], **cell["axes"]} for cell in cells],
        "cells": result_cells,
    }
    result["derived"] = spec.derive(result_cells) if spec.derive else {}
    return rounded(result)


def is_finite_number(value: object) -> bool:
    """An int or a float, finite, and not True/False (a metric value a result may hold)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_types(where: str, container: dict, types: dict[str, type | tuple[type, ...]]) -> None:
    """Each key of ``types`` that ``container`` has must hold a value of that type (bool is not a number)."""
    for key, kind in types.items():
        value = container.get(key)
        if key in container and (
            not isinstance(value, kind) or (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)))
        ):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise ValueError(f"{where}{key!r} is a {type(value).__name__}, not a {names}")


def agrees(stored: float | None, recomputed: float | None, scale: float) -> bool:
    """A stored summary number is the recomputed one up to the file's rounding (SUMMARY_TOLERANCE; scale:
    the largest |value| of the seeds); None (no seed has a value) only where the recomputed one is None."""
    if stored is None or recomputed is None:
        return stored is None and recomputed is None
    return abs(stored - recomputed) <= SUMMARY_TOLERANCE * (abs(recomputed) + scale) + 1e-12


def check_summary(cell: dict) -> None:
    """Raise ValueError unless ``cell``'s summary is what its per-seed values give (stats.summarize): the
    same metrics, no negative std, n = the seeds with a finite value, mean and std up to rounding."""
    where = f"cell {cell['id']!r}"
    try:
        recomputed = summarize(cell["per_seed"])
        values = {metric: [entry["metrics"].get(metric) for entry in cell["per_seed"]] for metric in recomputed}
        scales = {metric: max((abs(value) for value in found if is_finite_number(value)), default=0.0) for metric, found in values.items()}
    except OverflowError:  # an integer beyond float's range
        raise ValueError(f"{where}: a seed's value is too large for a float") from None
    unknown = sorted(set(cell["summary"]) - set(recomputed))
    if unknown:
        raise ValueError(f"{where}: the summary has {unknown[0]!r}, a metric no seed has")
    absent = sorted(set(recomputed) - set(cell["summary"]))
    if absent:
        raise ValueError(f"{where}: the summary lacks {absent[0]!r}, a metric the seeds have")
    for metric, stored in cell["summary"].items():
        if stored["std"] is not None and stored["std"] < 0:
            raise ValueError(f"{where}: summary std of {metric!r} is {stored['std']!r}, negative")
        if stored["n"] != recomputed[metric]["n"]:
            raise ValueError(f"{where}: summary n of {metric!r} is {stored['n']}, but {recomputed[metric]['n']} seeds have a value")
        for field in ("mean", "std"):
            if not agrees(stored[field], recomputed[metric][field], scales[metric]):
                wanted = rounded(recomputed[metric][field])
                raise ValueError(f"{where}: summary {field} of {metric!r} is {stored[field]!r}, but its seeds give {wanted!r}")


def check_result(result: dict) -> None:
    """Raise ValueError if ``result`` does not follow the result schema (module docstring): the keys,
    the type of every value the figures, the claims and the CLI read, the declared seeds
    (``declared_seeds``) and each summary against its per-seed values (``check_summary``), so that a
    damaged or edited file is refused when it is read, not halfway through drawing it."""
    if not isinstance(result, dict):
        raise ValueError(f"it holds a JSON {type(result).__name__}, not a result")
    missing = [key for key in RESULT_KEYS if key not in result]
    if missing:
        raise ValueError(f"result is missing key(s): {', '.join(missing)}")
    check_types(
        "",
        result,
        {
            "name": str,
            "question": str,
            "command": str,
            "fast": bool,
            "seeds": int,
            "workers": int,
            "created": str,
            "wall_time_s": (int, float),
            "train_defaults": dict,
            "grid": list,
            "cells": list,
            "derived": dict,
            "replicate": bool,
            "rules_version": str,
            "machine": dict,
        },
    )
    check_name(result["name"])
    if "rules_version" in result and not re.fullmatch("[0-9a-f]{12}", result["rules_version"]):
        raise ValueError(f"rules_version={result['rules_version']!r}"[:100] + " must be 12 hex digits (runner.rules_version())")
    if not is_finite_number(result["wall_time_s"]) or result["seeds"] < 1:
        raise ValueError(f"wall_time_s={result['wall_time_s']!r} and seeds={result['seeds']!r} must be a finite time and a positive count")
    if not result["cells"] or len(result["grid"]) != len(result["cells"]):
        raise ValueError("result must have one grid entry per cell, and at least one cell")
    if not all(isinstance(entry, dict) for entry in result["grid"]):
        raise ValueError("every grid entry must be a dict")
    seeds = declared_seeds(result["seeds"], result.get("replicate", False))
    run_kind = "replication" if result.get("replicate", False) else "main run"
    for index, cell in enumerate(result["cells"]):
        if not isinstance(cell, dict):
            raise ValueError(f"cell {index} is a {type(cell).__name__}, not a dict")
        missing = [key for key in CELL_KEYS if key not in cell]
        if missing:
            raise ValueError(f"cell {cell.get('id')!r} is missing key(s): {', '.join(missing)}")
        check_types(f"cell {index}: ", cell, {"id": str, "axes": dict, "config": dict, "per_seed": list, "summary": dict})
        if cell["id"] not in cell_labels(result["name"]):  # figures and tables look its label up in the catalog
            raise ValueError(f"cell {index}: {cell['id']!r} is not a cell id of {result['name']}")
        if cell["id"] in (other["id"] for other in result["cells"][:index]):
            raise ValueError(f"cell {index}: the id {cell['id']!r} is already an earlier cell's")
        if len(cell["per_seed"]) != result["seeds"]:
            raise ValueError(f"cell {cell['id']!r} has {len(cell['per_seed'])} seeds, the result says {result['seeds']}")
        for position, (entry, seed) in enumerate(zip(cell["per_seed"], seeds)):
            if not isinstance(entry, dict) or not {"seed", "status", "metrics"} <= set(entry):
                raise ValueError(f"cell {cell['id']!r}: a per-seed entry lacks seed, status or metrics")
            check_types(f"cell {cell['id']!r}, a seed's ", entry, {"seed": int, "status": str, "metrics": dict, "series": dict})
            if entry["seed"] != seed:
                raise ValueError(f"cell {cell['id']!r}: per-seed entry {position} has seed {entry['seed']}, a {run_kind} declares seed {seed}")
        for metric, stats in cell["summary"].items():
            if not isinstance(stats, dict) or set(stats) != {"mean", "std", "n"}:
                raise ValueError(f"cell {cell['id']!r}: summary of {metric!r} must have mean, std and n")
            if (
                not all(stats[key] is None or is_finite_number(stats[key]) for key in ("mean", "std"))
                or not isinstance(stats["n"], int)
                or isinstance(stats["n"], bool)
            ):
                raise ValueError(f"cell {cell['id']!r}: summary of {metric!r} must hold numbers (or null), not {stats!r}"[:300])
        check_summary(cell)


def write_result(name: str, result: dict, directory: str | Path | None = None, path: str | Path | None = None) -> Path:
    """Save a result as NAME.json (in data/results/, or data/results/fast/ for a --fast result,
    or ``directory``; regimes/REGIME/ under it for a regime other than the gentle one, replication/
    under that for a replication: ``result_path`` with the result's own fast, regime and replicate),
    or at ``path`` when given (a fallback when the disk filled), and return the path."""
    clean, _ = finite_json(result)  # run_experiment already nulls non-finite numbers; a hand-made result may not
    check_result(clean)
    where = (clean["fast"], directory, clean.get("regime", DEFAULT_REGIME), clean.get("replicate", False))
    path = Path(path) if path is not None else result_path(name, *where)
    return write_atomically(path, json_text(clean, separators=(",", ":"), ensure_ascii=False))  # compact: data/ stays small


class UnreadableResultError(ValueError):
    """A result file that exists but cannot be used (empty, not JSON, not the result schema);
    the message names the file, what is wrong and the command that remakes it."""


def load_result(name: str, fast: bool = False, directory: str | Path | None = None, regime: str = DEFAULT_REGIME, replicate: bool = False) -> dict:
    """Read a saved result (data/results/NAME.json by default; regimes/REGIME/NAME.json for another
    regime; replication/NAME.json under that for a replication). A missing file raises
    FileNotFoundError with the command that makes it; an empty, malformed or edited one (``check_result``)
    raises UnreadableResultError naming the file, what is wrong and the command that remakes it."""
    check_name(name)
    check_regime(regime)
    path = result_path(name, fast, directory, regime, replicate)
    in_regime_flag = f" --regime {regime}" if regime != DEFAULT_REGIME else ""
    remake = f"`python -m grpo_lab sweep {name}{in_regime_flag}" + (" --replicate" if replicate else "") + (" --fast" if fast else "") + "`"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: make it with {remake}")
    try:
        result = read_strict_json(path)
        check_result(result)
        if result.get("replicate", False) != replicate:
            raise ValueError(f"replicate={result.get('replicate', False)} in the file, in a folder for replicate={replicate}")
    except (ValueError, KeyError, TypeError) as error:  # JSONDecodeError, UnicodeDecodeError, NaN and nesting are ValueErrors
        reason = "it is empty" if path.stat().st_size == 0 else str(error).splitlines()[0] or type(error).__name__
        raise UnreadableResultError(f"{path} is not a readable result ({reason}): remake it with {remake}") from None
    return result
