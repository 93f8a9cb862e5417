"""Regimes (catalog.REGIMES) and verdicts with power (claims.with_power): the rule's scan, how a regime
reaches every cell, where its results go, and when "does not hold" becomes "not detected"."""

from __future__ import annotations

import json

import pytest
from conftest import assert_one_line_error, assert_one_line_naming

from grpo_lab.cli import main
from grpo_lab.errors import ConfigError
from grpo_lab.experiments.catalog import (
    BEST_LR,
    DEFAULT_REGIME,
    EXPERIMENTS,
    LARGE_STEP_LR,
    LONG_START,
    REGIMES,
    best_lr,
    in_regime,
    large_step_lr,
)
from grpo_lab.experiments.claims import FAILS, HOLDS, NOT_DETECTED, Claim, Finding, evaluate_claim
from grpo_lab.experiments.claims_report import claims_markdown
from grpo_lab.experiments.runner import RESULTS_DIR, command_line, load_result, result_path, run_cell
from grpo_lab.experiments.stats import DETECTABLE_SE, compare, flipping, recording_comparisons


def summary(mean: float, std: float, n: int = 3) -> dict:
    return {"mean": mean, "std": std, "n": n}


def test_the_regime_constants_are_what_the_rule_gives_on_the_recorded_scan():
    scan = json.loads((RESULTS_DIR / "regimes" / "lr-scan.json").read_text())
    assert scan["command"].startswith("python scripts/regime_lr_scan.py")
    assert (best_lr(scan), large_step_lr(scan)) == (BEST_LR, LARGE_STEP_LR) == (scan["best_lr"], scan["large_step_lr"])
    assert REGIMES["large-step"].train["lr"] == LARGE_STEP_LR and REGIMES["sparse"].train == {"lr": BEST_LR, "reference": "sparse"}


def test_the_long_answer_start_is_what_its_rule_gives_on_the_recorded_pretraining_scan():
    from dataclasses import asdict

    from grpo_lab.checks.checkpoints import load_reference_policy
    from grpo_lab.pretrain import LONG_STEPS, LONG_TASK, RECIPES, first_checkpoint_reaching

    scan = json.loads((RESULTS_DIR / "regimes" / "long-reference-scan.json").read_text())
    assert scan["command"] == "python scripts/long_reference_scan.py"
    assert {**scan["recipe"], "steps": LONG_STEPS} == {key: value for key, value in asdict(RECIPES["long"]).items() if key != "name"}
    assert first_checkpoint_reaching(scan) == LONG_STEPS == scan["chosen_steps"]
    assert first_checkpoint_reaching({"checkpoints": [{"step": 500, "eval_accuracy": 0.1}, {"step": 1000, "eval_accuracy": 0.25}]}) == 1000
    reached = next(point["eval_accuracy"] for point in scan["checkpoints"] if point["step"] == LONG_STEPS)
    assert load_reference_policy("long").metadata["eval_accuracy"] == reached == pytest.approx(LONG_START, abs=5e-4)
    assert REGIMES["long-answer"].train == {"lr": BEST_LR, "reference": "long", "task": LONG_TASK}


def test_a_policy_too_short_for_a_task_is_one_clear_error_and_long_pt_reads_it():
    from grpo_lab.core.config import TrainConfig
    from grpo_lab.trainer import train

    with pytest.raises(ConfigError) as caught:
        train(TrainConfig(task="5d+", steps=1, eval_every=0, probe_every=0))
    assert_one_line_error(caught.value, "task", "5d+")
    assert all(fact in caught.value.allowed for fact in ("19", "16", "'long'"))  # positions needed, positions read, and the way out
    result = train(TrainConfig(task="5d+", reference="long", steps=1, eval_every=1, probe_every=0, prompts_per_step=2, group_size=2))
    assert result.status == "finished" and result.history[0]["eval_accuracy"] == pytest.approx(LONG_START, abs=5e-4)


def test_the_rule_reads_the_scan_not_a_constant():
    runs = [
        {"lr": lr, "seed": 0, "initial_eval_accuracy": 0.5, "late_eval_accuracy": late}
        for lr, late in ((1e-4, 0.6), (1e-3, 0.7), (3e-3, 0.55), (1e-2, 0.1))
    ]
    assert best_lr({"runs": runs}) == 1e-3 and large_step_lr({"runs": runs}) == 3e-3


