"""Rules of the claims that set GRPO's group baseline against PPO's critic: its cost, the crossover, stability,
long answers, noisy rewards, speed, and what a critic fits."""

from __future__ import annotations

import math

from ...task import Task
from ..catalog import BATCH_RESPONSES, REUSE_WORDS, SHAPE_PROMPTS, SHAPE_REUSE, TARGET_ACCURACY, cell_label, result_cell
from ..findings import ACC, FAILS, HOLDS, PARTLY, SMALL_EFFECT, UNTESTED, Finding, cell_summary, fmt, versus, worded
from ..stats import Comparison

# GRPO against PPO twice: as the arms were first run (one pass over each batch) and as practitioners run
# both (each batch reused, REUSE_WORDS), so a verdict never rests on a PPO that never reuses a batch
PPO_PAIRS = (("one pass per batch", "grpo", "ppo"), (f"each batch reused, {REUSE_WORDS}", "grpo-reuse", "ppo-reuse"))


def critic_costs(r: dict) -> Finding:
    """No deciding comparison: holds when the critic has more than half the policy's parameters, else partly.
    PPO's time per step against GRPO's on the same batches: auxiliary."""
    name = "grpo-vs-ppo"
    critic = cell_summary(r, name, "ppo-g8", "critic_parameters")
    policy = cell_summary(r, name, "grpo", "policy_parameters")
    defaults = r[name]["train_defaults"]
    updates = defaults["critic_epochs"] * defaults["critic_minibatches"]
    grpo_time, ppo_time = cell_summary(r, name, "grpo", "time_per_step_s"), cell_summary(r, name, "ppo-g8", "time_per_step_s")
    step_time = versus(ppo_time, grpo_time, "time per step, PPO (G=8) vs GRPO", "time_per_step_s")
    policy_sized = critic["mean"] > 0.5 * policy["mean"]
    evidence = (
        f"critic: {critic['mean']:.0f} trained parameters beside a policy of {policy['mean']:.0f}, {updates} critic updates per step "
        f"({defaults['critic_epochs']} epochs x {defaults['critic_minibatches']} minibatches) beside the policy's 1; time per step "
        f"on the same batches (G=8, 16 prompts): GRPO {fmt(grpo_time)} s, PPO {fmt(ppo_time)} s"
    )

    def judge() -> tuple[str, str]:
        slower = step_time.direction() == "higher"
        explanation = (
            "The critic is a second network of the policy's size (ours: a copy of the reference with a scalar head, every parameter "
            "trained) with its own optimiser, loss and many more updates than the policy gets; the group baseline has no parameters "
            f"and costs nothing to compute. In wall time, on the same batches, the critic made a step {'slower' if slower else 'no slower beyond noise'}"
            + (f" ({ppo_time['mean'] / grpo_time['mean']:.1f}x)." if slower else ".")
        )
        return (HOLDS if policy_sized else PARTLY), explanation

    return Finding(evidence, judge, (), (step_time,))


def crossover_s_per_response(seconds: Comparison, responses: Comparison, time_dir: str, samples_dir: str) -> float | None:
    """Where GRPO and PPO cost the same to reach the target when each response also costs c seconds to generate:
    c* = (PPO's seconds - GRPO's) / (GRPO's responses - PPO's), from the means the comparisons of GRPO against PPO take
    (unreached seeds at the budget); None unless they differ in opposite directions (``time_dir``, ``samples_dir``).
    NaN where the directions are hypothetical (claims.py's near-the-line check) and the means do not differ."""
    if {time_dir, samples_dir} != {"higher", "lower"}:
        return None
    return -seconds.difference / responses.difference if responses.difference else math.nan


