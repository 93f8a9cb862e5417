"""The card's claims: each claim, the experiment that tests it, and the rule that turns the measured
numbers into a verdict (``Finding``: the numbers, the verdict word, what they mean in plain words).

Every number a finding quotes is read from a result file, and every verdict is decided by a rule on
those numbers (the function named next to each claim in ``CLAIMS``), so claims.md is regenerated,
never edited (claims_report.py writes it): ``python -m grpo_lab sweep claims``. A difference counts
only when it exceeds twice its standard error over seeds (``compare``); otherwise the two are
"within noise" of each other.

Power: every ``compare`` a rule makes is recorded (stats.recording_comparisons) with the smallest
difference its seeds could detect (80% power at the 2-SE threshold: 2.84 SE). A rule's "does not hold"
stands only when the experiment had the power to see the claimed effect: when some comparison found a
difference (the effect is reversed or elsewhere), or when every comparison could have detected the
claimed effect (``Claim.claimed_effect``; by default CLAIMED_RELATIVE_EFFECT of the compared means).
Otherwise the verdict is NOT_DETECTED, "not detected (could detect >= X)", X the largest of the
detectable differences that were too large.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..task import Task
from .catalog import REUSE_WORDS, TARGET_ACCURACY, cell_label, result_cell
from .stats import Comparison, compare, flipping, recording_comparisons
from .stats import format_mean_std as fmt  # short: the rules below quote some ninety numbers

HOLDS, PARTLY, FAILS, UNTESTED = "holds here", "partly", "does not hold here", "not tested"
NOT_DETECTED = "not detected"  # FAILS without the power to see the claimed effect (module docstring)
CLAIMED_RELATIVE_EFFECT = 0.05  # a claim with no size of its own claims at least 5% of the compared means


@dataclass
class Finding:
    evidence: str  # the numbers, in markdown
    verdict: str  # HOLDS, PARTLY, FAILS, NOT_DETECTED or UNTESTED
    explanation: str  # what the numbers mean, in plain words
    comparisons: list[Comparison] = field(default_factory=list)  # every compare the rule made, with its power
    detectable: float | None = None  # NOT_DETECTED: the largest detectable difference that exceeded the claimed effect
    near_line: bool = False  # the verdict changes if one comparison near its line (stats.NEAR_LINE) falls on the other side

    @property
    def verdict_text(self) -> str:
        """The verdict as claims.md prints it: 'not detected (could detect >= 0.031)' carries its power."""
        return f"{self.verdict} (could detect ≥ {self.detectable:.3g})" if self.verdict == NOT_DETECTED else self.verdict


@dataclass(frozen=True)
class Claim:
    """source: where on the card (or in the literature); card: its words; claim: in English;
    evaluate(results) -> Finding, or None with ``reason`` for a claim no experiment can test."""

    key: str
    source: str
    card: str
    claim: str
    experiments: tuple[str, ...]
    evaluate: Callable[[dict], Finding] | None = None
    reason: str = ""
    claimed_effect: float | None = None  # the smallest difference the claim predicts, in the compared metric's units
    regimes: tuple[str, ...] = ()  # the only regimes where it can be measured (none: every regime); ``reason`` says why elsewhere


# --- reading numbers --------------------------------------------------------------------------------


def cell_summary(results: dict, name: str, cell_id: str, metric: str) -> dict:
    """{mean, std, n} of one metric of one cell (n = 0 when absent). An id the catalog does not have raises
    catalog.UnknownCellError; a catalog cell the result lacks, KeyError (catalog.result_cell)."""
    return result_cell(results[name], cell_id)["summary"].get(metric) or {"mean": None, "std": None, "n": 0}


def per_seed_text(results: dict, name: str, cell_id: str, metric: str) -> str:
    """One cell's per-seed values of a metric, as claims.md quotes them beside the mean: 'per seed 1520, 1634, never'."""
    cell = result_cell(results[name], cell_id)
    values = [s["metrics"].get(metric) for s in cell["per_seed"]]
    return "per seed " + ", ".join("never" if v is None else f"{v:.0f}" for v in values)


def worded(direction: str, higher: str = "higher", lower: str = "lower", same: str = "within noise of") -> str:
    return {"higher": higher, "lower": lower, "same": same}[direction]


ACC = "late_eval_accuracy"  # mean held-out accuracy over the last 20% of the steps
SMALL_EFFECT = 0.01  # accuracy differences below one point are treated as no difference


# --- the claims ---------------------------------------------------------------------------------------


def offset_removed(r: dict) -> Finding:
    name = "offset-and-scale"
    offsets = sorted({c["axes"]["reward_offset"] for c in r[name]["cells"]})
    largest = offsets[-1]
    acc = {(b, o): cell_summary(r, name, f"{b}-offset{o:g}", ACC) for b in ("none", "mean", "zscore") for o in offsets}
    invariant = all(compare(acc[(b, largest)], acc[(b, 0.0)], SMALL_EFFECT) == "same" for b in ("mean", "zscore"))
    none_hurt = compare(acc[("none", largest)], acc[("none", 0.0)], SMALL_EFFECT) == "lower"
    evidence = "; ".join(f"{b}: " + ", ".join(f"offset {o:g} → {fmt(acc[(b, o)])}" for o in offsets) for b in ("none", "mean", "zscore"))
    verdict = HOLDS if invariant and none_hurt else PARTLY if invariant else FAILS
    none_fine = compare(acc[("none", 0.0)], acc[("mean", 0.0)], SMALL_EFFECT) == "same"
    explanation = (
        f"Late held-out accuracy. With the group mean subtracted (mean, zscore) the advantage does not see the offset at all, "
        f"so the runs with offset {largest:g} are {'the same as' if invariant else 'NOT the same as'} without it. "
        f"Without a baseline (none) the offset {'costs accuracy' if none_hurt else 'did not cost accuracy here'}: every sampled answer is "
        "pushed up, the right ones only slightly more."
        + (
            " With 0/1 rewards and no offset, 'none' is as good as 'mean' here (wrong answers have reward 0 and add no "
            "noise): the baseline matters once rewards are shifted."
            if none_fine
            else ""
        )
    )
    return Finding(evidence, verdict, explanation)


def scales_unified(r: dict) -> Finding:
    name = "offset-and-scale"
    hard = {
        (b, s): cell_summary(r, name, f"{b}-offset0" if s == 1 else f"{b}-hard-x0.1", "hard_eval_accuracy")
        for b in ("mean", "zscore", "none")
        for s in (1, 0.1)
    }
    z_same = compare(hard[("zscore", 0.1)], hard[("zscore", 1)], SMALL_EFFECT) == "same"
    mean_hurt = compare(hard[("mean", 0.1)], hard[("mean", 1)], SMALL_EFFECT) == "lower"
    evidence = "hard-problem accuracy, rewards of hard problems x1 → x0.1: " + "; ".join(
        f"{b}: {fmt(hard[(b, 1)])} → {fmt(hard[(b, 0.1)])}" for b in ("none", "mean", "zscore")
    )
    verdict = HOLDS if z_same and mean_hurt else PARTLY if z_same else FAILS
    plain_same = compare(cell_summary(r, name, "zscore-offset0", ACC), cell_summary(r, name, "mean-offset0", ACC), SMALL_EFFECT) == "same"
    explanation = (
        "When the reward model scores hard (carry) problems on a 10x smaller scale, mean-centring keeps that 10x in their "
        f"advantages and hard-problem accuracy {'drops' if mean_hurt else 'did not drop beyond noise'}; z-scoring divides it out "
        f"({'no change beyond noise' if z_same else 'yet it changed'})."
        + (
            " Without such scale differences zscore and mean end within noise of each other (row 'mean-only'): this is where dividing by σ pays."
            if plain_same and mean_hurt
            else ""
        )
    )
    return Finding(evidence, verdict, explanation)


def snr_tally(r: dict, first: str, second: str, min_group_size: int = 2) -> dict:
    """How often baseline ``first``'s batch net SNR (noise subtracted) is higher / lower / within noise of ``second``'s, over the
    variance experiment's (policy, G) cells with G >= min_group_size: {"higher": n, "lower": n, "same": n}."""
    tally = {"higher": 0, "lower": 0, "same": 0}
    for cell in r["variance"]["cells"]:
        if cell["axes"]["group_size"] >= min_group_size:
            tally[
                compare(cell_summary(r, "variance", cell["id"], f"net_snr.{first}"), cell_summary(r, "variance", cell["id"], f"net_snr.{second}"))
            ] += 1
    return tally


def counted(tally: dict) -> str:
    return f"higher in {tally['higher']}, lower in {tally['lower']}, within noise in {tally['same']} of {sum(tally.values())}"


