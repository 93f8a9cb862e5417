"""Apply each wiring bug listed in tests/mutations.json to a temporary copy of the package, run the
tests named for it, and report whether they catch it.

    python scripts/mutations.py                # every mutation, about 2 minutes on 2 cores
    python scripts/mutations.py --only NAME    # one (or several: repeat --only)

A mutation is {"name", "bug" (in words), "file", "find" (text that occurs exactly once in the file),
"replace", "tests" (pytest node ids)}. First the named tests must pass on the unmutated copy; then,
per mutation, "caught" means its tests failed, "MISSED" that they passed, "does not apply" that the
text to find is no longer in the file once (the code changed: update the list), "error" that pytest
stopped for another reason (an import error is not a test catching a bug). Exit status 0 only when
every mutation is caught.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTATIONS_PATH = ROOT / "tests" / "mutations.json"
COPIED = ("grpo_lab", "tests", "pyproject.toml")  # data/ is linked, not copied: it is only read
TEST_TIMEOUT_S = 600


def load_mutations(path: Path = MUTATIONS_PATH) -> list[dict]:
    mutations = json.loads(path.read_text())
    keys = {"name", "bug", "file", "find", "replace", "tests"}
    for mutation in mutations:
        if set(mutation) != keys:
            raise SystemExit(f"error: {path.name}: mutation {mutation.get('name')!r} needs exactly the keys {sorted(keys)}")
    return mutations


def make_copy(folder: Path) -> None:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, folder / name)
    (folder / "data").symlink_to(ROOT / "data", target_is_directory=True)


def run_tests(folder: Path, tests: list[str]) -> int:
    """pytest's exit status for ``tests`` run on the copy in ``folder`` (0 passed, 1 some failed)."""
    environment = {**os.environ, "PYTHONPATH": str(folder), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    try:
        return subprocess.run(command, cwd=folder, env=environment, capture_output=True, timeout=TEST_TIMEOUT_S).returncode
    except subprocess.TimeoutExpired:
        return -1


def mutate(folder: Path, mutation: dict) -> str | None:
    """Apply ``mutation`` to the copy; the original text to restore, or None if it does not apply."""
    path = folder / mutation["file"]
    original = path.read_text()
    if original.count(mutation["find"]) != 1:
        return None
    path.write_text(original.replace(mutation["find"], mutation["replace"]))
    return original


def outcome_of(status: int) -> str:
    return {0: "MISSED", 1: "caught"}.get(status, f"error (pytest exit status {status})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this mutation (repeatable)")
    args = parser.parse_args(argv)
    mutations = load_mutations()
    unknown = sorted(set(args.only) - {mutation["name"] for mutation in mutations})
    if unknown:
        print(f"error: --only {', '.join(unknown)}: not in {MUTATIONS_PATH.name}", file=sys.stderr)
        return 2
    chosen = [mutation for mutation in mutations if not args.only or mutation["name"] in args.only]
    with tempfile.TemporaryDirectory(prefix="grpo-lab-mutations-") as temporary:
        folder = Path(temporary)
        make_copy(folder)
        all_tests = sorted({test for mutation in chosen for test in mutation["tests"]})
        status = run_tests(folder, all_tests)
        if status != 0:
            print(f"error: the tests fail before any mutation (pytest exit status {status}); fix them first", file=sys.stderr)
            return 2
        results = []
        for mutation in chosen:
            original = mutate(folder, mutation)
            if original is None:
                outcome = "does not apply"
            else:
                outcome = outcome_of(run_tests(folder, mutation["tests"]))
                (folder / mutation["file"]).write_text(original)
            results.append(outcome)
            print(f"{outcome:>16}  {mutation['name']}: {mutation['bug']}", flush=True)
    caught = results.count("caught")
    print(f"{caught} of {len(results)} mutations caught")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
