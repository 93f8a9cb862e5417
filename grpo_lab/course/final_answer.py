"""The course's one answer (notebook 05c): can group statistics replace the critic, and at what
cost? Three sentences, each worded from the ``grpo-vs-ppo`` result's own numbers, and one summary
figure of the same numbers.

``result`` is an experiment result as ``load_or_run("grpo-vs-ppo")`` returns it: cells with a
catalog id and a summary {metric: {"mean", "std", "n"}}, and "derived" (the crossover).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ..experiments.catalog import result_cell
from ..experiments.stats import compare, format_mean_std

# the learners of the answer (cell ids of grpo-vs-ppo), in the order the figure draws them, with a short name each
LEARNERS = {
    "grpo": "GRPO\nG=8 x 16",
    "ppo-g8": "PPO critic\nG=8 x 16",
    "ppo": "PPO critic\nG=1 x 128",
    "ema": "no critic (EMA)\nG=1 x 128",
}
COMPARED = {"higher": "above", "lower": "below", "same": "within noise of"}


def summary(result: dict, cell_id: str, metric: str) -> dict:
    """{"mean", "std", "n"} of one learner's metric (mean None when it was not measured)."""
    return result_cell(result, cell_id)["summary"].get(metric, {"mean": None, "std": None, "n": 0})


def three_sentence_answer(result: dict) -> list[str]:
    """The answer, one sentence per part: (1) what the group baseline costs in accuracy on the same
    batches, (2) what dropping the critic saves, (3) what the group's samples cost and where."""
    accuracy = {cell_id: summary(result, cell_id, "late_eval_accuracy") for cell_id in LEARNERS}
    step_time = {cell_id: summary(result, cell_id, "time_per_step_s")["mean"] for cell_id in LEARNERS}
    samples = {cell_id: summary(result, cell_id, "samples_to_target") for cell_id in LEARNERS}
    critic_parameters = summary(result, "ppo", "critic_parameters")["mean"]
    policy_parameters = summary(result, "ppo", "policy_parameters")["mean"]
    crossover = result.get("derived", {}).get("crossover_s_per_response")

    same_batches = compare(accuracy["grpo"], accuracy["ppo-g8"])
    first = (
        f"On the same batches (8 answers to each of 16 prompts) GRPO's group baseline ends {COMPARED[same_batches]} a learned critic: "
        f"late held-out accuracy {format_mean_std(accuracy['grpo'], prose=True)} against {format_mean_std(accuracy['ppo-g8'], prose=True)}."
    )
    second = (
        f"Dropping the critic saves a second network of {critic_parameters:,.0f} parameters (the policy has {policy_parameters:,.0f}) "
        f"and its updates: a PPO step takes {step_time['ppo-g8'] / step_time['grpo']:.1f}x a GRPO step's time on the same batch."
    )
    ppo_vs_grpo = compare(accuracy["ppo"], accuracy["grpo"])
    ema_vs_ppo = compare(accuracy["ema"], accuracy["ppo"])
    third = (
        f"The cost is in the samples: at equal responses, one answer to each of 128 prompts ends {COMPARED[ppo_vs_grpo]} GRPO "
        f"({format_mean_std(accuracy['ppo'], prose=True)} with the critic, reaching 70% after "
        f"{format_mean_std(samples['ppo'], 0, prose=True)} responses against GRPO's {format_mean_std(samples['grpo'], 0, prose=True)}), "
        f"and the same batch shape without any critic ends {COMPARED[ema_vs_ppo]} PPO ({format_mean_std(accuracy['ema'], prose=True)}), "
        "so what the group pays for is fewer prompts per step, not the missing critic"
        + (f"; above about {crossover:.2g} s of generation per response that price decides the cost." if crossover else ".")
    )
    return [first, second, third]


def answer_figure(result: dict) -> Figure:
    """Two panels, one bar per learner (LEARNERS): late held-out accuracy (± std over seeds) and
    seconds per training step. Sized for a notebook about 900 px wide."""
    cell_ids = list(LEARNERS)
    figure = Figure(figsize=(9, 3.6), layout="constrained")
    accuracy_axis, time_axis = figure.subplots(1, 2)
    colours = ["tab:blue", "tab:orange", "tab:red", "tab:green"]
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
    low, high = min(s["mean"] for s in accuracy) - 0.08, max(s["mean"] + (s["std"] or 0) for s in accuracy) + 0.03
    accuracy_axis.set(ylim=(max(0.0, low), min(1.0, high)), title="late held-out accuracy (equal responses)", ylabel="accuracy")
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