def zscore_lowers_variance(r: dict) -> Finding:
    name = "variance"
    cells = r[name]["cells"]
    policies = list(dict.fromkeys(c["axes"]["policy"] for c in cells))
    sizes = sorted({c["axes"]["group_size"] for c in cells if c["axes"]["group_size"] >= 4})
    by_sigma = snr_tally(r, "zscore", "mean", min_group_size=4)  # at G=2 with 0/1 rewards zscore is mean times a constant
    by_centring = snr_tally(r, "mean", "none")
    parts = []
    for policy in policies:
        G = 8 if 8 in sizes else sizes[0]
        cell_id = f"{policy}-g{G}"
        parts.append(
            f"{policy}, G={G}: net SNR zscore {fmt(cell_summary(r, name, cell_id, 'net_snr.zscore'))} vs mean {fmt(cell_summary(r, name, cell_id, 'net_snr.mean'))} "
            f"vs none {fmt(cell_summary(r, name, cell_id, 'net_snr.none'))}; raw grad_var zscore {fmt(cell_summary(r, name, cell_id, 'grad_var.zscore'))} "
            f"vs mean {fmt(cell_summary(r, name, cell_id, 'grad_var.mean'))}"
        )
    evidence = (
        "; ".join(parts) + f". zscore's SNR against mean's: {counted(by_sigma)} (policy, G ≥ 4) cells; mean's SNR against "
        f"no baseline's: {counted(by_centring)} (policy, G) cells."
    )
    verdict = HOLDS if by_sigma["higher"] > sum(by_sigma.values()) / 2 else FAILS if by_sigma["higher"] == 0 else PARTLY
    centring_helps = by_centring["higher"] > sum(by_centring.values()) / 2
    explanation = (
        "Raw variance is the wrong yardstick: z-scored advantages have unit scale, so their gradient variance is larger simply "
        "because the gradient is larger (see grad_var). The scale-free measures are the signal-to-noise ratio (SNR) and the "
        "cosine to the true gradient. On those, dividing by σ "
        + (
            "raises the SNR in most cells."
            if verdict == HOLDS
            else "does not reliably raise the SNR here: it re-weights prompts (the scale and difficulty rows) rather than removing noise."
        )
        + (
            " Centring is what raises it: mean-only's SNR is above no baseline's in most cells."
            if centring_helps
            else f" Nor does centring reliably raise it on these rewards: mean-only's SNR is above no baseline's in {by_centring['higher']} "
            f"cells, below it in {by_centring['lower']} and within noise in {by_centring['same']}. With 0/1 rewards and no "
            "offset a wrong answer's term is already 0, so there is no offset for a baseline to remove; the noise a baseline "
            "removes is an offset's (the offset row, notebook 01b §3)."
        )
        + " With 0/1 rewards at G=2, mean, rloo and zscore give the same gradient direction (only its length differs)."
    )
    return Finding(evidence, verdict, explanation)


def critic_costs(r: dict) -> Finding:
    name = "grpo-vs-ppo"
    critic = cell_summary(r, name, "ppo-g8", "critic_parameters")
    policy = cell_summary(r, name, "grpo", "policy_parameters")
    defaults = r[name]["train_defaults"]
    updates = defaults["critic_epochs"] * defaults["critic_minibatches"]
    grpo_time, ppo_time = cell_summary(r, name, "grpo", "time_per_step_s"), cell_summary(r, name, "ppo-g8", "time_per_step_s")
    slower = compare(ppo_time, grpo_time) == "higher"
    evidence = (
        f"critic: {critic['mean']:.0f} trained parameters beside a policy of {policy['mean']:.0f}, {updates} critic updates per step "
        f"({defaults['critic_epochs']} epochs x {defaults['critic_minibatches']} minibatches) beside the policy's 1; time per step "
        f"on the same batches (G=8, 16 prompts): GRPO {fmt(grpo_time)} s, PPO {fmt(ppo_time)} s"
    )
    explanation = (
        "The critic is a second network of the policy's size (ours: a copy of the reference with a scalar head, every parameter "
        "trained) with its own optimiser, loss and many more updates than the policy gets; the group baseline has no parameters "
        f"and costs nothing to compute. In wall time, on the same batches, the critic made a step {'slower' if slower else 'no slower beyond noise'}"
        + (f" ({ppo_time['mean'] / grpo_time['mean']:.1f}x)." if slower else ".")
    )
    return Finding(evidence, HOLDS if critic["mean"] > 0.5 * policy["mean"] else PARTLY, explanation)


def group_size_needed(r: dict) -> Finding:
    name = "group-size"
    at = {G: cell_summary(r, name, f"equal-samples-g{G}", ACC) for G in (2, 4, 8)}
    to = {G: cell_summary(r, name, f"equal-samples-g{G}", "samples_to_target") for G in (2, 4, 8)}
    worse = [G for G in (2, 4) if compare(at[G], at[8], SMALL_EFFECT) == "lower"]
    better = [G for G in (2, 4) if compare(at[G], at[8], SMALL_EFFECT) == "higher"]
    last = [c for c in r[name]["cells"] if c["axes"]["regime"] == "equal samples"][-1]["config"]["train"]
    evidence = (
        f"equal samples ({last['group_size'] * last['prompts_per_step']} "
        "responses per step), late accuracy: "
        + ", ".join(f"G={G} {fmt(at[G])}" for G in at)
        + f"; responses to reach {TARGET_ACCURACY:.0%}: "
        + ", ".join(f"G={G} {fmt(to[G])}" for G in to)
    )
    verdict = HOLDS if len(worse) == 2 else PARTLY if worse else FAILS
    explanation = (
        "At the same number of sampled responses, small groups with more prompts were "
        + (
            "worse than G=8, as the card says."
            if verdict == HOLDS
            else f"not worse than G=8 (G={', '.join(map(str, better))} even better)."
            if better
            else "partly worse: " + ", ".join(f"G={G}" for G in worse) + " fell behind G=8."
            if worse
            else "within noise of G=8."
        )
        + saturation_note(r)
    )
    return Finding(evidence, verdict, explanation)


def saturation_note(r: dict) -> str:
    """At a fixed number of prompts, does a bigger group stop improving the gradient? (variance)"""
    sizes = sorted({c["axes"]["group_size"] for c in r["variance"]["cells"]}) if "variance" in r else []
    if len(sizes) < 3:
        return ""
    middle, largest = (
        cell_summary(r, "variance", f"reference-g{sizes[-3]}", "net_snr.zscore"),
        cell_summary(r, "variance", f"reference-g{sizes[-1]}", "net_snr.zscore"),
    )
    if compare(largest, middle) == "higher":
        return ""
    return (
        f" Why: at the reference policy the SNR of a 16-prompt batch stops growing with G (G={sizes[-3]}: {fmt(middle)}, "
        f"G={sizes[-1]}: {fmt(largest)}): beyond that, its noise comes from which prompts were drawn, which only more prompts reduce."
    )


def small_groups_noisier(r: dict) -> Finding:
    gs, var = "group-size", "variance"
    steps = {G: cell_summary(r, gs, f"equal-prompts-g{G}", "steps_to_target") for G in (2, 4, 8)}
    samples = {G: cell_summary(r, gs, f"equal-samples-g{G}", "samples_to_target") for G in (2, 4, 8)}
    snr1k = {G: cell_summary(r, var, f"reference-g{G}", "net_snr_per_1k_responses.zscore") for G in (2, 4, 8)}
    cos = {G: cell_summary(r, var, f"reference-g{G}", "cos_step.zscore") for G in (2, 4, 8)}
    reached = {G: cell_summary(r, gs, f"equal-prompts-g{G}", "reached_target") for G in (2, 4, 8)}
    slower_per_step = any(reached[G]["mean"] is not None and reached[G]["mean"] < 1 for G in (2, 4)) or any(
        compare(steps[G], steps[8]) == "higher" for G in (2, 4)
    )
    slower_sizes = [G for G in (2, 4) if compare(samples[G], samples[8]) == "higher"]
    slower_per_sample = bool(slower_sizes)
    evidence = (
        "equal prompts, steps to reach the target: "
        + ", ".join(f"G={G} {fmt(steps[G])} ({round(reached[G]['mean'] * reached[G]['n'])} of {reached[G]['n']} seeds reached it)" for G in steps)
        + "; equal samples, responses to reach it: "
        + ", ".join(f"G={G} {fmt(samples[G])}" for G in samples)
        + "; at the reference policy, zscore gradient net SNR per 1000 responses: "
        + ", ".join(f"G={G} {fmt(snr1k[G])}" for G in snr1k)
        + "; cosine of one batch (16 prompts) to the true gradient: "
        + ", ".join(f"G={G} {fmt(cos[G])}" for G in cos)
    )
    tied = cell_summary(r, gs, "equal-prompts-g2", "frac_reward_zero_std")
    evidence += f"; share of G=2 groups with all-equal rewards {fmt(tied, percent=True)}"
    verdict = HOLDS if slower_per_step and slower_per_sample else PARTLY if slower_per_step else FAILS
    explanation = (
        "Per step (same prompts), G=2-4 gives fewer samples and "
        + ("learns more slowly" if slower_per_step else "still learns as fast")
        + "; per sample (same responses), "
        + (
            f"G={' and '.join(map(str, slower_sizes))} reaches the target later than G=8 (claim 5 compares where they end)"
            if slower_per_sample
            else "it is not slower"
        )
        + ". With 0/1 rewards a G=2 group is either tied (advantage 0, no signal and no noise) or split (advantages ±0.71, "
        "a clean pairwise comparison): its advantages are not 'dominated by noise', they are often simply zero (the share above)."
    )
    return Finding(evidence, verdict, explanation)


def g4_oscillates(r: dict) -> Finding:
    name = "group-size"
    parts, worse, noisier = [], [], []
    for regime, prefix in (("equal prompts", "equal-prompts"), ("equal samples", "equal-samples")):
        d4, d16 = cell_summary(r, name, f"{prefix}-g4", "eval_max_drawdown"), cell_summary(r, name, f"{prefix}-g16", "eval_max_drawdown")
        n4, n16 = cell_summary(r, name, f"{prefix}-g4", "reward_step_noise"), cell_summary(r, name, f"{prefix}-g16", "reward_step_noise")
        parts.append(
            f"{regime}: largest accuracy fall G=4 {fmt(d4)} vs G=16 {fmt(d16)}; train-reward step-to-step noise G=4 {fmt(n4)} vs G=16 {fmt(n16)}"
        )
        if compare(d4, d16) == "higher":
            worse.append(regime)
        if compare(n4, n16) == "higher":
            noisier.append(regime)
    verdict = HOLDS if len(worse) == 2 else PARTLY if worse else FAILS
    explanation = (
        "The held-out accuracy of G=4 runs "
        + ("falls back more than G=16's in " + " and ".join(worse) if worse else "does not fall back more than G=16's")
        + ". The logged train reward of G=4 jumps more from step to step "
        + (f"only at {' and '.join(noisier)}" if noisier else "in neither regime")
        + (
            "; at equal prompts each step of G=4 scores 4x fewer responses, so its average is noisier even when the policy is steady"
            if "equal prompts" in noisier
            else ""
        )
        + ". A 7B model may oscillate for reasons a 100k-parameter toy cannot show."
    )
    return Finding(evidence="; ".join(parts), verdict=verdict, explanation=explanation)


