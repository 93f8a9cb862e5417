"""Experiments (issue 4): the cached results and their schema, a cached cell re-run, every sweep in
--fast mode, the sweep command line, and claims.md regenerated from the numbers."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import assert_one_line_error, assert_one_line_naming
from matplotlib.figure import Figure

import grpo_lab
from grpo_lab.cli import main
from grpo_lab.course.drill_answers import answer_runs
from grpo_lab.experiments import (
    CLAIMS,
    EXPERIMENTS,
    RESULTS_DIR,
    check_result,
    claims_markdown,
    experiment_figure,
    load_result,
    run_cell,
    run_experiment,
    summarize,
    write_result,
)
from grpo_lab.experiments.catalog import UnknownCellError, cell_label, cell_labels, result_cell
from grpo_lab.experiments.findings import UNTESTED, cell_summary
from grpo_lab.experiments.stats import format_mean_std

# the gentle experiments whose numbers the course's answer quotes (05c, the drill, README)
QUOTED_BY_THE_ANSWER = {name for name, regime in answer_runs() if regime == "gentle"} | {"grpo-vs-ppo"}


def test_every_result_the_answer_quotes_rests_on_at_least_eight_seeds():
    """issue 37: the course's answer (05c, the drill's answers, README) quotes only results of 8 seeds or more, in
    whatever regime it quotes them."""
    for name, regime in {*answer_runs(), ("grpo-vs-ppo", "gentle")}:
        result = load_result(name, regime=regime)
        assert result["seeds"] >= 8 and all(len(cell["per_seed"]) >= 8 for cell in result["cells"]), (name, regime)


@pytest.fixture(scope="module")
def cached() -> dict:
    return {name: load_result(name) for name in EXPERIMENTS}


@pytest.fixture
def one_thread():
    """Re-run a cell as the sweep's workers do: one torch thread (also much faster on a busy machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_every_experiment_has_a_cached_full_result_that_records_how_it_was_made(cached):
    for name, result in cached.items():
        check_result(result)
        assert result["name"] == name and result["fast"] is False
        assert result["version"] == grpo_lab.__version__
        assert result["command"] == f"python -m grpo_lab sweep {name} --seeds {result['seeds']} --workers {result['workers']}"
        if name in QUOTED_BY_THE_ANSWER:  # issue 37: every number the course's answer quotes rests on at least 8 seeds
            assert result["seeds"] >= 8, f"{name} is quoted by the course's answer but cached with {result['seeds']} seeds"
        assert (RESULTS_DIR / f"{name}.png").is_file(), f"{name}.png is missing"
        for cell in result["cells"]:
            assert cell["per_seed"] and all(entry["status"] in ("finished", "failed") for entry in cell["per_seed"])


def test_cached_results_draw_their_figures(cached):
    for name, result in cached.items():
        assert isinstance(experiment_figure(name, result), Figure)


NOTEBOOK_WIDTH_INCHES = 900 / 96  # a figure shown at ~900 CSS px of notebook width
SMALLEST_POINTS = 9  # issue 22: legends and ticks at 9 pt or more at that width


def check_readable_at_notebook_width(figure: Figure, name: str) -> None:
    """At most two panels a row; every visible text at >= 9 pt when the figure is shown 900 px wide; on
    each panel no two labelled lines share a line style, marker and width (they stay apart in grey and
    under colour blindness, and where they coincide)."""
    from matplotlib.text import Text

    scale = NOTEBOOK_WIDTH_INCHES / figure.get_figwidth()
    panels = [axis for axis in figure.axes if axis.get_visible() and axis.get_subplotspec() is not None]
    assert max(axis.get_subplotspec().get_gridspec().ncols for axis in panels) <= 2
    small = {t.get_text()[:30]: round(t.get_fontsize() * scale, 1) for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()}
    assert all(points >= SMALLEST_POINTS for points in small.values()), {text: pt for text, pt in small.items() if pt < SMALLEST_POINTS}
    for axis in panels:
        looks = [
            (line.get_label(), str(line.get_linestyle()), str(line.get_marker()), line.get_linewidth())
            for line in axis.get_lines()
            if not line.get_label().startswith("_") and len(line.get_xdata()) > 1
        ]
        seen: dict = {}
        for label, *look in looks:
            assert tuple(look) not in seen, f"{name}, panel {axis.get_title()!r}: {label!r} and {seen[tuple(look)]!r} differ only in colour"
            seen[tuple(look)] = label


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_a_figure_reads_at_notebook_width_and_its_lines_differ_in_style_not_only_colour(cached, name):
    check_readable_at_notebook_width(experiment_figure(name, cached[name]), name)