def tradeoff_crossover(r: dict) -> Finding:
    """Deciding, in order: GRPO against PPO in seconds and in responses to the target (seeds that never reached it
    count), the critic-free control (EMA, PPO's batch shape) against PPO in responses and in seconds, and PPO against
    GRPO in late accuracy. Cheaper with free generation: the one with fewer seconds; with expensive generation, the one
    with fewer responses (a tie within noise). When the two differ in opposite directions there is a crossover, at
    (PPO's seconds - GRPO's) / (GRPO's responses - PPO's) per response, from the means the comparisons take (unreached
    seeds at the budget). With a crossover: holds when GRPO is the cheaper with free generation and the control costs
    more than PPO on some measure, else partly. Without one: partly when PPO needs fewer responses or ends higher in
    late accuracy, else fails."""
    name = "grpo-vs-ppo"
    summary = {(c, m): cell_summary(r, name, c, m) for c in ("grpo", "ppo", "ema") for m in ("samples_to_target", "time_to_target_s", ACC)}
    seconds = versus(summary[("grpo", "time_to_target_s")], summary[("ppo", "time_to_target_s")], "GRPO vs PPO", "time_to_target_s")
    responses = versus(summary[("grpo", "samples_to_target")], summary[("ppo", "samples_to_target")], "GRPO vs PPO", "samples_to_target")
    control = tuple(
        versus(summary[("ema", metric)], summary[("ppo", metric)], "EMA control vs PPO", metric)
        for metric in ("samples_to_target", "time_to_target_s")
    )
    late = versus(summary[("ppo", ACC)], summary[("grpo", ACC)], "PPO vs GRPO at equal samples", ACC, SMALL_EFFECT)
    evidence = "; ".join(
        f"{cell_label(name, c)}: responses to {TARGET_ACCURACY:.0%} {fmt(summary[(c, 'samples_to_target')])}, "
        f"seconds {fmt(summary[(c, 'time_to_target_s')])}"
        for c in ("grpo", "ppo", "ema")
    ) + (f"; late accuracy at equal samples: PPO {fmt(summary[('ppo', ACC)])} vs GRPO {fmt(summary[('grpo', ACC)])}")

    def judge(time_dir: str, samples_dir: str, control_samples_dir: str, control_time_dir: str, late_dir: str) -> tuple[str, str]:
        cheaper = {"lower": "GRPO", "higher": "PPO", "same": "tie"}
        zero, high = cheaper[time_dir], cheaper[samples_dir]
        # the critic-free control on PPO's batch shape: if it needs no more responses and no more seconds than PPO,
        # what saves responses is the batch shape (128 prompts x 1 answer), not the critic
        control_as_cheap = "higher" not in (control_samples_dir, control_time_dir)
        shape_note = (
            " But the control without a critic on PPO's batch shape (an EMA baseline, G=1 x 128 prompts) needs no more responses "
            "and no more seconds than PPO: what saves responses here is seeing 128 prompts per step, not the critic."
            if control_as_cheap
            else " The control without a critic on PPO's batch shape costs more than PPO: the critic pays for itself."
        )
        crossover = crossover_s_per_response(seconds, responses, time_dir, samples_dir)
        if crossover is not None:
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
            verdict = PARTLY if high == "PPO" or late_dir == "higher" else FAILS
            explanation = (
                "No clear crossover in the cost to reach the target: "
                + (f"{high} needs fewer responses, " if high != "tie" else "neither needs clearly fewer responses, ")
                + (f"{zero} less compute. " if zero != "tie" else "and neither needs clearly less compute. ")
                + f"At equal samples PPO ends {worded(late_dir, 'above', 'below', 'within noise of')} GRPO."
                + shape_note
            )
        return verdict, explanation

    return Finding(evidence, judge, (seconds, responses, *control, late))


