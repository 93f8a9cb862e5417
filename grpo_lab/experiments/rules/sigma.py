"""Rules of the claims about σ near zero: whether advantages explode, whether a small epsilon fixes it, and DAPO's
filter and refill of groups whose rewards are all equal (experiment sigma-to-zero)."""

from __future__ import annotations

import math

from ..catalog import cell_label, result_cell
from ..findings import ACC, FAILS, HOLDS, PARTLY, SMALL_EFFECT, Finding, cell_summary, fmt, untested, versus, worded

DAPO_SETTINGS = (("exact", "exact"), ("partial", "partial"), ("noisy", "noisy"), ("weak reference, exact", "weak"))  # (words, id prefix)


def sigma_explodes(r: dict) -> Finding:
    """No comparison decides; facts of the means do. Holds when the largest mean |advantage| of any cell exceeds 10x the
    z-score's bound (G-1)/√G; partly when, instead, exact rewards with eps=0 stop on 0/0 (mean of 'failed' > 0) or noisy
    rewards' share of |advantage| on no-signal groups at eps=0 exceeds 10x that at eps=0.1; fails otherwise."""
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
    exploded = largest > 10 * bound
    nan = (failed_exact["mean"] or 0) > 0
    amplified = share_small["mean"] is not None and share_large["mean"] is not None and share_small["mean"] > 10 * share_large["mean"]
    evidence = (
        f"largest |advantage| in any run: {largest:.3g}, in '{cell_label(name, top['id'])}' (the z-score's bound (G-1)/√G = {bound:.3g} for G={G}; "
        f"runs above it: {'; '.join(repr(label) for label in above) if above else 'none'}); exact rewards, "
        f"eps=0: {fmt(failed_exact, percent=True)} of runs stopped on 0/0; noisy rewards (σ_noise={noise:g}): "
        f"share of |advantage| on groups with no right/wrong spread {fmt(share_small)} at eps=0 vs {fmt(share_large)} at eps=0.1"
    )

    def judge() -> tuple[str, str]:
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
        return verdict, explanation

    return Finding(evidence, judge)


def epsilon_fixes(r: dict) -> Finding:
    """No comparison decides; facts of the means do. Holds when the smallest eps > 0 leaves no exact-reward run stopped
    on 0/0 (mean of 'failed' == 0) and, with noisy rewards, cuts the share of |advantage| on no-signal groups below half
    of eps=0's; partly with the first only; fails otherwise. Late accuracy at the smallest eps against the largest, with
    noisy rewards: auxiliary."""
    name = "sigma-to-zero"
    epsilons = sorted({c["axes"]["std_eps"] for c in r[name]["cells"] if c["axes"]["std_eps"] > 0})
    tiny, big = epsilons[0], epsilons[-1]
    failed_tiny = cell_summary(r, name, f"exact-eps{tiny:g}-add", "failed")
    shares = {(e, m): cell_summary(r, name, f"noisy-eps{e:g}-{m}", "probe_no_signal_share") for e in (tiny, big) for m in ("add", "clamp")}
    share_zero = cell_summary(r, name, "noisy-eps0-add", "probe_no_signal_share")
    acc = {e: cell_summary(r, name, f"noisy-eps{e:g}-add", ACC) for e in (tiny, big)}
    exact_acc = cell_summary(r, name, f"exact-eps{tiny:g}-add", ACC)

    def damps(share: dict) -> bool:
        return share["mean"] is not None and bool(share_zero["mean"]) and share["mean"] < 0.5 * share_zero["mean"]

    fixes_nan = failed_tiny["mean"] == 0
    stops_noise, damped = damps(shares[(tiny, "add")]), damps(shares[(big, "add")])
    cost = versus(acc[tiny], acc[big], f"noisy rewards: eps {tiny:g} vs {big:g}", ACC, SMALL_EFFECT)
    evidence = (
        f"exact rewards, eps={tiny:g}: {fmt(failed_tiny, percent=True)} of runs failed; noisy rewards, share of |advantage| on "
        "no-signal groups: "
        + ", ".join(f"eps={e:g} {m} {fmt(shares[(e, m)])}" for (e, m) in shares)
        + f"; late accuracy with noisy rewards eps={tiny:g} {fmt(acc[tiny])}, eps={big:g} {fmt(acc[big])} (exact rewards {fmt(exact_acc)})"
    )

    def judge() -> tuple[str, str]:
        verdict = HOLDS if fixes_nan and stops_noise else PARTLY if fixes_nan else FAILS
        explanation = (
            f"Any eps > 0 (even {tiny:g}) {'removes' if fixes_nan else 'does NOT remove'} the 0/0: a group of identical rewards gets "
            f"advantage exactly 0. An eps far below the reward noise {'already damps the noise' if stops_noise else 'still lets the noise through'}"
            + (f"; eps={big:g}, comparable to the noise, damps it" if damped else "")
            + ". max(σ, eps) and σ + eps differ only when σ is close to eps. In accuracy, the amplified noise costs "
            + worded(
                cost.direction(),
                higher="nothing; the tiny eps did better here.",
                lower="accuracy here.",
                same="nothing measurable here (the noisy groups' pull averages out over a batch).",
            )
        )
        return verdict, explanation

    return Finding(evidence, judge, (), (cost,))


DROPPED = "frac_all_right_or_wrong"  # the share of groups DAPO's filter drops (every answer right, or every one wrong)