def sigma_explodes(r: dict) -> Finding:
    name = "sigma-to-zero"
    cells = [c for c in r[name]["cells"] if c["summary"].get("adv_abs_max", {}).get("mean") is not None]
    top = max(cells, key=lambda c: c["summary"]["adv_abs_max"]["mean"])
    largest = top["summary"]["adv_abs_max"]["mean"]
    G = r[name]["train_defaults"]["group_size"]
    bound = (G - 1) / math.sqrt(G)
    above = [cell_label(name, c["id"]) for c in cells if c["summary"]["adv_abs_max"]["mean"] > bound * 1.001]
    failed_exact = cell_summary(r, name, "exact-eps0-add", "failed")
    share_small = cell_summary(r, name, "noisy-eps0-add", "probe_no_signal_share")
    share_large = cell_summary(r, name, "noisy-eps0.1-add", "probe_no_signal_share")
    noise = result_cell(r[name], "noisy-eps0-add")["config"]["train"]["reward_noise"]
    exploded = largest is not None and largest > 10 * bound
    nan = (failed_exact["mean"] or 0) > 0
    amplified = share_small["mean"] is not None and share_large["mean"] is not None and share_small["mean"] > 10 * share_large["mean"]
    evidence = (
        f"largest |advantage| in any run: {largest:.3g}, in '{cell_label(name, top['id'])}' (the z-score's bound (G-1)/√G = {bound:.3g} for G={G}; "
        f"runs above it: {'; '.join(repr(label) for label in above) if above else 'none'}); exact rewards, "
        f"eps=0: {fmt(failed_exact, percent=True)} of runs stopped on 0/0; noisy rewards (σ_noise={noise:g}): "
        f"share of |advantage| on groups with no right/wrong spread {fmt(share_small)} at eps=0 vs {fmt(share_large)} at eps=0.1"
    )
    verdict = HOLDS if exploded else PARTLY if nan or amplified else FAILS
    explanation = (
        "In exact arithmetic a z-score of G numbers is bounded by (G-1)/√G whatever σ is, so advantages cannot explode in size. "
        + (
            "The runs above the bound come from float32 rounding: groups of identical partial-credit rewards "
            "(e.g. all 2/3) whose computed mean is one rounding step (~6e-8) off, while their std comes out 0, get "
            "6e-8 / eps: with eps=1e-8, below float32's resolution, that is about 6. "
            if above
            else ""
        )
        + "What does happen: identical rewards give σ=0 and 0/0 = NaN when eps=0 (the run stops, with a message), and "
        "near-identical rewards (a noisy reward model) get their noise blown up to unit scale, so groups with nothing to learn "
        "pull as hard as real ones."
    )
    return Finding(evidence, verdict, explanation)


def epsilon_fixes(r: dict) -> Finding:
    name = "sigma-to-zero"
    epsilons = sorted({c["axes"]["std_eps"] for c in r[name]["cells"] if c["axes"]["std_eps"] > 0})
    tiny, big = epsilons[0], epsilons[-1]
    failed_tiny = cell_summary(r, name, f"exact-eps{tiny:g}-add", "failed")
    shares = {(e, m): cell_summary(r, name, f"noisy-eps{e:g}-{m}", "probe_no_signal_share") for e in (tiny, big) for m in ("add", "clamp")}
    share_zero = cell_summary(r, name, "noisy-eps0-add", "probe_no_signal_share")
    acc = {e: cell_summary(r, name, f"noisy-eps{e:g}-add", ACC) for e in (tiny, big)}
    exact_acc = cell_summary(r, name, f"exact-eps{tiny:g}-add", ACC)
    fixes_nan = failed_tiny["mean"] == 0
    stops_noise = shares[(tiny, "add")]["mean"] is not None and share_zero["mean"] and shares[(tiny, "add")]["mean"] < 0.5 * share_zero["mean"]
    evidence = (
        f"exact rewards, eps={tiny:g}: {fmt(failed_tiny, percent=True)} of runs failed; noisy rewards, share of |advantage| on "
        "no-signal groups: "
        + ", ".join(f"eps={e:g} {m} {fmt(shares[(e, m)])}" for (e, m) in shares)
        + f"; late accuracy with noisy rewards eps={tiny:g} {fmt(acc[tiny])}, eps={big:g} {fmt(acc[big])} (exact rewards {fmt(exact_acc)})"
    )
    verdict = HOLDS if fixes_nan and stops_noise else PARTLY if fixes_nan else FAILS
    damped = shares[(big, "add")]["mean"] is not None and share_zero["mean"] and shares[(big, "add")]["mean"] < 0.5 * share_zero["mean"]
    cost = compare(acc[tiny], acc[big], SMALL_EFFECT)
    explanation = (
        f"Any eps > 0 (even {tiny:g}) {'removes' if fixes_nan else 'does NOT remove'} the 0/0: a group of identical rewards gets "
        f"advantage exactly 0. An eps far below the reward noise {'still lets the noise through' if not stops_noise else 'already damps the noise'}"
        + (f"; eps={big:g}, comparable to the noise, damps it" if damped else "")
        + ". max(σ, eps) and σ + eps differ only when σ is close to eps. In accuracy, the amplified noise costs "
        + (
            "nothing measurable here (the noisy groups' pull averages out over a batch)."
            if cost == "same"
            else "accuracy here."
            if cost == "lower"
            else "nothing; the tiny eps did better here."
        )
    )
    return Finding(evidence, verdict, explanation)


def blowup_and_accumulation(r: dict) -> Finding:
    name = "batch-blowup"
    cells = [c for c in r[name]["cells"] if c["axes"]["micro_batch_size"] == 0]
    smallest = min(cells, key=lambda c: c["summary"]["responses_per_step"]["mean"])
    largest = max(cells, key=lambda c: c["summary"]["responses_per_step"]["mean"])
    ratio_responses = largest["summary"]["responses_per_step"]["mean"] / smallest["summary"]["responses_per_step"]["mean"]
    ratio_memory = largest["summary"]["saved_activations_mb"]["mean"] / smallest["summary"]["saved_activations_mb"]["mean"]
    checks = r[name]["derived"]["micro_batch_checks"]
    same_gradient = all(check["max_rel_grad_norm_diff"] < 1e-4 for check in checks)
    smallest_micro = min(checks, key=lambda check: check["activation_ratio"])
    evidence = (
        f"{cell_label(name, smallest['id'])} → {cell_label(name, largest['id'])}: {ratio_responses:.0f}x the responses, {ratio_memory:.0f}x the activation memory "
        f"({smallest['summary']['saved_activations_mb']['mean']:.3g} → {largest['summary']['saved_activations_mb']['mean']:.3g} MB), "
        f"time per step {fmt(smallest['summary']['time_per_step_s'])} → {fmt(largest['summary']['time_per_step_s'])} s; "
        f"micro-batching: step-1 gradient norm differs by at most {max(c['max_rel_grad_norm_diff'] for c in checks):.1e} (relative), "
        f"{cell_label(name, smallest_micro['id'])} keeps {smallest_micro['activation_ratio']:.1%} of the activations at {smallest_micro['time_ratio']:.2f}x the time"
    )
    linear = ratio_memory > 0.5 * ratio_responses
    verdict = HOLDS if linear and same_gradient and smallest_micro["activation_ratio"] < 0.5 else PARTLY
    explanation = (
        "A step's batch is prompts x G responses, and the memory autograd keeps for the backward pass grows in proportion. "
        "Gradient accumulation over micro-batches gives the same gradient (the loss normalisers are the whole batch's) with "
        "memory bounded by the micro-batch. The process's peak resident memory also includes torch itself "
        f"({fmt(smallest['summary']['peak_rss_mb'])} MB at the smallest batch)."
    )
    return Finding(evidence, verdict, explanation)