def critic_without_groups(r: dict) -> Finding:
    """ "The critic's advantage is that every response gets a baseline without groups". Deciding, in order: PPO at G=1
    against GRPO at G=8 in late accuracy, then PPO against the critic-free control on PPO's own batch (an EMA baseline,
    G=1 x 128 prompts) in late accuracy, trained on once and with PPO's reuse (REUSE_WORDS). Holds when PPO learns (ends
    more than 5 points above the start, means), is not below GRPO, and is above the control in at least one of the two
    (the advantage is the critic's, not any baseline's); partly when it learns; else fails. Auxiliary: what reusing each
    batch gains with the critic and without it."""
    name = "grpo-vs-ppo"
    ppo, grpo, ema = (cell_summary(r, name, c, ACC) for c in ("ppo", "grpo", "ema"))
    ppo_reuse, ema_reuse = (cell_summary(r, name, c, ACC) for c in ("ppo-reuse", "ema-reuse"))
    start = cell_summary(r, name, "ppo", "initial_eval_accuracy")
    ev = cell_summary(r, name, "ppo", "late_explained_variance")
    learns = ppo["mean"] is not None and ppo["mean"] > start["mean"] + 0.05
    weak_critic = ev["mean"] is not None and ev["mean"] < 0.1
    against_grpo = versus(ppo, grpo, "PPO (G=1) vs GRPO (G=8)", ACC, SMALL_EFFECT)
    against_ema = versus(ppo, ema, "PPO vs EMA control (G=1 x 128), one pass", ACC, SMALL_EFFECT)
    against_ema_reuse = versus(ppo_reuse, ema_reuse, f"PPO vs EMA control (G=1 x 128), {REUSE_WORDS}", ACC, SMALL_EFFECT)
    reuse_gain = (
        versus(ppo_reuse, ppo, "reuse gain with the critic: reused vs one pass", ACC, SMALL_EFFECT),
        versus(ema_reuse, ema, "reuse gain without a critic: reused vs one pass", ACC, SMALL_EFFECT),
    )
    evidence = (
        f"late accuracy: PPO with G=1 {fmt(ppo)}, GRPO G=8 {fmt(grpo)} (start {start['mean']:.3g}); the control without a critic, "
        f"an EMA baseline at G=1 x 128 prompts: {fmt(ema)}; the critic's explained variance on each fresh batch, late in training: {fmt(ev)}; "
        f"each batch reused ({REUSE_WORDS}), same batch shape: PPO {fmt(ppo_reuse)} vs the EMA control {fmt(ema_reuse)}; "
        f"the reused PPO's share of tokens clipped {fmt(cell_summary(r, name, 'ppo-reuse', 'mean_clip_ratio'))}, its critic's held-out "
        f"explained variance {fmt(cell_summary(r, name, 'ppo-reuse', 'late_heldout_explained_variance'))}"
    )

    def judge(grpo_dir: str, ema_dir: str, ema_reuse_dir: str) -> tuple[str, str]:
        critic_adds = "higher" in (ema_dir, ema_reuse_dir)
        verdict = HOLDS if learns and grpo_dir != "lower" and critic_adds else PARTLY if learns else FAILS
        explanation = (
            f"With one response per prompt the critic still gives every response a baseline, and learning "
            f"{'works' if learns else 'does not work'} ({worded(grpo_dir, 'better than', 'worse than', 'within noise of')} GRPO at "
            "equal samples). "
            + (
                "But the critic, trained in full (every parameter, 16 updates a step), explains little of the "
                "return's variance: most of what carries PPO here is the whitening of its advantages (a step after GAE, not part of it) over a batch of 128 different prompts (a batch-wide "
                "baseline). "
                if weak_critic
                else "Its value estimates explain part of the return's variance. "
            )
            + f"On PPO's own batch, the critic-free control (a moving-average baseline at G=1) ends {worded(ema_dir, 'below', 'above', 'within noise of')} "
            f"PPO when each batch is used once, and {worded(ema_reuse_dir, 'below', 'above', 'within noise of')} it when each batch is reused "
            f"({REUSE_WORDS}): "
            + (
                "the critic's values add something beyond a global baseline."
                if critic_adds
                else "what works at G=1 is a baseline over a batch of different prompts, not the critic's values."
            )
        )
        return verdict, explanation

    return Finding(evidence, judge, (against_grpo, against_ema, against_ema_reuse), reuse_gain)


def grpo_stability(r: dict) -> Finding:
    """Deciding, in order: GRPO G=8 against PPO in largest accuracy fall at 128 responses per step, and GRPO G=2 against
    PPO in late accuracy at 32. Holds when the fall is not larger and G=2 ends lower; partly when one of the two; else fails."""
    gp, sg = "grpo-vs-ppo", "small-group-remedies"
    grpo_dd, ppo_dd = cell_summary(r, gp, "grpo", "eval_max_drawdown"), cell_summary(r, gp, "ppo", "eval_max_drawdown")
    g2, ppo_small = cell_summary(r, sg, "g2", ACC), cell_summary(r, gp, "ppo-32prompts", ACC)
    g2_dd, ppo_small_dd = cell_summary(r, sg, "g2", "eval_max_drawdown"), cell_summary(r, gp, "ppo-32prompts", "eval_max_drawdown")
    enough = versus(grpo_dd, ppo_dd, "128 responses per step: GRPO (G=8) vs PPO", "eval_max_drawdown")
    scarce = versus(g2, ppo_small, "32 responses per step: GRPO (G=2) vs PPO", ACC, SMALL_EFFECT)
    evidence = (
        f"128 responses per step, largest accuracy fall: GRPO G=8 {fmt(grpo_dd)}, PPO G=1 {fmt(ppo_dd)}; 32 responses per step, "
        f"late accuracy GRPO G=2 {fmt(g2)} vs PPO G=1 {fmt(ppo_small)}, largest fall {fmt(g2_dd)} vs {fmt(ppo_small_dd)}"
    )

    def judge(enough_dir: str, scarce_dir: str) -> tuple[str, str]:
        stable, noisier = enough_dir != "higher", scarce_dir == "lower"
        verdict = HOLDS if stable and noisier else PARTLY if stable or noisier else FAILS
        explanation = (
            f"With enough samples GRPO's curve falls back {worded(enough_dir, 'more than', 'less than', 'about as much as')} PPO's. "
            f"With few samples per step (32), GRPO at G=2 ends {worded(scarce_dir, 'above', 'below', 'within noise of')} PPO with a critic; "
            "the [critic-per-response] finding shows how much of PPO's side is the critic's values and how much the batch-wide whitening over different prompts."
        )
        return verdict, explanation

    return Finding(evidence, judge, (enough, scarce))


