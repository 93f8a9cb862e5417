"""The interactive lab: sliders that re-run GRPO and draw its curves while it trains.

    lab = GRPOLab(steps=60)                 # in a notebook cell: shows the dashboard
    lab.controls["group_size"].value = 4    # any control, by TrainConfig field name: re-runs
    lab.run_button.click(); lab.wait(60)    # or press Run, and wait for the run to end
    lab.runs[-1].history                    # the finished runs, each with its config and history

Four pieces, top to bottom:
1. controls: ``build_controls`` makes one widget per knob, each with the CSS class ``grpo-<knob>``
2. config: ``config_from_controls`` reads them into a TrainConfig; ``run_label`` names a run by
   what differs from the others on the plot; ``explain_run`` puts what happened into plain words
3. runner: every run is a background thread calling ``train`` once per seed, with one core fewer
   than the machine has (the drawing needs one); a threading.Event cancels it (a changed control
   cancels the run in progress and starts a new one)
4. view: while a run goes on, a second thread redraws ``plots.LiveRunFigure`` into a PNG a few
   times a second and writes the status line, progress bar and hints. Threads write only these
   output widgets, never the controls (the way that works in JupyterLab and Voila alike).
``GRPOLab`` lays them out and wires them together; its callbacks are thin.
"""

from __future__ import annotations

import html
import itertools
import math
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

import ipywidgets as widgets
import torch
import traitlets

from .advantages import EPS_MODES, STD_SCOPES
from .plots import LiveRunFigure, RunCurves
from .policy import REFERENCE_NAMES, load_reference_policy
from .task import REWARD_KINDS
from .threads import default_training_threads, torch_threads
from .trainer import TrainConfig, TrainResult, train

# --- 1. controls ----------------------------------------------------------------------------------

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
    "skip_zero_std_groups": "equal-reward groups",
    "reference": "reference policy",
}
MAX_SEEDS = 5


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

    references = REFERENCE_NAMES if defaults.reference in REFERENCE_NAMES else (*REFERENCE_NAMES, defaults.reference)
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


# --- 2. config, labels and explanations -----------------------------------------------------------

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
    "skip_zero_std_groups": "skip equal",
    "std_scope": "std over",
    "eps_mode": "eps mode",
}
ZERO_STD_HINT_LEVEL = 0.5  # a hint when at least this fraction of recent groups had no reward spread
EXPLOSION_HINT_LEVEL = 10.0  # a hint when some |advantage| grew past this
AMPLIFIED_NOISE_LEVEL = 0.05  # z-score hint: groups whose reward std is below this still get unit-size advantages


def config_from_controls(controls: dict[str, widgets.Widget], base: TrainConfig) -> TrainConfig:
    """``base`` with every control's value; validated (ValueError names the knob and the range)."""
    return replace(base, **{name: control.value for name, control in controls.items()}).validate()


def seed_configs(config: TrainConfig, num_seeds: int) -> list[TrainConfig]:
    """The same config for seeds config.seed, config.seed + 1, ..."""
    return [replace(config, seed=config.seed + offset) for offset in range(num_seeds)]


def format_value(value) -> str:
    """A knob's value as a label shows it: 1e-4 -> '1e-4', 0.25 -> '0.25', 'weak' -> 'weak'."""
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if value != 0 and abs(value) < 1e-3:
        mantissa, exponent = f"{value:.1e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return f"{value:.3g}"


LABEL_LEADS = ("group_size", "baseline", "reference", "std_eps")  # always named, in this order
LABEL_SKIPS = ("device", "eval_every", "probe_every")  # where the curves are measured, not what is trained


def run_label(config: TrainConfig, compared: list[TrainConfig], num_seeds: int = 1) -> str:
    """'G=8, zscore, ref=default, ε=1e-4', plus every other knob that is off its TrainConfig default
    or differs among the ``compared`` configs (the seed only in the second case)."""
    defaults = TrainConfig()
    named = list(LABEL_LEADS)
    for f in fields(TrainConfig):
        if f.name in LABEL_LEADS or f.name in LABEL_SKIPS:
            continue
        differs = len({getattr(c, f.name) for c in [config, *compared]}) > 1
        off_default = f.name != "seed" and getattr(config, f.name) != getattr(defaults, f.name)
        if differs or off_default:
            named.append(f.name)
    parts = [f"G={config.group_size}", config.baseline]
    parts += [f"{SHORT_NAMES.get(name, name)}={format_value(getattr(config, name))}" for name in named[2:]]
    if num_seeds > 1:
        parts.append(f"{num_seeds} seeds")
    return ", ".join(parts)


