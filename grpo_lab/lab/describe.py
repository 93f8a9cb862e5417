"""A run in words: its label on the plot (``run_label``: what differs from the other runs shown)
and plain-words notes on what happened (``explain_run``: a failure, groups with no reward spread,
exploding advantages, amplified noise, a critic's cost, an uncancelled offset)."""

from __future__ import annotations

from dataclasses import fields

from ..core.config import TrainConfig

SHORT_NAMES = {
    "group_size": "G",
    "prompts_per_step": "P",
    "std_eps": "ε",
    "kl_coef": "beta",
    "clip_eps": "clip",
    "reward_offset": "offset",
    "reward_scale": "scale",
    "reward_noise": "noise",
    "reference": "ref",
    "skip_zero_std_groups": "skip all-same",
    "std_scope": "std over",
    "eps_mode": "eps mode",
}
ZERO_STD_HINT_LEVEL = 0.5  # a hint when at least this fraction of recent groups had no reward spread
EXPLOSION_HINT_LEVEL = 10.0  # a hint when some |advantage| grew past this
AMPLIFIED_NOISE_LEVEL = 0.05  # z-score hint: groups whose reward std is below this still get unit-size advantages


def knob_value_text(value) -> str:
    """A knob's value as a label shows it: 1e-4 -> '1e-4', 0.25 -> '0.25', 'weak' -> 'weak'."""
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if value != 0 and abs(value) < 1e-3:
        mantissa, exponent = f"{value:.1e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return f"{value:.3g}"


LABEL_LEADS = ("group_size", "baseline", "reference", "std_eps")  # always named, in this order
EPSILON_BASELINES = ("zscore",)  # the baselines that divide by the std: std_eps, std_scope and eps_mode matter to them only
EPSILON_KNOBS = ("std_eps", "std_scope", "eps_mode")
LABEL_SKIPS = ("device", "eval_every", "probe_every")  # where the curves are measured, not what is trained


def label_parts(config: TrainConfig, compared: list[TrainConfig], num_seeds: int = 1) -> dict[str, str]:
    """What ``run_label`` names, knob by knob in its order: {'group_size': 'G=8', 'baseline': 'zscore',
    ...}; the number of seeds, when more than one, under 'seeds'."""
    defaults = TrainConfig()
    ignored = () if config.baseline in EPSILON_BASELINES else EPSILON_KNOBS  # they change nothing: not named
    named = [name for name in LABEL_LEADS if name not in ignored]
    for f in fields(TrainConfig):
        if f.name in LABEL_LEADS or f.name in LABEL_SKIPS or f.name in ignored:
            continue
        differs = len({getattr(c, f.name) for c in [config, *compared]}) > 1
        off_default = f.name != "seed" and getattr(config, f.name) != getattr(defaults, f.name)
        if differs or off_default:
            named.append(f.name)
    parts = {"group_size": f"G={config.group_size}", "baseline": config.baseline}
    parts |= {name: f"{SHORT_NAMES.get(name, name)}={knob_value_text(getattr(config, name))}" for name in named[2:]}
    if num_seeds > 1:
        parts["seeds"] = f"{num_seeds} seeds"
    return parts


def run_label(config: TrainConfig, compared: list[TrainConfig], num_seeds: int = 1) -> str:
    """'G=8, zscore, ref=default, ε=1e-4', plus every other knob that is off its TrainConfig default
    or differs among the ``compared`` configs (the seed only in the second case)."""
    return ", ".join(label_parts(config, compared, num_seeds).values())


def compared_labels(configs: list[TrainConfig], seeds: list[int]) -> tuple[list[str], str]:
    """A legend's words for runs shown together (``configs`` and their numbers of ``seeds``): for each
    run only what sets it apart, and in one line the settings it shares with the others unless named
    ('G=8, zscore, ref=default, ε=1e-4'). A knob's shared value is the one most runs have, when two or
    more have it; a knob whose values all differ is named in every run. One run: its ``run_label``, ''."""
    if len(configs) == 1:
        return [run_label(configs[0], configs, seeds[0])], ""
    parts = [label_parts(config, configs, number) for config, number in zip(configs, seeds)]
    knobs = list(dict.fromkeys(knob for part in parts for knob in part))  # in run_label's order
    named: list[list[str]] = [[] for _ in configs]
    shared = []
    for knob in knobs:
        texts = [part.get(knob) for part in parts]  # None where a run does not name it (ε of a mean-only run)
        counts = {text: texts.count(text) for text in texts}
        common = max(counts, key=counts.get) if max(counts.values()) > 1 else None
        if common is not None:
            shared.append(common)
        for words, text in zip(named, texts):
            if text is not None and text != common:
                words.append(text)
    return [", ".join(words) for words in named], ", ".join(shared)