def answer_tokens_text(r: dict) -> str:
    """'3-4': the answer lengths in tokens of grpo-vs-ppo's task in the result ``r`` (a sum's digits, or its worked steps
    and result, and EOS; without and with a last carry)."""
    result = r["grpo-vs-ppo"]
    task = Task.parse(result_cell(result, "grpo")["config"]["train"].get("task", result["train_defaults"]["task"]))
    return f"{task.max_answer_length - 1}-{task.max_answer_length}" if task.worked else f"{task.digits + 1}-{task.digits + 2}"


def group_baseline_in_ppo(r: dict) -> Finding:
    """Deciding: GRPO against PPO with a learned critic on the same batches, in late accuracy: holds when lower, else fails.
    The Monte-Carlo value against the learned critic: auxiliary, quoted where the result has the Monte-Carlo cell (a
    regime may leave it out: catalog.Regime.leaves_out)."""
    name = "grpo-vs-ppo"
    grpo, critic = cell_summary(r, name, "grpo", ACC), cell_summary(r, name, "ppo-g8", ACC)
    same_batches = versus(grpo, critic, "same batches: group baseline vs learned critic", ACC, SMALL_EFFECT)
    answer_tokens = answer_tokens_text(r)
    evidence = f"same batches (G=8, 16 prompts, the same PPO-clip loss): group baseline (GRPO) {fmt(grpo)} vs learned critic with GAE {fmt(critic)}"
    bias = None
    if any(c["id"] == "mc-value" for c in r[name]["cells"]):
        mc, learned = cell_summary(r, name, "mc-value", ACC), cell_summary(r, name, "ppo-reuse", ACC)
        bias = versus(mc, learned, "Monte-Carlo value vs learned critic", ACC, SMALL_EFFECT)
        evidence += (
            f"; on PPO's batch shape with sample reuse ({cell_label(name, 'mc-value').split(', ', 1)[1]}): Monte-Carlo V(s_t) from rollouts "
            f"of each answer prefix (unbiased per token) {fmt(mc)} vs the learned critic {fmt(learned)}"
        )

    def judge(direction: str) -> tuple[str, str]:
        explanation = (
            "Our GRPO is exactly 'PPO with the critic replaced by the group baseline'. It ends "
            f"{worded(direction, 'above', 'below', 'within noise of')} the critic on the same batches."
        )
        if bias is not None:
            bias_costs = bias.direction()
            explanation += (
                " A per-token value with no bias (the Monte-Carlo arm: what a perfect critic would give GAE) ends "
                f"{worded(bias_costs, 'above', 'below', 'within noise of')} the learned critic"
                + (
                    ", so the critic's bias does cost accuracy here."
                    if bias_costs == "higher"
                    else ", so the critic's bias is not what limits PPO here."
                )
            )
        explanation += f" A single reward arrives at the end of a {answer_tokens} token answer."
        return (HOLDS if direction == "lower" else FAILS), explanation

    return Finding(evidence, judge, (same_batches,), (bias,) if bias is not None else ())


# The critic against a learner without one on the same batches and the same reuse: (critic cell, critic-free cell, words)
MATCHED_PAIRS = (
    ("ppo-reuse", "ema-reuse", f"G=1 x 128 prompts, {REUSE_WORDS}: PPO vs EMA control"),
    ("ppo", "ema", "G=1 x 128 prompts, one pass: PPO vs EMA control"),
    ("ppo-g8", "grpo", "G=8 x 16 prompts, one pass: PPO vs GRPO"),
)