def tradeoff_crossover(r: dict) -> Finding:
    name = "grpo-vs-ppo"
    derived = r[name]["derived"]
    parts = [
        f"{cell_label(name, cell_id)}: responses to {TARGET_ACCURACY:.0%} {fmt(cell_summary(r, name, cell_id, 'samples_to_target'))}, "
        f"seconds {fmt(cell_summary(r, name, cell_id, 'time_to_target_s'))}"
        for cell_id in ("grpo", "ppo", "ema")
    ]
    crossover = derived.get("crossover_s_per_response")
    zero, high = derived.get("cheaper_at_zero_cost"), derived.get("cheaper_at_high_cost")
    late = compare(cell_summary(r, name, "ppo", ACC), cell_summary(r, name, "grpo", ACC), SMALL_EFFECT)
    parts.append(
        f"cheaper with free generation: {zero}; with expensive generation: {high}"
        + (f"; crossover at {crossover:.3g} s per response" if crossover else "")
        + f"; late accuracy at equal samples: PPO {fmt(cell_summary(r, name, 'ppo', ACC))} vs GRPO {fmt(cell_summary(r, name, 'grpo', ACC))}"
    )
    # the critic-free control on PPO's batch shape: if it needs no more responses and no more seconds than PPO,
    # what saves responses is the batch shape (128 prompts x 1 answer), not the critic
    control_as_cheap = all(
        compare(cell_summary(r, name, "ema", metric), cell_summary(r, name, "ppo", metric)) != "higher"
        for metric in ("samples_to_target", "time_to_target_s")
    )
    shape_note = (
        " But the control without a critic on PPO's batch shape (an EMA baseline, G=1 x 128 prompts) needs no more responses "
        "and no more seconds than PPO: what saves responses here is seeing 128 prompts per step, not the critic."
        if control_as_cheap
        else " The control without a critic on PPO's batch shape costs more than PPO: the critic pays for itself."
    )
    if crossover:
        verdict = PARTLY if control_as_cheap or zero != "GRPO" else HOLDS
        explanation = (
            f"There is a crossover: below about {crossover:.2g} s of generation per response {zero} reaches the target cheaper, "
            f"above it {high} does, because it needs fewer responses. Real LLM responses cost 0.01-2 s each, so on this "
            "toy's numbers the crossover sits "
            + ("inside" if 1e-2 <= crossover <= 2 else "below" if crossover < 1e-2 else "above")
            + " that range."
            + shape_note
        )
    else:
        verdict = PARTLY if high == "PPO" or late == "higher" else FAILS
        explanation = (
            "No clear crossover in the cost to reach the target: "
            + (f"{high} needs fewer responses, " if high != "tie" else "neither needs clearly fewer responses, ")
            + (f"{zero} less compute. " if zero != "tie" else "and neither needs clearly less compute. ")
            + (f"At equal samples PPO ends {worded(late, 'above', 'below', 'within noise of')} GRPO.")
            + shape_note
        )
    return Finding("; ".join(parts), verdict, explanation)


def critic_without_groups(r: dict) -> Finding:
    name = "grpo-vs-ppo"
    ppo, grpo = cell_summary(r, name, "ppo", ACC), cell_summary(r, name, "grpo", ACC)
    start = cell_summary(r, name, "ppo", "initial_eval_accuracy")
    ev = cell_summary(r, name, "ppo", "late_explained_variance")
    learns = ppo["mean"] is not None and ppo["mean"] > start["mean"] + 0.05
    direction = compare(ppo, grpo, SMALL_EFFECT)
    ema = cell_summary(r, name, "ema", ACC)
    versus_ema = compare(ppo, ema, SMALL_EFFECT)
    evidence = (
        f"late accuracy: PPO with G=1 {fmt(ppo)}, GRPO G=8 {fmt(grpo)} (start {start['mean']:.3g}); the control without a critic, "
        f"an EMA baseline at G=1 x 128 prompts: {fmt(ema)}; the critic's explained variance on each fresh batch, late in training: {fmt(ev)}; "
        f"PPO as practitioners run it ({REUSE_WORDS}): late accuracy {fmt(cell_summary(r, name, 'ppo-reuse', ACC))}, "
        f"share of tokens clipped {fmt(cell_summary(r, name, 'ppo-reuse', 'mean_clip_ratio'))}, its critic's held-out explained variance "
        f"{fmt(cell_summary(r, name, 'ppo-reuse', 'late_heldout_explained_variance'))}"
    )
    verdict = HOLDS if learns and direction != "lower" else PARTLY if learns else FAILS
    weak_critic = ev["mean"] is not None and ev["mean"] < 0.1
    explanation = (
        f"With one response per prompt the critic still gives every response a baseline, and learning "
        f"{'works' if learns else 'does not work'} ({worded(direction, 'better than', 'worse than', 'within noise of')} GRPO at "
        "equal samples). "
        + (
            "But the critic, trained in full (every parameter, 16 updates a step), explains little of the "
            "return's variance: most of what carries PPO here is GAE's whitening over a batch of 128 different prompts (a batch-wide "
            "baseline). "
            if weak_critic
            else "Its value estimates explain part of the return's variance. "
        )
        + f"The critic-free control (a moving-average baseline at G=1) ends {worded(versus_ema, 'below', 'above', 'within noise of')} PPO"
        + (", so the critic's values add something beyond a global baseline." if versus_ema == "higher" else ".")
    )
    return Finding(evidence, verdict, explanation)


def g2_usable_but_poor(r: dict) -> Finding:
    name = "small-group-remedies"
    g2, g8, g2_64 = (cell_summary(r, name, cell_id, ACC) for cell_id in ("g2", "g8", "g2-64prompts"))
    start = cell_summary(r, name, "g2", "initial_eval_accuracy")
    per_step, per_sample = compare(g2, g8, SMALL_EFFECT), compare(g2_64, g8, SMALL_EFFECT)
    usable = g2["mean"] > start["mean"] + 0.05
    evidence = f"late accuracy (start {start['mean']:.3g}): G=2 x 16 prompts {fmt(g2)}, G=8 x 16 prompts {fmt(g8)}, G=2 x 64 prompts (same samples as G=8) {fmt(g2_64)}"
    verdict = FAILS if not usable or per_sample != "lower" and per_step != "lower" else HOLDS if per_sample == "lower" else PARTLY
    state = (
        "G=2 is usable (it learns)"
        if usable
        else "G=2 at 16 prompts is not usable here: it ends below its start"
        if g2["mean"] < start["mean"]
        else "G=2 at 16 prompts barely learns"
    )
    explanation = (
        f"{state}. Per step it is {worded(per_step, 'better than', 'worse than', 'within noise of')} G=8, "
        f"with 4x fewer samples; given G=8's samples as more prompts it is {worded(per_sample, 'better than', 'worse than', 'within noise of')} G=8. "
        "'Poor' is a matter of samples per step, not of G=2 as such."
    )
    return Finding(evidence, verdict, explanation)


def cell_setting(results: dict, name: str, cell_id: str, knob: str):
    """The value of a TrainConfig knob a training cell ran with (its own or its regime's override, else the result's TrainConfig defaults)."""
    cell = result_cell(results[name], cell_id)
    return cell["config"]["train"].get(knob, results[name]["train_defaults"][knob])


def cell_lr(results: dict, name: str, cell_id: str) -> float:
    """The learning rate a training cell ran with."""
    return cell_setting(results, name, cell_id, "lr")


def remedy(cell_id: str, what_text: str) -> Callable[[dict], Finding]:
    """what_text: the remedy in words; '{base_lr}' becomes the plain G=2 cell's lr."""

    def evaluate(r: dict) -> Finding:
        name = "small-group-remedies"
        plain, treated = cell_summary(r, name, "g2", ACC), cell_summary(r, name, cell_id, ACC)
        plain_dd, treated_dd = cell_summary(r, name, "g2", "eval_max_drawdown"), cell_summary(r, name, cell_id, "eval_max_drawdown")
        acc_dir, dd_dir = compare(treated, plain, SMALL_EFFECT), compare(treated_dd, plain_dd)
        base_lr = f"{cell_lr(r, name, 'g2'):.0e}".replace("e-0", "e-")  # the regime's lr, not always the default's: '1e-4'
        what = what_text.format(base_lr=base_lr)
        evidence = f"late accuracy G=2 {fmt(plain)} → with {what} {fmt(treated)}; largest accuracy fall {fmt(plain_dd)} → {fmt(treated_dd)}"
        verdict = HOLDS if acc_dir == "higher" or (acc_dir == "same" and dd_dir == "lower") else PARTLY if dd_dir == "lower" else FAILS
        explanation = (
            f"With {what}, G=2's late accuracy is {worded(acc_dir, 'higher', 'lower', 'within noise of what it was')}"
            f" and its largest fall is {worded(dd_dir, 'larger', 'smaller', 'within noise of what it was')}"
            + (": steadier, but it learns less in the same steps." if verdict == PARTLY else ".")
        )
        return Finding(evidence, verdict, explanation)

    return evaluate


def grpo_stability(r: dict) -> Finding:
    gp, sg = "grpo-vs-ppo", "small-group-remedies"
    grpo_dd, ppo_dd = cell_summary(r, gp, "grpo", "eval_max_drawdown"), cell_summary(r, gp, "ppo", "eval_max_drawdown")
    g2, ppo_small = cell_summary(r, sg, "g2", ACC), cell_summary(r, gp, "ppo-32prompts", ACC)
    g2_dd, ppo_small_dd = cell_summary(r, sg, "g2", "eval_max_drawdown"), cell_summary(r, gp, "ppo-32prompts", "eval_max_drawdown")
    enough = compare(grpo_dd, ppo_dd)
    scarce = compare(g2, ppo_small, SMALL_EFFECT)
    evidence = (
        f"128 responses per step, largest accuracy fall: GRPO G=8 {fmt(grpo_dd)}, PPO G=1 {fmt(ppo_dd)}; 32 responses per step, "
        f"late accuracy GRPO G=2 {fmt(g2)} vs PPO G=1 {fmt(ppo_small)}, largest fall {fmt(g2_dd)} vs {fmt(ppo_small_dd)}"
    )
    verdict = HOLDS if enough != "higher" and scarce == "lower" else PARTLY if enough != "higher" or scarce == "lower" else FAILS
    explanation = (
        f"With enough samples GRPO's curve falls back {worded(enough, 'more than', 'less than', 'about as much as')} PPO's. "
        f"With few samples per step (32), GRPO at G=2 ends {worded(scarce, 'above', 'below', 'within noise of')} PPO with a critic; "
        "the [critic-per-response] finding shows how much of PPO's side is the critic's values and how much the batch-wide whitening over different prompts."
    )
    return Finding(evidence, verdict, explanation)