def dapo_cells(r: dict, variant: str) -> list[tuple[str, dict, dict]]:
    """(setting, plain cell's summaries, variant cell's summaries) for each reward setting of DAPO_SETTINGS the result has
    (the weak-reference cells only in results made since they were added) in which the filter can fire: the plain run
    had groups with every answer right or every one wrong (DROPPED above 0 in some seed). A setting where it never fired
    would compare a run with itself. Summaries by metric name. A result made before DROPPED was recorded (or before the
    filter judged correctness rather than equal rewards) has no setting it can vouch for: none."""
    name, rows = "sigma-to-zero", []
    for setting, prefix in DAPO_SETTINGS:
        plain, treated = f"{prefix}-eps0.0001-add", f"{prefix}-{variant}"
        try:
            result_cell(r[name], plain), result_cell(r[name], treated)
        except KeyError:  # a result made before these cells were added (an id the catalog lacks raises UnknownCellError, no KeyError)
            continue
        plain_summary = {m: cell_summary(r, name, plain, m) for m in (ACC, "frac_reward_zero_std", DROPPED, "samples")}
        if not any((value or 0) > 0 for value in plain_summary[DROPPED].get("values") or []):
            continue
        rows.append((setting, plain_summary, {m: cell_summary(r, name, treated, m) for m in (ACC, "samples")}))
    return rows


def dapo_filter(r: dict) -> Finding:
    """Deciding: per reward setting (DAPO_SETTINGS' order, those the result has where the filter can fire: dapo_cells),
    late accuracy with groups all right or all wrong dropped (no refill) against the plain run; holds when higher in any
    setting, fails otherwise."""
    rows = dapo_cells(r, "filter")
    if not rows:
        return untested(f"the result has no filter cells in which the filter can fire ({DROPPED} > 0): `python -m grpo_lab sweep sigma-to-zero`")
    deciding = tuple(
        versus(treated[ACC], plain[ACC], f"{setting}: all-right-or-wrong groups dropped vs kept", ACC, SMALL_EFFECT)
        for setting, plain, treated in rows
    )
    evidence = "; ".join(
        f"{setting}: zero-std groups {fmt(plain['frac_reward_zero_std'], percent=True)}, late accuracy {fmt(plain[ACC])} "
        f"→ dropping them {fmt(treated[ACC])}"
        for setting, plain, treated in rows
    )

    def judge(*directions: str) -> tuple[str, str]:
        verdict = HOLDS if "higher" in directions else FAILS
        explanation = (
            "This row tests the filter alone: groups whose answers are all right or all wrong are dropped (DAPO's rule) and the "
            "batch is NOT refilled, so a step trains on fewer groups. With exact rewards and eps > 0 their z-scored advantage is "
            "already 0, so dropping them only changes the loss's normaliser (the other groups weigh more); with noisy or partial "
            "rewards such a group's rewards still differ, and dropping it removes advantages that are noise. DAPO itself refills "
            "the batch: the next row."
        )
        return verdict, explanation

    return Finding(evidence, judge, deciding)


def dapo_refill(r: dict) -> Finding:
    """Deciding: per reward setting (DAPO_SETTINGS' order, those the result has), late accuracy with dynamic sampling
    (groups all right or all wrong replaced by further draws) against the plain run at the same steps; holds when higher in some setting
    and lower in none, partly when higher in some and lower in others, fails when higher in none."""
    rows = dapo_cells(r, "refill")
    if not rows:
        return untested(
            f"the result has no dynamic-sampling cells in which the filter can fire ({DROPPED} > 0): `python -m grpo_lab sweep sigma-to-zero`"
        )
    cells = r["sigma-to-zero"]["cells"]
    steps = cells[0]["config"]["train"]["steps"]
    draws = next(c["config"]["train"].get("dynamic_sampling_batches") for c in cells if c["axes"].get("filter") == "refill")
    settings = [setting for setting, _, _ in rows]
    deciding = tuple(versus(treated[ACC], plain[ACC], f"{setting}: dynamic sampling vs plain", ACC, SMALL_EFFECT) for setting, plain, treated in rows)
    parts = []
    for setting, plain, treated in rows:
        cost = treated["samples"]["mean"] / plain["samples"]["mean"] if plain["samples"]["mean"] else float("nan")
        parts.append(
            f"{setting}: zero-std groups {fmt(plain['frac_reward_zero_std'], percent=True)}, late accuracy {fmt(plain[ACC])} → "
            f"with dynamic sampling {fmt(treated[ACC])}, at {cost:.2f}x the responses sampled"
        )

    def judge(*directions: str) -> tuple[str, str]:
        better = [setting for setting, direction in zip(settings, directions) if direction == "higher"]
        worse = [setting for setting, direction in zip(settings, directions) if direction == "lower"]
        verdict = HOLDS if better and not worse else PARTLY if better else FAILS
        explanation = (
            f"DAPO's dynamic sampling as DAPO does it: groups all right or all wrong are replaced by groups from further draws of prompts (at most "
            f"{draws} extra draws of a batch's prompts per step), so a step trains on a full batch of groups with a signal whenever "
            f"the draws find enough. At the same number of steps ({steps}) it ends "
            + (f"higher for {', '.join(better)}" if better else "no higher in any setting")
            + (f" and lower for {', '.join(worse)}" if worse else "")
            + ". It pays for that in samples (the ratio above): per response sampled it is a different trade. The more groups "
            "are all right or all wrong (a weak policy, or a strong one near the end of training), the more it has to refill."
        )
        return verdict, explanation

    return Finding("; ".join(parts), judge, deciding)