def long_text_ppo(r: dict) -> Finding:
    """The card's 'long text: PPO with a critic is irreplaceable', where answers are long: the long-answer regime's 6-7
    tokens and the practice regime's 27-28 (worked sums).
    Deciding, in order: the critic against a learner without one that shares its batch shape and its reuse
    (MATCHED_PAIRS: PPO against the EMA control at G=1 x 128, reused and once, and PPO against GRPO at G=8 x 16), each in
    late accuracy and in the area under the accuracy curve. A comparison across batch shapes (GRPO's 16 prompts against
    PPO's 128) would measure the shape as much as the critic, so none decides. Holds when the critic is higher in all
    six, partly in some, else fails."""
    name = "grpo-vs-ppo"
    answer_tokens = answer_tokens_text(r)
    parts, deciding = [], []
    for critic_id, free_id, words in MATCHED_PAIRS:
        for metric, metric_words in ((ACC, "late accuracy"), ("eval_accuracy_auc", "accuracy AUC")):
            critic, free = cell_summary(r, name, critic_id, metric), cell_summary(r, name, free_id, metric)
            deciding.append(versus(critic, free, f"{words}, {metric_words}", metric, SMALL_EFFECT))
            parts.append(f"{metric_words}: {cell_label(name, critic_id)} {fmt(critic)} vs {cell_label(name, free_id)} {fmt(free)}")
    parts.append(
        f"the reused critic's held-out explained variance late in training {fmt(cell_summary(r, name, 'ppo-reuse', 'late_heldout_explained_variance'))}"
    )

    def judge(*directions: str) -> tuple[str, str]:
        verdict = HOLDS if all(d == "higher" for d in directions) else PARTLY if "higher" in directions else FAILS
        explanation = (
            f"Answers here are {answer_tokens} tokens, longer than the gentle regime's 3-4, so a per-token value has more to say. "
            + {
                HOLDS: "On the same batches with the same reuse, PPO with a critic beats every learner without one: the card's claim holds at this length.",
                PARTLY: "On the same batches with the same reuse, PPO with a critic beats a learner without one on some yardsticks, not all.",
                FAILS: "On the same batches with the same reuse, PPO with a critic does not beat a learner without one: "
                + ("the learner without a critic is ahead on some yardstick." if "lower" in directions else "no difference beyond noise."),
            }[verdict]
            + f" One exact reward at the end of a {answer_tokens} token answer is still far from dialogue: 'irreplaceable' is not tested at that scale."
        )
        return verdict, explanation

    return Finding("; ".join(parts), judge, tuple(deciding))


def no_free_lunch(r: dict) -> Finding:
    """Deciding, in order: GRPO against PPO for each of PPO_PAIRS in late accuracy, responses to the target and seconds
    to the target (unreached seeds count). Holds when, in every pair, each wins some yardstick (a trade-off); else partly."""
    name = "grpo-vs-ppo"
    criteria = (("late accuracy", ACC, True), ("responses to target", "samples_to_target", False), ("seconds to target", "time_to_target_s", False))
    parts, deciding = [], []
    for pair, grpo_id, ppo_id in PPO_PAIRS:
        words = []
        for criterion, metric, _ in criteria:
            g, p = cell_summary(r, name, grpo_id, metric), cell_summary(r, name, ppo_id, metric)
            deciding.append(versus(g, p, f"{pair}: GRPO vs PPO", metric, SMALL_EFFECT if metric == ACC else 0.0))
            words.append(f"{criterion} GRPO {fmt(g)} vs PPO {fmt(p)}")
        parts.append(f"{pair}: " + ", ".join(words))

    def judge(*directions: str) -> tuple[str, str]:
        trade_offs, readings = [], []
        for index, (pair, _, _) in enumerate(PPO_PAIRS):
            winners = [
                "tie" if direction == "same" else "GRPO" if (direction == "higher") == higher_better else "PPO"
                for direction, (_, _, higher_better) in zip(directions[index * len(criteria) :], criteria)
            ]
            trade_offs.append({"GRPO", "PPO"} <= set(winners))
            ahead = sorted(set(winners) - {"tie"})
            reading = (
                "each wins a yardstick (a trade-off)"
                if trade_offs[-1]
                else f"{ahead[0]} is ahead or tied on every yardstick"
                if ahead
                else "every yardstick is a tie"
            )
            won = ", ".join(f"{criterion}: {winner}" for (criterion, _, _), winner in zip(criteria, winners))
            readings.append(f"{pair} ({won}), {reading}")
        verdict = HOLDS if all(trade_offs) else PARTLY
        explanation = (
            "With "
            + "; with ".join(readings)
            + "."
            + ("" if verdict == HOLDS else " The trade-off is sound as an argument, but this toy displays it only in part.")
        )
        return verdict, explanation

    return Finding("; ".join(parts), judge, tuple(deciding))


