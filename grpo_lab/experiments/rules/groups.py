"""Rules of the claims about the group: how large G must be, what small groups cost, the remedies for G=2, and
what prompts x G does to a step's memory."""

from __future__ import annotations

from collections.abc import Callable

from ..catalog import TARGET_ACCURACY, cell_label, result_cell
from ..findings import ACC, FAILS, HOLDS, PARTLY, SMALL_EFFECT, Finding, cell_summary, fmt, untested, versus, worded
from ..stats import Comparison, contrast


def saturation_note(r: dict) -> tuple[str, tuple[Comparison, ...]]:
    """At a fixed number of prompts, does a bigger group stop improving the gradient? The reference policy's net SNR
    (variance experiment) at the largest G against the third largest: a sentence for the explanation when it does not
    grow ("" when it does, or without the variance experiment), and that comparison (auxiliary: it only adds words)."""
    sizes = sorted({c["axes"]["group_size"] for c in r["variance"]["cells"]}) if "variance" in r else []
    if len(sizes) < 3:
        return "", ()
    middle, largest = (cell_summary(r, "variance", f"reference-g{G}", "net_snr.zscore") for G in (sizes[-3], sizes[-1]))
    grows = versus(largest, middle, f"reference: net SNR G={sizes[-1]} vs G={sizes[-3]}", "net_snr.zscore")
    if grows.direction() == "higher":
        return "", (grows,)
    note = (
        f" Why: at the reference policy the SNR of a 16-prompt batch stops growing with G (G={sizes[-3]}: {fmt(middle)}, "
        f"G={sizes[-1]}: {fmt(largest)}): beyond that, its noise comes from which prompts were drawn, which only more prompts reduce."
    )
    return note, (grows,)


def group_size_needed(r: dict) -> Finding:
    """Deciding: late accuracy at equal samples of G=2 against G=8, then of G=4 against G=8; holds when both are lower,
    partly when one is. The variance experiment's SNR (saturation_note): auxiliary."""
    name = "group-size"
    at = {G: cell_summary(r, name, f"equal-samples-g{G}", ACC) for G in (2, 4, 8)}
    to = {G: cell_summary(r, name, f"equal-samples-g{G}", "samples_to_target") for G in (2, 4, 8)}
    deciding = tuple(versus(at[G], at[8], f"equal samples: G={G} vs G=8", ACC, SMALL_EFFECT) for G in (2, 4))
    note, snr = saturation_note(r)
    last = [c for c in r[name]["cells"] if c["axes"]["regime"] == "equal samples"][-1]["config"]["train"]
    evidence = (
        f"equal samples ({last['group_size'] * last['prompts_per_step']} "
        "responses per step), late accuracy: "
        + ", ".join(f"G={G} {fmt(at[G])}" for G in at)
        + f"; responses to reach {TARGET_ACCURACY:.0%}: "
        + ", ".join(f"G={G} {fmt(to[G])}" for G in to)
    )

    def judge(g2_dir: str, g4_dir: str) -> tuple[str, str]:
        directions = {2: g2_dir, 4: g4_dir}
        worse = [G for G, direction in directions.items() if direction == "lower"]
        better = [G for G, direction in directions.items() if direction == "higher"]
        verdict = HOLDS if len(worse) == 2 else PARTLY if worse else FAILS
        explanation = (
            "At the same number of sampled responses, small groups with more prompts were "
            + (
                "worse than G=8, as the card says."
                if verdict == HOLDS
                else "partly worse: "
                + ", ".join(f"G={G}" for G in worse)
                + " fell behind G=8"
                + (f" (G={', '.join(map(str, better))} even better)." if better else ".")
                if worse
                else f"not worse than G=8 (G={', '.join(map(str, better))} even better)."
                if better
                else "within noise of G=8."
            )
            + note
        )
        return verdict, explanation

    return Finding(evidence, judge, deciding, snr)