def test_a_regime_sits_under_each_cells_own_overrides_and_gentle_changes_nothing():
    cell = {"kind": "train", "train": {"steps": 10, "reference": "weak"}}
    assert in_regime(cell, DEFAULT_REGIME) is cell
    assert in_regime(cell, "sparse")["train"] == {"lr": BEST_LR, "reference": "weak", "steps": 10}  # the cell's weak.pt stays
    long_cell = in_regime(cell, "long-answer")["train"]  # weak.pt reads 2-digit addition: the cell keeps its task too
    assert long_cell == {"lr": BEST_LR, "reference": "weak", "steps": 10}
    assert in_regime({"kind": "train", "train": {"steps": 10}}, "long-answer")["train"]["task"] == "5d+"
    fixed = {"kind": "variance", "policy": "reference", "half_trained_steps": 3}
    assert in_regime(fixed, "sparse")["regime_train"] == {"reference": "sparse"}  # the lr would only train it
    assert in_regime(fixed, "large-step") == fixed  # the same reference and task as gentle: one measurement for both
    half_trained = {**fixed, "policy": "half-trained"}
    assert in_regime(half_trained, "large-step")["regime_train"] == {"lr": LARGE_STEP_LR}  # trained at the regime's lr
    for experiment in EXPERIMENTS.values():  # every cell of every experiment takes every regime
        for grid_cell in experiment.grid(True):
            for regime in REGIMES:
                config = in_regime(grid_cell["config"], regime)
                measures_the_reference = config.get("policy") == "reference" and not set(REGIMES[regime].train) & {"reference", "task"}
                assert ("train" in config) or ("regime_train" in config) or regime == DEFAULT_REGIME or measures_the_reference


def test_sweep_all_measures_what_two_regimes_share_once(monkeypatch):
    """The reference cells of the variance experiment are the same measurement in the gentle and the
    large-step regime (a fixed policy's measure does not read the lr): the second regime takes
    them from the first, bit for bit, and runs only its half-trained cells."""
    from grpo_lab.experiments import runner

    ran = []
    real_run_job = runner._run_job
    monkeypatch.setattr(runner, "_run_job", lambda job: ran.append(job[1]["policy"]) or real_run_job(job))
    done: dict = {}
    gentle = runner.run_experiment("variance", seeds=1, fast=True, workers=1, progress=False, done=done)
    assert ran.count("reference") == 3 and ran.count("half-trained") == 3
    ran.clear()
    large_step = runner.run_experiment("variance", seeds=1, fast=True, workers=1, progress=False, regime="large-step", done=done)
    assert ran == ["half-trained"] * 3
    for mine, theirs in zip(large_step["cells"], gentle["cells"]):
        same = mine["per_seed"] == theirs["per_seed"]
        assert same == (mine["axes"]["policy"] == "reference")


def test_a_fixed_policy_unit_measures_the_regimes_reference():
    from grpo_lab.checks.checkpoints import load_reference_policy
    from grpo_lab.experiments.measures import cell_policy

    config = in_regime({"kind": "variance", "policy": "reference", "half_trained_steps": 1}, "sparse")
    sparse, default = load_reference_policy("sparse"), load_reference_policy("default")
    measured = cell_policy(config)
    assert all((a == b).all() for a, b in zip(measured.state_dict().values(), sparse.state_dict().values()))
    assert not all((a == b).all() for a, b in zip(measured.state_dict().values(), default.state_dict().values()))


def test_results_of_a_regime_have_their_own_folder_and_command(tmp_path):
    assert result_path("group-size") == RESULTS_DIR / "group-size.json"
    assert result_path("group-size", regime="large-step") == RESULTS_DIR / "regimes" / "large-step" / "group-size.json"
    assert result_path("group-size", True, tmp_path, "sparse") == tmp_path / "regimes" / "sparse" / "group-size.json"
    assert command_line("group-size", 3, True, 2, "sparse") == "python -m grpo_lab sweep group-size --regime sparse --seeds 3 --fast --workers 2"
    assert command_line("group-size", 3, False, 2) == "python -m grpo_lab sweep group-size --seeds 3 --workers 2"
    with pytest.raises(FileNotFoundError) as caught:
        load_result("group-size", directory=tmp_path, regime="sparse")
    # the file, and the command that makes it
    assert_one_line_naming(caught.value, result_path("group-size", False, tmp_path, "sparse"), "sweep group-size --regime sparse")


