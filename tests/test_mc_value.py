"""The Monte-Carlo value baseline (VinePPO): exact on a policy that always ends its answer at once,
and deduplicated states (one estimate per distinct prompt and prefix)."""

import torch

from grpo_lab.core.mc_value import mc_prefix_values
from grpo_lab.core.model import EOS_ID, PAD_ID, TinyTransformer, answer_mask, encode
from grpo_lab.task import RewardModel, Task, problem_of_prompt


def always_ends_policy() -> TinyTransformer:
    """A policy whose next token is EOS with probability 1 - 1e-40 wherever it is: continuing a prefix
    answers exactly the prefix."""
    policy = TinyTransformer()
    torch.nn.init.zeros_(policy.head.weight)
    torch.nn.init.zeros_(policy.head.bias)
    with torch.no_grad():
        policy.head.bias[EOS_ID] = 100.0
    return policy


def answers_to(prompt: str, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """prompts [B, Lp], answers and mask [B, La] for answer texts to one prompt (each ended by EOS)."""
    width = Task.parse("2d+").max_answer_length
    rows = [encode(text) + [EOS_ID] + [PAD_ID] * (width - len(text) - 1) for text in texts]
    answers = torch.tensor(rows)
    return torch.tensor([encode(prompt)] * len(texts)), answers, answer_mask(answers)


def test_problem_of_prompt_reads_the_right_answer_and_difficulty():
    assert problem_of_prompt(torch.tensor(encode("17+25="))) == ("42", True)
    assert problem_of_prompt(torch.tensor(encode("12+34="))) == ("46", False)


def test_monte_carlo_values_are_exact_for_a_policy_that_answers_its_prefix():
    prompts, answers, mask = answers_to("12+34=", ["46", "4", "47"])
    values, rollouts = mc_prefix_values(
        always_ends_policy(), prompts, answers, mask, RewardModel(offset=0.5), 3, 1.0, torch.Generator().manual_seed(0)
    )
    # V(s_t) = reward of the prefix answered as it is (+0.5 offset): only "46" itself is right
    expected = torch.zeros_like(values)  # 0 after each answer's end
    expected[0, :3] = torch.tensor([0.5, 0.5, 1.5])  # the states "", "4", "46" (before EOS)
    expected[1, :2] = torch.tensor([0.5, 0.5])  # "", "4"
    expected[2, :3] = torch.tensor([0.5, 0.5, 0.5])  # "", "4", "47"
    assert torch.equal(values, expected)
    # distinct states: the prompt alone and "4" (shared by all three), then "46" and "47": 4 states x 3 rollouts
    assert rollouts == 4 * 3
