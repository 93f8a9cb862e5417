"""The interview drill: every claim is mapped to the notebook that teaches it, the quiz is the same
in both languages, and the findings print from whatever results exist."""

from __future__ import annotations

import pytest

from grpo_lab import drill
from grpo_lab.experiments.claims import CLAIMS


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
