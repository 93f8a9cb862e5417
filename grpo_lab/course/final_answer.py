"""The course's one answer (notebooks 00 and 05c, the README): can group statistics replace the critic,
and at what cost? Three sentences short enough to say aloud, each the finding first, then one clause of setting, then
the numbers, worded from the ``grpo-vs-ppo`` result's own numbers (and the practice regime's, in a fourth paragraph);
and one summary figure of the same numbers.

``result`` is an experiment result as ``load_or_run("grpo-vs-ppo")`` returns it: cells with a
catalog id, their config, per-seed values and a summary {metric: {"mean", "std", "n"}}.
A difference counts as it does in the claims table: at its false-discovery level and above
findings.SMALL_EFFECT (``course_answer`` passes that level).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ..experiments.catalog import REUSE_WORDS, result_cell
from ..experiments.figures import BASELINE_FAMILY
from ..experiments.findings import SMALL_EFFECT
from ..experiments.rules.critic import answer_tokens_text, crossover_s_per_response, tradeoff_crossover
from ..experiments.stats import ALPHA, compare
from ..plots import RUN_COLORS

# (experiment, regime) of every result the answer quotes or will quote once measured (issue 38: reuse and the practice
# regime): each rests on at least scripts/seed_plan.py's ANSWER_SEEDS seeds
ANSWER_RUNS = (("grpo-vs-ppo", "gentle"), ("batch-shape", "gentle"), ("grpo-vs-ppo", "practice"), ("batch-shape", "practice"))
# the learners of the answer (cell ids of grpo-vs-ppo), in the order the figure draws them, with a short name each
LEARNERS = {
    "grpo": "GRPO\nG=8 x 16",
    "ppo-g8": "PPO critic\nG=8 x 16",
    "ppo": "PPO critic\nG=1 x 128",
    "ema": "no critic (EMA)\nG=1 x 128",
}
COMPARED = {"higher": "above", "lower": "below", "same": "within noise of"}
# the first sentence's finding, by GRPO's direction against the critic on the same batches
SAME_BATCHES = {
    "same": "GRPO's group baseline replaces PPO's learned critic at no cost in accuracy",
    "lower": "GRPO's group baseline costs accuracy against PPO's learned critic",
    "higher": "GRPO's group baseline beats PPO's learned critic",
}
# the third sentence's finding, by (one answer per prompt with a critic against GRPO, the critic-free control below it,
# trained on once or with each batch reused as PPO does)
ONE_ANSWER_PER_PROMPT = {
    ("higher", False): "What the group pays for is fewer prompts per step, not the missing critic",
    ("higher", True): "What the group pays for is fewer prompts per step, and the critic adds to that",
    ("same", False): "With one answer per prompt the critic is not needed either",
    ("same", True): "With one answer per prompt the critic is needed",
    ("lower", False): "One answer per prompt loses to the group, with or without a critic",
    ("lower", True): "One answer per prompt loses to the group, and more so without a critic",
}


def summary(result: dict, cell_id: str, metric: str) -> dict:
    """{"mean", "std", "n"} of one learner's metric (mean None when it was not measured)."""
    return result_cell(result, cell_id)["summary"].get(metric, {"mean": None, "std": None, "n": 0})


def batch_shape(result: dict, cell_id: str) -> tuple[int, int]:
    """(prompts per step, answers per prompt) a learner trained with: its cell's config over the result's defaults."""
    train = {**result["train_defaults"], **result_cell(result, cell_id)["config"]["train"]}
    return train["prompts_per_step"], train["group_size"]


def seeds_text(summaries: list[dict]) -> str:
    """'means over 5 seeds' ('over 3-5 seeds' where the learners had different numbers of seeds)."""
    counts = sorted({s["n"] for s in summaries})
    return f"means over {counts[0]} seeds" if len(counts) == 1 else f"means over {counts[0]}-{counts[-1]} seeds"