def group_baseline_in_ppo(r: dict) -> Finding:
    name = "grpo-vs-ppo"
    grpo, critic = cell_summary(r, name, "grpo", ACC), cell_summary(r, name, "ppo-g8", ACC)
    direction = compare(grpo, critic, SMALL_EFFECT)
    mc, learned = cell_summary(r, name, "mc-value", ACC), cell_summary(r, name, "ppo-reuse", ACC)
    bias_costs = compare(mc, learned, SMALL_EFFECT)
    task = Task.parse(cell_setting(r, name, "grpo", "task"))
    answer_tokens = f"{task.digits + 1}-{task.digits + 2}"  # a sum's digits and EOS
    evidence = (
        f"same batches (G=8, 16 prompts, the same PPO-clip loss): group baseline (GRPO) {fmt(grpo)} vs learned critic with GAE {fmt(critic)}; "
        f"on PPO's batch shape with sample reuse ({cell_label(name, 'mc-value').split(', ', 1)[1]}): Monte-Carlo V(s_t) from rollouts of each answer prefix "
        f"(unbiased per token) {fmt(mc)} vs the learned critic {fmt(learned)}"
    )
    verdict = HOLDS if direction == "lower" else FAILS
    explanation = (
        "Our GRPO is exactly 'PPO with the critic replaced by the group baseline'. It ends "
        f"{worded(direction, 'above', 'below', 'within noise of')} the critic on the same batches. A per-token value with no bias "
        f"(the Monte-Carlo arm: what a perfect critic would give GAE) ends {worded(bias_costs, 'above', 'below', 'within noise of')} the learned critic"
        + (", so the critic's bias does cost accuracy here." if bias_costs == "higher" else ", so the critic's bias is not what limits PPO here.")
        + f" A single reward arrives at the end of a {answer_tokens} token answer."
    )
    return Finding(evidence, verdict, explanation)


def long_text_ppo(r: dict) -> Finding:
    """The card's 'long text: PPO with a critic is irreplaceable', on the long-answer regime's 6-7 token
    answers: PPO (critic and GAE, reused as practitioners run it, and without reuse) against GRPO at
    equal responses per step (128), on late accuracy and on the area under the accuracy curve."""
    name = "grpo-vs-ppo"
    pairs = [("ppo-reuse", "grpo-reuse"), ("ppo", "grpo")]
    parts, directions = [], []
    for ppo_id, grpo_id in pairs:
        for metric, words in ((ACC, "late accuracy"), ("eval_accuracy_auc", "accuracy AUC")):
            ppo, grpo = cell_summary(r, name, ppo_id, metric), cell_summary(r, name, grpo_id, metric)
            direction = compare(ppo, grpo, SMALL_EFFECT)
            directions.append(direction)
            parts.append(f"{words}: {cell_label(name, ppo_id)} {fmt(ppo)} vs {cell_label(name, grpo_id)} {fmt(grpo)}")
    ev = cell_summary(r, name, "ppo-reuse", "late_heldout_explained_variance")
    parts.append(f"the reused critic's held-out explained variance late in training {fmt(ev)}")
    verdict = HOLDS if all(d == "higher" for d in directions) else PARTLY if "higher" in directions else FAILS
    explanation = (
        "Answers here are 6-7 tokens (5-digit sums), twice the gentle regime's, so a per-token value has more to say. "
        + {
            HOLDS: "PPO with a critic beats GRPO on every yardstick: the card's claim holds at this length.",
            PARTLY: "PPO with a critic beats GRPO on some yardsticks, not all.",
            FAILS: "PPO with a critic does not beat GRPO: "
            + ("GRPO is ahead on some yardstick." if "lower" in directions else "no difference beyond noise."),
        }[verdict]
        + " One exact reward at the end of a 7-token answer is still far from dialogue: 'irreplaceable' is not tested at that scale."
    )
    return Finding("; ".join(parts), verdict, explanation)


# GRPO against PPO twice: as the arms were first run (one pass over each batch) and as practitioners run
# both (each batch reused, REUSE_WORDS), so a verdict never rests on a PPO that never reuses a batch
PPO_PAIRS = (("one pass per batch", "grpo", "ppo"), (f"each batch reused, {REUSE_WORDS}", "grpo-reuse", "ppo-reuse"))


def no_free_lunch(r: dict) -> Finding:
    name = "grpo-vs-ppo"
    criteria = {"late accuracy": (ACC, True), "responses to target": ("samples_to_target", False), "seconds to target": ("time_to_target_s", False)}
    parts, trade_offs, readings = [], [], []
    for pair, grpo_id, ppo_id in PPO_PAIRS:
        winners, words = set(), []
        for criterion, (metric, higher_better) in criteria.items():
            g, p = cell_summary(r, name, grpo_id, metric), cell_summary(r, name, ppo_id, metric)
            direction = compare(g, p, SMALL_EFFECT if metric == ACC else 0)
            winner = "tie" if direction == "same" else "GRPO" if (direction == "higher") == higher_better else "PPO"
            winners.add(winner)
            words.append(f"{criterion} GRPO {fmt(g)} vs PPO {fmt(p)} → {winner}")
        parts.append(f"{pair}: " + ", ".join(words))
        trade_offs.append({"GRPO", "PPO"} <= winners)
        ahead = sorted(winners - {"tie"})
        readings.append(
            f"{pair}, "
            + (
                "each wins a yardstick (a trade-off)"
                if trade_offs[-1]
                else f"{ahead[0]} is ahead or tied on every yardstick"
                if ahead
                else "every yardstick is a tie"
            )
        )
    verdict = HOLDS if all(trade_offs) else PARTLY
    explanation = (
        "With "
        + "; with ".join(readings)
        + "."
        + ("" if verdict == HOLDS else " The trade-off is sound as an argument, but this toy displays it only in part.")
    )
    return Finding("; ".join(parts), verdict, explanation)


def group_mean_is_a_value(r: dict) -> Finding:
    name = "critic-fit"
    cell_id = "reference-fresh"
    sizes = sorted(int(key.split("=")[1]) for key in r[name]["cells"][0]["summary"] if key.startswith("group_ev."))
    group = {G: cell_summary(r, name, cell_id, f"group_ev.G={G}") for G in sizes}
    oracle, critic = cell_summary(r, name, cell_id, "oracle_ev"), cell_summary(r, name, cell_id, "critic_ev_prompt")
    updates = cell_summary(r, name, cell_id, "critic_updates")
    beats = {G: cell_summary(r, name, cell_id, f"updates_to_beat.G={G}") for G in sizes}
    evidence = (
        "held-out explained variance of V(prompt) at the reference policy: group mean of G samples "
        + ", ".join(f"G={G} {fmt(group[G])}" for G in sizes)
        + f"; oracle (128 samples) {fmt(oracle)}; "
        f"critic after {updates['mean']:.0f} updates {fmt(critic)}; critic updates to match a group of G (all seeds): "
        + ", ".join(f"G={G} {'never' if beats[G]['n'] < r[name]['seeds'] else format(beats[G]['mean'], '.0f')}" for G in sizes)
    )
    largest = sizes[-1]
    approaches = compare(group[largest], {"mean": 0.0, "std": 0.0, "n": group[largest]["n"]}) == "higher" and (
        group[largest]["mean"] >= 0.8 * oracle["mean"]
    )
    rises = all(group[a]["mean"] <= group[b]["mean"] for a, b in zip(sizes, sizes[1:]))
    verdict = HOLDS if approaches and rises else PARTLY if approaches or rises else FAILS
    explanation = (
        "The group mean is a Monte-Carlo estimate of V(prompt): scored as one, it explains more of a fresh response's reward "
        f"as G grows and approaches the oracle at G={largest}. With few samples it is worse than a constant (negative explained "
        "variance: a noisy estimate of V), yet as a *baseline* that noise costs no bias, only variance (notebook 01). "
        "So GRPO does estimate a value; it spends samples where PPO spends critic updates."
    )
    return Finding(evidence, verdict, explanation)


def critic_over_under_fits(r: dict) -> Finding:
    name = "critic-fit"
    fresh, pool = "reference-fresh", "reference-fixed-pool"
    oracle, best = cell_summary(r, name, fresh, "oracle_ev"), cell_summary(r, name, fresh, "best_critic_ev_prompt")
    pool_train, pool_held = cell_summary(r, name, pool, "train_ev_token"), cell_summary(r, name, pool, "critic_ev_token")
    fresh_train, fresh_held = cell_summary(r, name, fresh, "train_ev_token"), cell_summary(r, name, fresh, "critic_ev_token")
    updates = cell_summary(r, name, fresh, "critic_updates")
    underfits = best["mean"] < 0.5 * oracle["mean"]
    overfits = pool_train["mean"] - pool_held["mean"] > 0.2 and pool_held["mean"] < 0
    evidence = (
        f"fresh rollouts every batch ({updates['mean']:.0f} updates): best held-out EV of V(prompt) {fmt(best)} vs the oracle's {fmt(oracle)}; "
        f"EV over answer tokens on its training batch {fmt(fresh_train)}, held out {fmt(fresh_held)}; one fixed pool of 128 rollouts: "
        f"training batch {fmt(pool_train)}, held out {fmt(pool_held)}"
    )
    verdict = HOLDS if underfits and overfits else PARTLY if underfits or overfits else FAILS
    explanation = ("Both happen here. " if verdict == HOLDS else "") + (
        f"Under-fitting: on a stream of fresh rollouts the critic reaches {'less than half' if underfits else 'more than half'} of the "
        "explained variance an exact V(prompt) would have: predicting whether a sampled answer is right means checking the arithmetic, "
        "which the critic must learn from 0/1 rewards. "
        + (
            "Over-fitting: trained again and again on one pool of rollouts, it fits that pool and gets worse than a constant on fresh ones."
            if overfits
            else "A fixed pool did not make it over-fit beyond noise."
        )
    )
    return Finding(evidence, verdict, explanation)


