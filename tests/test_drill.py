"""The interview drill: every claim is mapped to the notebook that teaches it, the quiz is the same
in both languages, and the findings print from whatever results exist."""

from __future__ import annotations

import pytest

from grpo_lab import drill
from grpo_lab.experiments.claims import CLAIMS, fmt, stat


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
            assert fmt(stat(results, number.experiment, number.cell, number.metric)) != "n/a (no seed)", (claim.key, number)


def test_the_chinese_drill_prints_chinese_words_and_the_numbers_of_the_result_files(capsys):
    drill.print_findings(["offset", "variance", "batchnorm"], "zh")
    out = capsys.readouterr().out
    results = drill.cached_results()
    assert fmt(stat(results, "offset-and-scale", "none, offset 5", "late_eval_accuracy")) in out
    assert fmt(stat(results, "variance", "reference, G=8", "snr.zscore")) in out
    verdicts = [finding.verdict for _, finding in drill.findings(["offset", "variance", "batchnorm"], results)]
    assert all(drill.VERDICTS_ZH[verdict] in out for verdict in verdicts)
    assert "怎么检验" in out and "关键数字" in out and "为什么不测" in out
    assert "in plain words" not in out and "measured:" not in out
