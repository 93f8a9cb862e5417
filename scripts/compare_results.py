"""Do two sweeps give the same numbers? Compares every result file under a fresh ``--out`` folder with
the same file under the shipped one, field by field, leaving out the fields that are wall-clock
measurements (their names contain ``time``, ``wall``, ``created``, ``elapsed`` or ``rss``).

python scripts/compare_results.py data/results /tmp/fresh   # after: python -m grpo_lab sweep NAME --out /tmp/fresh

Prints one line a file: "identical (except wall-clock fields)" or the number of differences and the
first three (path in the JSON, shipped value vs fresh value). Exit status 1 when any file differs.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

CLOCK_WORDS = ("time", "wall", "created", "elapsed", "rss")


def is_clock_field(key: str) -> bool:
    return any(word in key for word in CLOCK_WORDS)


def differences(shipped, fresh, path: str = "") -> list[tuple[str, str]]:
    """[(JSON path, 'shipped vs fresh')] for every value that differs, outside wall-clock fields."""
    if isinstance(shipped, dict) and isinstance(fresh, dict):
        found = []
        for key in sorted(set(shipped) | set(fresh)):
            if is_clock_field(str(key)):
                continue
            if key not in shipped or key not in fresh:
                found.append((f"{path}/{key}", "only in one"))
            else:
                found += differences(shipped[key], fresh[key], f"{path}/{key}")
        return found
    if isinstance(shipped, list) and isinstance(fresh, list):
        if len(shipped) != len(fresh):
            return [(path, f"{len(shipped)} items vs {len(fresh)}")]
        return [found for i, (a, b) in enumerate(zip(shipped, fresh)) for found in differences(a, b, f"{path}[{i}]")]
    both_nan = isinstance(shipped, float) and isinstance(fresh, float) and math.isnan(shipped) and math.isnan(fresh)
    return [] if shipped == fresh or both_nan else [(path, f"{str(shipped)[:60]} vs {str(fresh)[:60]}")]


def main(shipped_root: Path, fresh_root: Path) -> int:
    status = 0
    for fresh in sorted(fresh_root.rglob("*.json")):
        name = fresh.relative_to(fresh_root)
        shipped = shipped_root / name
        if not shipped.is_file():
            print(f"{name}: not in {shipped_root}")
            status = 1
            continue
        found = differences(json.loads(shipped.read_text()), json.loads(fresh.read_text()))
        print(f"{name}: " + ("identical (except wall-clock fields)" if not found else f"{len(found)} differences, e.g. {found[:3]}"))
        status |= bool(found)
    return status


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