def three_sentence_answer(result: dict, level: float = ALPHA) -> list[str]:
    """The answer, one sentence per part, each the finding first, one clause of setting, the numbers after: (1) what
    the group baseline costs in accuracy against a learned critic on the same batches, (2) what dropping the critic
    saves, (3) what one answer to each of many prompts does with and without a critic, at equal responses, trained on
    once and with each batch reused as PPO does.
    level: the significance level a difference is judged at (the claims table's: ``course_answer``)."""
    accuracy = {cell_id: summary(result, cell_id, "late_eval_accuracy") for cell_id in (*LEARNERS, "ppo-reuse", "ema-reuse")}
    step_time = {cell_id: summary(result, cell_id, "time_per_step_s")["mean"] for cell_id in LEARNERS}
    samples = {cell_id: summary(result, cell_id, "samples_to_target") for cell_id in ("grpo", "ppo")}
    critic_parameters = summary(result, "ppo", "critic_parameters")["mean"]
    policy_parameters = summary(result, "ppo", "policy_parameters")["mean"]
    # the crossover as claim 13 finds it: GRPO against PPO in seconds and in responses to the target, at this level
    seconds, responses = tradeoff_crossover({"grpo-vs-ppo": result}).deciding[:2]
    crossover = crossover_s_per_response(seconds, responses, seconds.direction(level), responses.direction(level))
    target = result_cell(result, "ppo")["config"]["target"]
    (prompts, group), (wide_prompts, _) = batch_shape(result, "grpo"), batch_shape(result, "ppo")
    seeds = seeds_text(list(accuracy.values()))

    def direction(a: str, b: str) -> str:
        return compare(accuracy[a], accuracy[b], SMALL_EFFECT).direction(level)

    same_batches = direction("grpo", "ppo-g8")
    first = (
        f"{SAME_BATCHES[same_batches]}: on the same batches ({group} answers to each of {prompts} prompts) it ends at "
        f"{accuracy['grpo']['mean']:.3f} late held-out accuracy against the critic's {accuracy['ppo-g8']['mean']:.3f} ({seeds})."
    )
    wide_vs_group = direction("ppo", "grpo")
    critic_needed = "lower" in (direction("ema", "ppo"), direction("ema-reuse", "ppo-reuse"))
    second = (
        f"{ONE_ANSWER_PER_PROMPT[(wide_vs_group, critic_needed)]}: at {prompts * group} responses per step, one answer to each of "
        f"{wide_prompts} prompts ends at {accuracy['ppo']['mean']:.3f} with PPO's critic, {COMPARED[wide_vs_group]} GRPO's "
        f"{accuracy['grpo']['mean']:.3f}, and {accuracy['ema']['mean']:.3f} without; with each batch reused as PPO does "
        f"({REUSE_WORDS}), {accuracy['ppo-reuse']['mean']:.3f} and {accuracy['ema-reuse']['mean']:.3f}."
    )
    reached = "; ".join(f"{s['n']} of {accuracy[cell_id]['n']} seeds reached it" for cell_id, s in samples.items() if s["n"] < accuracy[cell_id]["n"])
    # the crossover is PPO's at one answer per prompt (claim 13), whose steps are slower than on GRPO's batches
    pays_back = (
        f" With one answer to each of {wide_prompts} prompts, PPO's critic reaches {target:.0%} in {samples['ppo']['mean']:,.0f} "
        f"responses against GRPO's {samples['grpo']['mean']:,.0f}{' (' + reached + ')' if reached else ''}, which outweighs its "
        f"{step_time['ppo'] / step_time['grpo']:.1f}x slower steps only above about {crossover:.2g} s of generation per response."
        if crossover
        else ""
    )
    third = (
        f"On this toy, dropping the critic saves a second network and its updates: the critic has {critic_parameters:,.0f} parameters beside the "
        f"policy's {policy_parameters:,.0f}, and on the same batches a PPO step takes {step_time['ppo-g8'] / step_time['grpo']:.1f}x a "
        f"GRPO step's time.{pays_back}"
    )
    return [first, second, third]