def small_groups_noisier(r: dict) -> Finding:
    """Deciding: steps to the target at equal prompts, G=2 then G=4 against G=8, and responses to the target at equal
    samples, G=2 then G=4 against G=8 (seeds that never reach it count, ranked last). Holds when some small G is slower
    per step and some per sample; partly when only per step."""
    gs, var = "group-size", "variance"
    steps = {G: cell_summary(r, gs, f"equal-prompts-g{G}", "steps_to_target") for G in (2, 4, 8)}
    samples = {G: cell_summary(r, gs, f"equal-samples-g{G}", "samples_to_target") for G in (2, 4, 8)}
    snr1k = {G: cell_summary(r, var, f"reference-g{G}", "net_snr_per_1k_responses.zscore") for G in (2, 4, 8)}
    cos = {G: cell_summary(r, var, f"reference-g{G}", "cos_step.zscore") for G in (2, 4, 8)}
    deciding = tuple(versus(steps[G], steps[8], f"equal prompts: steps to target, G={G} vs G=8", "steps_to_target") for G in (2, 4)) + tuple(
        versus(samples[G], samples[8], f"equal samples: responses to target, G={G} vs G=8", "samples_to_target") for G in (2, 4)
    )
    tied = cell_summary(r, gs, "equal-prompts-g2", "frac_reward_zero_std")
    evidence = (
        "equal prompts, steps to reach the target: "
        + ", ".join(f"G={G} {fmt(steps[G])}" for G in steps)
        + "; equal samples, responses to reach it: "
        + ", ".join(f"G={G} {fmt(samples[G])}" for G in samples)
        + "; at the reference policy, zscore gradient net SNR per 1000 responses: "
        + ", ".join(f"G={G} {fmt(snr1k[G])}" for G in snr1k)
        + "; cosine of one batch (16 prompts) to the true gradient: "
        + ", ".join(f"G={G} {fmt(cos[G])}" for G in cos)
        + f"; share of G=2 groups with all-equal rewards {fmt(tied, percent=True)}"
    )

    def judge(steps_g2: str, steps_g4: str, samples_g2: str, samples_g4: str) -> tuple[str, str]:
        slower_per_step = "higher" in (steps_g2, steps_g4)
        slower_sizes = [G for G, direction in zip((2, 4), (samples_g2, samples_g4)) if direction == "higher"]
        verdict = HOLDS if slower_per_step and slower_sizes else PARTLY if slower_per_step else FAILS
        explanation = (
            "Per step (same prompts), G=2-4 gives fewer samples and "
            + ("learns more slowly" if slower_per_step else "still learns as fast")
            + "; per sample (same responses), "
            + (
                f"G={' and '.join(map(str, slower_sizes))} reaches the target later than G=8 (claim 5 compares where they end)"
                if slower_sizes
                else "it is not slower"
            )
            + ". With 0/1 rewards a G=2 group is either tied (advantage 0, no signal and no noise) or split (advantages ±0.71, "
            "a clean pairwise comparison): its advantages are not 'dominated by noise', they are often simply zero (the share above)."
        )
        return verdict, explanation

    return Finding(evidence, judge, deciding)


def g4_oscillates(r: dict) -> Finding:
    """Deciding: the largest fall of held-out accuracy, G=4 against G=16, at equal prompts then at equal samples; holds when
    higher in both, partly in one. The train reward's step-to-step noise, G=4 against G=16: auxiliary."""
    name = "group-size"
    regimes = (("equal prompts", "equal-prompts"), ("equal samples", "equal-samples"))
    parts, deciding, auxiliary = [], [], []
    for regime, prefix in regimes:
        d4, d16 = cell_summary(r, name, f"{prefix}-g4", "eval_max_drawdown"), cell_summary(r, name, f"{prefix}-g16", "eval_max_drawdown")
        n4, n16 = cell_summary(r, name, f"{prefix}-g4", "reward_step_noise"), cell_summary(r, name, f"{prefix}-g16", "reward_step_noise")
        parts.append(
            f"{regime}: largest accuracy fall G=4 {fmt(d4)} vs G=16 {fmt(d16)}; train-reward step-to-step noise G=4 {fmt(n4)} vs G=16 {fmt(n16)}"
        )
        deciding.append(versus(d4, d16, f"{regime}: largest accuracy fall, G=4 vs G=16", "eval_max_drawdown"))
        auxiliary.append(versus(n4, n16, f"{regime}: train-reward step noise, G=4 vs G=16", "reward_step_noise"))
    noisier = [regime for (regime, _), comparison in zip(regimes, auxiliary) if comparison.direction() == "higher"]

    def judge(*directions: str) -> tuple[str, str]:
        worse = [regime for (regime, _), direction in zip(regimes, directions) if direction == "higher"]
        verdict = HOLDS if len(worse) == len(regimes) else PARTLY if worse else FAILS
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
        return verdict, explanation

    return Finding("; ".join(parts), judge, tuple(deciding), tuple(auxiliary))