def explain_run(config: TrainConfig, history: list[dict], status: str, message: str = "", crashed: bool = False) -> list[str]:
    """Plain-words notes on a run (in progress or ended): why it failed (``crashed``: an exception
    in the code, not a non-finite number), what a high frac_reward_zero_std means, when advantages
    explode, what a reward offset does without a baseline."""
    notes = []
    if status == "failed" and crashed:
        notes.append(
            f"The run stopped on an error in the code, not on a number: {message}. That is a bug, not a "
            "lesson about GRPO; the full traceback is in lab.current.traceback (please report it with "
            "the settings in the status line)."
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
            "times as long as GRPO's (data/results/grpo-vs-ppo.json), and on these 3-token answers the critic explains "
            "little of the reward (notebook 05 §2b)."
        )
    if config.baseline == "none" and config.reward_offset != 0:
        direction = "up" if config.reward_offset > 0 else "down"
        notes.append(
            f"With no baseline each answer's advantage is its reward, so the offset {config.reward_offset:g} "
            f"pushes every sampled answer {direction} alike and only the small differences between answers "
            "teach. Mean only subtracts the offset away."
        )
    return notes


# --- 3. runner ------------------------------------------------------------------------------------


@dataclass
class LabRun:
    """One press of Run (or one change of a control): the same config trained once per seed.

    configs: one TrainConfig per seed; histories: one list of per-step dicts per seed, filled while
    it trains; results: the TrainResult of every seed that ended; advantages: the latest step's
    advantages [P, G]. status: waiting | running | finished | failed | stopped.
    """

    configs: list[TrainConfig]
    key: int
    color: str = "C0"
    number: int = 0  # 1, 2, ... in the order runs start training (superseded ones get none)
    histories: list[list[dict]] = field(default_factory=list)
    results: list[TrainResult] = field(default_factory=list)
    advantages: torch.Tensor | None = None
    advantages_step: int = 0
    status: str = "waiting"
    message: str = ""
    stop_reason: str = ""
    traceback: str = ""  # set when the run crashed on an exception (status 'failed'); empty otherwise
    repeats: int = 0  # the number of an earlier run with the same configs and seeds (CPU runs repeat exactly)
    started: float = 0.0
    elapsed: float = 0.0
    version: int = 0  # bumped on every new record, so the view knows when to redraw
    stop_event: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def config(self) -> TrainConfig:
        return self.configs[0]

    @property
    def history(self) -> list[dict]:
        """The first seed's history (step 0 = the reference's evaluation)."""
        return self.histories[0] if self.histories else []

    @property
    def num_seeds(self) -> int:
        return len(self.configs)

    @property
    def steps_done(self) -> int:
        return sum(max(len(history) - 1, 0) for history in self.histories)

    def record_step(self, record: dict) -> None:  # train's on_step
        self.histories[-1].append(record)
        self.version += 1

    def record_batch(self, batch: dict) -> None:  # train's on_batch
        self.advantages, self.advantages_step = batch["advantages"], batch["step"]

    def cancel(self, reason: str) -> None:
        self.stop_reason = self.stop_reason or reason
        self.stop_event.set()

    def train_all_seeds(self) -> None:
        """Train every seed in turn (in the calling thread); stop at the first seed that does not finish."""
        self.status, self.started = "running", time.perf_counter()
        for config in self.configs:
            self.histories.append([])
            result = train(config, on_step=self.record_step, stop=self.stop_event, on_batch=self.record_batch)
            self.results.append(result)
            if result.status != "finished":
                self.status, self.message = result.status, result.message
                break
        else:
            self.status = "finished"
        self.elapsed = time.perf_counter() - self.started
        self.version += 1


FIRST_FRAME_BEFORE_TRAINING = True  # draw a run's first frame before it trains (False: the ticker draws it)
FIRST_FRAMES = 3  # the first frames of a run come as soon as there is news, the rest every ``interval``
FIRST_FRAME_POLL = 0.02  # seconds between looks for news before those first frames are drawn