def short_run_label(config: TrainConfig, compared: list[TrainConfig], num_seeds: int = 1) -> str:
    """Only what tells the run apart from the ``compared`` ones ('G=2', 'mean, offset=3'), for a
    legend in large type; the whole ``run_label`` when nothing differs (one run, or a re-run)."""
    differing = [f.name for f in fields(TrainConfig) if f.name not in LABEL_SKIPS and len({getattr(c, f.name) for c in [config, *compared]}) > 1]
    if not differing:
        return run_label(config, compared, num_seeds)
    return ", ".join(
        config.baseline if name == "baseline" else f"{SHORT_NAMES.get(name, name)}={knob_value_text(getattr(config, name))}" for name in differing
    )


def explain_run(config: TrainConfig, history: list[dict], status: str, message: str = "", crashed: bool = False) -> list[str]:
    """Plain-words notes on a run (in progress or ended): why it failed (``crashed``: an exception
    in the code, not a non-finite number), what a high frac_reward_zero_std means, when advantages
    explode, what a reward offset does without a baseline."""
    notes = []
    if status == "failed" and crashed:
        notes.append(
            f"The run stopped on an error in the code, not on a number: {message}. That is a bug, not a "
            "lesson about GRPO: please report it with the settings in the status line."
        )
    elif status == "failed":
        notes.append(
            f"Training produced a number that is not finite (NaN or infinity), so the run was stopped rather than plotting garbage. {message}"
        )
    recent = [record["frac_reward_zero_std"] for record in history[-10:] if "frac_reward_zero_std" in record]
    if recent and sum(recent) / len(recent) >= ZERO_STD_HINT_LEVEL:
        fraction = sum(recent) / len(recent)
        notes.append(
            f"{fraction:.0%} of the recent groups gave every answer the same reward (all right or all wrong). "
            "A group like that has advantage 0 for every answer, so it teaches the policy nothing"
            + (" (and is skipped)" if config.skip_zero_std_groups else "")
            + ": learning comes only from the other groups. A larger group, the default reference or "
            "partial-credit reward gives more groups a spread."
        )
    largest = max((record.get("adv_abs_max", 0.0) for record in history), default=0.0)
    if largest > EXPLOSION_HINT_LEVEL:
        notes.append(
            f"The largest |advantage| reached {largest:.3g}: with baseline {config.baseline!r} the size of the "
            "rewards (their scale and offset) goes straight into the size of the update. Z-scoring divides "
            "it away; a smaller learning rate or reward scale tames it too."
        )
    spread = [record["reward_std"] for record in history[-10:] if "reward_std" in record]
    if config.baseline == "zscore" and spread and largest > 0.5 and sum(spread) / len(spread) < AMPLIFIED_NOISE_LEVEL:
        notes.append(
            f"The rewards within a group differ by only {sum(spread) / len(spread):.2g} on average (their std), "
            "yet z-scoring scales every group's advantages to about unit size: whatever tiny differences "
            "there are (reward noise, partial credit) are amplified into a full-size signal. Compare mean only."
        )
    if config.baseline == "critic":
        notes.append(
            f"PPO's critic is a second network the policy's size, trained {config.critic_epochs * config.critic_minibatches} "
            f"times a step ({config.critic_epochs} epochs x {config.critic_minibatches} minibatches): a step takes about five "
            "times as long as GRPO's (notebook 05 measures it), and on these 3-token answers the critic explains "
            "little of the reward (notebook 05a §3)."
        )
    if config.baseline == "none" and config.reward_offset != 0:
        direction = "up" if config.reward_offset > 0 else "down"
        notes.append(
            f"With no baseline each answer's advantage is its reward, so the offset {config.reward_offset:g} "
            f"pushes every sampled answer {direction} alike and only the small differences between answers "
            "teach. Mean only subtracts the offset away."
        )
    return notes


def knob_changes(config: TrainConfig, earlier: TrainConfig) -> str:
    """What differs from an earlier run, in words: 'G 8 -> 2, baseline zscore -> mean' ('' if nothing)."""
    changed = [f.name for f in fields(TrainConfig) if f.name not in LABEL_SKIPS and getattr(config, f.name) != getattr(earlier, f.name)]
    return ", ".join(
        f"{SHORT_NAMES.get(name, name.replace('_', ' '))} {knob_value_text(getattr(earlier, name))} -> {knob_value_text(getattr(config, name))}"
        for name in changed
    )


def plot_summary(
    number: int, label: str, accuracy: tuple[float, float] | None, earlier: tuple[int, TrainConfig, float] | None, config: TrainConfig
) -> str:
    """The plot in one or two sentences, for a screen reader and the back row: run ``number``'s
    held-out accuracy at its start and end (``accuracy``: (start, end), None before an evaluation)
    and, against the ``earlier`` run (its number, config and end accuracy), what changed."""
    if accuracy is None:
        return f"Run {number} ({label}): no held-out accuracy measured yet."
    words = f"Run {number} ({label}): held-out accuracy {accuracy[0]:.2f} at the start, {accuracy[1]:.2f} at the end."
    if earlier is not None:
        earlier_number, earlier_config, earlier_end = earlier
        changes = knob_changes(config, earlier_config) or "nothing but the run"
        words += f" Against run {earlier_number} (changed: {changes}), which ended at {earlier_end:.2f}."
    return words
