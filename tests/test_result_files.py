"""Result files checked on load (issue 37): each summary recomputed from its per-seed values, the seeds
the run declares (a replication's from catalog.REPLICATION_SEED_BASE), and the rule version recorded."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import assert_one_line_naming

from grpo_lab.cli import main
from grpo_lab.experiments import RESULTS_DIR, UnreadableResultError, load_result
from grpo_lab.experiments.catalog import REGIMES, REPLICATION_SEED_BASE, experiments_in
from grpo_lab.experiments.runner import result_path, rules_version


def test_every_shipped_result_loads_with_its_summaries_matching_its_seeds():
    loaded = [(regime, name) for regime in REGIMES for name in experiments_in(regime) if result_path(name, regime=regime).is_file()]
    assert len(loaded) >= len(experiments_in("gentle"))
    for regime, name in loaded:
        load_result(name, regime=regime)


def edited_copy(tmp_path, edit, name="group-size", replicate=False) -> dict:
    """The shipped result of ``name`` with ``edit(result)`` applied, written where load_result(..., directory=tmp_path,
    replicate=replicate) looks; returns the edited result."""
    result = json.loads((RESULTS_DIR / f"{name}.json").read_text())
    edit(result)
    path = result_path(name, directory=tmp_path, replicate=replicate)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return result


def a_metric_with_values(result: dict) -> tuple[dict, str]:
    """The first cell, and a metric every seed of it has a value of."""
    cell = result["cells"][0]
    metric = next(metric for metric, stats in cell["summary"].items() if stats["n"] == len(cell["per_seed"]) and stats["std"])
    return cell, metric


def refused(tmp_path, edit, replicate=False) -> str:
    """load_result's one-line message for the shipped group-size.json with ``edit`` applied; it names the file and the command."""
    edited_copy(tmp_path, edit, replicate=replicate)
    with pytest.raises(UnreadableResultError) as caught:
        load_result("group-size", directory=tmp_path, replicate=replicate)
    assert_one_line_naming(caught.value, result_path("group-size", directory=tmp_path, replicate=replicate), "python -m grpo_lab sweep group-size")
    return str(caught.value)


def test_the_unedited_copy_loads(tmp_path):
    edited_copy(tmp_path, lambda result: None)
    assert load_result("group-size", directory=tmp_path)["cells"] == load_result("group-size")["cells"]


@pytest.mark.parametrize(
    "field, change", [("mean", lambda value: value + 0.01), ("mean", lambda value: value * (1 + 1e-4)), ("std", lambda value: 2 * value)]
)
def test_a_summary_that_its_seeds_do_not_give_is_refused_naming_the_cell_metric_and_field(tmp_path, field, change):
    named = []

    def edit(result):
        cell, metric = a_metric_with_values(result)
        cell["summary"][metric][field] = change(cell["summary"][metric][field])
        named.extend([repr(cell["id"]), repr(metric)])

    message = refused(tmp_path, edit)
    assert_one_line_naming(message, *named, field)


def test_a_negative_std_is_refused(tmp_path):
    def edit(result):
        cell, metric = a_metric_with_values(result)
        cell["summary"][metric]["std"] = -cell["summary"][metric]["std"]

    assert "std" in refused(tmp_path, edit)


def test_n_zero_with_values_present_is_refused(tmp_path):
    def edit(result):
        cell, metric = a_metric_with_values(result)
        cell["summary"][metric]["n"] = 0

    assert " n " in refused(tmp_path, edit)


def test_a_summary_metric_no_seed_has_or_one_missing_is_refused(tmp_path):
    def extra(result):
        result["cells"][0]["summary"]["made_up"] = {"mean": 1.0, "std": 0.0, "n": 1}

    def missing(result):
        cell, metric = a_metric_with_values(result)
        del cell["summary"][metric]

    assert "'made_up'" in refused(tmp_path, extra)
    assert "lacks" in refused(tmp_path, missing)


