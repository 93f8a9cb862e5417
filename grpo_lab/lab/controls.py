"""The lab's controls: one widget per knob, each with the CSS class ``grpo-<knob>`` (``build_controls``),
and the TrainConfig they describe (``config_from_controls``). A value set from code outside a
control's range is refused, not clamped (``RefusesOutOfRange``), so the lab can say why nothing ran."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import ipywidgets as widgets
import traitlets

from ..checks.config_rules import validate_config
from ..checks.paths import REFERENCE_NAMES, REFERENCE_TASKS
from ..core.advantages import EPS_MODES, STD_SCOPES
from ..core.config import TrainConfig
from ..task import REWARD_KINDS

GROUP_SIZES = (2, 4, 8, 16, 32, 64)
BASELINE_OPTIONS = (("mean only", "mean"), ("z-score", "zscore"), ("none", "none"), ("RLOO", "rloo"), ("EMA", "ema"), ("critic (PPO)", "critic"))
BASELINE_TOOLTIPS = (
    "r - mean(r): Dr. GRPO, TRL scale_rewards='none'",
    "(r - mean(r)) / (std(r) + eps): GRPO, TRL's default",
    "the raw reward: REINFORCE without a baseline",
    "r minus the mean of the other G-1 rewards: RLOO",
    "r minus a moving average of past rewards",
    "a learned value model and GAE: PPO",
)
ADVANCED_CONTROLS = (
    "prompts_per_step",
    "steps",
    "lr",
    "critic_lr",
    "kl_coef",
    "clip_eps",
    "reward",
    "reward_offset",
    "reward_scale",
    "reward_noise",
    "std_scope",
    "eps_mode",
    "skip_zero_std_groups",
    "reference",
    "seed",
)
DESCRIPTION_STYLE = {"description_width": "170px"}
ROW_LABELS = {
    "baseline": "baseline",
    "reward": "reward",
    "std_scope": "std over (std_scope)",
    "eps_mode": "epsilon (eps_mode)",
    "skip_zero_std_groups": "all-right or all-wrong groups",
    "reference": "reference policy",
}
MAX_SEEDS = 5
LARGE_STEP_LR = 1e-3
# one click for each guided task of notebook 03: the runs it compares, in order, each from the lab's
# starting settings with these knobs changed (the last run's settings stay on the controls)
PRESETS = {
    "G = 2 vs 16": ({"group_size": 2}, {"group_size": 16}),
    "ε = 0 with ties": ({"reference": "weak", "std_eps": 1e-4}, {"reference": "weak", "std_eps": 0.0}),
    "reward offset 5": ({"baseline": "none", "reward_offset": 5.0}, {"baseline": "mean", "reward_offset": 5.0}),
    # the evidence regimes (experiments/catalog.py: REGIMES) the lab's task can show, where G's effect has room;
    # LARGE_STEP_LR is catalog.LARGE_STEP_LR (tests/test_regimes.py), not imported: the lab stays light to start
    "large steps: G = 2 vs 16": ({"lr": LARGE_STEP_LR, "group_size": 2}, {"lr": LARGE_STEP_LR, "group_size": 16}),
    "30% start: G = 2 vs 16": ({"reference": "sparse", "group_size": 2}, {"reference": "sparse", "group_size": 16}),
}
# where each preset's difference shows: said in the hints while its runs are on the plot, and on its button
PRESET_WATCH = {
    "G = 2 vs 16": "bottom left, the zero-std fraction (thick): far more groups of two agree than groups of 16, and teach "
    "nothing; and the histogram: G = 2's advantages are only -0.71, 0 and +0.71.",
    "ε = 0 with ties": "the status line: the ε = 0 run stops at its first step; the first run's zero-std fraction "
    "(bottom left) shows how many groups tie.",
    "reward offset 5": "max |adv| (thin, bottom left): with no baseline every advantage is the reward, 5 or 6; the mean "
    "subtracts the offset. Then accuracy (top left).",
    "large steps: G = 2 vs 16": "accuracy (top left) and the zero-std fraction (bottom left), run against run.",
    "30% start: G = 2 vs 16": "the zero-std fraction (bottom left): from a 30% start most groups of two are all wrong; then accuracy (top left).",
}


def css_class(name: str) -> str:
    """The stable CSS class of a control: 'group_size' -> 'grpo-group-size'."""
    return "grpo-" + name.replace("_", "-")


class RefusesOutOfRange:
    """Mixin for a control class: a value outside the control's range, set from code (a browser
    cannot), is refused instead of clamped as ipywidgets does (``steps = 10**9`` would silently
    become 500): the control keeps its value and every ``on_refused(value, allowed)`` callback
    hears of it, so the lab can say "Cannot run: steps = 1000000000, allowed 5 to 500"."""

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        value = proposal["value"]
        accepted = self._accepted(proposal)
        if accepted is not None and accepted == value:
            return accepted
        for callback in getattr(self, "_refusal_callbacks", ()):
            callback(value, allowed_values(self))
        return self.value

    def _accepted(self, proposal):
        """The value the widget class would store (clamped by ipywidgets), None if it raises."""
        try:
            return super()._validate_value(proposal)
        except traitlets.TraitError:  # a selection that is not among the options
            return None

    def on_refused(self, callback: Callable[[object, str], None]) -> None:
        """Call ``callback(value, allowed)`` whenever a value is refused."""
        self.__dict__.setdefault("_refusal_callbacks", []).append(callback)


def refusing(kind: type) -> type:
    """``kind`` (an ipywidgets control class) with RefusesOutOfRange mixed in, made once per class."""
    if kind not in _REFUSING:
        _REFUSING[kind] = type(kind.__name__, (RefusesOutOfRange, kind), {})
    return _REFUSING[kind]


_REFUSING: dict[type, type] = {}


def allowed_values(control: widgets.Widget) -> str:
    """The values a control accepts, in words: '5 to 500', '1e-05 to 0.01' or '2, 4, 8'."""
    if isinstance(control, EpsilonControl):
        low, high = control.slider.base**control.slider.min, control.slider.base**control.slider.max
        return f"0 or {low:g} to {high:g}"
    if hasattr(control, "options"):
        return ", ".join(str(value) for value in control._options_values)
    if isinstance(control, widgets.FloatLogSlider):
        return f"{control.base**control.min:g} to {control.base**control.max:g}"
    return f"{control.min:g} to {control.max:g}"


def with_value(options: tuple, value) -> tuple:
    """``options`` plus ``value`` if it is missing, sorted: a slider must be able to show its start."""
    return tuple(sorted(set(options) | {value}))


class EpsilonControl(RefusesOutOfRange, widgets.HBox):
    """std_eps on a log slider from 1e-10 to 1e-1, and a box for exactly 0. ``value`` is the float
    the trainer gets; setting it (0 or within the slider's range) moves the slider and the box to
    match; any other value is refused (see RefusesOutOfRange)."""

    value = traitlets.Float(1e-4)

    def _accepted(self, proposal):
        value = proposal["value"]
        slider = getattr(self, "slider", None)  # None while the constructor runs
        in_range = slider is None or slider.base**slider.min <= value <= slider.base**slider.max
        return value if value == 0 or in_range else None

    def __init__(self, value: float, **kwargs):
        low, high = (min(-10, math.floor(math.log10(value))), max(-1, math.ceil(math.log10(value)))) if value > 0 else (-10, -1)
        self.slider = widgets.FloatLogSlider(
            value=value if value > 0 else 1e-4,
            base=10,
            min=low,
            max=high,
            step=0.5,
            readout_format=".0e",
            description="epsilon (std_eps)",
            continuous_update=False,
            style=DESCRIPTION_STYLE,
            layout=widgets.Layout(width="520px"),
        )
        self.zero = widgets.Checkbox(value=value == 0, description="exactly 0", indent=False, layout=widgets.Layout(width="110px"))
        self.slider.disabled = value == 0
        super().__init__([self.slider, self.zero], **kwargs)
        self.value = value
        self._syncing = False
        self.slider.observe(self._from_parts, "value")
        self.zero.observe(self._from_parts, "value")
        self.observe(self._to_parts, "value")

    def _from_parts(self, _change) -> None:
        if not self._syncing:
            self.slider.disabled = self.zero.value
            self.value = 0.0 if self.zero.value else self.slider.value

    def _to_parts(self, change) -> None:
        self._syncing = True  # moving the parts must not write a stale value back
        try:
            self.zero.value = change.new == 0
            self.slider.disabled = change.new == 0
            if change.new > 0:
                self.slider.value = change.new
        finally:
            self._syncing = False


def build_controls(defaults: TrainConfig) -> dict[str, widgets.Widget]:
    """One control per knob, keyed by TrainConfig field name, starting at ``defaults``' values."""

    def slider(kind, value, low, high, description, **options):
        return refusing(kind)(
            value=value,
            min=min(low, value),
            max=max(high, value),
            description=description,
            continuous_update=False,
            style=DESCRIPTION_STYLE,
            layout=widgets.Layout(width="520px"),
            **options,
        )

    def log_slider(value, low_exponent, high_exponent, description, readout_format):
        low_exponent, high_exponent = min(low_exponent, math.floor(math.log10(value))), max(high_exponent, math.ceil(math.log10(value)))
        return refusing(widgets.FloatLogSlider)(
            value=value,
            base=10,
            min=low_exponent,
            max=high_exponent,
            step=0.25,
            description=description,
            readout_format=readout_format,
            continuous_update=False,
            style=DESCRIPTION_STYLE,
            layout=widgets.Layout(width="520px"),
        )

    def choice(options, value, **style):
        return refusing(widgets.ToggleButtons)(options=options, value=value, style=style)  # labelled by its row (ROW_LABELS)

    # the shipped references pretrained on the lab's task (long.pt learned 5-digit addition: not offered on 2d+)
    references = tuple(name for name in REFERENCE_NAMES if REFERENCE_TASKS[name] == defaults.task)
    references = references if defaults.reference in references else (*references, defaults.reference)
    controls = {
        "group_size": refusing(widgets.SelectionSlider)(
            options=with_value(GROUP_SIZES, defaults.group_size),
            value=defaults.group_size,
            description="group size G",
            continuous_update=False,
            style=DESCRIPTION_STYLE,
            layout=widgets.Layout(width="520px"),
        ),
        "std_eps": EpsilonControl(defaults.std_eps),
        "baseline": choice(BASELINE_OPTIONS, defaults.baseline, button_width="108px"),
        "prompts_per_step": slider(widgets.IntSlider, defaults.prompts_per_step, 2, 64, "prompts per step P"),
        "steps": slider(widgets.IntSlider, defaults.steps, 5, 500, "steps", step=5),
        "lr": log_slider(defaults.lr, -5, -2, "learning rate", ".1e"),
        "critic_lr": log_slider(defaults.critic_lr, -5, -1, "critic learning rate", ".1e"),
        "kl_coef": slider(widgets.FloatSlider, defaults.kl_coef, 0.0, 0.5, "KL coefficient (beta)", step=0.01),
        "clip_eps": slider(widgets.FloatSlider, defaults.clip_eps, 0.05, 1.0, "ratio clip (clip_eps)", step=0.05),
        "reward": choice(REWARD_KINDS, defaults.reward),
        "reward_offset": slider(widgets.FloatSlider, defaults.reward_offset, -5.0, 5.0, "reward offset", step=0.1),
        "reward_scale": log_slider(defaults.reward_scale, -2, 2, "reward scale", ".2g"),
        "reward_noise": slider(widgets.FloatSlider, defaults.reward_noise, 0.0, 1.0, "reward noise (std)", step=0.01),
        "std_scope": choice(STD_SCOPES, defaults.std_scope),
        "eps_mode": choice(EPS_MODES, defaults.eps_mode),
        "skip_zero_std_groups": widgets.Checkbox(
            value=defaults.skip_zero_std_groups,
            indent=False,
            description="skip them (DAPO's dynamic-sampling filter)",
            layout=widgets.Layout(width="auto"),
        ),
        "reference": choice(references, defaults.reference),
        "seed": refusing(widgets.BoundedIntText)(
            value=defaults.seed, min=0, max=2**31 - 1, description="first seed", style=DESCRIPTION_STYLE, layout=widgets.Layout(width="260px")
        ),
    }
    controls["baseline"].tooltips = list(BASELINE_TOOLTIPS)
    for name, control in controls.items():
        control.add_class(css_class(name))
    return controls


def labelled_row(name: str, control: widgets.Widget) -> widgets.Widget:
    """The control with its ROW_LABELS label in the description column (the other controls carry
    their own description; a ToggleButtons' own would wrap above its buttons)."""
    if name not in ROW_LABELS:
        return control
    label = widgets.Label(
        ROW_LABELS[name], layout=widgets.Layout(width=DESCRIPTION_STYLE["description_width"], display="flex", justify_content="flex-end")
    )
    return widgets.HBox([label, control])


def config_from_controls(controls: dict[str, widgets.Widget], base: TrainConfig) -> TrainConfig:
    """``base`` with every control's value; validated (ValueError names the knob and the range)."""
    return validate_config(replace(base, **{name: control.value for name, control in controls.items()}))


def seed_configs(config: TrainConfig, num_seeds: int) -> list[TrainConfig]:
    """The same config for seeds config.seed, config.seed + 1, ..."""
    return [replace(config, seed=config.seed + offset) for offset in range(num_seeds)]