def blowup_and_accumulation(r: dict) -> Finding:
    """No comparisons: holds when the activation memory grows more than half as fast as the responses per step (whole
    batches), every micro-batched step-1 gradient norm is within 1e-4 (relative) of the whole batch's, and the smallest
    micro-batch keeps under half of the activations; otherwise partly."""
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
    bounded = smallest_micro["activation_ratio"] < 0.5

    def judge() -> tuple[str, str]:
        verdict = HOLDS if linear and same_gradient and bounded else PARTLY
        explanation = (
            "A step's batch is prompts x G responses, and the memory autograd keeps for the backward pass grows in proportion. "
            "Gradient accumulation over micro-batches gives the same gradient (the loss normalisers are the whole batch's) with "
            "memory bounded by the micro-batch. The process's peak resident memory also includes torch itself "
            f"({fmt(smallest['summary']['peak_rss_mb'])} MB at the smallest batch)."
        )
        return verdict, explanation

    return Finding(evidence, judge)


def g2_usable_but_poor(r: dict) -> Finding:
    """Deciding: late accuracy of G=2 x 16 prompts against G=8 x 16 prompts (per step), then of G=2 x 64 prompts against
    G=8 (per sample). Fails when G=2 x 16 ends no more than 5 points above its start (not usable) or neither is lower;
    holds when the per-sample one is lower; partly when only the per-step one is."""
    name = "small-group-remedies"
    g2, g8, g2_64 = (cell_summary(r, name, cell_id, ACC) for cell_id in ("g2", "g8", "g2-64prompts"))
    start = cell_summary(r, name, "g2", "initial_eval_accuracy")
    deciding = (
        versus(g2, g8, "G=2 vs G=8, 16 prompts each", ACC, SMALL_EFFECT),
        versus(g2_64, g8, "G=2 x 64 prompts vs G=8 x 16 prompts (same samples)", ACC, SMALL_EFFECT),
    )
    usable = g2["mean"] > start["mean"] + 0.05
    below_start = g2["mean"] < start["mean"]
    evidence = f"late accuracy (start {start['mean']:.3g}): G=2 x 16 prompts {fmt(g2)}, G=8 x 16 prompts {fmt(g8)}, G=2 x 64 prompts (same samples as G=8) {fmt(g2_64)}"

    def judge(per_step: str, per_sample: str) -> tuple[str, str]:
        verdict = FAILS if not usable or per_sample != "lower" and per_step != "lower" else HOLDS if per_sample == "lower" else PARTLY
        state = (
            "G=2 is usable (it learns)"
            if usable
            else "G=2 at 16 prompts is not usable here: it ends below its start"
            if below_start
            else "G=2 at 16 prompts barely learns"
        )
        explanation = (
            f"{state}. Per step it is {worded(per_step, 'better than', 'worse than', 'within noise of')} G=8, "
            f"with 4x fewer samples; given G=8's samples as more prompts it is {worded(per_sample, 'better than', 'worse than', 'within noise of')} G=8. "
            "'Poor' is a matter of samples per step, not of G=2 as such."
        )
        return verdict, explanation

    return Finding(evidence, judge, deciding)


def cell_setting(results: dict, name: str, cell_id: str, knob: str):
    """The value of a TrainConfig knob a training cell ran with (its own or its regime's override, else the result's TrainConfig defaults)."""
    cell = result_cell(results[name], cell_id)
    return cell["config"]["train"].get(knob, results[name]["train_defaults"][knob])


def cell_lr(results: dict, name: str, cell_id: str) -> float:
    """The learning rate a training cell ran with."""
    return cell_setting(results, name, cell_id, "lr")