def group_mean_is_a_value(r: dict) -> Finding:
    """Deciding: the held-out explained variance of the largest group's mean against zero (a constant's). Holds when it is
    higher and at least 0.8 of the oracle's and the explained variance rises with G (means); partly when one of the two."""
    name = "critic-fit"
    cell_id = "reference-fresh"
    sizes = sorted(int(key.split("=")[1]) for key in r[name]["cells"][0]["summary"] if key.startswith("group_ev."))
    group = {G: cell_summary(r, name, cell_id, f"group_ev.G={G}") for G in sizes}
    oracle, critic = cell_summary(r, name, cell_id, "oracle_ev"), cell_summary(r, name, cell_id, "critic_ev_prompt")
    updates = cell_summary(r, name, cell_id, "critic_updates")
    beats = {G: cell_summary(r, name, cell_id, f"updates_to_beat.G={G}") for G in sizes}
    largest = sizes[-1]
    n = group[largest]["n"]
    constant = {"mean": 0.0, "std": 0.0, "n": n, "values": [0.0] * n}  # a constant prediction explains nothing
    above_constant = versus(group[largest], constant, f"group mean of G={largest} vs a constant", f"group_ev.G={largest}")
    near_oracle = group[largest]["mean"] is not None and group[largest]["mean"] >= 0.8 * oracle["mean"]
    rises = all(group[a]["mean"] <= group[b]["mean"] for a, b in zip(sizes, sizes[1:]))
    evidence = (
        "held-out explained variance of V(prompt) at the reference policy: group mean of G samples "
        + ", ".join(f"G={G} {fmt(group[G])}" for G in sizes)
        + f"; oracle (128 samples) {fmt(oracle)}; "
        f"critic after {updates['mean']:.0f} updates {fmt(critic)}; critic updates to match a group of G (all seeds): "
        + ", ".join(f"G={G} {'never' if beats[G]['n'] < len(beats[G]['values']) else format(beats[G]['mean'], '.0f')}" for G in sizes)
    )

    def judge(above_dir: str) -> tuple[str, str]:
        approaches = above_dir == "higher" and near_oracle
        verdict = HOLDS if approaches and rises else PARTLY if approaches or rises else FAILS
        explanation = (
            "The group mean is a Monte-Carlo estimate of V(prompt): scored as one, it explains more of a fresh response's reward "
            f"as G grows and approaches the oracle at G={largest}. With few samples it is worse than a constant (negative explained "
            "variance: a noisy estimate of V), yet as a *baseline* that noise costs no bias, only variance (notebook 01). "
            "So GRPO does estimate a value; it spends samples where PPO spends critic updates."
        )
        return verdict, explanation

    return Finding(evidence, judge, (above_constant,))


# the critic variants practitioners use (catalog.critic_fit_grid), quoted beside the default critic where a result has them
CRITIC_VARIANTS = ("reference-critic-lambda1", "reference-shared-trunk", "half-trained-warmup")


def critic_over_under_fits(r: dict) -> Finding:
    """No deciding comparison (means only). Under-fits: the held-out explained variance of V(s_t) over answer tokens on
    fresh rollouts is below half that of Monte-Carlo values of the same states (the token-level ceiling; in results made
    before it was measured: the best held-out explained variance of V(prompt) below half the prompt-level oracle's); over-fits: on one fixed pool, the training batch's explained variance over
    answer tokens exceeds the held-out one by more than 0.2 and the held-out one is negative. Holds when both, partly
    when one, else fails."""
    name = "critic-fit"
    fresh, pool = "reference-fresh", "reference-fixed-pool"
    oracle, best = cell_summary(r, name, fresh, "oracle_ev"), cell_summary(r, name, fresh, "best_critic_ev_prompt")
    pool_train, pool_held = cell_summary(r, name, pool, "train_ev_token"), cell_summary(r, name, pool, "critic_ev_token")
    fresh_train, fresh_held = cell_summary(r, name, fresh, "train_ev_token"), cell_summary(r, name, fresh, "critic_ev_token")
    updates = cell_summary(r, name, fresh, "critic_updates")
    # the ceiling of what the critic predicts, V(s_t) at every answer token: Monte-Carlo values of the same states
    # (results made before it was measured have only the prompt-level one)
    token_oracle = cell_summary(r, name, fresh, "oracle_ev_token")
    at_tokens = token_oracle["mean"] is not None
    underfits = fresh_held["mean"] < 0.5 * token_oracle["mean"] if at_tokens else best["mean"] < 0.5 * oracle["mean"]
    overfits = pool_train["mean"] - pool_held["mean"] > 0.2 and pool_held["mean"] < 0
    evidence = (
        f"fresh rollouts every batch ({updates['mean']:.0f} updates): best held-out EV of V(prompt) {fmt(best)} vs the oracle's {fmt(oracle)}; "
        f"EV over answer tokens on its training batch {fmt(fresh_train)}, held out {fmt(fresh_held)}"
        + (f" vs Monte-Carlo values of the same states {fmt(token_oracle)}" if at_tokens else "")
        + f"; one fixed pool of 128 rollouts: training batch {fmt(pool_train)}, held out {fmt(pool_held)}"
        + "".join(
            f"; {cell_label(name, variant)}: held out over answer tokens {fmt(cell_summary(r, name, variant, 'critic_ev_token'))}"
            for variant in CRITIC_VARIANTS
            if any(c["id"] == variant for c in r[name]["cells"])
        )
    )

    def judge() -> tuple[str, str]:
        verdict = HOLDS if underfits and overfits else PARTLY if underfits or overfits else FAILS
        explanation = ("Both happen here. " if verdict == HOLDS else "") + (
            f"Under-fitting: on a stream of fresh rollouts the critic reaches {'less than half' if underfits else 'more than half'} of the "
            + (
                "explained variance exact values of the same answer prefixes would have (V(s_t) from Monte-Carlo rollouts): "
                if at_tokens
                else "explained variance an exact V(prompt) would have: "
            )
            + "predicting whether a sampled answer is right means checking the arithmetic, which the critic must learn from 0/1 rewards. "
            + (
                "Over-fitting: trained again and again on one pool of rollouts, it fits that pool and gets worse than a constant on fresh ones."
                if overfits
                else "A fixed pool did not make it over-fit beyond noise."
            )
        )
        return verdict, explanation

    return Finding(evidence, judge)