# the practice sentence's findings: which of a learned critic and a critic-free baseline wins on the same batches (once
# and reused), and where GRPO's late held-out accuracy ends against its start
# (the critic ahead beyond noise on some of the same batches, once or reused; the critic-free baseline ahead on some)
PRACTICE_CRITIC = {
    (False, False): "a learned critic ends within noise of a critic-free baseline on the same batches",
    (True, False): "a learned critic beats a critic-free baseline on the same batches",
    (False, True): "a critic-free baseline beats a learned critic on the same batches",
    (True, True): "a learned critic and a critic-free baseline each win one of the two comparisons on the same batches",
}
NOT_ON_FRESH_SEEDS = " (on the first seeds; not on fresh ones)"
PRACTICE_LEARNING = {
    "higher": "GRPO gains held-out accuracy",
    "same": "GRPO ends where it started on held-out problems",
    "lower": "GRPO ends below its start on held-out problems",
}


def practice_findings(result: dict, level: float = ALPHA) -> tuple:
    """What the practice sentence says of ``result``: (the critic ahead beyond noise on some of the same batches, the
    critic-free baseline ahead on some) and the direction of GRPO's late accuracy against its start."""
    accuracy = {cell_id: summary(result, cell_id, "late_eval_accuracy") for cell_id in ("grpo", "ppo", "ema", "ppo-reuse", "ema-reuse")}
    critic_vs_free = [
        compare(accuracy[critic], accuracy[free], SMALL_EFFECT).direction(level) for critic, free in (("ppo", "ema"), ("ppo-reuse", "ema-reuse"))
    ]
    learning = compare(accuracy["grpo"], summary(result, "grpo", "initial_eval_accuracy"), SMALL_EFFECT).direction(level)
    return ("higher" in critic_vs_free, "lower" in critic_vs_free), learning


def practice_sentence(result: dict, level: float = ALPHA, replication: dict | None = None) -> str:
    """The answer where practitioners train (the practice regime's grpo-vs-ppo result: a pool of 256 prompts revisited
    for epochs, worked answers of 27-28 tokens, only the result rewarded): whether a critic beats a critic-free baseline
    on the same batches there (once and reused), where GRPO ends against its start, and the peak early stopping keeps;
    then whether the same run on fresh seeds (``replication``, the result on the declared replication seeds) finds the
    same, or that fresh seeds have not checked it yet."""
    cells = ("grpo", "ppo", "ema", "ppo-reuse", "ema-reuse")
    accuracy = {cell_id: summary(result, cell_id, "late_eval_accuracy") for cell_id in cells}
    start = summary(result, "grpo", "initial_eval_accuracy")
    best, best_step = summary(result, "grpo", "best_eval_accuracy"), summary(result, "grpo", "best_eval_step")
    (wide_prompts, _) = batch_shape(result, "ppo")
    critic, learning = practice_findings(result, level)
    critic_words, learning_words = PRACTICE_CRITIC[critic], PRACTICE_LEARNING[learning]
    if replication is None:
        checked = "not yet checked on fresh seeds"
    else:  # a finding fresh seeds do not repeat is said as the first seeds' only, and what the fresh ones found is added
        fresh = len(result_cell(replication, "grpo")["per_seed"])
        fresh_critic, fresh_learning = practice_findings(replication, level)
        moved = []
        if fresh_critic != critic:
            critic_words += NOT_ON_FRESH_SEEDS
            moved.append(PRACTICE_CRITIC[fresh_critic])
        if fresh_learning != learning:
            learning_words += NOT_ON_FRESH_SEEDS
            moved.append(PRACTICE_LEARNING[fresh_learning])
        checked = f"{fresh} fresh seeds find the same" if not moved else f"on {fresh} fresh seeds, " + " and ".join(moved)
    train = {**result["train_defaults"], **result_cell(result, "grpo")["config"]["train"]}
    epochs = train["steps"] * train["prompts_per_step"] / train["prompt_pool"]
    return (
        f"In the toy's version of where practitioners train, {learning_words}: on a pool of {train['prompt_pool']} prompts revisited for {epochs:.0f} epochs "
        f"with answers of {answer_tokens_text({'grpo-vs-ppo': result})} tokens, only the result rewarded, it ends at "
        f"{accuracy['grpo']['mean']:.3f} late accuracy against a start of {start['mean']:.3f}; its best ({best['mean']:.3f} at step "
        f"{best_step['mean']:.0f} on average) is the checkpoint early stopping keeps. "
        f"There {critic_words}: one answer to each of {wide_prompts} prompts ends at {accuracy['ppo']['mean']:.3f} with PPO's "
        f"critic and {accuracy['ema']['mean']:.3f} without, {accuracy['ppo-reuse']['mean']:.3f} and {accuracy['ema-reuse']['mean']:.3f} "
        f"with each batch reused ({seeds_text(list(accuracy.values()))}). {checked[0].upper()}{checked[1:]}."
    )