def remedy(cell_id: str, what_text: str) -> Callable[[dict], Finding]:
    """The rule of one remedy for G=2 (cell ``cell_id`` of small-group-remedies); what_text: the remedy in words, where
    '{base_lr}' becomes the plain G=2 cell's lr. Deciding: late accuracy with the remedy against plain G=2, then the largest
    accuracy fall. Holds when accuracy is higher, or within noise with a smaller fall; partly when only the fall is smaller."""

    def evaluate(r: dict) -> Finding:
        name = "small-group-remedies"
        plain, treated = cell_summary(r, name, "g2", ACC), cell_summary(r, name, cell_id, ACC)
        plain_dd, treated_dd = cell_summary(r, name, "g2", "eval_max_drawdown"), cell_summary(r, name, cell_id, "eval_max_drawdown")
        base_lr = f"{cell_lr(r, name, 'g2'):.0e}".replace("e-0", "e-")  # the regime's lr, not always the default's: '1e-4'
        what = what_text.format(base_lr=base_lr)
        deciding = (
            versus(treated, plain, f"G=2 with {what} vs without", ACC, SMALL_EFFECT),
            versus(treated_dd, plain_dd, f"G=2 with {what} vs without: largest accuracy fall", "eval_max_drawdown"),
        )
        evidence = f"late accuracy G=2 {fmt(plain)} → with {what} {fmt(treated)}; largest accuracy fall {fmt(plain_dd)} → {fmt(treated_dd)}"

        def judge(acc_dir: str, dd_dir: str) -> tuple[str, str]:
            verdict = HOLDS if acc_dir == "higher" or (acc_dir == "same" and dd_dir == "lower") else PARTLY if dd_dir == "lower" else FAILS
            explanation = (
                f"With {what}, G=2's late accuracy is {worded(acc_dir, 'higher', 'lower', 'within noise of what it was')}"
                f" and its largest fall is {worded(dd_dir, 'larger', 'smaller', 'within noise of what it was')}"
                + (": steadier, but it learns less in the same steps." if verdict == PARTLY else ".")
            )
            return verdict, explanation

        return Finding(evidence, judge, deciding)

    return evaluate


def logarithmic_returns(r: dict) -> Finding:
    """The shape, not just the order: accuracy logarithmic in G gains the same amount at every doubling, so the gain over
    the two doublings 16 → 64 equals that over 4 → 16; saturation gains less and less, down to nothing. Deciding, on late
    accuracy at equal prompts: G=16 against G=4, G=64 against G=16, and the contrast (gain 4→16) - (gain 16→64) =
    2 acc16 - acc4 - acc64 against 0 (welch_contrast). Holds when both gains are positive and the contrast is within
    noise; partly when 4 → 16 gains; fails when it does not."""
    name = "group-size"
    gains = r[name]["derived"]["gain_per_doubling_equal_prompts"]
    acc = {G: cell_summary(r, name, f"equal-prompts-g{G}", ACC) for G in (4, 16, 64)}
    deciding = (
        versus(acc[16], acc[4], "equal prompts: G=16 vs G=4", ACC, SMALL_EFFECT),
        versus(acc[64], acc[16], "equal prompts: G=64 vs G=16", ACC, SMALL_EFFECT),
        contrast([acc[4], acc[16], acc[64]], [-1, 2, -1], label="equal prompts: gain 4→16 vs gain 16→64", metric=ACC),
    )
    early, late = deciding[0].difference, deciding[1].difference
    samples = {G: cell_summary(r, name, f"equal-samples-g{G}", ACC) for G in (4, 16, 64)}
    evidence = (
        "equal prompts, late accuracy: "
        + ", ".join(f"G={G} {fmt(acc[G])}" for G in acc)
        + f"; gain 4→16 {early:+.3f}, 16→64 {late:+.3f} (difference {deciding[2].difference:+.3f} ± {deciding[2].standard_error:.3f} s.e.); gain per doubling: "
        + ", ".join(f"{k} {v:+.3f}" for k, v in gains.items())
        + "; at equal samples: "
        + ", ".join(f"G={G} {fmt(samples[G])}" for G in samples)
    )

    def judge(early_dir: str, late_dir: str, contrast_dir: str) -> tuple[str, str]:
        clear, still_gaining = early_dir == "higher", late_dir == "higher"
        if not clear:
            verdict, shape = FAILS, "flat: 4 → 16 does not help beyond noise"
        elif not still_gaining:
            verdict, shape = (
                PARTLY,
                "saturating, not logarithmic: 4 → 16 helps, 16 → 64 " + worded(late_dir, "", "loses accuracy", "adds nothing beyond noise"),
            )
        elif contrast_dir == "same":
            verdict, shape = HOLDS, "logarithmic: each doubling of G adds about the same accuracy"
        elif contrast_dir == "higher":
            verdict, shape = PARTLY, "diminishing but still rising: the later doublings add less than the earlier ones"
        else:
            verdict, shape = PARTLY, "rising faster, not logarithmic: the later doublings add more than the earlier ones"
        explanation = (
            f"A logarithmic law predicts the same gain at every doubling; saturation predicts the gains die out. Here the shape is {shape}. "
            'The card\'s words mix the two ("logarithmic ... diminishing beyond 16"): only the second half is what a saturation shows. '
            "Bigger G also means more samples per step; at equal samples the picture is the one in the '≥ 8' row."
        )
        return verdict, explanation

    return Finding(evidence, judge, deciding)


