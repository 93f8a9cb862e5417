"""Run every benchmark in this folder, one process each, and print their reports in turn.

python benchmarks/run_all.py        # what `make benchmarks` runs; paste results into README.md
"""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    failures = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n## {script.name}\n", flush=True)
        failures += subprocess.run([sys.executable, str(script)], cwd=HERE.parent).returncode != 0
    sys.exit(1 if failures else 0)
