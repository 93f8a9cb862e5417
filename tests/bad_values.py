"""The one table of values that TrainConfig must refuse (BAD_VALUES, every knob) and the odd values a
fuzzer throws at every knob and argument (ODD_VALUES): the tests, and scripts/fuzz_inputs.py, share them."""

import torch

NAN, INF = float("nan"), float("inf")
MPS_ABSENT = not torch.backends.mps.is_available()

# every knob, with values that must be refused: wrong types first, then out of range
BAD_VALUES = {
    "task": ["6d+", "", "2d/", "9d+", 2, None],
    "reference": ["best", "missing.pt", None, 1],
    "group_size": [1, 257, "8", 8.0, True, None],
    "prompts_per_step": [0, 1, 1025, "16", 16.0, True],  # 1: the default probe_every needs two groups
    "baseline": ["median", None, 1],
    "std_eps": [-1.0, -1e-4, 11.0, NAN, INF, "1e-4", True, None],
    "std_scope": ["prompt", None],
    "std_ddof": [2, -1, True, 1.0, "1"],
    "eps_mode": ["max", None],
    "ema_decay": [1.0, -0.1, NAN, "0.9", True],
    "kl_coef": [-0.1, 11.0, NAN, "0"],
    "clip_eps": [0.0, 11.0, NAN, "0.2"],
    "inner_epochs": [0, 17, 1.5, True],
    "policy_minibatches": [0, 17, 1.5, "4", True],  # 17 > the default prompts_per_step (16)
    "critic_schedule": ["verl", None, 1],
    "prompt_pool": [-1, 1.5, "256", True, None],
    "critic_trunk": ["joint", None, 1],
    "vf_coef": [0.0, -0.5, 101.0, NAN, "0.5"],
    "critic_lambda": [-0.5, 1.1, NAN, "1"],
    "critic_warmup_steps": [-1, 1001, 1.5, "2", True],
    "mc_rollouts": [0, 65, 1.5, "4"],
    "lr": [0.0, 2.0, NAN, INF, "1e-4", True, None, 10**400],
    "critic_lr": [0.0, NAN, "3e-4"],
    "critic_epochs": [0, 65, 4.0],
    "critic_minibatches": [0, 257, "4"],
    "value_clip": [-1.0, 101.0, NAN],
    "max_grad_norm": [0.0, -1.0, NAN, INF],
    "steps": [0, 100_001, 1.5, "150", True],
    "temperature": [0.0, -1.0, 11.0, NAN, INF, "1", True],
    "reward": ["fuzzy", None],
    "reward_offset": [1e7, NAN, INF, "0"],
    "reward_scale": [0.0, 1e7, NAN],
    "reward_noise": [-0.1, 1001.0, NAN],
    "hard_reward_scale": [0.0, NAN, "1"],
    "loss_agg": ["sum", None],
    "skip_zero_std_groups": ["no", "False", 1, 0, None],
    "micro_batch_size": [-1, 1.5, "0", True],
    "dynamic_sampling_batches": [-1, 65, 1.5, "2", True],
    "gae_lambda": [-0.1, 1.1, NAN],
    "eval_every": [-1, 1.0, True],
    "probe_every": [-1, "10"],
    "seed": [-1, 2**31, True, 1.5, "0", None],
    "device": ["tpu", "cuda:99", "", 5, None, *(["mps"] if MPS_ABSENT else [])],
}


def bad_cases() -> list[tuple[str, object]]:
    """BAD_VALUES as (knob, value) pairs."""
    return [(name, value) for name, values in BAD_VALUES.items() for value in values]


# values of every kind a fuzzer throws at every knob and argument: each must be accepted or refused in one line
ODD_VALUES = [
    "x",
    "",
    None,
    True,
    False,
    NAN,
    INF,
    -INF,
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