def critic_wins_on_noisy_rewards(r: dict) -> Finding:
    """Deciding, in order: PPO against GRPO in late accuracy with noisy rewards, then with exact rewards. Holds when PPO is
    higher with noisy rewards and, with exact ones, either not higher or behind its noisy gap by more than SMALL_EFFECT
    (means); partly when higher with noisy rewards otherwise; else fails."""
    name = "grpo-vs-ppo"
    grpo, ppo = cell_summary(r, name, "grpo-noisy", ACC), cell_summary(r, name, "ppo-noisy", ACC)
    grpo_exact, ppo_exact = cell_summary(r, name, "grpo", ACC), cell_summary(r, name, "ppo", ACC)
    noisy = versus(ppo, grpo, "noisy rewards: PPO vs GRPO", ACC, SMALL_EFFECT)
    exact = versus(ppo_exact, grpo_exact, "exact rewards: PPO vs GRPO", ACC, SMALL_EFFECT)
    noise = result_cell(r[name], "grpo-noisy")["config"]["train"]["reward_noise"]
    evidence = (
        f"late accuracy at 128 responses per step, reward noise std {noise:g}: PPO (G=1) {fmt(ppo)} vs GRPO (G=8) {fmt(grpo)}; "
        f"exact rewards: PPO {fmt(ppo_exact)} vs GRPO {fmt(grpo_exact)}"
    )
    gap_noisy, gap_exact = ppo["mean"] - grpo["mean"], ppo_exact["mean"] - grpo_exact["mean"]
    drops = {"GRPO": grpo_exact["mean"] - grpo["mean"], "PPO": ppo_exact["mean"] - ppo["mean"]}

    def judge(noisy_dir: str, exact_dir: str) -> tuple[str, str]:
        # "better when rewards are noisy": ahead under noise, and not already ahead by as much without it
        ahead = noisy_dir == "higher"
        verdict = HOLDS if ahead and (exact_dir != "higher" or gap_noisy > gap_exact + SMALL_EFFECT) else PARTLY if ahead else FAILS
        explanation = (
            f"With noisy rewards PPO ends {worded(noisy_dir, 'above', 'below', 'within noise of')} GRPO (a gap of {gap_noisy:+.3f}, against "
            f"{gap_exact:+.3f} with exact rewards). The noise cost GRPO {drops['GRPO']:.3f} and PPO {drops['PPO']:.3f} of late accuracy"
            + (
                ": it hurt GRPO's z-scored groups of 8 more than the critic's batch-wide whitening."
                if verdict == HOLDS
                else ": PPO is ahead by about as much with exact rewards, so the noise is not what decides here."
                if verdict == PARTLY
                else ": noise does not favour the critic here; GRPO's group mean averages it over 8 samples of the same prompt."
            )
        )
        return verdict, explanation

    return Finding(evidence, judge, (noisy, exact))