def two_grpo(r: dict) -> Finding:
    """No deciding comparison: holds when G=2 reaches at least 95% of G=16's late accuracy at equal prompts and steps
    (12.5% of the rollouts), partly at least 90%, else fails. G=2 against G=16 at equal samples: auxiliary."""
    name = "group-size"
    derived = r[name]["derived"].get("two_vs_large")
    if not derived:
        return untested("the grid has no G=2 / G=16 pair")
    small, large = derived["small_G"], derived["large_G"]
    a, b = cell_summary(r, name, f"equal-prompts-g{small}", ACC), cell_summary(r, name, f"equal-prompts-g{large}", ACC)
    ratio = derived["accuracy_ratio"]
    same_samples = versus(
        cell_summary(r, name, f"equal-samples-g{small}", ACC),
        cell_summary(r, name, f"equal-samples-g{large}", ACC),
        f"equal samples: G={small} vs G={large}",
        ACC,
        SMALL_EFFECT,
    )
    gain_ratio = "n/a" if derived["gain_ratio"] is None else f"{derived['gain_ratio']:.0%}"  # None: G={large} did not gain
    evidence = (
        f"equal prompts, same steps: G={small} {fmt(a)} vs G={large} {fmt(b)} → {ratio:.1%} of G={large}'s accuracy with "
        f"{derived['rollout_fraction']:.1%} of the rollouts (gain over the start: {gain_ratio} of G={large}'s)"
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

    def judge() -> tuple[str, str]:
        verdict = HOLDS if ratio >= 0.95 else PARTLY if ratio >= 0.9 else FAILS
        explanation = (
            "2-GRPO (arXiv 2510.00977) reports G=2 reaching 97.6% of G=16 with 12.5% of the rollouts, and reads G=2 GRPO as "
            f"contrastive learning between a pair, close to DPO. Here G=2 reaches {ratio:.1%} at the same number of steps; the gain "
            f"over the starting accuracy ({r[name]['derived']['initial_eval_accuracy']:.3g}) is the stricter measure. Given the same "
            f"samples per step instead, G=2 ends {worded(same_samples.direction(), 'above', 'below', 'within noise of')} G={large}. "
            "The protocol: the paper compares 2-GRPO with 16-GRPO at 12.5% of the rollouts (2 instead of 16 per prompt) and argues "
            "that G=2's larger gradient variance is handled through the batch size (more prompts per batch). Two budgets give 12.5%: "
            "the same prompts per step and the same steps (the 'equal prompts' rows, which decide this verdict), or every prompt "
            "visited as often with 8x the prompts per batch and 1/8 of the steps (the budget reading above, where the experiment "
            "has that cell)."
            + ("" if protocol is None else " On this toy, learning is limited by the number of Adam steps, which the budget reading cuts by 8.")
        )
        return verdict, explanation

    return Finding(evidence, judge, (), (same_samples,))