def critic_wins_on_noisy_rewards(r: dict) -> Finding:
    name = "grpo-vs-ppo"
    grpo, ppo = cell_summary(r, name, "grpo-noisy", ACC), cell_summary(r, name, "ppo-noisy", ACC)
    grpo_exact, ppo_exact = cell_summary(r, name, "grpo", ACC), cell_summary(r, name, "ppo", ACC)
    noisy, exact = compare(ppo, grpo, SMALL_EFFECT), compare(ppo_exact, grpo_exact, SMALL_EFFECT)
    noise = result_cell(r[name], "grpo-noisy")["config"]["train"]["reward_noise"]
    evidence = (
        f"late accuracy at 128 responses per step, reward noise std {noise:g}: PPO (G=1) {fmt(ppo)} vs GRPO (G=8) {fmt(grpo)}; "
        f"exact rewards: PPO {fmt(ppo_exact)} vs GRPO {fmt(grpo_exact)}"
    )
    gap_noisy, gap_exact = ppo["mean"] - grpo["mean"], ppo_exact["mean"] - grpo_exact["mean"]
    # "better when rewards are noisy": ahead under noise, and not already ahead by as much without it
    verdict = HOLDS if noisy == "higher" and (exact != "higher" or gap_noisy > gap_exact + SMALL_EFFECT) else PARTLY if noisy == "higher" else FAILS
    drops = {"GRPO": grpo_exact["mean"] - grpo["mean"], "PPO": ppo_exact["mean"] - ppo["mean"]}
    explanation = (
        f"With noisy rewards PPO ends {worded(noisy, 'above', 'below', 'within noise of')} GRPO (a gap of {gap_noisy:+.3f}, against "
        f"{gap_exact:+.3f} with exact rewards). The noise cost GRPO {drops['GRPO']:.3f} and PPO {drops['PPO']:.3f} of late accuracy"
        + (
            ": it hurt GRPO's z-scored groups of 8 more than the critic's batch-wide whitening."
            if verdict == HOLDS
            else ": PPO is ahead by about as much with exact rewards, so the noise is not what decides here."
            if verdict == PARTLY
            else ": noise does not favour the critic here; GRPO's group mean averages it over 8 samples of the same prompt."
        )
    )
    return Finding(evidence, verdict, explanation)


def std_essential(r: dict) -> Finding:
    pairs = [("offset-and-scale", "zscore-offset0", "mean-offset0"), ("difficulty-bias", "train-zscore", "train-mean")]
    parts, directions = [], []
    for name, z_id, m_id in pairs:
        z, m = cell_summary(r, name, z_id, ACC), cell_summary(r, name, m_id, ACC)
        directions.append(compare(z, m, SMALL_EFFECT))
        parts.append(f"{name}: zscore {fmt(z)} vs mean {fmt(m)}")
    big = all(d == "higher" for d in directions) and any(
        cell_summary(r, n, z, ACC)["mean"] - cell_summary(r, n, m, ACC)["mean"] > 0.05 for n, z, m in pairs
    )
    verdict = HOLDS if big else PARTLY if "higher" in directions else FAILS
    scale_hurts_mean = (
        compare(
            cell_summary(r, "offset-and-scale", "mean-hard-x0.1", "hard_eval_accuracy"),
            cell_summary(r, "offset-and-scale", "mean-offset0", "hard_eval_accuracy"),
            SMALL_EFFECT,
        )
        == "lower"
    )
    explanation = (
        "Late accuracy without per-prompt scale differences: dividing by σ is "
        + ("much better" if big else "better by a little" if verdict == PARTLY else "not better")
        + " than centring alone here. Dr. GRPO (Liu et al. 2025) argues for dropping σ to avoid over-weighting too-easy and "
        "too-hard prompts (see the difficulty row)."
        + (" Where σ does matter here is when prompts' reward scales differ (the scale row)." if scale_hurts_mean else "")
    )
    return Finding("; ".join(parts), verdict, explanation)


def faster_than_ppo(r: dict) -> Finding:
    name = "grpo-vs-ppo"
    speedups, parts = [], []
    for pair, grpo_id, ppo_id in PPO_PAIRS:
        g, p = cell_summary(r, name, grpo_id, "samples_to_target"), cell_summary(r, name, ppo_id, "samples_to_target")
        speedup = p["mean"] / g["mean"] - 1 if g["mean"] and p["mean"] else None
        parts.append(
            f"{pair}: responses to reach {TARGET_ACCURACY:.0%} (interpolated between evaluations), "
            f"GRPO {fmt(g)} ({per_seed_text(r, name, grpo_id, 'samples_to_target')}), "
            f"PPO (G=1) {fmt(p)} ({per_seed_text(r, name, ppo_id, 'samples_to_target')})"
            + (
                f" → GRPO needs {g['mean'] / p['mean'] - 1:+.0%} responses relative to PPO (a difference {'beyond' if compare(g, p) != 'same' else 'within'} noise)"
                if speedup is not None
                else " (a learner that never reached the target: no ratio)"
            )
        )
        speedups.append(speedup)
    evidence = "; ".join(parts)
    measured = [speedup for speedup in speedups if speedup is not None]
    verdict = (
        UNTESTED
        if not measured
        else HOLDS
        if all(speedup >= 0.2 for speedup in measured)
        else PARTLY
        if any(speedup > 0 for speedup in measured)
        else FAILS
    )
    ema = cell_summary(r, name, "ema", "samples_to_target")
    explanation = (
        "Measured at equal responses per step (128), against PPO with a critic trained in full (G=1 x 128 prompts); the control "
        f"without a critic on PPO's batch shape needs {fmt(ema)} responses, so the difference comes from the batch shape more than "
        "from the critic. 'Converges 30% faster' is the card's anecdote for a 7B model on math, where each response is a long "
        "chain of thought, not 3-4 tokens."
    )
    return Finding(evidence, verdict, explanation)


def standard_error(s: dict) -> float:
    return (s["std"] or 0.0) / math.sqrt(s["n"]) if s["n"] else float("inf")


def logarithmic_returns(r: dict) -> Finding:
    """The shape, not just the order: accuracy logarithmic in G gains the same amount at every
    doubling, so the gain over the two doublings 16 → 64 equals that over 4 → 16; saturation gains
    less and less, down to nothing. Decided on late accuracy at equal prompts, with the standard
    error of (gain 4→16) − (gain 16→64) = 2·acc16 − acc4 − acc64 from the seeds."""
    name = "group-size"
    gains = r[name]["derived"]["gain_per_doubling_equal_prompts"]
    acc = {G: cell_summary(r, name, f"equal-prompts-g{G}", ACC) for G in (4, 16, 64)}
    early, late = acc[16]["mean"] - acc[4]["mean"], acc[64]["mean"] - acc[16]["mean"]
    error = math.sqrt(standard_error(acc[4]) ** 2 + 4 * standard_error(acc[16]) ** 2 + standard_error(acc[64]) ** 2)
    constant = abs(early - late) <= 2 * error  # the same gain per doubling, within noise
    clear = compare(acc[16], acc[4], SMALL_EFFECT) == "higher"
    still_gaining = compare(acc[64], acc[16], SMALL_EFFECT) == "higher"
    samples = {G: cell_summary(r, name, f"equal-samples-g{G}", ACC) for G in (4, 16, 64)}
    evidence = (
        "equal prompts, late accuracy: "
        + ", ".join(f"G={G} {fmt(acc[G])}" for G in acc)
        + f"; gain 4→16 {early:+.3f}, 16→64 {late:+.3f} (difference {early - late:+.3f} ± {error:.3f} s.e.); gain per doubling: "
        + ", ".join(f"{k} {v:+.3f}" for k, v in gains.items())
        + "; at equal samples: "
        + ", ".join(f"G={G} {fmt(samples[G])}" for G in samples)
    )
    if clear and still_gaining and constant:
        verdict, shape = HOLDS, "logarithmic: each doubling of G adds about the same accuracy"
    elif clear and not still_gaining:
        verdict, shape = PARTLY, "saturating, not logarithmic: 4 → 16 helps, 16 → 64 adds nothing beyond noise"
    elif clear:
        verdict, shape = PARTLY, "diminishing but still rising: the later doublings add less than the earlier ones"
    else:
        verdict, shape = FAILS, "flat: 4 → 16 does not help beyond noise"
    explanation = (
        f"A logarithmic law predicts the same gain at every doubling; saturation predicts the gains die out. Here the shape is {shape}. "
        'The card\'s words mix the two ("logarithmic ... diminishing beyond 16"): only the second half is what a saturation shows. '
        "Bigger G also means more samples per step; at equal samples the picture is the one in the '≥ 8' row."
    )
    return Finding(evidence, verdict, explanation)