def test_the_notebooks_run_figure_reads_at_notebook_width_and_its_runs_differ_in_style_not_only_colour():
    """plots.run_figure (the live runs of 00, 01b, 02, 04a, 05b): four runs whose curves coincide, every
    line of each with its own marker as well as colour (05b's held-out curves lie within a few points)."""
    from grpo_lab.plots import run_figure

    history = [{"step": s, "reward": 0.4, "eval_accuracy": 0.7, "grad_var": 1.0, "frac_reward_zero_std": 0.1} for s in range(0, 30, 10)]
    check_readable_at_notebook_width(run_figure([(f"run {index}", history) for index in range(4)], title="four runs"), "run_figure")


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_no_legend_inside_a_panel_covers_its_data(cached, name):
    """A legend drawn on a panel covers none of that panel's data: line points, error-bar ends, bar tops
    (issue 22: the difficulty-bias legend once hid k = 1 and k = 7, critic-fit's the pool's rise to 1).
    Legends in a spare slot or under the panels have no data under them."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle

    figure = experiment_figure(name, cached[name])
    canvas = FigureCanvasAgg(figure)
    canvas.draw()  # places the legends ("best", constrained layout)
    renderer = canvas.get_renderer()
    for axis in figure.axes:
        legend = axis.get_legend()
        if legend is None or not axis.axison:
            continue
        points = [line.get_transform().transform(line.get_xydata()) for line in axis.get_lines()]
        points += [c.get_transform().transform(s) for c in axis.collections if isinstance(c, LineCollection) for s in c.get_segments()]
        points += [[[(box := p.get_window_extent(renderer)).x0 + box.width / 2, box.y1]] for p in axis.patches if isinstance(p, Rectangle)]
        box = legend.get_window_extent(renderer)
        covered = [tuple(int(v) for v in point) for point in np.concatenate(points) if box.contains(*point)]
        assert not covered, f"{name}, panel {axis.get_title()!r}: its legend covers {len(covered)} data points (pixels {covered[:3]})"


def test_claims_md_is_exactly_what_the_result_files_give(cached):
    from grpo_lab.experiments.claims_report import cached_tables

    text = (RESULTS_DIR / "claims.md").read_text()
    assert text == claims_markdown(*cached_tables()), "claims.md is stale: run `python -m grpo_lab sweep claims`"
    assert "needs a cell" not in text
    # every regime is complete but the practice regime, filled in over issue 38: its missing experiments say "not run
    # yet" with the command that runs them (docs/practice-regime.md lists them)
    assert all("--regime practice" in line for line in text.splitlines() if "not run yet" in line)
    for claim in CLAIMS:
        assert claim.claim in text


def test_numbers_quoted_in_claims_md_match_the_json(cached):
    text = (RESULTS_DIR / "claims.md").read_text()
    quoted = [
        ("offset-and-scale", "none-offset5", "late_eval_accuracy"),
        ("offset-and-scale", "mean-offset5", "late_eval_accuracy"),
        ("group-size", "equal-samples-g2", "late_eval_accuracy"),
        ("group-size", "equal-prompts-g16", "late_eval_accuracy"),
        ("small-group-remedies", "g2-ema", "late_eval_accuracy"),
        ("variance", "reference-g8", "net_snr.zscore"),
    ]
    for name, cell_id, metric in quoted:
        summary = next(c for c in cached[name]["cells"] if c["id"] == cell_id)["summary"][metric]
        assert format_mean_std(summary) in text, f"{name} / {cell_id} / {metric}: {format_mean_std(summary)} not quoted in claims.md"
    assert format_mean_std(cell_summary(cached, "group-size", "equal-samples-g2", "late_eval_accuracy")) in text


def test_every_testable_claim_gets_a_verdict_from_the_full_results(cached):
    text = claims_markdown({"gentle": cached})
    for claim in CLAIMS:
        if claim.evaluate is not None and (not claim.regimes or "gentle" in claim.regimes):
            row = next(line for line in text.splitlines() if f"[{claim.claim}]" in line)
            assert f"**{UNTESTED}**" not in row, claim.key


@pytest.mark.learning
def test_a_cached_training_cell_reruns_to_the_same_numbers(cached, one_thread):
    cell = next(c for c in cached["small-group-remedies"]["cells"] if c["id"] == "g2")
    fresh = run_cell(cell["config"], seed=0)["metrics"]
    stored = cell["per_seed"][0]["metrics"]
    for metric in ("initial_eval_accuracy", "late_eval_accuracy", "final_eval_accuracy", "frac_reward_zero_std", "adv_abs_max"):
        assert fresh[metric] == pytest.approx(stored[metric], abs=0.02), metric


@pytest.mark.slow  # over 5 s (pytest --durations)
def test_a_cached_variance_cell_reruns_within_tolerance(cached, one_thread):
    cell = next(c for c in cached["variance"]["cells"] if c["id"] == "reference-g2")
    fresh = run_cell(cell["config"], seed=0)["metrics"]
    stored = cell["per_seed"][0]["metrics"]
    for baseline in ("none", "mean", "zscore", "ema"):
        for metric in ("cos_step", "cos_expected", "grad_var"):
            key = f"{metric}.{baseline}"
            assert fresh[key] == pytest.approx(stored[key], rel=0.05, abs=1e-3), key


@pytest.mark.learning
@pytest.mark.parametrize("name", [name for name in EXPERIMENTS if name != "group-size"])
def test_every_experiment_runs_in_fast_mode_and_follows_the_schema(name, tmp_path):
    result = run_experiment(name, fast=True, workers=2, progress=False)
    path = write_result(name, result, tmp_path)
    loaded = json.loads(path.read_text())  # strict JSON: no NaN or Infinity
    check_result(loaded)
    assert loaded["fast"] is True and loaded["command"].endswith("--fast --workers 2")
    assert isinstance(experiment_figure(name, loaded), Figure)
    claims_markdown({"gentle": {name: loaded}})  # the claims cope with a partial, fast result


def test_units_run_longest_first_by_the_time_the_shipped_result_recorded(cached):
    """The order two workers finish together in: units with no recorded time first, in grid order,
    then the others by the training seconds the shipped file recorded, longest first."""
    from grpo_lab.experiments.runner import longest_first, unit_seconds_recorded

    versus = cached["grpo-vs-ppo"]
    seconds = unit_seconds_recorded("grpo-vs-ppo")
    keys = [json.dumps(cell["config"], sort_keys=True) for cell in versus["cells"]]
    jobs = [(index, cell["config"], seed) for index, cell in enumerate(versus["cells"]) for seed in range(versus["seeds"])]
    assert len(seconds) == len(jobs)  # every trained unit recorded its time
    ordered = longest_first(jobs, keys, seconds)
    times = [seconds[(keys[index], seed)] for index, _, seed in ordered]
    assert sorted(ordered, key=lambda job: (job[0], job[2])) == jobs and times == sorted(times, reverse=True)
    first_index, _, first_seed = ordered[0]
    assert seconds[(keys[first_index], first_seed)] == max(seconds.values())  # the single longest unit starts first
    known = {(keys[1], 0): 2.0, (keys[2], 0): 9.0}
    unknown_first = longest_first([(0, {}, 0), (1, {}, 0), (2, {}, 0), (3, {}, 0)], keys, known)
    assert [index for index, _, _ in unknown_first] == [0, 3, 2, 1]
    assert unit_seconds_recorded("variance") == {}  # fixed-policy units record no training time: grid order


@pytest.mark.parametrize("regime", ["gentle", "practice"])
def test_critic_fits_units_of_one_policy_and_seed_run_in_one_bundle_that_reads_one_set_of_samples(regime):
    """critic-fit's costly inputs (the fixed policy's samples and Monte-Carlo values, cached per worker under their
    arguments) are read by every cell of one policy and seed: each such set of units is one bundle, so a worker
    computes them once, and no bundle mixes two sets."""
    from grpo_lab.experiments.catalog import grid_in, in_regime
    from grpo_lab.experiments.measures import regime_json
    from grpo_lab.experiments.runner import bundled

    cells = [in_regime(cell["config"], regime) for cell in grid_in("critic-fit", regime)]
    jobs = [(index, config, seed) for index, config in enumerate(cells) for seed in range(3)]
    bundles = bundled(jobs, EXPERIMENTS["critic-fit"].shares)

    def sample_key(config: dict, seed: int) -> tuple:  # the arguments of measures.critic_fit_samples, in critic_fit_unit's order
        names = ("batches", "prompts_per_batch", "targets_per_prompt", "oracle_samples")
        return (config["policy"], config["half_trained_steps"], regime_json(config), seed, *(config[name] for name in names))

    assert sorted((index, seed) for bundle in bundles for index, _, seed in bundle) == [(index, seed) for index, _, seed in jobs]
    assert all(len({sample_key(config, seed) for _, config, seed in bundle}) == 1 for bundle in bundles)
    assert len(bundles) == len({sample_key(config, seed) for _, config, seed in jobs}) == 2 * 3  # two fixed policies, three seeds
    assert bundled(jobs, None) == [[job] for job in jobs]  # an experiment that shares nothing: a unit a bundle


def without_times(result: dict) -> list:
    """Each cell's per-seed entries without the wall-clock numbers (the only ones a run may change)."""
    timed = ("wall_time_s", "time_per_step_s", "time_to_target_s", "eval_wall_time")
    return [
        [
            {part: {key: value for key, value in entry[part].items() if key not in timed} for part in ("metrics", "series")}
            for entry in cell["per_seed"]
        ]
        for cell in result["cells"]
    ]


