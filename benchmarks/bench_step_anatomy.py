"""What one GRPO step is made of, ours and TRL's: where the time goes, and how close each is to its arithmetic.

    python benchmarks/bench_step_anatomy.py              # ours; add --trl for TRL's GRPOTrainer too (needs the extra)
    python benchmarks/bench_step_anatomy.py --trl --json anatomy.json

The default step (16 prompts x G=8, 2d+, no evaluation or probe; TRL on the same config through
``grpo_lab.bridge``), one torch thread, each side in a fresh process. After warm-up steps, the
median wall time of a step, then a few steps under ``torch.profiler`` (with FLOP counting): the
self time of every operator, summed into kinds (matrix products, attention, element-wise maths,
copies and indexing, the optimiser, the rest), the number of operator calls, and the
floating-point operations of the matrix products. The machine's matrix-product speed is measured on the step's own largest shape
(a 640 x 64 by 64 x 256 product, about 90 GFLOP/s on one core here), so ``matmul floor`` is the
time the step's products would take with no overhead at all: no implementation of the same
arithmetic on this core can be faster than that. The profiler adds overhead of its own, so its
kinds are shares of the profiled time, scaled to the unprofiled median step. Measurements, not
assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import machine  # noqa: E402

WARMUP, TIMED, PROFILED = 10, 40, 10  # steps: untimed, timed, then profiled

KINDS = {  # operator name (aten::...) -> kind; any other operator counts as "the rest"
    "matrix products": ("mm", "addmm", "bmm", "matmul", "linear"),
    "attention": ("_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention_for_cpu_backward", "baddbmm"),
    "element-wise maths": (
        "gelu",
        "gelu_backward",
        "native_layer_norm",
        "native_layer_norm_backward",
        "_softmax",
        "_log_softmax",
        "_log_softmax_backward_data",
        "_softmax_backward_data",
        "exp",
        "mul",
        "add",
        "add_",
        "sub",
        "div",
        "neg",
        "sum",
        "mean",
        "clamp",
        "minimum",
        "where",
        "tanh",
        "pow",
        "sqrt",
    ),
    "copies and indexing": (
        "copy_",
        "cat",
        "index_select",
        "index",
        "scatter_add_",
        "gather",
        "embedding_dense_backward",
        "masked_fill",
        "repeat_interleave",
    ),
    "optimiser": ("_fused_adam_", "_foreach_norm", "_foreach_mul_", "linalg_vector_norm"),
}
KIND_OF = {name: kind for kind, names in KINDS.items() for name in names}


def gemm_rate() -> float:
    """FLOP/s of one thread on the step's largest matrix product ([640, 64] @ [64, 256]), best of 5 rounds."""
    left, right = torch.randn(640, 64), torch.randn(64, 256)
    for _ in range(50):
        left @ right
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(200):
            left @ right
        best = min(best, (time.perf_counter() - started) / 200)
    return 2 * 640 * 64 * 256 / best


def anatomy(step_ends: list[float], profiler: torch.profiler.profile) -> dict:
    """Median step (ms) from ``step_ends`` (the TIMED steps), and the profiled steps' kinds and FLOPs per step."""
    steps = [later - earlier for earlier, later in zip(step_ends, step_ends[1:])]
    self_us: dict[str, float] = {}
    matmul_flops, operator_calls = 0, 0
    for event in profiler.key_averages():
        name = event.key.removeprefix("aten::")
        if event.key.startswith("aten::"):
            operator_calls += event.count
            kind = KIND_OF.get(name, "the rest")
            self_us[kind] = self_us.get(kind, 0.0) + event.self_cpu_time_total
            if name in ("mm", "addmm", "bmm"):  # the composites (linear, matmul) call these: counted once
                matmul_flops += event.flops
    profiled_us = sum(event.self_cpu_time_total for event in profiler.key_averages())
    self_us["the rest"] = self_us.get("the rest", 0.0) + profiled_us - sum(self_us.values())  # Python, autograd, non-aten events
    return {
        "median_step_ms": 1e3 * statistics.median(steps),
        "shares": {kind: us / profiled_us for kind, us in self_us.items()},
        "matmul_gflop_per_step": matmul_flops / PROFILED / 1e9,
        "operator_calls_per_step": operator_calls / PROFILED,
    }


