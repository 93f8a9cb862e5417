"""Regimes (catalog.REGIMES): the rule's scan, how a regime
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
from grpo_lab.experiments.claims import FAILS, HOLDS, NOT_DETECTED
from grpo_lab.experiments.claims_report import claims_markdown
from grpo_lab.experiments.runner import RESULTS_DIR, command_line, load_result, result_path, run_cell


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


def test_claims_md_gets_a_column_and_a_section_per_regime():
    from grpo_lab.experiments.runner import load_result as load

    gentle = {"small-group-remedies": load("small-group-remedies")}
    text = claims_markdown({"gentle": gentle, "large-step": gentle, "sparse": {}})
    assert "| verdict: gentle | verdict: large-step |" in text and "verdict: sparse" not in text  # a regime without results has no column
    assert "**In the large-step regime**" in text and "*Power:* " in text and ", q " in text
    assert "| verdict | replicated |" in claims_markdown({"gentle": gentle})


def test_an_experiment_that_cannot_differ_between_regimes_runs_in_gentle_only_and_its_claims_say_why(capsys):
    assert main(["sweep", "batch-blowup", "--regime", "sparse", "--fast"]) == 2
    assert "batch-blowup runs in the gentle regime only" in capsys.readouterr().err
    gentle = {"batch-blowup": load_result("batch-blowup")}
    text = claims_markdown({"gentle": gentle, "sparse": gentle})
    row = next(line for line in text.splitlines() if "`batch-blowup`" in line and line.startswith("| "))
    assert row.rstrip().endswith("| **not tested** | gentle: not run |") and "runs in the gentle regime only: time and memory" in text


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

    from grpo_lab.course.drill import verdicts_by_regime
    from grpo_lab.experiments.claims_report import verdict_cell

    readme = (RESULTS_DIR.parents[1] / "docs" / "experiments.md").read_text()
    rows = [line for line in readme.splitlines() if re.match(r"\| \[[\w-]+\] ", line)]
    by_regime = verdicts_by_regime()
    header = next(line for line in readme.splitlines() if line.startswith("| the card says |"))
    assert [cell.strip() for cell in header.strip("|").split("|")][1:] == list(by_regime)
    assert len(rows) >= 8
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        key = re.match(r"\[([\w-]+)\]", cells[0]).group(1)
        assert cells[1:] == [verdict_cell(verdicts[key]) for verdicts in by_regime.values()], key
