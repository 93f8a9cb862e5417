"""The interview drill: every claim is mapped to the notebook that teaches it, the quiz is the same
in both languages, and the findings print from whatever results exist."""

from __future__ import annotations

import pytest

from grpo_lab.course import drill
from grpo_lab.experiments.claims import CLAIMS, stat
from grpo_lab.experiments.stats import format_mean_std


def test_every_claim_is_taught_somewhere():
    assert {claim.key for claim in CLAIMS} == set(drill.CLAIM_NOTEBOOKS)


def test_the_quiz_is_the_same_in_english_and_chinese():
    english, chinese = drill.quiz_questions("en"), drill.quiz_questions("zh")
    assert len(english) == len(chinese) >= 8
    for en, zh in zip(english, chinese):
        assert en.answer == zh.answer and en.source == zh.source
        assert len(en.options) == len(zh.options) == len(en.why) == len(zh.why)
        assert 0 <= en.answer < len(en.options)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_findings_print_for_cited_claims(language, capsys):
    drill.print_findings(["offset", "sigma-explodes", "batchnorm"], language)
    out = capsys.readouterr().out
    assert "[offset]" in out and "[sigma-explodes]" in out and "[batchnorm]" in out
    assert ("01 §4" in out) and ("04 §2" in out)


def test_an_unknown_claim_key_is_one_clear_error():
    with pytest.raises(ValueError, match="claim key.*no-such-claim.*not valid"):
        drill.findings(["no-such-claim"])


def test_every_claim_has_a_chinese_summary_whose_numbers_exist_in_the_results():
    results = drill.cached_results()
    assert set(drill.CLAIMS_ZH) == {claim.key for claim in CLAIMS}
    for claim in CLAIMS:
        chinese = drill.CLAIMS_ZH[claim.key]
        assert chinese.how and (chinese.title or claim.card != "—"), claim.key
        assert bool(chinese.numbers) == (claim.evaluate is not None), claim.key
        for number in chinese.numbers:
            assert number.experiment in claim.experiments, (claim.key, number)
            assert drill.number_value(number, results)["mean"] is not None, (claim.key, number)


def test_the_chinese_drill_prints_chinese_words_and_the_numbers_of_the_result_files(capsys):
    drill.print_findings(["offset", "variance", "batchnorm"], "zh")
    out = capsys.readouterr().out
    results = drill.cached_results()
    assert format_mean_std(stat(results, "offset-and-scale", "none, offset 5", "late_eval_accuracy")) in out
    assert format_mean_std(stat(results, "variance", "reference, G=8", "net_snr.zscore")) in out
    verdicts = [finding.verdict for _, finding in drill.findings(["offset", "variance", "batchnorm"], results)]
    assert all(drill.VERDICTS_ZH[verdict] in out for verdict in verdicts)
    assert "怎么检验" in out and "关键数字" in out and "为什么不测" in out
    assert "in plain words" not in out and "measured:" not in out


# --- the model answers, the timed widget, the follow-ups, the re-run switch ----------------------------------

from grpo_lab.course import drill_answers  # noqa: E402
from grpo_lab.course.timed_answer import TimedAnswer  # noqa: E402


@pytest.mark.parametrize("length", drill_answers.LENGTHS)
@pytest.mark.parametrize("language", drill_answers.LANGUAGES)
def test_each_model_answer_fits_its_time_and_every_sentence_rests_on_a_number_or_a_tested_claim(length, language):
    results = drill.cached_results()
    sentences = drill_answers.model_answer(length, language, results)
    text = " ".join(sentences) if language == "en" else "".join(sentences)
    assert drill_answers.spoken_length(text, language) <= drill_answers.LIMITS[(length, language)], text
    by_key = {claim.key: claim for claim in CLAIMS}
    for sentence, filled in zip(drill_answers.ANSWERS[(length, language)], sentences):
        assert sentence.numbers or any(by_key[key].evaluate is not None for key in sentence.claims), sentence.text
        assert filled.count("?") == 0, f"a number is missing from the results: {filled}"
        for number in sentence.numbers:
            assert number.english, number
            assert drill_answers.spoken_number(number, results, language) in filled


def test_the_two_languages_quote_the_same_numbers_and_claims():
    for length in drill_answers.LENGTHS:
        english, chinese = drill_answers.ANSWERS[(length, "en")], drill_answers.ANSWERS[(length, "zh")]
        assert [(s.numbers, s.claims) for s in english] == [(s.numbers, s.claims) for s in chinese]


def test_a_quoted_number_follows_the_result_file():
    results = drill.cached_results()
    changed = {
        **results,
        "offset-and-scale": {
            **results["offset-and-scale"],
            "cells": [
                {**cell, "summary": {**cell["summary"], "late_eval_accuracy": {"mean": 0.123, "std": 0.01, "n": 4}}}
                for cell in results["offset-and-scale"]["cells"]
            ],
        },
    }
    assert "12%" in drill_answers.model_answer("30s", "en", changed)[1]
    assert "12%" not in drill_answers.model_answer("30s", "en", results)[1]


