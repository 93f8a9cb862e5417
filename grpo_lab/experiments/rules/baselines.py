"""Rules of the claims about the baseline itself: the offset, the scale, the variance, σ's place."""

from __future__ import annotations

from ..findings import ACC, FAILS, HOLDS, PARTLY, SMALL_EFFECT, Finding, cell_summary, fmt, versus, worded
from ..stats import Comparison


def offset_removed(r: dict) -> Finding:
    """Deciding: with mean and zscore the largest offset's late accuracy is within noise of no offset's (2 comparisons),
    and without a baseline it is lower (1)."""
    name = "offset-and-scale"
    offsets = sorted({c["axes"]["reward_offset"] for c in r[name]["cells"]})
    largest = offsets[-1]
    acc = {(b, o): cell_summary(r, name, f"{b}-offset{o:g}", ACC) for b in ("none", "mean", "zscore") for o in offsets}
    deciding = tuple(versus(acc[(b, largest)], acc[(b, 0.0)], f"{b}: offset {largest:g} vs 0", ACC, SMALL_EFFECT) for b in ("mean", "zscore", "none"))
    none_vs_mean = versus(acc[("none", 0.0)], acc[("mean", 0.0)], "none vs mean, no offset", ACC, SMALL_EFFECT)
    evidence = "; ".join(f"{b}: " + ", ".join(f"offset {o:g} → {fmt(acc[(b, o)])}" for o in offsets) for b in ("none", "mean", "zscore"))

    def judge(mean_dir: str, zscore_dir: str, none_dir: str) -> tuple[str, str]:
        invariant, none_hurt = mean_dir == zscore_dir == "same", none_dir == "lower"
        verdict = HOLDS if invariant and none_hurt else PARTLY if invariant else FAILS
        explanation = (
            f"Late held-out accuracy. With the group mean subtracted (mean, zscore) the advantage does not see the offset at all, "
            f"so the runs with offset {largest:g} are {'the same as' if invariant else 'NOT the same as'} without it. "
            f"Without a baseline (none) the offset {'costs accuracy' if none_hurt else 'did not cost accuracy here'}: every sampled "
            "answer is pushed up, the right ones only slightly more."
            + (
                " With 0/1 rewards and no offset, 'none' is as good as 'mean' here (wrong answers have reward 0 and add no "
                "noise): the baseline matters once rewards are shifted."
                if none_vs_mean.direction() == "same"
                else ""
            )
        )
        return verdict, explanation

    return Finding(evidence, judge, deciding, (none_vs_mean,))


def scales_unified(r: dict) -> Finding:
    """Deciding: zscore's hard-problem accuracy with hard rewards x0.1 within noise of x1, and mean's lower."""
    name = "offset-and-scale"
    hard = {
        (b, s): cell_summary(r, name, f"{b}-offset0" if s == 1 else f"{b}-hard-x0.1", "hard_eval_accuracy")
        for b in ("mean", "zscore", "none")
        for s in (1, 0.1)
    }
    deciding = tuple(
        versus(hard[(b, 0.1)], hard[(b, 1)], f"{b}: hard rewards x0.1 vs x1", "hard_eval_accuracy", SMALL_EFFECT) for b in ("zscore", "mean")
    )
    plain = versus(cell_summary(r, name, "zscore-offset0", ACC), cell_summary(r, name, "mean-offset0", ACC), "zscore vs mean", ACC, SMALL_EFFECT)
    evidence = "hard-problem accuracy, rewards of hard problems x1 → x0.1: " + "; ".join(
        f"{b}: {fmt(hard[(b, 1)])} → {fmt(hard[(b, 0.1)])}" for b in ("none", "mean", "zscore")
    )

    def judge(zscore_dir: str, mean_dir: str) -> tuple[str, str]:
        z_same, mean_hurt = zscore_dir == "same", mean_dir == "lower"
        verdict = HOLDS if z_same and mean_hurt else PARTLY if z_same else FAILS
        explanation = (
            "When the reward model scores hard (carry) problems on a 10x smaller scale, mean-centring keeps that 10x in their "
            f"advantages and hard-problem accuracy {'drops' if mean_hurt else 'did not drop beyond noise'}; z-scoring divides it out "
            f"({'no change beyond noise' if z_same else 'yet it changed'})."
            + (
                " Without such scale differences zscore and mean end within noise of each other (row 'mean-only'): this is where dividing by σ pays."
                if plain.direction() == "same" and mean_hurt
                else ""
            )
        )
        return verdict, explanation

    return Finding(evidence, judge, deciding, (plain,))