class ViewTicker:
    """Calls ``refresh`` in its own thread while ``changed()`` says there is something new: the
    first FIRST_FRAMES frames as soon as there is news (the step-0 evaluation, the first steps), then
    every ``interval`` seconds, and never sooner than 1.5x the last refresh took. Drawing holds the
    GIL that training's Python needs, so fewer frames make a faster run."""

    def __init__(self, refresh: Callable[[], float], changed: Callable[[], bool], interval: float, name: str):
        self.refresh, self.changed, self.interval = refresh, changed, interval
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        frames, pause = 0, FIRST_FRAME_POLL
        while not self._done.wait(pause):
            if self.changed():
                seconds = self.refresh()
                frames += 1
                pause = max(self.interval if frames >= FIRST_FRAMES else FIRST_FRAME_POLL, 1.5 * seconds)


_warm_up_lock = threading.Lock()
_warmed_up = False


def warm_up_torch() -> None:
    """Pay torch's one-time costs in a background thread, once per process: the first optimiser
    construction imports torch._dynamo (seconds), so the first run can plot within a second."""
    global _warmed_up
    with _warm_up_lock:
        if _warmed_up:
            return
        _warmed_up = True

    def warm() -> None:
        torch.optim.Adam([torch.zeros(1, requires_grad=True)])
        load_reference_policy("default")

    threading.Thread(target=warm, name="grpo-lab-warmup", daemon=True).start()


# --- 4. the dashboard -----------------------------------------------------------------------------

STATUS_WORDS = {"waiting": "Starting", "running": "Running", "finished": "Finished", "failed": "Failed", "stopped": "Stopped"}
COLORS = tuple(f"C{index}" for index in range(10))  # matplotlib's default colour cycle
# an "i" in a circle drawn with CSS: the ⓘ character (U+24D8) is missing from many machines' fonts
NOTE_MARK = (
    "<span style='display:inline-block;width:1.15em;height:1.15em;line-height:1.15em;border:1.5px solid currentColor;"
    "border-radius:50%;text-align:center;font-weight:bold;font-style:normal;font-size:0.85em'>i</span>"
)


def lab_measure_every(steps: int) -> int:
    """Steps between the lab's evaluations and gradient-noise probes: about six per run, at least
    every 10 steps (25 for the default 150). The last step is always evaluated. Every 10, as the
    notebooks measure, cost the default run about 1.3x its time (benchmarks/README.md, "Lab speed")."""
    return max(10, 5 * round(steps / 30))


BAR_STYLES = {"waiting": "info", "running": "info", "finished": "success", "failed": "danger", "stopped": "warning"}


