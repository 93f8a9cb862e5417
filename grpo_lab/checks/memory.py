"""How much memory a training step needs, estimated before a run starts, and how much there is.

A step holds some memory for every response of the batch at once (sampling's key/value cache,
one no-grad forward of the reference, per-token tensors) and autograd's saved activations for
the responses of one backward pass (``micro_batch_size`` of them, or the whole batch). The
constants are for the default TinyTransformer (64 wide, 2 layers) and were calibrated on
``python -m grpo_lab sweep batch-blowup`` (data/results/batch-blowup.json): autograd kept about
44 KB per 4-token ``2d+`` response (``saved_activations_mb`` / ``responses_per_step`` at 16 x 128
and 64 x 16), and the process peaked at 360-475 MB in all. The estimate errs on the high side
(tests/test_reliability.py checks it against those measurements).
"""

from __future__ import annotations

import os

import torch

ACTIVATION_BYTES_PER_ANSWER_TOKEN = 12_000  # autograd's saved tensors per answer token in a backward pass (measured ~11 KB)
BATCH_BYTES_PER_TOKEN = 2_500  # per prompt+answer position of every response: KV cache (~1 KB), one no-grad layer, per-token tensors
BASE_BYTES = 500 * 2**20  # torch itself, the two policies, Adam's state, the eval set (measured peak 360 MB at the smallest batch)
USABLE_FRACTION = 0.8  # of the memory available now: the rest is left to the notebook, the browser, the OS


def step_bytes(responses: int, backward_responses: int, answer_tokens: int, sequence_tokens: int) -> int:
    """Estimated peak bytes of one training step: ``responses`` in the batch (P x G), of which
    ``backward_responses`` are back-propagated at once, answers of up to ``answer_tokens`` tokens
    after prompts that make ``sequence_tokens`` in all."""
    return BASE_BYTES + responses * sequence_tokens * BATCH_BYTES_PER_TOKEN + backward_responses * answer_tokens * ACTIVATION_BYTES_PER_ANSWER_TOKEN


def available_bytes(device: torch.device) -> int | None:
    """Memory free for a run on ``device`` now: the GPU's free memory for CUDA, else the host's
    available memory (Linux MemAvailable, or the free pages elsewhere); None if unknown."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