def course_answer(result: dict | None = None, practice: dict | None = None) -> list[str]:
    """The course's answer as 00, 05c and the README say it: ``three_sentence_answer`` of the cached grpo-vs-ppo result
    (or of ``result``), then ``practice_sentence`` of the practice regime's (or of ``practice``) where it has been
    measured, judged at the false-discovery level of the claims table (claims.md, every plain verdict)."""
    from ..experiments.runner import load_result, result_path
    from .drill import verdicts_by_regime
    from .notebook import load_or_run

    level = next(iter(verdicts_by_regime()["gentle"].values())).level
    sentences = three_sentence_answer(load_or_run("grpo-vs-ppo") if result is None else result, level)
    if practice is None and result_path("grpo-vs-ppo", regime="practice").exists():
        practice = load_or_run("grpo-vs-ppo", regime="practice")
    replication = None
    if practice is not None and result_path("grpo-vs-ppo", regime="practice", replicate=True).exists():
        replication = load_result("grpo-vs-ppo", regime="practice", replicate=True)
    return sentences + ([practice_sentence(practice, level, replication)] if practice is not None else [])


def answer_figure(result: dict) -> Figure:
    """Two panels, one bar per learner (LEARNERS): late held-out accuracy (± std over seeds) and
    seconds per training step. Sized for a notebook about 900 px wide."""
    cell_ids = list(LEARNERS)
    figure = Figure(figsize=(9, 3.6), layout="constrained")
    accuracy_axis, time_axis = figure.subplots(1, 2)
    colours = [RUN_COLORS[BASELINE_FAMILY[baseline]] for baseline in ("zscore", "critic", "critic", "ema")]  # as every figure colours them
    hatches = ["", "//", "xx", ".."]
    positions = range(len(cell_ids))
    accuracy = [summary(result, cell_id, "late_eval_accuracy") for cell_id in cell_ids]
    accuracy_axis.bar(
        positions,
        [s["mean"] for s in accuracy],
        yerr=[s["std"] or 0 for s in accuracy],
        color=colours,
        hatch=hatches,
        edgecolor="black",
        capsize=4,
    )
    # from 0: a gap of 0.004 must look like one (issue 39); the numbers are in the sentences above the figure
    accuracy_axis.set(ylim=(0.0, 1.0), title="late held-out accuracy (equal responses)", ylabel="accuracy")
    time_axis.bar(
        positions, [summary(result, cell_id, "time_per_step_s")["mean"] for cell_id in cell_ids], color=colours, hatch=hatches, edgecolor="black"
    )
    time_axis.set(title="seconds per training step", ylabel="s")
    for axis in (accuracy_axis, time_axis):
        axis.set_xticks(list(positions), [LEARNERS[cell_id] for cell_id in cell_ids], fontsize=9)
        axis.tick_params(axis="y", labelsize=10)
        axis.title.set_fontsize(11)
        axis.grid(axis="y", alpha=0.3)
    return figure