def two_grpo(r: dict) -> Finding:
    name = "group-size"
    derived = r[name]["derived"].get("two_vs_large")
    if not derived:
        return Finding("the grid has no G=2 / G=16 pair", UNTESTED, "")
    small, large = derived["small_G"], derived["large_G"]
    a, b = cell_summary(r, name, f"equal-prompts-g{small}", ACC), cell_summary(r, name, f"equal-prompts-g{large}", ACC)
    ratio = derived["accuracy_ratio"]
    same_samples = compare(cell_summary(r, name, f"equal-samples-g{small}", ACC), cell_summary(r, name, f"equal-samples-g{large}", ACC), SMALL_EFFECT)
    evidence = (
        f"equal prompts, same steps: G={small} {fmt(a)} vs G={large} {fmt(b)} → {ratio:.1%} of G={large}'s accuracy with "
        f"{derived['rollout_fraction']:.1%} of the rollouts (gain over the start: {derived['gain_ratio']:.0%} of G={large}'s)"
    )
    protocol = next((c for c in r[name]["cells"] if c["id"] == "2grpo-protocol"), None)
    if protocol is not None:
        train = protocol["config"]["train"]
        baseline = result_cell(r[name], f"equal-prompts-g{large}")["config"]["train"]
        fraction = train["prompts_per_step"] * 2 * train["steps"] / (baseline["prompts_per_step"] * large * baseline["steps"])
        evidence += (
            f"; the budget reading ({train['prompts_per_step']} prompts x G=2 for {train['steps']} steps, {fraction:.1%} of "
            f"G={large}'s rollouts in all): {fmt(cell_summary(r, name, '2grpo-protocol', ACC))}"
        )
    verdict = HOLDS if ratio >= 0.95 else PARTLY if ratio >= 0.9 else FAILS
    explanation = (
        "2-GRPO (arXiv 2510.00977) reports G=2 reaching 97.6% of G=16 with 12.5% of the rollouts, and reads G=2 GRPO as "
        f"contrastive learning between a pair, close to DPO. Here G=2 reaches {ratio:.1%} at the same number of steps; the gain "
        f"over the starting accuracy ({r[name]['derived']['initial_eval_accuracy']:.3g}) is the stricter measure. Given the same "
        f"samples per step instead, G=2 ends {worded(same_samples, 'above', 'below', 'within noise of')} G={large}. "
        "The protocol: the paper compares 2-GRPO with 16-GRPO at 12.5% of the rollouts (2 instead of 16 per prompt) and argues "
        "that G=2's larger gradient variance is handled through the batch size (more prompts per batch). Two budgets give 12.5%: "
        "the same prompts per step and the same steps (the 'equal prompts' rows, which decide this verdict), or every prompt "
        "visited as often with 8x the prompts per batch and 1/8 of the steps (the budget reading above, where the experiment "
        "has that cell)."
        + ("" if protocol is None else " On this toy, learning is limited by the number of Adam steps, which the budget reading cuts by 8.")
    )
    return Finding(evidence, verdict, explanation)


def difficulty_bias(r: dict) -> Finding:
    name = "difficulty-bias"
    G = next(c for c in r[name]["cells"] if c["axes"]["part"] == "weights")["config"]["group_size"]
    parts, upweighted, below_balanced = [], [], []
    for policy in ("reference", "half-trained"):
        cell_id = f"weights-{policy}"
        z, m = cell_summary(r, name, cell_id, "weight_vs_middle.zscore.k=1"), cell_summary(r, name, cell_id, "weight_vs_middle.mean.k=1")
        parts.append(f"{policy} policy, gradient norm of a group with 1 of {G} right relative to a balanced group: zscore {fmt(z)}, mean {fmt(m)}")
        if compare(z, m) == "higher":
            upweighted.append(policy)
        below_balanced.append(z["mean"] is not None and z["mean"] < 1)
    accs = {(b, s): cell_summary(r, name, f"train-{b}", f"{s}_eval_accuracy") for b in ("zscore", "mean") for s in ("hard", "easy")}
    parts.append(
        "after training, hard/easy accuracy: " + "; ".join(f"{b} {fmt(accs[(b, 'hard')])} / {fmt(accs[(b, 'easy')])}" for b in ("zscore", "mean"))
    )
    hard_dir = compare(accs[("zscore", "hard")], accs[("mean", "hard")], SMALL_EFFECT)
    verdict = HOLDS if len(upweighted) == 2 else PARTLY if upweighted else FAILS
    lopsided = "lopsided groups (almost all answers agree: prompts too hard or too easy for the policy, so σ is small)"
    explanation = (
        (
            f"Dividing by σ gives {lopsided} more weight, relative to a balanced group, than mean-centring does"
            + (" (though still less than a balanced group's)" if all(below_balanced) else "")
            + (", as Dr. GRPO argues." if verdict == HOLDS else f", at the {upweighted[0]} policy only." if upweighted else "")
            if upweighted
            else f"Dividing by σ does not give {lopsided} more weight than mean-centring does here, against Dr. GRPO's argument."
        )
        + " Whether the re-weighting matters depends on the task: after training, hard-problem accuracy with zscore is "
        + worded(hard_dir, "higher than", "lower than", "within noise of")
        + " that with mean."
    )
    return Finding("; ".join(parts), verdict, explanation)


DAPO_SETTINGS = (("exact", "exact"), ("partial", "partial"), ("noisy", "noisy"), ("weak reference, exact", "weak"))  # (words, id prefix)


def dapo_cells(r: dict, variant: str) -> list[tuple[str, dict, dict]]:
    """(setting, plain cell's stats, variant cell's stats) for each reward setting the result has
    (the weak-reference cells only in results made since they were added)."""
    name, rows = "sigma-to-zero", []
    for setting, prefix in DAPO_SETTINGS:
        plain, treated = f"{prefix}-eps0.0001-add", f"{prefix}-{variant}"
        try:
            result_cell(r[name], plain), result_cell(r[name], treated)
        except KeyError:  # a result made before these cells were added (an id the catalog lacks raises UnknownCellError, no KeyError)
            continue
        rows.append(
            (
                setting,
                {m: cell_summary(r, name, plain, m) for m in (ACC, "frac_reward_zero_std", "samples")},
                {m: cell_summary(r, name, treated, m) for m in (ACC, "samples")},
            )
        )
    return rows


def dapo_filter(r: dict) -> Finding:
    rows = dapo_cells(r, "filter")
    helped = [compare(treated[ACC], plain[ACC], SMALL_EFFECT) for _, plain, treated in rows]
    evidence = "; ".join(
        f"{setting}: zero-std groups {fmt(plain['frac_reward_zero_std'], percent=True)}, late accuracy {fmt(plain[ACC])} "
        f"→ dropping them {fmt(treated[ACC])}"
        for setting, plain, treated in rows
    )
    verdict = HOLDS if "higher" in helped else FAILS
    explanation = (
        "This row tests the filter alone: groups whose rewards are all equal are dropped and the batch is NOT refilled, so a "
        "step trains on fewer groups. With eps > 0 their z-scored advantage is already 0, so dropping them only changes the "
        "loss's normaliser (the other groups weigh more); with a noisy reward model no group is exactly tied, so the filter "
        "finds nothing. DAPO itself refills the batch: the next row."
    )
    return Finding(evidence, verdict, explanation)


def dapo_refill(r: dict) -> Finding:
    rows = dapo_cells(r, "refill")
    if not rows:
        return Finding("the result has no dynamic-sampling cells: `python -m grpo_lab sweep sigma-to-zero`", UNTESTED, "")
    steps = r["sigma-to-zero"]["cells"][0]["config"]["train"]["steps"]
    parts, helped = [], []
    for setting, plain, treated in rows:
        helped.append((setting, compare(treated[ACC], plain[ACC], SMALL_EFFECT)))
        cost = treated["samples"]["mean"] / plain["samples"]["mean"] if plain["samples"]["mean"] else float("nan")
        parts.append(
            f"{setting}: zero-std groups {fmt(plain['frac_reward_zero_std'], percent=True)}, late accuracy {fmt(plain[ACC])} → "
            f"with dynamic sampling {fmt(treated[ACC])}, at {cost:.2f}x the responses sampled"
        )
    better = [setting for setting, direction in helped if direction == "higher"]
    worse = [setting for setting, direction in helped if direction == "lower"]
    verdict = HOLDS if better and not worse else PARTLY if better else FAILS
    draws = next(c["config"]["train"].get("dynamic_sampling_batches") for c in r["sigma-to-zero"]["cells"] if c["axes"].get("filter") == "refill")
    explanation = (
        f"DAPO's dynamic sampling as DAPO does it: tied groups are replaced by groups from further draws of prompts (at most "
        f"{draws} extra draws of a batch's prompts per step), so a step trains on a full batch of groups with a signal whenever "
        f"the draws find enough. At the same number of steps ({steps}) it ends "
        + (f"higher for {', '.join(better)}" if better else "no higher in any setting")
        + (f" and lower for {', '.join(worse)}" if worse else "")
        + ". It pays for that in samples (the ratio above): per response sampled it is a different trade. The more groups "
        "are tied (a weak policy, or a strong one near the end of training), the more it has to refill."
    )
    return Finding("; ".join(parts), verdict, explanation)


# --- the table: every claim, in claims.md's order -----------------------------------------------------

