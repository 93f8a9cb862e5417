"""What input and files must pass before the algorithm (grpo_lab.core) sees them: the config's rules,
the public functions' argument checks, devices, memory, paths, atomic files and policy checkpoints."""