class Stepper:
    """Counts steps: records their end times while TIMED, then drives the profiler's schedule."""

    def __init__(self, profiler: torch.profiler.profile):
        self.profiler, self.count, self.ends = profiler, 0, []

    def __call__(self) -> None:
        self.count += 1
        if WARMUP <= self.count <= WARMUP + TIMED:
            self.ends.append(time.perf_counter())
        if self.count == WARMUP + TIMED:
            self.profiler.start()
        elif self.count == WARMUP + TIMED + PROFILED:
            self.profiler.stop()


def child(side: str) -> dict:
    from grpo_lab import TrainConfig, train

    torch.set_num_threads(1)
    steps = WARMUP + TIMED + PROFILED
    profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], with_flops=True)
    stepper = Stepper(profiler)
    if side == "ours":
        # on_step's first call is step 0 (the evaluation before training); the last step also evaluates, after the profiler stopped
        train(TrainConfig(steps=steps + 1, probe_every=0, eval_every=0, device="cpu"), on_step=lambda record: record["step"] and stepper())
    else:
        import transformers

        from grpo_lab.bridge import make_trainer

        class Callback(transformers.TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                stepper()

        make_trainer(TrainConfig(steps=steps, device="cpu"), Path(tempfile.mkdtemp(prefix="anatomy-")), callbacks=[Callback()]).train()
    return anatomy(stepper.ends, profiler)


def fresh(side: str) -> dict:
    output = subprocess.run([sys.executable, __file__, "--child", side], capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trl", action="store_true", help="also TRL's GRPOTrainer (needs pip install -e '.[trl]')")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rate = gemm_rate()
    sides = {side: fresh(side) for side in (("ours", "trl") if args.trl else ("ours",))}
    for result in sides.values():
        result["matmul_floor_ms"] = 1e3 * result["matmul_gflop_per_step"] * 1e9 / rate
    kinds = [*KINDS, "the rest"]
    print(f"Machine: {machine()}; matrix products at {rate / 1e9:.0f} GFLOP/s ([640, 64] @ [64, 256]).")
    print(f"Command: `python benchmarks/bench_step_anatomy.py {' '.join(argv if argv is not None else sys.argv[1:])}".rstrip() + "`")
    print()
    names = {"ours": "grpo_lab `train`", "trl": "TRL `GRPOTrainer`"}
    print("| one GRPO step, 16 prompts x G=8, one thread | " + " | ".join(names[side] for side in sides) + " |")
    print("|---|" + "---|" * len(sides))
    print("| median step (unprofiled) | " + " | ".join(f"{r['median_step_ms']:.1f} ms" for r in sides.values()) + " |")
    for kind in kinds:
        cells = [f"{r['shares'].get(kind, 0.0) * r['median_step_ms']:.1f} ms ({100 * r['shares'].get(kind, 0.0):.0f}%)" for r in sides.values()]
        print(f"| {kind} | " + " | ".join(cells) + " |")
    print(
        "| torch operator calls (aten::, nested ones included) | " + " | ".join(f"{r['operator_calls_per_step']:,.0f}" for r in sides.values()) + " |"
    )
    print("| matrix-product arithmetic | " + " | ".join(f"{r['matmul_gflop_per_step']:.3f} GFLOP" for r in sides.values()) + " |")
    print("| matmul floor (that arithmetic at the measured rate) | " + " | ".join(f"{r['matmul_floor_ms']:.1f} ms" for r in sides.values()) + " |")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "gemm_gflops": rate / 1e9, "sides": sides}, indent=1))
    return sides


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
    else:
        main()
