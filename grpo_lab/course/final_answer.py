"""The course's one answer (notebook 05c): can group statistics replace the critic, and at what
cost? Three sentences, each worded from the ``grpo-vs-ppo`` result's own numbers, and one summary
figure of the same numbers.

``result`` is an experiment result as ``load_or_run("grpo-vs-ppo")`` returns it: cells with a
label and a summary {metric: {"mean", "std", "n"}}, and "derived" (the crossover).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ..experiments.catalog import EMA_LABEL, GRPO_LABEL, PPO_GROUPS_LABEL, PPO_LABEL
from ..experiments.stats import compare, format_mean_std
from .notebook import result_cell

# the learners of the answer, in the order the figure draws them, with a short name each
LEARNERS = {
    GRPO_LABEL: "GRPO\nG=8 x 16",
    PPO_GROUPS_LABEL: "PPO critic\nG=8 x 16",
    PPO_LABEL: "PPO critic\nG=1 x 128",
    EMA_LABEL: "no critic (EMA)\nG=1 x 128",
}
COMPARED = {"higher": "above", "lower": "below", "same": "within noise of"}


def summary(result: dict, label: str, metric: str) -> dict:
    """{"mean", "std", "n"} of one learner's metric (mean None when it was not measured)."""
    return result_cell(result, label)["summary"].get(metric, {"mean": None, "std": None, "n": 0})


def three_sentence_answer(result: dict) -> list[str]:
    """The answer, one sentence per part: (1) what the group baseline costs in accuracy on the same
    batches, (2) what dropping the critic saves, (3) what the group's samples cost and where."""
    accuracy = {label: summary(result, label, "late_eval_accuracy") for label in LEARNERS}
    step_time = {label: summary(result, label, "time_per_step_s")["mean"] for label in LEARNERS}
    samples = {label: summary(result, label, "samples_to_target") for label in LEARNERS}
    critic_parameters = summary(result, PPO_LABEL, "critic_parameters")["mean"]
    policy_parameters = summary(result, PPO_LABEL, "policy_parameters")["mean"]
    crossover = result.get("derived", {}).get("crossover_s_per_response")

    def shown(metric_summary: dict, digits: int = 3) -> str:
        return format_mean_std(metric_summary, digits, prose=True)

    same_batches = compare(accuracy[GRPO_LABEL], accuracy[PPO_GROUPS_LABEL])
    first = (
        f"On the same batches (8 answers to each of 16 prompts) GRPO's group baseline ends {COMPARED[same_batches]} a learned critic: "
        f"late held-out accuracy {shown(accuracy[GRPO_LABEL])} against {shown(accuracy[PPO_GROUPS_LABEL])}."
    )
    second = (
        f"Dropping the critic saves a second network of {critic_parameters:,.0f} parameters (the policy has {policy_parameters:,.0f}) "
        f"and its updates: a PPO step takes {step_time[PPO_GROUPS_LABEL] / step_time[GRPO_LABEL]:.1f}x a GRPO step's time on the same batch."
    )
    ppo_vs_grpo = compare(accuracy[PPO_LABEL], accuracy[GRPO_LABEL])
    ema_vs_ppo = compare(accuracy[EMA_LABEL], accuracy[PPO_LABEL])
    third = (
        f"The cost is in the samples: at equal responses, one answer to each of 128 prompts ends {COMPARED[ppo_vs_grpo]} GRPO "
        f"({shown(accuracy[PPO_LABEL])} with the critic, reaching 70% after {shown(samples[PPO_LABEL], 0)} responses "
        f"against GRPO's {shown(samples[GRPO_LABEL], 0)}), and the same batch shape without any critic ends {COMPARED[ema_vs_ppo]} PPO "
        f"({shown(accuracy[EMA_LABEL])}), so what the group pays for is fewer prompts per step, not the missing critic"
        + (f"; above about {crossover:.2g} s of generation per response that price decides the cost." if crossover else ".")
    )
    return [first, second, third]


def answer_figure(result: dict) -> Figure:
    """Two panels, one bar per learner (LEARNERS): late held-out accuracy (± std over seeds) and
    seconds per training step. Sized for a notebook about 900 px wide."""
    labels = list(LEARNERS)
    figure = Figure(figsize=(9, 3.6), layout="constrained")
    accuracy_axis, time_axis = figure.subplots(1, 2)
    colours = ["tab:blue", "tab:orange", "tab:red", "tab:green"]
    hatches = ["", "//", "xx", ".."]
    positions = range(len(labels))
    accuracy = [summary(result, label, "late_eval_accuracy") for label in labels]
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
    time_axis.bar(positions, [summary(result, label, "time_per_step_s")["mean"] for label in labels], color=colours, hatch=hatches, edgecolor="black")
    time_axis.set(title="seconds per training step", ylabel="s")
    for axis in (accuracy_axis, time_axis):
        axis.set_xticks(list(positions), [LEARNERS[label] for label in labels], fontsize=9)
        axis.tick_params(axis="y", labelsize=10)
        axis.title.set_fontsize(11)
        axis.grid(axis="y", alpha=0.3)
    return figure
