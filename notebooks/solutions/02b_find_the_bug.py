# Worked solution. Line 1 takes the mean and std over the whole batch (rewards.mean(), rewards.std()),
# so a prompt the policy mostly gets right pushes all its answers up and a hard prompt pushes all
# its answers down: the update learns which prompts are easy, not which answers are better. GRPO
# takes them per group: rewards.mean(dim=1, keepdim=True), rewards.std(dim=1, keepdim=True).
bug_line = 1
