"""The algorithm, in plain torch: no file I/O, no input checks, no imports from the rest of the package.

Read it in this order:
1. model.py       the tiny transformer, the vocabulary, ``sample`` and ``token_logprobs``
2. advantages.py  every group baseline's arithmetic on a [prompts, G] reward tensor
3. losses.py      the clipped-ratio loss, the k3 KL, the loss aggregations (GRPO, DAPO, Dr. GRPO)
4. loop.py        one training step as numbered stages: sample -> score -> advantages -> loss ->
                  update -> metrics (``train_step``), and the loop around it (``run``)
5. critic.py and mc_value.py   PPO's learned values with GAE, and VinePPO's Monte-Carlo values
6. probes.py      how noisy the policy gradient is (grad_var, grad_snr)
config.py is TrainConfig, every knob with one line of help. Checks of input and files live in
grpo_lab/checks/; ``grpo_lab.train`` runs them before it hands over to ``loop.run``.
"""