def faster_than_ppo(r: dict) -> Finding:
    """Deciding: GRPO against PPO in responses to the target, for each of PPO_PAIRS (a rank test with unreached seeds
    last when some seed never reached it). The speedup, PPO's mean over GRPO's minus 1, is taken over the seeds that
    reached the target. Holds when in every pair GRPO needs fewer responses beyond noise and every speedup is at least
    0.2 (a speedup within noise is not enough); partly when some speedup is positive or GRPO needs fewer beyond noise
    in some pair; fails otherwise; not tested when no pair has a speedup (a learner never reached the target)."""
    name = "grpo-vs-ppo"
    speedups, parts, deciding = [], [], []
    for pair, grpo_id, ppo_id in PPO_PAIRS:
        g, p = cell_summary(r, name, grpo_id, "samples_to_target"), cell_summary(r, name, ppo_id, "samples_to_target")
        deciding.append(versus(g, p, f"{pair}: GRPO vs PPO", "samples_to_target"))
        speedups.append(p["mean"] / g["mean"] - 1 if g["mean"] and p["mean"] else None)
        parts.append(f"{pair}: responses to reach {TARGET_ACCURACY:.0%} (interpolated between evaluations), GRPO {fmt(g)}, PPO (G=1) {fmt(p)}")
    ema = cell_summary(r, name, "ema", "samples_to_target")

    def judge(*directions: str) -> tuple[str, str]:
        measured = [s for s in speedups if s is not None]
        if not measured:
            verdict = UNTESTED
        elif all(d == "lower" for d in directions) and all(s >= 0.2 for s in measured):
            verdict = HOLDS
        elif any(s > 0 for s in measured) or "lower" in directions:
            verdict = PARTLY
        else:
            verdict = FAILS
        readings = [
            f"{pair}, GRPO needs {1 / (1 + s) - 1:+.0%} responses relative to PPO"
            if s is not None
            else f"{pair}, a learner never reached the target (no ratio)"
            for (pair, _, _), s in zip(PPO_PAIRS, speedups)
        ]
        explanation = (
            "; ".join(f"{reading} ({'beyond' if d != 'same' else 'within'} noise)" for reading, d in zip(readings, directions))
            + ". Measured at equal responses per step (128), against PPO with a critic trained in full (G=1 x 128 prompts); the control "
            f"without a critic on PPO's batch shape needs {fmt(ema)} responses, so the difference comes from the batch shape more than "
            "from the critic. 'Converges 30% faster' is the card's anecdote for a 7B model on math, where each response is a long "
            "chain of thought, not 3-4 tokens."
        )
        return verdict, explanation

    return Finding("; ".join(parts), judge, tuple(deciding))


def shape_not_critic(r: dict) -> Finding:
    """The course's own answer (05c): at equal responses per step, how they are spread over prompts matters more than
    whether the baseline is a learned critic. On the batch-shape grid, for each reuse setting (SHAPE_REUSE), deciding in
    order: the shape effect, the most prompts against the fewest (128 x 1 against 16 x 8) for the critic and for the
    critic-free EMA baseline, then the critic effect, the critic against the EMA baseline at 16 prompts and at 128 (the
    same batches, the same reuse), all in late accuracy. Holds when no critic comparison is higher and some shape
    comparison differs beyond noise; partly when both a shape comparison differs and a critic comparison is higher;
    fails when no shape comparison differs (nothing beyond noise included: the table's power step then says
    whether the seeds could have seen it). Auxiliary: the critic against the best group baseline (z-score) at 16 prompts."""
    name = "batch-shape"
    few, many = min(SHAPE_PROMPTS), max(SHAPE_PROMPTS)
    shape, critic_effect, parts = [], [], []
    for reuse, (words, _) in SHAPE_REUSE.items():
        acc = {(b, P): cell_summary(r, name, f"{b}-p{P}-{reuse}", ACC) for b in ("critic", "ema") for P in (few, many)}
        for b in ("critic", "ema"):
            shape.append(
                versus(acc[(b, many)], acc[(b, few)], f"{words}, {b}: {many} prompts x 1 vs {few} x {BATCH_RESPONSES // few}", ACC, SMALL_EFFECT)
            )
        for P in (few, many):
            critic_effect.append(versus(acc[("critic", P)], acc[("ema", P)], f"{words}, {P} prompts: critic vs EMA", ACC, SMALL_EFFECT))
        parts.append(
            f"{words}, late accuracy: critic {fmt(acc[('critic', few)])} at {few} prompts, {fmt(acc[('critic', many)])} at {many}; "
            f"EMA baseline {fmt(acc[('ema', few)])} at {few}, {fmt(acc[('ema', many)])} at {many}"
        )
    zscore = versus(
        cell_summary(r, name, f"critic-p{few}-once", ACC),
        cell_summary(r, name, f"zscore-p{few}-once", ACC),
        f"one pass, {few} prompts: critic vs z-score",
        ACC,
        SMALL_EFFECT,
    )

    def judge(*directions: str) -> tuple[str, str]:
        shape_dirs, critic_dirs = directions[: len(shape)], directions[len(shape) :]
        shape_matters, critic_wins = any(d != "same" for d in shape_dirs), "higher" in critic_dirs
        verdict = HOLDS if shape_matters and not critic_wins else PARTLY if shape_matters else FAILS
        explanation = (
            f"At {BATCH_RESPONSES} responses a step, spreading them over more prompts "
            + ("changes late accuracy beyond noise" if shape_matters else "changes late accuracy by no more than noise")
            + ", and the learned critic "
            + (
                "beats the critic-free moving average on the same batches somewhere"
                if critic_wins
                else "beats the critic-free moving average on no batch shape"
            )
            + "."
        )
        return verdict, explanation

    return Finding("; ".join(parts), judge, (*shape, *critic_effect), (zscore,))