CLAIMS: list[Claim] = [
    Claim(
        "offset",
        "standard answer",
        "消除奖励偏移：组内均值 μ 能自动减去这个偏移",
        "Subtracting the group mean removes a global reward-model offset.",
        ("offset-and-scale",),
        offset_removed,
    ),
    Claim(
        "scale",
        "standard answer",
        "除以 σ … 让不同 prompt 的奖励尺度统一",
        "Dividing by σ unifies reward scales that differ between prompts.",
        ("offset-and-scale",),
        scales_unified,
    ),
    Claim(
        "variance",
        "standard answer",
        "降低方差：除以 σ 相当于做了 Z-score 标准化 … 防止训练不稳定",
        "Dividing by σ (z-scoring) lowers the gradient's variance.",
        ("variance",),
        zscore_lowers_variance,
    ),
    Claim(
        "no-params",
        "standard answer",
        "无参数、无训练：Critic 需要额外训练一个价值网络（通常和 Policy 同规模）",
        "The group baseline has no parameters; a critic is a second policy-sized network to train.",
        ("grpo-vs-ppo",),
        critic_costs,
    ),
    Claim(
        "g-at-least-8",
        "trade-off / follow-up 1",
        "每个 prompt 必须采样足够多的 response（通常 ≥ 8）… 建议采样数至少 4-8",
        "Each prompt needs enough responses, usually G ≥ 8.",
        ("group-size",),
        group_size_needed,
    ),
    Claim(
        "small-g-noisy",
        "trade-off",
        "采样数太少（比如 2-4 个）… 优势函数噪声增加，反而可能拖慢收敛",
        "With G = 2-4 the baseline is noisy and convergence slows.",
        ("group-size", "variance"),
        small_groups_noisier,
    ),
    Claim(
        "g4-oscillates",
        "pitfall 1",
        "采样数设为 4，结果奖励曲线剧烈震荡 … 将采样数提升到 16",
        "G = 4 makes the reward curve oscillate; G = 16 fixes it.",
        ("group-size",),
        g4_oscillates,
    ),
    Claim(
        "sigma-explodes", "pitfall 2", "σ 趋近于 0，导致优势函数爆炸", "When σ goes to 0 the advantages explode.", ("sigma-to-zero",), sigma_explodes
    ),
    Claim(
        "epsilon",
        "pitfall 2",
        "在 σ 上加一个小的 epsilon（如 1e-8），或使用 max(σ, epsilon)",
        "A small epsilon (1e-8) added to σ, or max(σ, ε), fixes it.",
        ("sigma-to-zero",),
        epsilon_fixes,
    ),
    Claim(
        "dapo-filter",
        "literature (DAPO)",
        "—",
        "Dropping all-equal groups without refilling the batch (the filter half of DAPO's dynamic sampling) helps.",
        ("sigma-to-zero",),
        dapo_filter,
    ),
    Claim(
        "dapo-refill",
        "literature (DAPO)",
        "—",
        "DAPO's dynamic sampling (over-sample and refill the batch with groups whose rewards differ) helps.",
        ("sigma-to-zero",),
        dapo_refill,
    ),
    Claim(
        "batch-blowup",
        "pitfall 3",
        "有效 batch size 膨胀 … 使用梯度累积或分布式采样，避免 OOM",
        "prompts x G inflates the batch; gradient accumulation bounds memory.",
        ("batch-blowup",),
        blowup_and_accumulation,
    ),
    Claim(
        "tradeoff",
        "trade-off / summary",
        "采样成本高 … GRPO 的采样开销可能超过训练 Critic 的收益",
        "When responses are expensive, PPO's critic beats GRPO's extra sampling (a crossover).",
        ("grpo-vs-ppo",),
        tradeoff_crossover,
    ),
    Claim(
        "critic-per-response",
        "trade-off",
        "Critic 的优势是每个 response 都能得到一个基线，不需要依赖组内采样",
        "A critic gives every response a baseline without groups (G = 1 works).",
        ("grpo-vs-ppo",),
        critic_without_groups,
    ),
    Claim(
        "critic-fits",
        "standard answer",
        "Critic … 且容易过拟合或欠拟合",
        "A critic easily over- or under-fits.",
        ("critic-fit",),
        critic_over_under_fits,
    ),
    Claim(
        "noisy-rewards",
        "summary / common mistake 2",
        "在采样成本高或奖励方差大的任务中，PPO + Critic 更优",
        "When rewards are noisy (high reward variance), PPO with a critic does better.",
        ("grpo-vs-ppo",),
        critic_wins_on_noisy_rewards,
    ),
    Claim(
        "g2-usable",
        "follow-up 1",
        "采样数 2 … 能用但效果差 … 优势函数几乎被噪声主导",
        "G = 2 works, but poorly.",
        ("small-group-remedies",),
        g2_usable_but_poor,
    ),
    Claim(
        "g2-ema",
        "follow-up 1 (remedy 1)",
        "引入全局基线 … 类似 EMA",
        "For G = 2, a global EMA baseline helps.",
        ("small-group-remedies",),
        remedy("g2-ema", "an EMA baseline"),
    ),
    Claim(
        "g2-kl",
        "follow-up 1 (remedy 2)",
        "使用 KL 惩罚项作为正则化",
        "For G = 2, a KL penalty helps.",
        ("small-group-remedies",),
        remedy("g2-kl0.04", "KL 0.04"),
    ),
    Claim(
        "g2-lr",
        "follow-up 1 (remedy 3)",
        "降低学习率，让模型对噪声更鲁棒",
        "For G = 2, a lower learning rate helps.",
        ("small-group-remedies",),
        remedy("g2-lr3e-5", "lr 3e-5 (from {base_lr})"),
    ),
    Claim(
        "stability",
        "follow-up 2",
        "GRPO 在采样数足够时更稳定 … 采样数不足时，GRPO 的噪声比 Critic 的偏差更致命",
        "With enough samples GRPO is at least as stable as PPO; with few, PPO is better.",
        ("grpo-vs-ppo", "small-group-remedies"),
        grpo_stability,
    ),
    Claim(
        "group-in-ppo",
        "follow-up 3",
        "在 PPO 里用组内基线 … 意义不大 … 得不偿失",
        "Replacing PPO's critic by the group baseline gains little and loses GAE.",
        ("grpo-vs-ppo",),
        group_baseline_in_ppo,
    ),
    Claim(
        "not-no-value",
        "common mistake 1",
        "不是'不需要价值函数'，而是用另一种方式估计基线",
        "GRPO still estimates a baseline (a value), just from samples: the group mean is a Monte-Carlo V(prompt).",
        ("critic-fit",),
        group_mean_is_a_value,
    ),
    Claim(
        "no-free-lunch",
        "common mistake 2",
        "没有绝对的好坏，只有 trade-off",
        "Neither GRPO nor PPO is better on every measure.",
        ("grpo-vs-ppo",),
        no_free_lunch,
    ),
    Claim(
        "std-essential",
        "common mistake 3",
        "只用均值相当于只做中心化，不做缩放，效果差很多",
        "Mean-only (no σ) works much worse.",
        ("offset-and-scale", "difficulty-bias"),
        std_essential,
    ),
    Claim(
        "difficulty", "literature (Dr. GRPO)", "—", "Dividing by σ over-weights too-easy and too-hard prompts.", ("difficulty-bias",), difficulty_bias
    ),
    Claim(
        "faster-30", "resume line", "GRPO 在数学任务上收敛快 30%", "GRPO converges ~30% faster than PPO on math.", ("grpo-vs-ppo",), faster_than_ppo
    ),
    Claim(
        "log-returns",
        "resume line",
        "采样数对性能的影响呈对数关系，从 4 到 16 提升明显，再往上边际递减",
        "Gains from G are logarithmic: 4 → 16 helps clearly, beyond that diminishing.",
        ("group-size",),
        logarithmic_returns,
    ),
    Claim(
        "two-grpo",
        "literature (2-GRPO)",
        "—",
        "G = 2 reaches ~97.6% of G = 16 with 12.5% of the rollouts (arXiv 2510.00977).",
        ("group-size",),
        two_grpo,
    ),
    Claim(
        "long-text",
        "trade-off / summary",
        "在对话生成或长文本任务中 … PPO + Critic 仍不可替代；PPO 在对话任务上更鲁棒",
        "For dialogue and long text, PPO with a critic is irreplaceable / more robust.",
        ("grpo-vs-ppo",),
        long_text_ppo,
        "answers are 3-4 tokens in this regime: measured in the long-answer regime (6-7 tokens)",
        regimes=("long-answer",),
    ),
    Claim(
        "batchnorm",
        "resume line",
        "GRPO 的组内基线就像 batch normalization",
        "The group baseline is like batch normalisation.",
        (),
        None,
        "an analogy, not a measurable claim",
    ),
]


def evaluate_claim(claim: Claim, results: dict) -> Finding:
    """The claim's finding from {name: result}; UNTESTED, saying why, when no experiment can test it,
    a result it needs is missing, or a (--fast) result lacks a cell its rule compares."""
    if claim.evaluate is None:
        return Finding("—", UNTESTED, claim.reason)
    missing = [name for name in claim.experiments if name not in results]
    if missing:
        return Finding("not run yet: " + ", ".join(f"`python -m grpo_lab sweep {name}`" for name in missing), UNTESTED, "")
    try:
        with recording_comparisons() as comparisons:
            finding = claim.evaluate(results)
    # a --fast grid leaves out cells that some claims compare; a cell id the catalog lacks (a typo) is an
    # UnknownCellError, no KeyError, and is raised: a typo never reads as "not tested"
    except KeyError as error:
        return Finding(f"needs a cell this result does not have ({error.args[0]}); run the full sweep", UNTESTED, "")
    except (TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as error:  # a damaged result that passed the schema
        remake = "; ".join(f"`python -m grpo_lab sweep {name}`" for name in claim.experiments)
        return Finding(f"a result it needs holds values its rule cannot read ({type(error).__name__}); remake it with {remake}", UNTESTED, "")
    finding.comparisons = comparisons
    finding = with_power(finding, claim)
    finding.near_line = any(
        verdict_with_flipped(claim, results, index) != finding.verdict for index, comparison in enumerate(comparisons) if comparison.near_line
    )
    return finding


def verdict_with_flipped(claim: Claim, results: dict, index: int) -> str:
    """The claim's verdict if its rule's comparison number ``index`` had fallen on the other side of its line."""
    with recording_comparisons() as comparisons, flipping(frozenset({index})):
        finding = claim.evaluate(results)
    finding.comparisons = comparisons
    return with_power(finding, claim).verdict


def claimed_effect(claim: Claim, comparison: Comparison) -> float:
    return claim.claimed_effect if claim.claimed_effect is not None else CLAIMED_RELATIVE_EFFECT * comparison.scale


def with_power(finding: Finding, claim: Claim) -> Finding:
    """A FAILS finding becomes NOT_DETECTED when no comparison found a difference and some could not
    have detected the claimed effect (module docstring); any other finding is returned as it is."""
    if finding.verdict != FAILS or not finding.comparisons or any(c.direction != "same" for c in finding.comparisons):
        return finding
    underpowered = [c.detectable for c in finding.comparisons if c.detectable > claimed_effect(claim, c)]
    if underpowered:
        finding.verdict, finding.detectable = NOT_DETECTED, max(underpowered)
    return finding
