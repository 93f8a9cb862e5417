# Worked solution: one global baseline b, a moving average of past batch means. Each step uses the
# b it has (the first step: that batch's own mean), and only afterwards folds the batch in.
def ema_advantages(reward_batches, decay):
    baseline, advantages = None, []
    for rewards in reward_batches:
        if baseline is None:
            baseline = float(rewards.mean())
        advantages.append(rewards - baseline)
        baseline = decay * baseline + (1 - decay) * float(rewards.mean())
    return advantages