class GRPOLab:
    """The dashboard. ``GRPOLab(**knobs)`` starts the controls at ``TrainConfig(**knobs)``.

    Unless given, eval_every and probe_every are ``lab_measure_every(steps)`` (25 for 150 steps).
    autorun: start a run at once; max_runs: finished runs kept on the plot (oldest dropped);
    refresh_interval: seconds between plot updates while training (at least); debounce: seconds a
    new run waits for further changes before it starts; training_threads: torch threads of the
    training thread (default: one core fewer than the machine has, see default_training_threads).
    Surface for tests and notebooks: ``controls`` (by TrainConfig field name), ``num_seeds``,
    ``x_axis``, ``run_button``, ``stop_button``, ``clear_button``, ``plot`` (the Image), ``status``,
    ``progress``, ``hints``, ``runs`` (finished runs, oldest first), ``current``, ``wait(timeout)``.
    """

    def __init__(
        self,
        autorun: bool = False,
        max_runs: int = 6,
        refresh_interval: float = 0.4,
        debounce: float = 0.05,
        training_threads: int | None = None,
        **config_values,
    ):
        config = TrainConfig(**config_values).validate()
        measure_every = {name: lab_measure_every(config.steps) for name in ("eval_every", "probe_every") if name not in config_values}
        self.base_config = replace(config, **measure_every).validate()
        self.max_runs, self.refresh_interval, self.debounce = max_runs, refresh_interval, debounce
        self.training_threads = training_threads or default_training_threads()
        self.controls = build_controls(self.base_config)
        self.num_seeds = refusing(widgets.IntSlider)(
            value=1,
            min=1,
            max=MAX_SEEDS,
            description="seeds (mean and band)",
            continuous_update=False,
            style=DESCRIPTION_STYLE,
            layout=widgets.Layout(width="520px"),
        )
        self.x_axis = widgets.Dropdown(
            options=(("training step", "step"), ("responses sampled", "samples")),
            value="step",
            description="x axis",
            style={"description_width": "60px"},
            layout=widgets.Layout(width="240px"),
        )
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play", layout=widgets.Layout(width="110px"))
        self.stop_button = widgets.Button(description="Stop", button_style="warning", icon="stop", layout=widgets.Layout(width="110px"))
        self.clear_button = widgets.Button(description="Clear earlier runs", icon="trash", layout=widgets.Layout(width="180px"))
        self.status = widgets.HTML("Move a slider or press Run.")
        self.progress = widgets.IntProgress(value=0, min=0, max=1, layout=widgets.Layout(width="220px"))
        self.hints = widgets.HTML("")
        self.figure = LiveRunFigure()
        self.plot = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width=f"{self.figure.width_px}px"))
        for widget, name in (
            (self.num_seeds, "num_seeds"),
            (self.x_axis, "x_axis"),
            (self.run_button, "run"),
            (self.stop_button, "stop"),
            (self.clear_button, "clear"),
            (self.status, "status"),
            (self.progress, "progress"),
            (self.hints, "hints"),
            (self.plot, "plot"),
        ):
            widget.add_class(css_class(name))

        self.runs: list[LabRun] = []
        self.current: LabRun | None = None
        self.refusal = ""  # the last "Cannot run: ..." line, shown until a run starts
        self._thread: threading.Thread | None = None
        self._keys = itertools.count()
        self._color_index = -1
        self._started_runs = 0
        self._lock = threading.RLock()  # guards runs, current and _thread
        self._draw_lock = threading.Lock()  # one figure, drawn by one thread at a time

        for name, control in (*self.controls.items(), ("num_seeds", self.num_seeds)):
            control.observe(lambda _change: self.start_run(), "value")
            if isinstance(control, RefusesOutOfRange):  # a checkbox has no range
                control.on_refused(lambda value, allowed, name=name: self.refuse(name, value, allowed))
        self.x_axis.observe(lambda _change: self.redraw(), "value")
        self.run_button.on_click(lambda _button: self.start_run())
        self.stop_button.on_click(lambda _button: self.stop())
        self.clear_button.on_click(lambda _button: self.clear())
        self.widget = self._layout()
        warm_up_torch()
        self.refresh_view()
        if autorun:
            self.start_run()

    def _layout(self) -> widgets.Box:
        advanced = widgets.VBox([labelled_row(name, self.controls[name]) for name in ADVANCED_CONTROLS] + [self.num_seeds])
        accordion = widgets.Accordion([advanced], titles=("Advanced: batch, optimiser, reward model, seeds",), selected_index=None)
        accordion.add_class("grpo-advanced")
        controls = widgets.VBox(
            [
                *[labelled_row(name, self.controls[name]) for name in ("group_size", "std_eps", "baseline")],
                accordion,
                widgets.HBox([self.run_button, self.stop_button, self.clear_button]),
                self.x_axis,
                widgets.HBox([self.progress, self.status], layout=widgets.Layout(align_items="center", flex_flow="row wrap")),
                self.hints,
            ],
            layout=widgets.Layout(flex="0 0 540px", width="540px", margin="0 16px 0 0"),
        )
        plot = widgets.Box([self.plot], layout=widgets.Layout(flex="1 1 600px", min_width="600px", max_width=f"{self.figure.width_px}px"))
        # controls beside the plot where the page is wide enough (a projector, a 1440 px screen),
        # so both fit one screen; on a narrow page the plot wraps under the controls
        return widgets.Box([controls, plot], layout=widgets.Layout(display="flex", flex_flow="row wrap", align_items="flex-start", width="100%"))

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # -- callbacks (thin) --

    def start_run(self) -> LabRun | None:
        """Cancel the run in progress, if any, and start one with the controls' values; None (and
        the reason in the status line) when the values are not a valid TrainConfig."""
        try:
            config = config_from_controls(self.controls, self.base_config)
        except ValueError as error:
            self.status.value = f"<b>Cannot run:</b> {html.escape(str(error))}"
            return None
        self.refusal = ""
        with self._lock:
            key = next(self._keys)
            run = LabRun(seed_configs(config, self.num_seeds.value), key=key)
            run.repeats = next((earlier.number for earlier in reversed(self.runs) if earlier.configs == run.configs), 0)
            previous_thread = self._thread
            if self.current is not None:
                self.current.cancel("superseded")
            self.current = run
            self._thread = threading.Thread(target=self._run_in_background, args=(run, previous_thread), name=f"grpo-lab-run-{key}", daemon=True)
            self._thread.start()
        self._show_status(run)  # "Starting ...": at once, before the previous run has wound down
        return run

    def refuse(self, knob: str, value, allowed: str) -> None:
        """Say why a value set from code was refused (the control kept its value; nothing runs)."""
        shown = format_value(value) if isinstance(value, (int, float)) else repr(value)
        self.refusal = f"<b>Cannot run:</b> {html.escape(knob)} = {html.escape(shown, quote=False)}, allowed {html.escape(allowed)}"
        self.status.value = self.refusal  # and it stays above a run in progress until the next run starts

    def stop(self) -> None:
        """Stop the run in progress (it stays on the plot until the next run, not in ``runs``)."""
        with self._lock:
            if self.current is not None:
                self.current.cancel("stopped by the user")

    def clear(self) -> None:
        """Forget the earlier runs (the run in progress goes on)."""
        with self._lock:
            self.runs.clear()
        self.redraw()

    def redraw(self) -> None:
        """Redraw now if idle; a run in progress redraws at its next tick."""
        with self._lock:
            running = self.current is not None and self.current.status in ("waiting", "running")
            if running:
                self.current.version += 1
        if not running:
            self.refresh_view()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no run is in progress, at most ``timeout`` seconds; True when idle."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                thread = self._thread
            if thread is None:
                return True
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            if thread.is_alive():
                return False
            with self._lock:
                if thread is self._thread:
                    return True

    def close(self) -> None:
        """Stop the run in progress and close every widget."""
        self.stop()
        self.wait(10)
        pending = [self.widget]
        while pending:
            widget = pending.pop()
            pending.extend(getattr(widget, "children", ()))
            widget.close()

    # -- the background run --

    def _run_in_background(self, run: LabRun, previous_thread: threading.Thread | None) -> None:
        if previous_thread is not None:
            previous_thread.join()  # one run at a time: the cancelled one ends within a step
        if run.stop_event.wait(self.debounce):  # a newer change came in, or Stop: it never starts
            run.status, run.message = "stopped", run.stop_reason
            with self._lock:
                stopped_by_user = run is self.current
            if stopped_by_user:  # else the newer run shows its own status
                self._show_status(run)
            return
        with self._lock:
            self._started_runs += 1
            run.number = self._started_runs
        run.color = self._next_color()
        # the first frame (the new run in the legend, no points yet) is a full redraw of the four panels,
        # a few tenths of a second of Python: drawn here, before training, it does not compete with it
        run.status = "running"
        if FIRST_FRAME_BEFORE_TRAINING:
            self.refresh_view()
        seen = {"version": run.version if FIRST_FRAME_BEFORE_TRAINING else -1}

        def changed() -> bool:
            fresh = run.version != seen["version"]
            seen["version"] = run.version
            return fresh

        ticker = ViewTicker(self.refresh_view, changed, self.refresh_interval, name=f"grpo-lab-view-{run.key}")
        ticker.start()
        try:
            with torch_threads(self.training_threads):
                run.train_all_seeds()
        except Exception as error:  # a bug must not leave the dashboard saying "Running" forever
            run.status, run.message, run.traceback = "failed", f"{type(error).__name__}: {error}", traceback.format_exc()
            run.elapsed = time.perf_counter() - run.started if run.started else 0.0
        finally:
            ticker.stop()
            if run.status == "stopped":
                run.message = run.stop_reason
            with self._lock:
                if run.status in ("finished", "failed"):
                    # same configs and seeds train the same curves (CPU runs are deterministic): keep one copy
                    self.runs = [earlier for earlier in self.runs if earlier.configs != run.configs] + [run]
                    del self.runs[: -self.max_runs]
                superseded = run is not self.current
            if not superseded:  # the final picture first, then "Finished" (refresh_view writes the status last)
                self.refresh_view()

    def _next_color(self) -> str:
        """The next matplotlib cycle colour ('C0'...'C9') that no run on the plot uses."""
        with self._lock:
            used = {run.color for run in self.runs}
            self._color_index += 1
            for offset in range(len(COLORS)):
                color = COLORS[(self._color_index + offset) % len(COLORS)]
                if color not in used:
                    self._color_index += offset
                    return color
        return COLORS[self._color_index % len(COLORS)]

    # -- the view: figure, status line, progress bar, hints --

    def shown_runs(self) -> list[LabRun]:
        """The runs on the plot, oldest first: the finished ones, then the current one."""
        with self._lock:
            shown = list(self.runs)
            if self.current is not None and self.current not in shown and self.current.status != "waiting":
                shown.append(self.current)
        return shown

    def refresh_view(self) -> float:
        """Redraw the figure into the Image and update the status line; returns the seconds it took."""
        started = time.perf_counter()
        shown = self.shown_runs()
        configs = [run.config for run in shown]
        curves = [
            RunCurves(
                run.key,
                run_label(run.config, configs, run.num_seeds) + ("  (failed)" if run.status == "failed" else ""),
                [list(history) for history in run.histories],
                run.color,
                faded=run is not shown[-1],
                live=run.status in ("waiting", "running"),
            )
            for run in shown
        ]
        newest = shown[-1] if shown else None
        x_key = self.x_axis.value
        x_max = max((run.config.steps * (1 if x_key == "step" else run.config.samples_per_step) for run in shown), default=None)
        advantages_title = ""
        if newest is not None and newest.advantages is not None:
            P, G = newest.advantages.shape
            advantages_title = f"Advantages at step {newest.advantages_step} ({P} x {G} responses)"
        with self._draw_lock:
            self.figure.update(
                curves,
                x_key=x_key,
                x_max=x_max,
                advantages=newest.advantages if newest else None,
                advantages_title=advantages_title,
                histogram_color=newest.color if newest else None,
            )
            png = self.figure.png()
        self.plot.value = png
        self._show_status(self.current)
        return time.perf_counter() - started

    def _show_status(self, run: LabRun | None) -> None:
        if run is None:
            return
        configs = [shown.config for shown in self.shown_runs()] or [run.config]
        label = html.escape(run_label(run.config, configs, run.num_seeds))
        total = run.config.steps * run.num_seeds
        words = [f"<b>{STATUS_WORDS[run.status]}</b> run {run.number}: {label}" if run.number else f"<b>{STATUS_WORDS[run.status]}</b> {label}"]
        if run.status == "running":
            seed_part = f"seed {len(run.histories)} of {run.num_seeds}, " if run.num_seeds > 1 else ""
            step = run.histories[-1][-1]["step"] if run.histories and run.histories[-1] else 0
            words.append(f"{seed_part}step {step} of {run.config.steps}")
        elif run.status in ("finished", "failed", "stopped"):
            words.append(f"in {run.elapsed:.1f} s" + (f": {html.escape(run.message)}" if run.message and run.status != "finished" else ""))
        if run.repeats:
            words.append(
                f"same settings and seed as run {run.repeats}, so the same curves again (CPU runs repeat exactly); "
                "change <i>first seed</i> under Advanced for a new draw"
            )
        accuracies = [
            (history[0]["eval_accuracy"], [r["eval_accuracy"] for r in history if "eval_accuracy" in r][-1]) for history in run.histories if history
        ]
        if accuracies:
            start = sum(a for a, _ in accuracies) / len(accuracies)
            latest = sum(b for _, b in accuracies) / len(accuracies)
            over = " (mean over seeds)" if len(accuracies) > 1 else ""
            words.append(f"held-out accuracy {start:.2f} &rarr; {latest:.2f}{over}")
        self.status.value = (self.refusal + "<br>" if self.refusal else "") + " &middot; ".join(words)
        self.progress.max = max(total, 1)
        self.progress.value = min(run.steps_done, total) if run.status != "finished" else total
        self.progress.bar_style = BAR_STYLES[run.status]
        notes = explain_run(run.config, run.histories[-1] if run.histories else [], run.status, run.message, crashed=bool(run.traceback))
        self.hints.value = "".join(f"<p style='margin:4px 0;max-width:1000px'>{NOTE_MARK} {html.escape(note)}</p>" for note in notes)