def snr_comparisons(r: dict, first: str, second: str, min_group_size: int = 2) -> tuple[Comparison, ...]:
    """Baseline ``first``'s batch net SNR (noise subtracted) against ``second``'s, one comparison per (policy, G) cell
    of the variance experiment with G >= min_group_size."""
    return tuple(
        versus(
            cell_summary(r, "variance", cell["id"], f"net_snr.{first}"),
            cell_summary(r, "variance", cell["id"], f"net_snr.{second}"),
            f"{cell['id']}: net SNR {first} vs {second}",
            f"net_snr.{first}",
        )
        for cell in r["variance"]["cells"]
        if cell["axes"]["group_size"] >= min_group_size
    )


def tally(directions: tuple[str, ...]) -> dict:
    """{"higher": n, "lower": n, "same": n} of some comparisons' directions."""
    return {direction: directions.count(direction) for direction in ("higher", "lower", "same")}


def counted(counts: dict) -> str:
    return f"higher in {counts['higher']}, lower in {counts['lower']}, within noise in {counts['same']} of {sum(counts.values())}"


def zscore_lowers_variance(r: dict) -> Finding:
    """Deciding: zscore's net SNR against mean's in every (policy, G >= 4) cell (at G = 2 with 0/1 rewards zscore is
    mean times a constant); holds when higher in most, fails when higher in none. Mean against none: auxiliary."""
    name = "variance"
    cells = r[name]["cells"]
    policies = list(dict.fromkeys(c["axes"]["policy"] for c in cells))
    sizes = sorted({c["axes"]["group_size"] for c in cells if c["axes"]["group_size"] >= 4})
    by_sigma = snr_comparisons(r, "zscore", "mean", min_group_size=4)
    by_centring = tally(tuple(c.direction() for c in snr_comparisons(r, "mean", "none")))
    parts = []
    for policy in policies:
        G = 8 if 8 in sizes else sizes[0]
        cell_id = f"{policy}-g{G}"
        parts.append(
            f"{policy}, G={G}: net SNR zscore {fmt(cell_summary(r, name, cell_id, 'net_snr.zscore'))} vs mean "
            f"{fmt(cell_summary(r, name, cell_id, 'net_snr.mean'))} vs none {fmt(cell_summary(r, name, cell_id, 'net_snr.none'))}; "
            f"raw grad_var zscore {fmt(cell_summary(r, name, cell_id, 'grad_var.zscore'))} vs mean {fmt(cell_summary(r, name, cell_id, 'grad_var.mean'))}"
        )
    evidence = "; ".join(parts) + f". mean's SNR against no baseline's: {counted(by_centring)} (policy, G) cells."

    def judge(*directions: str) -> tuple[str, str]:
        counts = tally(directions)
        verdict = HOLDS if counts["higher"] > len(directions) / 2 else FAILS if counts["higher"] == 0 else PARTLY
        centring_helps = by_centring["higher"] > sum(by_centring.values()) / 2
        explanation = (
            f"zscore's SNR against mean's: {counted(counts)} (policy, G ≥ 4) cells. Raw variance is the wrong yardstick: z-scored "
            "advantages have unit scale, so their gradient variance is larger simply because the gradient is larger (see grad_var). "
            "The scale-free measures are the signal-to-noise ratio (SNR) and the cosine to the true gradient. On those, dividing by σ "
            + (
                "raises the SNR in most cells."
                if verdict == HOLDS
                else "does not reliably raise the SNR here: it re-weights prompts (the scale and difficulty rows) rather than removing noise."
            )
            + (
                " Centring is what raises it: mean-only's SNR is above no baseline's in most cells."
                if centring_helps
                else f" Nor does centring reliably raise it on these rewards: mean-only's SNR is above no baseline's in "
                f"{by_centring['higher']} cells, below it in {by_centring['lower']} and within noise in {by_centring['same']}. With 0/1 "
                "rewards and no offset a wrong answer's term is already 0, so there is no offset for a baseline to remove; the noise a "
                "baseline removes is an offset's (the offset row, notebook 01b §1)."
            )
            + " With 0/1 rewards at G=2, mean, rloo and zscore give the same gradient direction (only its length differs)."
        )
        return verdict, explanation

    return Finding(evidence, judge, by_sigma)