def test_a_bad_regime_is_one_line(capsys):
    assert main(["sweep", "group-size", "--regime", "steep", "--fast"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--regime='steep'" in err.replace('"', "'") and "large-step" in err


@pytest.mark.learning
def test_a_training_cell_runs_in_the_sparse_regime_from_sparse_pt():
    entry = run_cell(in_regime({"kind": "train", "train": {"steps": 2, "eval_every": 0, "probe_every": 0}}, "sparse"), seed=0)
    assert entry["metrics"]["initial_eval_accuracy"] == pytest.approx(0.297, abs=0.001)  # sparse.pt, not default.pt's 0.51


def test_compare_records_its_power():
    with recording_comparisons() as comparisons:
        assert compare(summary(0.72, 0.03), summary(0.70, 0.03)) == "same"
    (comparison,) = comparisons
    standard_error = (2 * 0.03**2 / 3) ** 0.5
    assert comparison.difference == pytest.approx(0.02) and comparison.standard_error == pytest.approx(standard_error)
    assert comparison.detectable == pytest.approx(DETECTABLE_SE * standard_error) and comparison.direction == "same"
    compare(summary(0.72, 0.03), summary(0.70, 0.03))
    assert len(comparisons) == 1  # nothing recorded outside the block


def claim_comparing(a: dict, b: dict, claimed_effect: float | None = None) -> Claim:
    def rule(results: dict) -> Finding:
        return Finding("numbers", HOLDS if compare(a, b) == "higher" else FAILS, "")

    return Claim("toy", "test", "—", "a beats b", (), rule, claimed_effect=claimed_effect)


def test_no_difference_without_power_is_not_detected_with_power_it_does_not_hold():
    noisy = evaluate_claim(claim_comparing(summary(0.72, 0.05), summary(0.70, 0.05)), {})
    assert noisy.verdict == NOT_DETECTED and noisy.detectable == pytest.approx(DETECTABLE_SE * (2 * 0.05**2 / 3) ** 0.5)
    assert noisy.verdict_text.startswith("not detected (could detect ≥ 0.11")
    precise = evaluate_claim(claim_comparing(summary(0.700, 0.001), summary(0.700, 0.001)), {})
    assert precise.verdict == FAILS  # could detect 0.0023, far below 5% of 0.7
    reversed_effect = evaluate_claim(claim_comparing(summary(0.60, 0.05), summary(0.75, 0.05)), {})
    assert reversed_effect.verdict == FAILS  # b beats a beyond noise: the claim is wrong here, whatever the power
    assert evaluate_claim(claim_comparing(summary(0.72, 0.05), summary(0.70, 0.05), claimed_effect=0.2), {}).verdict == FAILS


def test_a_verdict_that_rests_on_a_difference_near_the_line_says_so():
    """1.5-2.5 standard errors (or 75-125% of a claimed effect that sets the line) is near the line: the
    verdict is marked in the table, its section and the comparison in the Power line; 3 SE is not."""
    from grpo_lab.experiments.claims_report import power_line, verdict_cell

    standard_error = (2 * 0.03**2 / 3) ** 0.5
    near = evaluate_claim(claim_comparing(summary(0.70 + 2.2 * standard_error, 0.03), summary(0.70, 0.03)), {})
    clear = evaluate_claim(claim_comparing(summary(0.70 + 3.0 * standard_error, 0.03), summary(0.70, 0.03)), {})
    assert near.verdict == clear.verdict == HOLDS
    assert near.near_line and not clear.near_line
    assert verdict_cell(near) == "**holds here** *(near the line)*" and verdict_cell(clear) == "**holds here**"
    assert power_line(near).endswith("(near the line)") and "near" not in power_line(clear)
    with recording_comparisons() as comparisons:
        compare(summary(0.70 + 0.05, 0.001), summary(0.70, 0.001), min_effect=0.06)  # a size the claim names sets the line
    assert comparisons[0].line == pytest.approx(0.06) and comparisons[0].near_line and comparisons[0].direction == "same"
    with recording_comparisons() as comparisons, flipping(frozenset({1})):  # the second call answers as if across its line
        directions = [compare(summary(0.74, 0.03), summary(0.70, 0.03)) for _ in range(3)]  # 1.6 SE: same
    assert directions == ["same", "higher", "same"]


def test_a_verdict_that_does_not_hang_on_its_near_comparison_is_not_marked():
    """The mark says the verdict would change, not only that some comparison was close: a rule that holds
    when either of two comparisons is clearly higher keeps its verdict whichever side a near one falls on."""
    from grpo_lab.experiments.claims_report import power_line

    standard_error = (2 * 0.03**2 / 3) ** 0.5
    clear, near = summary(0.70 + 3.5 * standard_error, 0.03), summary(0.70 + 2.2 * standard_error, 0.03)

    def either(results: dict) -> Finding:
        found = [compare(a, summary(0.70, 0.03)) for a in (near, clear)]
        return Finding("numbers", HOLDS if "higher" in found else FAILS, "")

    finding = evaluate_claim(Claim("toy", "test", "—", "a or b beats c", (), either), {})
    assert finding.verdict == HOLDS and not finding.near_line
    assert "(near the line)" in power_line(finding)  # the close comparison is still named
    assert "A verdict marked *(near the line)*" in claims_markdown({})  # the header explains the mark


def test_claims_md_gets_a_column_and_a_section_per_regime():
    from grpo_lab.experiments.runner import load_result as load

    gentle = {"small-group-remedies": load("small-group-remedies")}
    text = claims_markdown(gentle, {"large-step": gentle, "sparse": {}})
    assert "| verdict: gentle | verdict: large-step |" in text and "verdict: sparse" not in text  # a regime without results has no column
    assert "**In the large-step regime**" in text and "*Power:* Δ" in text
    assert "| verdict |" in claims_markdown(gentle)


def test_an_experiment_that_cannot_differ_between_regimes_runs_in_gentle_only_and_its_claims_say_why(capsys):
    assert main(["sweep", "batch-blowup", "--regime", "sparse", "--fast"]) == 2
    assert "batch-blowup runs in the gentle regime only" in capsys.readouterr().err
    gentle = {"batch-blowup": load_result("batch-blowup")}
    text = claims_markdown(gentle, {"sparse": gentle})
    row = next(line for line in text.splitlines() if "`batch-blowup`" in line and line.startswith("| "))
    assert row.rstrip().endswith("| **not tested** |") and "runs in the gentle regime only: time and memory" in text


def test_every_verdict_a_rule_can_give_has_a_chinese_name():
    from grpo_lab.course.drill import VERDICTS_ZH
    from grpo_lab.experiments.claims import PARTLY, UNTESTED

    assert {HOLDS, PARTLY, FAILS, NOT_DETECTED, UNTESTED} <= set(VERDICTS_ZH)


@pytest.mark.learning
def test_sweep_in_a_regime_writes_its_own_folder_and_claims_md_gets_its_column(tmp_path, capsys):
    assert main(["sweep", "difficulty-bias", "--fast", "--regime", "large-step", "--quiet", "--out", str(tmp_path)]) == 0
    written = json.loads((tmp_path / "regimes" / "large-step" / "difficulty-bias.json").read_text())
    assert written["regime"] == "large-step" and "--regime large-step" in written["command"]
    trained = [cell for cell in written["cells"] if cell["axes"]["part"] == "training"]
    assert all(cell["config"]["train"]["lr"] == LARGE_STEP_LR for cell in trained)
    weights = {cell["axes"]["policy"]: cell["config"] for cell in written["cells"] if cell["axes"]["part"] == "weights"}
    assert weights["half-trained"]["regime_train"] == {"lr": LARGE_STEP_LR} and "regime_train" not in weights["reference"]
    assert not (tmp_path / "difficulty-bias.json").exists()  # the gentle file is not touched
    assert main(["sweep", "claims", "--fast", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "claims.md").read_text()
    assert "| verdict: gentle | verdict: large-step |" in text and "**In the large-step regime**" in text
    assert "not run yet: `python -m grpo_lab sweep group-size --regime large-step`" in text


def test_each_reference_is_listed_with_the_task_it_learned_and_the_lab_offers_only_its_tasks_references():
    from grpo_lab.checks.checkpoints import load_reference_policy
    from grpo_lab.checks.paths import REFERENCE_NAMES, REFERENCE_TASKS
    from grpo_lab.core.config import TrainConfig
    from grpo_lab.lab.controls import build_controls

    for name in REFERENCE_NAMES:
        assert load_reference_policy(name).metadata.get("task", "2d+") == REFERENCE_TASKS[name], name
    assert "long" not in build_controls(TrainConfig())["reference"].options


def test_the_labs_regime_presets_are_the_regimes():
    from grpo_lab.experiments.catalog import LARGE_STEP_LR as RULE_LR
    from grpo_lab.lab.controls import LARGE_STEP_LR, PRESETS

    assert LARGE_STEP_LR == RULE_LR == REGIMES["large-step"].train["lr"]
    assert all(run["reference"] == "sparse" for run in PRESETS["30% start: G = 2 vs 16"])


def test_the_readme_verdict_table_says_what_the_cached_results_give():
    """docs/experiments.md's table of verdicts per regime is written by hand; each row names its claim, and every
    verdict in it is the one claims.md gives from the cached results, with its '(near the line)' mark
    (regenerate, then update it)."""
    import re

    from grpo_lab.course.drill import regime_results
    from grpo_lab.experiments.claims import CLAIMS
    from grpo_lab.experiments.claims_report import regime_finding, verdict_cell

    readme = (RESULTS_DIR.parents[1] / "docs" / "experiments.md").read_text()
    rows = [line for line in readme.splitlines() if re.match(r"\| \[[\w-]+\] ", line)]
    by_key, by_regime = {claim.key: claim for claim in CLAIMS}, regime_results()
    header = next(line for line in readme.splitlines() if line.startswith("| the card says |"))
    assert [cell.strip() for cell in header.strip("|").split("|")][1:] == list(by_regime)
    assert len(rows) >= 8
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        claim = by_key[re.match(r"\[([\w-]+)\]", cells[0]).group(1)]
        assert cells[1:] == [verdict_cell(regime_finding(claim, found, regime)) for regime, found in by_regime.items()], claim.key


def test_fewer_seeds_shows_why_the_gentle_grpo_vs_ppo_keeps_five():
    """scripts/fewer_seeds.py is the power check behind the seed counts (data/results/README.md, "Time"):
    the first N seeds of a cached result are what ``--seeds N`` gives, and with 4 of the 5 the crossover
    of the sampling-cost trade-off (05c) is no longer resolved."""
    import sys

    sys.path.insert(0, str(RESULTS_DIR.parents[1] / "scripts"))
    import fewer_seeds

    versus = load_result("grpo-vs-ppo")
    shorter = fewer_seeds.first_seeds(versus, 3)
    assert shorter["seeds"] == 3 and all(len(cell["per_seed"]) == 3 for cell in shorter["cells"])
    grpo = next(cell for cell in shorter["cells"] if cell["id"] == versus["cells"][0]["id"])
    late = [entry["metrics"]["late_eval_accuracy"] for entry in versus["cells"][0]["per_seed"][:3]]
    assert grpo["summary"]["late_eval_accuracy"]["mean"] == pytest.approx(sum(late) / 3)
    assert versus["derived"]["crossover_s_per_response"] is not None
    assert fewer_seeds.main(["--seeds", "4", "grpo-vs-ppo"]) == 1
    assert fewer_seeds.changed_derived(versus["derived"], fewer_seeds.first_seeds(versus, 4)["derived"]) == [
        "/cheaper_at_high_cost: PPO -> tie",
        "/crossover_s_per_response: " + f"{versus['derived']['crossover_s_per_response']} -> None",
    ]
    for refused in ("5", "0"):  # keeps every seed, or none
        with pytest.raises(SystemExit):
            fewer_seeds.main(["--seeds", refused, "grpo-vs-ppo"])
