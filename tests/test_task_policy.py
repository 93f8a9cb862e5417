"""The toy task, its rewards, the tiny policy's sampling and log-probs, and checkpoint files."""

from dataclasses import replace

import pytest
import torch
from conftest import assert_one_line_error, assert_one_line_naming

from grpo_lab.checks.checkpoints import load_policy, load_reference_policy, save_policy
from grpo_lab.core.config import TrainConfig
from grpo_lab.core.model import EOS_ID, PAD_ID, PolicyConfig, TinyTransformer, answer_mask, decode, encode, pack_answers, sample, token_logprobs
from grpo_lab.task import ProblemSampler, RewardModel, Task, eval_path, eval_problems, score_answers, solve
from grpo_lab.trainer import train


def test_task_spec_parsing():
    assert Task.parse("2d+") == Task(2, "+")
    assert Task.parse("1d*-+") == Task(1, "+-*")  # ops are normalised to a fixed order
    assert Task.parse("5d+") == Task(5, "+")  # the long-answer regime's task
    for bad in ("6d+", "2d/", "d+", "2+"):
        with pytest.raises(ValueError) as caught:
            Task.parse(bad)
        assert_one_line_error(caught.value, "task", bad)


def test_problems_prompts_and_answers():
    task = Task(2, "+-*")
    assert task.prompt(7, "+", 35) == "07+35="
    assert (solve(7, "-", 9), solve(12, "*", 11), solve(99, "+", 99)) == ("-2", "132", "198")
    assert decode(encode("12+34=") + [EOS_ID, 5, 5]) == "12+34="
    assert task.max_answer_length == 2 * 2 + 2  # 4 digits of a product, a sign slot, EOS


def test_eval_sets_are_shipped_fixed_and_held_out():
    task = Task.parse("2d+")
    assert eval_path(task).is_file()
    problems = eval_problems(task)
    assert len(problems) == 300 and len(set(problems)) == 300
    drawn = ProblemSampler(task, seed=0).sample(2000)
    held_out = {task.prompt(*p) for p in problems}
    assert not held_out & set(drawn.texts)


def test_sampler_is_seeded():
    task = Task.parse("2d+-")
    assert ProblemSampler(task, 3).sample(50).texts == ProblemSampler(task, 3).sample(50).texts
    assert ProblemSampler(task, 3).sample(50).texts != ProblemSampler(task, 4).sample(50).texts


def test_exact_and_partial_rewards():
    answers = ["123", "123", "123", "45"]
    responses = ["123", "124", "23", "145"]
    assert score_answers(responses, answers, "exact").tolist() == [1, 0, 0, 0]
    partial = score_answers(responses, answers, "partial")
    assert partial.tolist() == pytest.approx([1.0, 2 / 3, 2 / 3, 2 / 3])
    with pytest.raises(ValueError) as caught:
        score_answers(responses, answers, "fuzzy")
    assert_one_line_error(caught.value, "reward", "fuzzy")


def test_reward_model_distortions_are_seeded():
    model = RewardModel("exact", offset=5.0, scale=2.0)
    rewards, correct = model(["1", "2"], ["1", "1"])
    assert rewards.tolist() == [7.0, 5.0] and correct.tolist() == [1.0, 0.0]
    noisy_a, _ = RewardModel("exact", noise=0.1, seed=1)(["1"] * 8, ["1"] * 8)
    noisy_b, _ = RewardModel("exact", noise=0.1, seed=1)(["1"] * 8, ["1"] * 8)
    assert torch.equal(noisy_a, noisy_b) and noisy_a.std() > 0


def test_reward_model_scales_the_hard_problems_last():
    # (2 * r + 1) for every response, then x0.1 for the responses to hard problems
    model = RewardModel("exact", offset=1.0, scale=2.0, hard_scale=0.1)
    rewards, correct = model(["1", "1", "2", "2"], ["1", "1", "1", "1"], hard=torch.tensor([True, False, True, False]))
    assert rewards.tolist() == pytest.approx([0.3, 3.0, 0.1, 1.0]) and correct.tolist() == [1.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError) as caught:
        model(["1"], ["1"])
    assert_one_line_naming(caught.value, "hard_reward_scale", "hard=")  # the knob, and the argument it needs


def test_answer_mask_stops_after_first_eos():
    answers = torch.tensor([[3, 4, EOS_ID, 5], [EOS_ID, 3, 3, 3], [3, 3, 3, 3]])
    assert answer_mask(answers).tolist() == [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]]