def std_essential(r: dict) -> Finding:
    """Deciding: zscore against mean in late accuracy, without scale differences (offset-and-scale) and in difficulty-bias.
    Holds when both are higher and one by more than 5 points; partly when one is higher."""
    pairs = [("offset-and-scale", "zscore-offset0", "mean-offset0"), ("difficulty-bias", "train-zscore", "train-mean")]
    deciding, parts, gaps = [], [], []
    for name, z_id, m_id in pairs:
        z, m = cell_summary(r, name, z_id, ACC), cell_summary(r, name, m_id, ACC)
        deciding.append(versus(z, m, f"{name}: zscore vs mean", ACC, SMALL_EFFECT))
        gaps.append(z["mean"] - m["mean"])
        parts.append(f"{name}: zscore {fmt(z)} vs mean {fmt(m)}")
    scale_hurts_mean = versus(
        cell_summary(r, "offset-and-scale", "mean-hard-x0.1", "hard_eval_accuracy"),
        cell_summary(r, "offset-and-scale", "mean-offset0", "hard_eval_accuracy"),
        "mean: hard rewards x0.1 vs x1",
        "hard_eval_accuracy",
        SMALL_EFFECT,
    )

    def judge(*directions: str) -> tuple[str, str]:
        big = all(d == "higher" for d in directions) and any(gap > 0.05 for gap in gaps)
        verdict = HOLDS if big else PARTLY if "higher" in directions else FAILS
        explanation = (
            "Late accuracy without per-prompt scale differences: dividing by σ is "
            + ("much better" if big else "better by a little" if verdict == PARTLY else "not better")
            + " than centring alone here. Dr. GRPO (Liu et al. 2025) argues for dropping σ to avoid over-weighting too-easy and "
            "too-hard prompts (see the difficulty row)."
            + (" Where σ does matter here is when prompts' reward scales differ (the scale row)." if scale_hurts_mean.direction() == "lower" else "")
        )
        return verdict, explanation

    return Finding("; ".join(parts), judge, tuple(deciding), (scale_hurts_mean,))


def difficulty_bias(r: dict) -> Finding:
    """Deciding: at each policy (reference, half-trained), the weight zscore gives a 1-of-G group relative to a balanced
    group, against mean's: holds when higher at both, partly at one. Hard-problem accuracy after training: auxiliary."""
    name = "difficulty-bias"
    G = next(c for c in r[name]["cells"] if c["axes"]["part"] == "weights")["config"]["group_size"]
    policies = ("reference", "half-trained")
    parts, deciding, below_balanced = [], [], []
    for policy in policies:
        cell_id = f"weights-{policy}"
        metric = "weight_vs_middle.zscore.k=1"
        z, m = cell_summary(r, name, cell_id, metric), cell_summary(r, name, cell_id, "weight_vs_middle.mean.k=1")
        parts.append(f"{policy} policy, gradient norm of a group with 1 of {G} right relative to a balanced group: zscore {fmt(z)}, mean {fmt(m)}")
        deciding.append(versus(z, m, f"{policy}: weight of a 1-of-{G} group, zscore vs mean", metric))
        below_balanced.append(z["mean"] is not None and z["mean"] < 1)
    accs = {(b, s): cell_summary(r, name, f"train-{b}", f"{s}_eval_accuracy") for b in ("zscore", "mean") for s in ("hard", "easy")}
    parts.append(
        "after training, hard/easy accuracy: " + "; ".join(f"{b} {fmt(accs[(b, 'hard')])} / {fmt(accs[(b, 'easy')])}" for b in ("zscore", "mean"))
    )
    hard = versus(accs[("zscore", "hard")], accs[("mean", "hard")], "hard-problem accuracy, zscore vs mean", "hard_eval_accuracy", SMALL_EFFECT)
    lopsided = "lopsided groups (almost all answers agree: prompts too hard or too easy for the policy, so σ is small)"

    def judge(*directions: str) -> tuple[str, str]:
        upweighted = [policy for policy, direction in zip(policies, directions) if direction == "higher"]
        verdict = HOLDS if len(upweighted) == len(policies) else PARTLY if upweighted else FAILS
        explanation = (
            (
                f"Dividing by σ gives {lopsided} more weight, relative to a balanced group, than mean-centring does"
                + (" (though still less than a balanced group's)" if all(below_balanced) else "")
                + (", as Dr. GRPO argues." if verdict == HOLDS else f", at the {upweighted[0]} policy only.")
                if upweighted
                else f"Dividing by σ does not give {lopsided} more weight than mean-centring does here, against Dr. GRPO's argument."
            )
            + " Whether the re-weighting matters depends on the task: after training, hard-problem accuracy with zscore is "
            + worded(hard.direction(), "higher than", "lower than", "within noise of")
            + " that with mean."
        )
        return verdict, explanation

    return Finding("; ".join(parts), judge, tuple(deciding), (hard,))
