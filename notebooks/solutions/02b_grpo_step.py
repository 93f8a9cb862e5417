# Worked solution: one GRPO step by hand, on the trainer's policy, problems, reward model and
# generator (the order of the random draws is the trainer's: problems, then answers).
import torch

from grpo_lab.core.model import decode, sample, token_logprobs
from grpo_lab.task import Task


def grpo_step(policy, optimizer, problems, reward_model, generator, config):
    """One step. Returns (rewards [P, G], the loss as a float)."""
    P, G = config.prompts_per_step, config.group_size
    longest_answer = Task.parse(config.task).max_answer_length
    # 1. a group: G answers to each of P fresh problems; row p*G + i is answer i to problem p
    batch = problems.sample(P)
    prompts = batch.prompts.repeat_interleave(G, dim=0)  # [P*G, Lp]
    answers, mask = sample(policy, prompts, longest_answer, config.temperature, generator)  # [P*G, La]
    # 2. score each answer: 1 if it is exactly right, else 0
    targets = [answer for answer in batch.answers for _ in range(G)]
    rewards, _ = reward_model([decode(row) for row in answers.tolist()], targets)
    rewards = rewards.view(P, G)
    # columns after every answer has ended carry nothing: drop them (as the trainer does)
    used = int(mask.sum(dim=1).max())
    answers, mask = answers[:, :used], mask[:, :used]
    # 3. the log-probs of the sampled tokens under the policy being trained, with their graph
    logprobs = token_logprobs(policy, prompts, answers)  # [P*G, La]
    # 4. advantages and loss: your grpo_loss from notebook 02. The batch is used once, so the
    # sampling policy is this one (old = logprobs, detached: the ratio is 1), and kl_coef is 0
    # (the trainer's default), so the reference log-probs do not matter
    frozen = logprobs.detach()
    options = {"std_eps": config.std_eps, "clip_eps": config.clip_eps, "kl_coef": 0.0}
    _, _, loss = grpo_loss(rewards, logprobs, frozen, frozen, mask, **options)  # noqa: F821 (the cell above defines it)
    # 5. one optimiser step, the gradient's norm clipped first
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
    optimizer.step()
    return rewards, float(loss.detach())