def test_spoken_length_counts_english_words_and_chinese_characters():
    assert drill_answers.spoken_length("GRPO drops the critic (0.77 vs 0.56) — × G", "en") == 8
    assert drill_answers.spoken_length("组均值是 GRPO 的基线，准确率 0.77。", "zh") == 10 + 2


def test_the_timed_answer_reveals_the_model_answer_when_time_is_up_without_waiting():
    widget = TimedAnswer("cues", ["first sentence.", "second <sentence>."], seconds=3, language="en")
    assert not widget.revealed
    widget.start(background=False)
    assert widget.tick() and "2 s left" in widget.clock.value and not widget.revealed
    assert widget.tick() and not widget.revealed
    assert not widget.tick() and widget.revealed
    assert "first sentence." in widget.answer.value and "&lt;sentence&gt;" in widget.answer.value
    widget.start(background=False)  # a second attempt hides the answer again
    assert not widget.revealed and widget.remaining == 3
    widget.reveal_button.click()
    assert widget.revealed


def test_the_timed_answer_counts_down_in_the_background():
    widget = TimedAnswer("cues", ["answer"], seconds=2, language="zh", tick_seconds=0.01)
    widget.start_button.click()
    widget._thread.join(timeout=5)
    assert widget.revealed and "时间到" in widget.clock.value


def test_the_timed_answer_rejects_bad_settings():
    with pytest.raises(ValueError, match="seconds=0 is not valid"):
        TimedAnswer("cues", ["answer"], seconds=0)
    with pytest.raises(ValueError, match="language='fr' is not valid"):
        drill_answers.say_it_aloud("30s", "fr")


@pytest.mark.parametrize("language", drill_answers.LANGUAGES)
def test_say_it_aloud_builds_the_widget_for_each_answer(language):
    widget = drill_answers.say_it_aloud("60s", language)
    assert widget.seconds == 60 and widget.sentences == drill_answers.model_answer("60s", language)


def test_follow_ups_and_reading_list_are_complete_in_both_languages():
    for item in drill_answers.FOLLOW_UPS:
        for part in (item.question, item.answer, item.where):
            assert set(part) == {"en", "zh"} and all(part.values()), item.key
        assert "arXiv" in item.paper or "blog" in item.paper, item.key
    for language in drill_answers.LANGUAGES:
        text = drill_answers.reading_list_markdown(language)
        for arxiv in ("2402.03300", "1707.06347", "1506.02438", "2402.14740", "2503.20783", "2503.14476", "2510.00977"):
            assert arxiv in text
        assert text.count("not found" if language == "en" else "没有找到") == 3


def test_rerun_fast_writes_results_and_claims_to_a_scratch_folder_and_the_drill_reads_them(tmp_path, monkeypatch):
    from grpo_lab.course import RESULTS_DIR_ENV
    from grpo_lab.experiments import runner

    cached = drill.cached_results()

    def pretend_run(name, fast=False, workers=2, **_):  # the plumbing, not the training: a copy marked as a new fast run
        assert fast
        return {**cached[name], "fast": True, "created": "just now"}

    monkeypatch.setattr(runner, "run_experiment", pretend_run)
    # setenv first so that monkeypatch records the variable's original state and its teardown removes what
    # rerun_fast sets (delenv of an absent variable records nothing, and the folder would leak into later tests)
    monkeypatch.setenv(RESULTS_DIR_ENV, "")
    monkeypatch.delenv(RESULTS_DIR_ENV)
    folder = drill_answers.rerun_fast(["offset-and-scale"], tmp_path / "mine")
    assert (folder / "offset-and-scale.json").is_file() and (folder / "claims.md").is_file()
    assert drill.results_folder() == folder and list(drill.cached_results()) == ["offset-and-scale"]
    assert "fast run, just now" in drill.results_sources()[0]
    with pytest.raises(ValueError, match="experiment='nope' is not valid"):
        drill_answers.rerun_fast(["nope"], tmp_path / "other")


def test_the_chinese_plain_words_belong_to_claims_and_are_printed(capsys):
    assert set(drill.PLAIN_ZH) <= set(drill.CLAIMS_ZH)
    drill.print_findings(["offset"], "zh")
    assert "通俗地说：" + drill.PLAIN_ZH["offset"] in capsys.readouterr().out
    assert "*通俗地说：* " + drill.PLAIN_ZH["scale"] in drill.claims_audit_zh()


def test_the_evidence_module_does_not_import_the_answers_module():
    """drill.py (results, findings, quiz) sits below drill_answers.py (answers, follow-ups, re-runs): no circle."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(drill.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not any(name.endswith("drill_answers") for name in imported), imported