def test_seeds_other_than_the_declared_ones_are_refused(tmp_path):
    def shifted(result):
        for cell in result["cells"]:
            for entry in cell["per_seed"]:
                entry["seed"] += 1

    def as_replication(result):  # a main run's seeds 0..n-1 filed as a replication
        result["replicate"] = True

    assert "seed" in refused(tmp_path / "main", shifted)
    assert str(REPLICATION_SEED_BASE) in refused(tmp_path / "replication", as_replication, replicate=True)


def test_a_replication_is_loaded_only_as_one(tmp_path):
    def as_replication(result):
        result["replicate"] = True
        for cell in result["cells"]:
            for entry in cell["per_seed"]:
                entry["seed"] += REPLICATION_SEED_BASE

    edited_copy(tmp_path, as_replication, replicate=True)
    assert load_result("group-size", directory=tmp_path, replicate=True)["replicate"] is True
    shutil.copy(result_path("group-size", directory=tmp_path, replicate=True), tmp_path / "group-size.json")
    with pytest.raises(UnreadableResultError):
        load_result("group-size", directory=tmp_path)


@pytest.mark.parametrize("version, loads", [("0123456789ab", True), ("0123456789", False), ("0123456789AB", False), (12, False)])
def test_a_recorded_rules_version_must_be_12_hex_digits(tmp_path, version, loads):
    edited_copy(tmp_path, lambda result: result.update(rules_version=version))
    if loads:
        assert load_result("group-size", directory=tmp_path)["rules_version"] == version
    else:
        with pytest.raises(UnreadableResultError) as caught:
            load_result("group-size", directory=tmp_path)
        assert_one_line_naming(caught.value, "rules_version")


@pytest.mark.learning
def test_sweep_replicate_runs_the_declared_seeds_into_replication(tmp_path, capsys):
    argv = ["sweep", "small-group-remedies", "--replicate", "--fast", "--seeds", "2", "--workers", "1", "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    path = tmp_path / "replication" / "small-group-remedies.json"
    assert str(path) in capsys.readouterr().out
    result = load_result("small-group-remedies", fast=True, directory=tmp_path, replicate=True)
    assert result["replicate"] is True and "--replicate" in result["command"]
    assert all([entry["seed"] for entry in cell["per_seed"]] == [REPLICATION_SEED_BASE, REPLICATION_SEED_BASE + 1] for cell in result["cells"])
    assert result["rules_version"] == rules_version()
    assert not (tmp_path / "small-group-remedies.json").exists() and not list(tmp_path.rglob("*.png"))


@pytest.mark.parametrize("argv", [["sweep", "claims", "--replicate"], ["sweep", "variance", "--replicate", "--replot"]])
def test_replicate_with_claims_or_replot_is_one_line(argv, capsys):
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "--replicate" in error and len(error.strip().splitlines()) == 1, error


def test_the_rules_version_changes_with_any_rule_file(tmp_path, monkeypatch):
    """A digest of claims.py, findings.py, stats.py and every file of rules/: editing any of them changes it."""
    from pathlib import Path

    from grpo_lab.experiments import runner

    source = Path(runner.__file__).parent
    shutil.copytree(source, tmp_path / "experiments", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(runner, "__file__", str(tmp_path / "experiments" / "runner.py"))
    before = runner.rules_version()
    for edited in ("claims.py", "findings.py", "stats.py", "rules/groups.py"):
        path = tmp_path / "experiments" / edited
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        assert runner.rules_version() != before, edited
        path.write_text(text)
    assert runner.rules_version() == before
    (tmp_path / "experiments" / "figures.py").write_text("# not rule code\n")
    assert runner.rules_version() == before


def test_the_results_readme_names_the_rule_code_the_results_are_judged_by():
    """data/results/README.md, "Rules before data", names the digest of today's rule code: a change of a rule
    fails here until the README says which rules judge the results (and the commit that holds them)."""
    text = (RESULTS_DIR / "README.md").read_text()
    assert f"**{rules_version()}**" in text