@pytest.mark.learning
def test_a_shared_pool_and_any_unit_order_give_the_same_numbers(monkeypatch):
    """sweep all reuses one set of worker processes and runs units longest first: neither the
    worker a unit lands on nor the order changes a number."""
    from grpo_lab.experiments import runner

    with runner.worker_pool(2) as pool:
        shared = run_experiment("small-group-remedies", seeds=1, fast=True, workers=2, progress=False, pool=pool)
        monkeypatch.setattr(runner, "longest_first", lambda jobs, keys, seconds: list(reversed(jobs)))
        reversed_order = run_experiment("small-group-remedies", seeds=1, fast=True, workers=2, progress=False, pool=pool)
    alone = run_experiment("small-group-remedies", seeds=1, fast=True, workers=1, progress=False)
    assert without_times(shared) == without_times(reversed_order) == without_times(alone)


@pytest.mark.learning
def test_sweep_group_size_fast_writes_result_and_figure_with_a_progress_bar(tmp_path, capsys):
    assert main(["sweep", "group-size", "--fast", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "sweep group-size (fast)" in captured.err and "100%" in captured.err
    result = json.loads((tmp_path / "group-size.json").read_text())
    check_result(result)
    assert {cell["axes"]["regime"] for cell in result["cells"]} == {"equal prompts", "equal samples", "2-GRPO protocol"}
    assert (tmp_path / "group-size.png").stat().st_size > 10_000
    assert "two_vs_large" in result["derived"]


@pytest.mark.parametrize(
    "argv, named",
    [
        (["sweep", "nope"], ["'nope'"]),
        (["sweep", "group-size", "--seeds", "0"], ["--seeds", "0"]),
        (["sweep", "variance", "--workers", "0"], ["--workers", "0"]),
    ],
)
def test_sweep_rejects_bad_input_in_one_line(argv, named, capsys):
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert all(word in error for word in named) and len(error.strip().splitlines()) == 1, error


def test_load_result_says_how_to_make_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        load_result("variance", fast=True, directory=tmp_path)
    assert_one_line_naming(caught.value, tmp_path / "variance.json", "python -m grpo_lab sweep variance --fast")  # the file, and how to make it
    with pytest.raises(ValueError) as caught:
        load_result("nope")
    assert_one_line_error(caught.value, "experiment", "nope")


def test_summarize_counts_only_seeds_with_a_value():
    per_seed = [{"metrics": {"a": 1.0, "b": None}}, {"metrics": {"a": 3.0, "b": 2.0}}, {"metrics": {"a": float("nan")}}]
    summary = summarize(per_seed)
    assert summary["a"] == {"mean": 2.0, "std": pytest.approx(2**0.5), "n": 2}
    assert summary["b"] == {"mean": 2.0, "std": 0.0, "n": 1}


def test_one_mean_std_formatter_gives_claims_md_form_and_the_course_form():
    five = {"mean": 0.75234, "std": 0.01234, "n": 5}
    one = summarize([{"metrics": {"a": 0.5}}])["a"]
    absent = summarize([{"metrics": {"a": None}}])["a"]
    assert format_mean_std(five) == "0.752 ± 0.012 (n=5)"  # claims.md: significant digits
    assert format_mean_std({"mean": 1536.4, "std": 12.6, "n": 3}) == "1536 ± 13 (n=3)"  # a count
    assert format_mean_std(five, percent=True) == "75.2% ± 1.2 (n=5)"
    assert format_mean_std(one) == "0.5 ± 0 (n=1)" and format_mean_std(absent) == "n/a (no seed)"
    assert format_mean_std(five, prose=True) == "0.752 ± 0.012 (5 seeds)"  # the course: decimals, seeds in words
    assert format_mean_std(five, 1, prose=True) == "0.8 ± 0.0 (5 seeds)"
    assert format_mean_std(one, prose=True) == "0.500 (1 seed)" and format_mean_std(absent, prose=True) == "n/a"


def test_check_result_rejects_a_broken_result(cached):
    broken = json.loads(json.dumps(cached["batch-blowup"]))
    broken["cells"][0]["per_seed"].pop()
    with pytest.raises(ValueError) as caught:
        check_result(broken)
    assert_one_line_naming(caught.value, "seeds")
    del broken["command"]
    with pytest.raises(ValueError) as caught:
        check_result(broken)
    assert_one_line_naming(caught.value, "command")


def test_every_cell_has_an_id_distinct_within_its_experiment_and_one_label_for_it():
    for name, experiment in EXPERIMENTS.items():
        grids = {fast: experiment.grid(fast) for fast in (False, True)}
        for cells in grids.values():
            ids = [cell["id"] for cell in cells]
            assert len(set(ids)) == len(ids), name
            assert all(cell_label(name, cell["id"]) == cell["label"] for cell in cells), name  # a fast cell has its full cell's label
        assert list(cell_labels(name)) == list(dict.fromkeys(cell["id"] for fast in (False, True) for cell in grids[fast]))


def test_result_files_name_cells_by_id_and_hold_no_label(cached):
    """Rewording a label touches no result: no file stores one, figures and tables look it up."""
    every_label = {label for name in EXPERIMENTS for label in cell_labels(name).values()}

    def strings(value):
        if isinstance(value, dict):
            return [*value, *(s for v in value.values() for s in strings(v))]
        return [s for v in value for s in strings(v)] if isinstance(value, list) else [value] if isinstance(value, str) else []

    for name, result in cached.items():
        assert [entry["id"] for entry in result["grid"]] == [cell["id"] for cell in result["cells"]]
        assert set(cell_labels(name)) >= {cell["id"] for cell in result["cells"]}
        assert not every_label & set(strings(result)), name


def test_an_unknown_cell_id_raises_one_error_naming_the_experiment_the_id_and_the_known_ids(cached):
    from grpo_lab.course.notebook import mean_std_seeds, print_table
    from grpo_lab.experiments.claims import Claim, finding_in

    lookups = [
        lambda: cell_label("grpo-vs-ppo", "ppo-verl"),
        lambda: result_cell(cached["grpo-vs-ppo"], "ppo-verl"),
        lambda: cell_summary(cached, "grpo-vs-ppo", "ppo-verl", "late_eval_accuracy"),
        lambda: mean_std_seeds(cached["grpo-vs-ppo"], "ppo-verl", "late_eval_accuracy"),
        lambda: print_table(cached["grpo-vs-ppo"], ["late_eval_accuracy"], ["ppo-verl"]),
    ]
    for lookup in lookups:
        with pytest.raises(UnknownCellError) as error:
            lookup()
        message = str(error.value)
        assert "\n" not in message and "'grpo-vs-ppo'" in message and "'ppo-verl'" in message
        assert all(cell_id in message for cell_id in cell_labels("grpo-vs-ppo")), message
    # in a claim's rule a typo is an error, never a silent "not tested"; a cell a --fast result leaves out is "not tested"
    typo = Claim("typo", "", "", "", ("grpo-vs-ppo",), lambda r: cell_summary(r, "grpo-vs-ppo", "ppo-verl", "late_eval_accuracy"))
    with pytest.raises(UnknownCellError):
        finding_in(typo, cached)
    shorter = {**cached["grpo-vs-ppo"], "cells": [c for c in cached["grpo-vs-ppo"]["cells"] if c["id"] != "ppo-verl-1x4"]}
    absent = Claim("absent", "", "", "", ("grpo-vs-ppo",), lambda r: cell_summary(r, "grpo-vs-ppo", "ppo-verl-1x4", "late_eval_accuracy"))
    assert finding_in(absent, {"grpo-vs-ppo": shorter}).judge()[0] == UNTESTED


def test_check_result_refuses_a_cell_id_the_catalog_lacks_or_one_twice(cached):
    for cell_id in ("ppo-verl", cached["grpo-vs-ppo"]["cells"][0]["id"]):  # not in the catalog; the first cell's
        broken = json.loads(json.dumps(cached["grpo-vs-ppo"]))
        broken["cells"][1]["id"] = cell_id
        with pytest.raises(ValueError) as caught:
            check_result(broken)
        assert_one_line_naming(caught.value, repr(cell_id))


def test_results_readme_quotes_the_recorded_wall_times(cached):
    text = (RESULTS_DIR / "README.md").read_text()
    assert f"{sum(result['wall_time_s'] for result in cached.values()):.0f} s" in text
    for name, result in cached.items():
        assert f"| `{name}` | {len(result['cells'])} x {result['seeds']} | {result['wall_time_s']:.0f} s |" in text, name


def test_a_long_run_figure_title_wraps_into_lines_of_near_equal_length():
    from grpo_lab.plots import balanced_lines

    title = "128 responses per step: many prompts x small G, or few prompts x large G"
    lines = balanced_lines(title, 70).split("\n")
    assert len(lines) == 2 and " ".join(lines) == title and min(map(len, lines)) >= 0.8 * max(map(len, lines))
    assert balanced_lines("A first GRPO run (seed 0)", 70) == "A first GRPO run (seed 0)"
