"""How far one seed's history moves between 1 and 2 torch threads (data/README.md, "Where determinism holds").

python scripts/thread_determinism.py
"""

import torch

from grpo_lab.core.config import TrainConfig
from grpo_lab.trainer import train

out = {}
for threads in (1, 2):
    torch.set_num_threads(threads)
    out[threads] = train(TrainConfig(steps=20, eval_every=10, probe_every=0, device="cpu")).history
for key in ("reward", "grad_norm", "entropy"):
    diffs = [abs(a[key] - b[key]) / max(abs(b[key]), 1e-12) for a, b in zip(out[1], out[2]) if key in a and a[key] is not None]
    print(key, "largest relative difference 1 vs 2 threads:", f"{max(diffs):.2e}", "identical steps:", sum(d == 0 for d in diffs), "of", len(diffs))
print("eval", [r.get("eval_accuracy") for r in out[1] if "eval_accuracy" in r], [r.get("eval_accuracy") for r in out[2] if "eval_accuracy" in r])
