# Worked solution (a prediction; the measurement is data/results/grpo-vs-ppo.json).
# Reasoning: both see 128 responses per step, but PPO with G = 1 spreads them over 128 different
# prompts while GRPO spends them on 16 prompts x 8 answers. Notebook 04a measured that, at equal
# samples, more prompts beat bigger groups once a group has a few answers. The critic itself adds
# little on 3-4 token answers (and its explained variance stays near 0, 05a section 2b), and PPO
# whitens its advantages over the batch, which subtracts the batch mean: a baseline in its own
# right. So PPO (G = 1) should end slightly higher, for its prompts rather than for its critic.
equal_samples_prediction = "ppo"