def test_sampling_masks_and_padding():
    policy = load_reference_policy("default")
    prompts = ProblemSampler(Task.parse("2d+"), 0).sample(64).prompts
    answers, mask = sample(policy, prompts, 4, temperature=1.0, generator=torch.Generator().manual_seed(0))
    assert answers.shape == mask.shape == (64, 4)
    assert (answers[mask == 0] == PAD_ID).all()
    again, _ = sample(policy, prompts, 4, temperature=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(answers, again)


def test_cached_sampling_matches_full_recomputation():
    policy = load_reference_policy("default")
    prompts = ProblemSampler(Task.parse("2d+"), 1).sample(32).prompts
    answers, _ = sample(policy, prompts, 4, temperature=0)
    sequence = prompts
    with torch.no_grad():
        for _ in range(4):  # greedy decoding without the key/value cache
            sequence = torch.cat([sequence, policy(sequence)[:, -1].argmax(-1, keepdim=True)], dim=1)
    recomputed = sequence[:, prompts.shape[1] :]
    mask = answer_mask(recomputed)
    assert torch.equal(answers, recomputed.masked_fill(mask == 0, PAD_ID))


def test_shared_prompts_give_the_same_logprobs_and_gradients_as_a_plain_forward():
    # a GRPO batch: each prompt repeated G=4 times in a row, plus one prompt that appears once
    policy = load_reference_policy("default")
    distinct = ProblemSampler(Task.parse("2d+"), 5).sample(4).prompts
    prompts = torch.cat([distinct.repeat_interleave(4, dim=0), distinct[:1]])
    answers, mask = sample(policy, prompts, 5, temperature=1.0, generator=torch.Generator().manual_seed(0))
    parameters = list(policy.parameters())
    shared = token_logprobs(policy, prompts, answers)
    plain = token_logprobs(policy, prompts, answers, packed=False)
    assert torch.allclose(shared, plain, atol=1e-5)
    shared_gradients = torch.autograd.grad((shared * mask).sum(), parameters)
    plain_gradients = torch.autograd.grad((plain * mask).sum(), parameters)
    for ours, reference in zip(shared_gradients, plain_gradients):
        assert torch.allclose(ours, reference, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    ("run_lengths", "rows_per_sequence"),
    [((8, 8, 8), 8), ((16, 8, 24), 8), ((4, 8, 12), 4), ((3, 6, 3), 3), ((8, 8, 1), 1), ((1, 1, 1), 1)],
)
def test_packed_answers_give_each_rows_logprobs_and_gradients(run_lengths, rows_per_sequence):
    # runs of equal prompts are cut into pieces of g rows (the largest divisor of every run, at most
    # MAX_PACKED_ANSWERS); each piece is one sequence, and each row still gets its own log-probs
    policy = load_reference_policy("default")
    distinct = ProblemSampler(Task.parse("2d+"), 6).sample(len(run_lengths)).prompts
    prompts = torch.cat([distinct[index : index + 1].repeat(length, 1) for index, length in enumerate(run_lengths)])
    parameters = list(policy.parameters())
    for answer_length in (1, 3, 5):
        answers, mask = sample(policy, prompts, answer_length, temperature=1.0, generator=torch.Generator().manual_seed(answer_length))
        assert pack_answers(prompts, answers).rows_per_sequence == rows_per_sequence
        packed, plain = token_logprobs(policy, prompts, answers), token_logprobs(policy, prompts, answers, packed=False)
        assert torch.allclose(packed, plain, atol=1e-5)
        packed_gradients = torch.autograd.grad((packed * mask).sum(), parameters)
        plain_gradients = torch.autograd.grad((plain * mask).sum(), parameters)
        for ours, reference in zip(packed_gradients, plain_gradients):
            assert torch.allclose(ours, reference, atol=1e-4, rtol=1e-4)


def test_packed_answers_see_the_prompt_and_their_own_tokens_only():
    prompts = ProblemSampler(Task.parse("2d+"), 0).sample(1).prompts.repeat(3, 1)  # one prompt, g = 3
    answers = torch.tensor([[3, 4, EOS_ID], [5, EOS_ID, PAD_ID], [6, 7, EOS_ID]])
    packing = pack_answers(prompts, answers)
    Lp, fed = prompts.shape[1], answers.shape[1] - 1
    assert packing.tokens.shape == (1, Lp + 3 * fed) and packing.rows_per_sequence == 3
    assert packing.tokens[0, Lp:].tolist() == [3, 4, 5, EOS_ID, 6, 7]  # each answer without its last token
    assert packing.positions[Lp:].tolist() == [Lp, Lp + 1] * 3  # every answer starts right after the prompt
    visible = packing.visible
    assert torch.equal(visible[:Lp, :Lp], torch.ones(Lp, Lp, dtype=torch.bool).tril())  # the prompt is causal
    second_answer_second_token = Lp + fed + 1
    seen = visible[second_answer_second_token].nonzero().squeeze(1).tolist()
    assert seen == [*range(Lp), Lp + fed, Lp + fed + 1]  # the prompt, then its own answer's tokens so far


def test_sampling_stops_when_every_answer_has_ended_and_still_pads_to_length():
    policy = load_reference_policy("default")
    prompts = ProblemSampler(Task.parse("2d+"), 0).sample(16).prompts
    answers, mask = sample(policy, prompts, 10, temperature=0)  # twice the longest 2d+ answer
    assert answers.shape == mask.shape == (16, 10)
    assert mask[:, -1].sum() == 0 and (answers[mask == 0] == PAD_ID).all()


@pytest.mark.parametrize(("temperature", "chunk_size"), [(1.0, 64), (1.0, 100), (0.7, 7), (0.0, 48)])
def test_sampling_in_chunks_gives_the_whole_batchs_answers_and_generator_state(temperature, chunk_size):
    policy = load_reference_policy("weak")  # answers of different lengths: chunks end at different tokens
    prompts = ProblemSampler(Task.parse("2d+-"), 4).sample(32).prompts.repeat_interleave(8, dim=0)  # 256 rows
    whole_generator, chunked_generator = torch.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    whole = sample(policy, prompts, 5, temperature, whole_generator)
    chunked = sample(policy, prompts, 5, temperature, chunked_generator, chunk_size=chunk_size)
    assert torch.equal(whole[0], chunked[0]) and torch.equal(whole[1], chunked[1])
    assert torch.equal(whole_generator.get_state(), chunked_generator.get_state())  # the next draws agree too
    assert torch.equal(torch.rand(4, generator=whole_generator), torch.rand(4, generator=chunked_generator))


def test_gradient_accumulation_samples_the_same_batches():
    config = TrainConfig(steps=2, eval_every=0, probe_every=0, group_size=4, prompts_per_step=8)
    whole, accumulated = train(config), train(replace(config, micro_batch_size=12))
    for mine, theirs in zip(whole.history[1:], accumulated.history[1:]):
        assert mine["reward"] == theirs["reward"] and mine["frac_reward_zero_std"] == theirs["frac_reward_zero_std"]


def test_token_logprobs_are_normalised_log_probabilities():
    policy = load_reference_policy("default")
    prompts = ProblemSampler(Task.parse("2d+"), 2).sample(8).prompts
    answers, _ = sample(policy, prompts, 4, temperature=0)
    with torch.no_grad():
        logprobs, entropy = token_logprobs(policy, prompts, answers, with_entropy=True)
    assert logprobs.shape == entropy.shape == (8, 4)
    assert (logprobs <= 0).all() and (entropy >= 0).all()
    # greedy tokens are the most likely ones, so each has probability at least 1/vocab
    assert (logprobs[:, 0] >= -torch.log(torch.tensor(16.0))).all()


def test_policy_is_small():
    assert 10_000 <= TinyTransformer().num_parameters() <= 500_000


def test_save_and_load_round_trip(tmp_path):
    policy = TinyTransformer(PolicyConfig(d_model=32, n_layers=1))
    path = save_policy(policy, tmp_path / "p.pt", {"note": "test"})
    loaded = load_policy(path)
    tokens = torch.randint(0, 16, (2, 6))
    with torch.no_grad():
        assert torch.allclose(policy(tokens), loaded(tokens))
    assert loaded.metadata == {"note": "test"}


def test_load_errors_are_one_clear_line(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        load_policy(tmp_path / "missing.pt")
    assert_one_line_naming(caught.value, tmp_path / "missing.pt")
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError) as caught:
        load_policy(corrupt)
    assert_one_line_naming(caught.value, corrupt)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(ValueError) as caught:
        load_policy(foreign)
    assert_one_line_naming(caught.value, foreign)
    mismatched = tmp_path / "mismatched.pt"
    save_policy(TinyTransformer(PolicyConfig(d_model=32)), mismatched)
    checkpoint = torch.load(mismatched, weights_only=True)
    checkpoint["config"]["d_model"] = 64
    torch.save(checkpoint, mismatched)
    with pytest.raises(ValueError) as caught:
        load_policy(mismatched)
    assert_one_line_naming(caught.value, mismatched, "d_model=64")  # the file, and the architecture it names
    with pytest.raises(ValueError) as caught:
        load_reference_policy("best")
    assert_one_line_error(caught.value, "reference", "best")


def test_reference_policies_have_documented_accuracy():
    from grpo_lab.task import eval_accuracy

    task = Task.parse("2d+")
    default = eval_accuracy(load_reference_policy("default"), task)
    weak = eval_accuracy(load_reference_policy("weak"), task)
    assert 0.40 <= default <= 0.75
    assert weak <= 0.15


def test_shipped_eval_sets_match_their_generator():
    from grpo_lab.task import generate_eval_problems

    for spec in ("1d+", "2d+", "3d+-*", "4d*", "5d+"):  # 4-5 digits: distinct seeded draws, not a permutation
        task = Task.parse(spec)
        assert eval_problems(task) == generate_eval_problems(task)


def test_pretraining_is_deterministic():
    from grpo_lab.pretrain import PretrainRecipe, pretrain

    recipe = PretrainRecipe("test", steps=5, batch_size=16)
    first, _ = pretrain(recipe)
    second, _ = pretrain(recipe)
    for a, b in zip(first.state_dict().values(), second.state_dict().values()):
        assert torch.equal(a, b)


@pytest.mark.slow  # pretrains the sparse recipe twice by its rule (about 260 steps, 5-10 s each)
def test_pretrain_rebuilds_a_reference_bit_for_bit_on_the_machine_running_it(tmp_path):
    """The sparse reference built twice by its start rule, with the caller at 1 and at 2 torch threads,
    gives the same file at the same step (pretrain pins its own threads, its evaluations too). Bytes
    are not compared with the shipped file: on another CPU torch's kernels sum in another order and
    this chaotic run lands elsewhere (data/README.md)."""

    from grpo_lab.checks.checkpoints import save_policy
    from grpo_lab.checks.files import sha256_of
    from grpo_lab.pretrain import PRETRAIN_THREADS, START_RULES, pretrain_reference

    previous = torch.get_num_threads()
    digests, builds = [], []
    try:
        for caller_threads in (1, 2):
            torch.set_num_threads(caller_threads)
            policy, accuracy, steps = pretrain_reference("sparse")
            assert torch.get_num_threads() == caller_threads  # restored
            metadata = {"name": "sparse", "torch_threads": PRETRAIN_THREADS}
            digests.append(sha256_of(save_policy(policy, tmp_path / f"sparse-{caller_threads}.pt", metadata)))
            builds.append((accuracy, steps))
    finally:
        torch.set_num_threads(previous)
    assert digests[0] == digests[1] and builds[0] == builds[1]
    accuracy, steps = builds[0]
    rule_accuracy, every, most_steps = START_RULES["sparse"]
    assert rule_accuracy <= accuracy < 1.0 and steps % every == 0 and steps < most_steps  # stopped by its rule, still learning


def test_a_start_rule_stops_pretraining_at_the_first_checkpoint_at_or_above_its_accuracy(monkeypatch):
    """checkpoint_evaluator, on scripted accuracies: it evaluates every N steps, and with stop_at ends
    pretraining at the first checkpoint at or above it, with the weights of a run of that many steps."""
    import itertools

    import grpo_lab.pretrain as pretrain_module
    from grpo_lab.pretrain import PretrainRecipe, checkpoint_evaluator, pretrain

    def scripted(*accuracies):
        reports = itertools.chain(accuracies, itertools.repeat(0.0))  # what each evaluation reports, in order
        monkeypatch.setattr(pretrain_module, "eval_accuracy", lambda policy, task: next(reports))

    recipe, task = PretrainRecipe("test", steps=12, batch_size=8), Task.parse("2d+")
    scripted(0.1, 0.49, 0.5, 0.9)
    checkpoints = []
    stopped, _ = pretrain(recipe, after_step=checkpoint_evaluator(task, 3, checkpoints, stop_at=0.5))
    assert checkpoints == [{"step": 3, "eval_accuracy": 0.1}, {"step": 6, "eval_accuracy": 0.49}, {"step": 9, "eval_accuracy": 0.5}]
    plain, _ = pretrain(replace(recipe, steps=9))
    for a, b in zip(stopped.state_dict().values(), plain.state_dict().values()):
        assert torch.equal(a, b)
    scripted(0.1, 0.9, 0.2, 0.3)
    checkpoints = []
    pretrain(recipe, after_step=checkpoint_evaluator(task, 3, checkpoints))  # a scan: no stop_at, every checkpoint
    assert [point["eval_accuracy"] for point in checkpoints] == [0.1, 0.9, 0.2, 0.3]


def test_pretrain_out_writes_a_rule_built_reference_elsewhere_and_a_rule_never_met_is_one_line(monkeypatch, tmp_path, capsys):
    import grpo_lab.pretrain as pretrain_module
    import grpo_lab.task as task_module
    from grpo_lab.cli import main
    from grpo_lab.pretrain import PretrainRecipe

    # where a rebuild without --out would go, away from the shipped files in case --out is ignored
    monkeypatch.setattr(pretrain_module, "reference_path", lambda name: tmp_path / "reference" / f"{name}.pt")
    monkeypatch.setattr(pretrain_module, "record_checksum", lambda path: pytest.fail("--out records no checksum"))
    monkeypatch.setitem(pretrain_module.RECIPES, "default", PretrainRecipe("default", steps=6, batch_size=8))
    monkeypatch.setitem(pretrain_module.START_RULES, "default", (0.5, 2, 10))
    monkeypatch.setattr(task_module, "write_eval_set", lambda task: pytest.fail("--out writes the policy only"))
    reports = iter([0.2, 0.6, 0.6])  # checkpoints at steps 2 and 4, then the final evaluation
    monkeypatch.setattr(pretrain_module, "eval_accuracy", lambda policy, task: next(reports))
    assert main(["pretrain", "--only", "default", "--out", str(tmp_path / "default.pt")]) == 0
    metadata = load_policy(tmp_path / "default.pt").metadata
    assert (metadata["steps"], metadata["eval_accuracy"]) == (4, 0.6)  # the rule's step, not the recipe's 6
    assert not (tmp_path / "reference").exists()
    monkeypatch.setattr(pretrain_module, "eval_accuracy", lambda policy, task: 0.3)
    capsys.readouterr()

    def error_line() -> str:  # stderr also holds the progress bar
        (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
        return line

    assert main(["pretrain", "--only", "default", "--out", str(tmp_path / "never.pt")]) == 2
    assert_one_line_naming(error_line(), "default", "0.5", "10 steps", "START_RULES")
    assert not (tmp_path / "never.pt").exists()
    assert main(["pretrain", "--out", str(tmp_path / "which.pt")]) == 2  # --out names one reference: --only is needed
    assert_one_line_naming(error_line(), "--out", "--only")


@pytest.mark.slow  # pretrains default by its rule: about 300 steps, each one evaluated (15-40 s)
def test_default_rebuilt_by_its_rule_lands_near_the_shipped_accuracy():
    """default.pt is older than its rule and no rebuild gives its bytes, but its rule, the first step at
    or above its accuracy, lands within 0.05 of the shipped file's greedy accuracy (data/README.md)."""
    from grpo_lab.pretrain import START_RULES, pretrain_reference
    from grpo_lab.task import eval_accuracy

    shipped = eval_accuracy(load_reference_policy("default"), Task.parse("2d+"))
    _, accuracy, steps = pretrain_reference("default")
    assert accuracy >= START_RULES["default"][0] and steps < START_RULES["default"][2]
    assert abs(accuracy - shipped) <= 0.05, (accuracy, steps, shipped)


def test_shipped_later_references_record_how_they_were_built():
    from grpo_lab.checks.checkpoints import reference_path
    from grpo_lab.pretrain import PRETRAIN_THREADS, RECIPES, START_RULES

    for name in ("sparse", "long"):
        metadata = torch.load(reference_path(name), weights_only=True)["metadata"]
        assert metadata["torch_threads"] == PRETRAIN_THREADS and metadata["steps"] == RECIPES[name].steps
        assert metadata["command"] == f"python -m grpo_lab pretrain --only {name}"
        accuracy, every, _ = START_RULES[name]  # built by its rule: a checkpoint of its grid at or above its accuracy
        assert metadata["eval_accuracy"] >= accuracy and metadata["steps"] % every == 0


def test_plain_pretrain_leaves_the_references_every_cached_result_starts_from(monkeypatch, tmp_path):
    import grpo_lab.checks.checkpoints as policy_module
    import grpo_lab.pretrain as pretrain_module
    import grpo_lab.task as task_module
    from grpo_lab.cli import main

    shipped = policy_module.reference_path
    rebuilt = []
    monkeypatch.setattr(pretrain_module, "write_reference", lambda name, bar, out: (rebuilt.append(name), (shipped(name), 0.0))[1])
    monkeypatch.setattr(task_module, "write_eval_set", lambda task: None)
    assert main(["pretrain"]) == 0
    assert rebuilt == []  # all four are shipped: a rebuild on another CPU would land elsewhere (data/README.md)
    assert main(["pretrain", "--only", "weak"]) == 0 and rebuilt == ["weak"]
    monkeypatch.setattr(policy_module, "reference_path", lambda name: shipped(name) if name != "long" else tmp_path / "long.pt")
    assert main(["pretrain"]) == 0 and rebuilt == ["weak", "long"]  # a missing one is written
