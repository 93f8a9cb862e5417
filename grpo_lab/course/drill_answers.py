"""The drill's model answers (30 seconds and 60 seconds, English and Chinese), its follow-ups and its
reading list (notebooks 06), and ``rerun_fast``, which re-runs the experiments the answers quote.
drill.py (the evidence: result files, findings, the claims in Chinese, the quiz) never imports this module.

Every sentence of a model answer carries the numbers it rests on as ``Number``s (drill.py), read from
the result files when the answer is shown (or, for the critic's memory at scale, counted by course/scale_cost.py),
so the answer stays true when the results are regenerated; ``claims`` names the claims of experiments/claims.py whose
verdicts back it, and a sentence that states a finding says it only while its first claim's verdict is one it was
worded for (``when``), and its ``otherwise`` words, which only report the numbers, under any other verdict. Length limits: a
30-second answer is at most 80 English words or 150 Chinese characters (about 160 words or 300
characters a minute, a calm speaking pace), a 60-second answer twice that.

The text is data: the answers, their cues and the numbers they quote are in text/answers.json, the
follow-ups in text/follow_ups.json, the reading list in text/reading.json.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .drill import SCALE_MODEL, Number, cached_results, findings, number_value, quoted_number, result_setting, results_in
from .text_files import load_text

if TYPE_CHECKING:
    from .timed_answer import TimedAnswer

LENGTHS = ("30s", "60s")
LANGUAGES = ("en", "zh")
LIMITS = {("30s", "en"): 80, ("60s", "en"): 160, ("30s", "zh"): 150, ("60s", "zh"): 300}  # words / Chinese characters
SECONDS = {"30s": 30, "60s": 60}
SCALE_MODEL_SETTING = "scale-cost: counted on paper, not measured (grpo_lab/course/scale_cost.py; its sources in docs/scale-cost.md)"
SCALE_MODEL_SETTING_ZH = "scale-cost：按公式估算，不是实测（grpo_lab/course/scale_cost.py；出处见 docs/scale-cost.md）"


@dataclass(frozen=True)
class Sentence:
    """text: with {0}, {1}, ... where its numbers go (spoken form: the seed mean, rounded);
    numbers: what fills them; claims: the claims whose verdicts back the sentence. With ``otherwise``, ``text`` states a
    finding and is said only while the first claim's verdict (in the regime of the sentence's numbers) is in ``when``
    and every difference it quotes is positive (``finding_stands``); else the sentence is ``otherwise``, which quotes
    the same numbers without the finding."""

    text: str
    numbers: tuple[Number, ...] = ()
    claims: tuple[str, ...] = ()
    otherwise: str = ""
    when: tuple[str, ...] = ("holds here",)


def answers_from_text(text: dict) -> tuple[dict[str, str], dict[tuple[str, str], tuple[Sentence, ...]]]:
    """(cues by language, answers by (length, language)) from text/answers.json. A sentence names the numbers
    it quotes; each number is defined once, under "numbers" (its labels in Chinese and English)."""
    numbers = {name: Number(**entry) for name, entry in text["numbers"].items()}
    answers = {
        (length, language): tuple(
            Sentence(
                sentence["text"],
                tuple(numbers[name] for name in sentence.get("numbers", ())),
                tuple(sentence["claims"]),
                sentence.get("otherwise", ""),
                tuple(sentence.get("when", ("holds here",))),
            )
            for sentence in sentences
        )
        for language, by_length in text["answers"].items()
        for length, sentences in by_length.items()
    }
    quoted = {number for sentences in answers.values() for sentence in sentences for number in sentence.numbers}
    unquoted = [name for name, number in numbers.items() if number not in quoted]
    if unquoted:
        raise ValueError(f"numbers that no answer quotes: {', '.join(unquoted)}")
    return dict(text["cues"]), answers


CUES, ANSWERS = load_text("answers.json", answers_from_text)


def answer_experiments() -> list[str]:
    """The experiments whose numbers the model answers quote."""
    return list(dict.fromkeys(name for name, _ in answer_runs()))


def answer_runs() -> list[tuple[str, str]]:
    """(experiment, regime) of every result the model answers quote (the scale cost model is not a result)."""
    from ..experiments.catalog import DEFAULT_REGIME

    numbers = [number for sentences in ANSWERS.values() for sentence in sentences for number in sentence.numbers if number.experiment != SCALE_MODEL]
    return list(dict.fromkeys((number.experiment, number.regime or DEFAULT_REGIME) for number in numbers))


def rerun_fast(experiments: list[str] | None = None, folder: str | os.PathLike | None = None, workers: int = 2) -> Path:
    """Re-run the --fast variants of ``experiments`` in the gentle regime (default: every result the
    model answers quote, in its regime) into ``folder`` (default: a new temporary folder), write
    claims.md there, and point the drill at it (GRPO_LAB_RESULTS_DIR), so that every number the drill
    prints afterwards is one you produced. Fast grids have fewer cells and seeds: numbers of cells
    they lack print as '?' or 'no data'."""
    import tempfile

    from ..experiments.catalog import DEFAULT_REGIME
    from ..experiments.claims_report import write_claims
    from ..experiments.runner import check_name, run_experiment, write_result
    from .notebook import RESULTS_DIR_ENV

    runs = [(name, DEFAULT_REGIME) for name in experiments] if experiments is not None else answer_runs()
    for name, _ in runs:
        check_name(name)
    target = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="grpo-lab-results-"))
    for name, regime in runs:
        write_result(name, run_experiment(name, fast=True, workers=workers, regime=regime), target)
    write_claims(directory=target)
    os.environ[RESULTS_DIR_ENV] = str(target)
    return target


def check_choice(length: str, language: str) -> None:
    if length not in LENGTHS:
        raise ValueError(f"length={length!r} is not valid: choose one of {', '.join(LENGTHS)}")
    if language not in LANGUAGES:
        raise ValueError(f"language={language!r} is not valid: choose one of {', '.join(LANGUAGES)}")


def spoken_number(number: Number, results: dict, language: str = "en") -> str:
    """A number as one says it: the seed mean, rounded ('0.77', '77%', '2.7k', a ratio '6.9x', in Chinese
    '6.9 倍', a difference of accuracies in whole points '16', the text saying 'points'); '?' when absent."""
    try:
        mean = number_value(number, results)["mean"]
    except KeyError:
        return "?"
    if mean is None:
        return "?"
    if number.minus and number.percent:
        return f"{100 * mean:.0f}"
    if number.percent:
        return f"{100 * mean:.0f}%"
    if number.over:
        return f"{mean:.2g}x" if language == "en" else f"{mean:.2g} 倍"
    if abs(mean) >= 1000:
        thousands = mean / 1000
        return f"{thousands:.0f}k" if abs(thousands) >= 10 else f"{thousands:.1f}k"
    return f"{mean:.0f}" if abs(mean) >= 100 else f"{mean:.2g}"


def model_answer(length: str = "30s", language: str = "en", results: dict | None = None) -> list[str]:
    """The answer's sentences with their numbers read from ``results`` (default: the cached results); a sentence that
    states a finding says it only under a verdict it was worded for (``Sentence.when``), its ``otherwise`` words else."""
    check_choice(length, language)
    given, results = results, cached_results() if results is None else results
    sentences = []
    for sentence in ANSWERS[(length, language)]:
        text = sentence.text
        if sentence.otherwise and not finding_stands(sentence, given, results):
            text = sentence.otherwise
        sentences.append(text.format(*(spoken_number(n, results, language) for n in sentence.numbers)))
    return sentences


def finding_stands(sentence: Sentence, given: dict | None, results: dict) -> bool:
    """Whether a sentence's finding may be said: its first claim's verdict is one it was worded for, and every difference
    it quotes (Number.minus) is positive, the direction its words give it ('beat ... by {0} points')."""
    differences = [number_value(number, results)["mean"] for number in sentence.numbers if number.minus]
    return sentence_verdict(sentence, given).verdict in sentence.when and all(value is not None and value > 0 for value in differences)


def sentence_verdict(sentence: Sentence, results: dict | None = None):
    """The verdict (claims.Verdict) of a sentence's first claim, in the regime its numbers were measured in: from the
    cached table of every regime (default), or judged on ``results`` (a regime's own results where the sentence names one)."""
    regime = sentence_regime(sentence) or "gentle"
    if results is None:
        return findings(list(sentence.claims[:1]), regime=regime)[0][1]
    return findings(list(sentence.claims[:1]), results if regime == "gentle" else results_in(regime), regime)[0][1]


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def integer_words_en(n: int) -> int:
    """How many words an integer takes said in English: 128 'one hundred twenty-eight' -> 4, 13,526 -> 6."""
    if n < 20:  # 'zero' to 'nineteen'
        return 1
    if n < 100:
        return 1 if n % 10 == 0 else 2  # 'twenty', 'twenty-eight' said as two
    for size in (10**9, 10**6, 1000, 100):  # 'billion', 'million', 'thousand', 'hundred': one word each
        if n >= size:
            high, low = divmod(n, size)
            return integer_words_en(high) + 1 + (integer_words_en(low) if low else 0)
    raise AssertionError(n)


def integer_characters_zh(n: int) -> int:
    """How many characters an integer takes said in Chinese: 128 一百二十八 -> 5, 13,526 一万三千五百二十六 -> 9, 2,048
    两千零四十八 -> 6."""
    if n >= 10**8:
        high, low = divmod(n, 10**8)
        return integer_characters_zh(high) + 1 + (integer_characters_zh(low) + (low < 10**7) if low else 0)
    if n >= 10**4:
        high, low = divmod(n, 10**4)
        return integer_characters_zh(high) + 1 + (integer_characters_zh(low) + (low < 1000) if low else 0)
    digits, count, zero_run = f"{n}", 0, False
    for position, digit in enumerate(digits):
        place = len(digits) - 1 - position  # 3 千, 2 百, 1 十, 0 个
        if digit == "0":
            zero_run = True
            continue
        count += (1 if zero_run and count else 0) + (1 if place == 1 and digit == "1" and position == 0 else 2 if place else 1)
        zero_run = False
    return max(count, 1)


def number_length(number: str, language: str) -> int:
    """A number as it is said: its integer part in words (English) or characters (Chinese), then 'point' (点) and one per
    decimal digit: '0.702' 'zero point seven oh two' -> 5 words, 零点七零二 -> 5 characters."""
    whole, _, decimals = number.replace(",", "").partition(".")
    said = integer_words_en(int(whole)) if language == "en" else integer_characters_zh(int(whole))
    return said + (1 + len(decimals) if decimals else 0)


def spoken_length(text: str, language: str) -> int:
    """How long ``text`` is said aloud. English: words; Chinese: characters. A number counts as it is said (number_length:
    '128' is three words, 一百二十八 five characters); a name written as one word of several capitalised words counts
    each ('DeepSeekMath' three); a sign said aloud counts one more (× "by", = "equals", + "plus", − "minus", / "over",
    % "percent"), and an 'x' right after a number ('5.1x', "times"). Other punctuation and spaces are not said.
    Chinese: Han characters, plus each run of Latin letters (a term such as GRPO is said as one word)."""
    signs = len(re.findall(r"[×=+−/%]", text)) + len(re.findall(r"(?<=\d)x\b", text))
    numbers = sum(number_length(match, language) for match in NUMBER.findall(text))
    words = NUMBER.sub(" ", re.sub(r"(?<=\d)x\b", " ", text))
    camel = sum(len(re.findall(r"[A-Z][a-z]+", word)) - 1 for word in re.findall(r"\b(?:[A-Z][a-z]+){2,}\b", words))
    if language == "en":
        return sum(1 for token in words.split() if re.search(r"[A-Za-z]", token)) + camel + numbers + signs
    return len(re.findall(r"[\u4e00-\u9fff]", words)) + len(re.findall(r"[A-Za-z][A-Za-z'-]*", words)) + camel + numbers + signs


def answer_evidence(length: str = "30s", language: str = "en", results: dict | None = None) -> list[str]:
    """For each sentence: its numbers as mean ± std (n = seeds) and the verdicts of the claims behind it."""
    from .drill import verdict_en, verdict_zh

    check_choice(length, language)
    given, results = results, cached_results() if results is None else results
    between_numbers, between_claims = ("; ", ", ") if language == "en" else ("；", "，")
    lines = []
    for index, sentence in enumerate(ANSWERS[(length, language)], 1):
        numbers = [quoted_number(number, results, language) for number in sentence.numbers]
        regime = sentence_regime(sentence)  # its claims are judged where its numbers were measured
        if given is None:
            judged = findings(list(sentence.claims), regime=regime or "gentle")
        else:
            judged = findings(list(sentence.claims), results_in(regime) if regime else results, regime or "gentle")
        verdicts = between_claims.join(
            f"[{claim.key}] " + (verdict_en(finding) if language == "en" else verdict_zh(finding)) + (f" ({regime})" if regime else "")
            for claim, finding in judged
        )
        lines.append(f"{index}. " + between_numbers.join([*numbers, *([verdicts] if verdicts else [])]))
    return lines


def sentence_regime(sentence: Sentence) -> str:
    """The regime a sentence's numbers were measured in ('' for the gentle one); one per sentence."""
    regimes = {number.regime for number in sentence.numbers}
    if len(regimes) > 1:
        raise ValueError(f"a sentence quotes numbers of several regimes ({', '.join(sorted(regimes))}): {sentence.text}")
    return regimes.pop() if regimes else ""


def print_answer(length: str = "30s", language: str = "en") -> None:
    """The model answer, its length against the limit, and the evidence behind each sentence."""
    results = cached_results()
    sentences = model_answer(length, language)  # the cached results, judged as claims.md judges them
    text = " ".join(sentences) if language == "en" else "".join(sentences)
    size = spoken_length(text, language)
    unit = "words" if language == "en" else "字"
    print(text)
    print(f"\n({size} {unit}, limit {LIMITS[(length, language)]})" if language == "en" else f"\n（{size} 字，上限 {LIMITS[(length, language)]}）")
    print("\nThe numbers behind each sentence, and the verdicts of its claims:" if language == "en" else "\n每句话背后的数字，以及对应论断的结论：")
    for line in answer_evidence(length, language):  # judged as claims.md judges them, replications included
        print("  " + line)
    print("\nWhere these numbers hold (each result file's setting):" if language == "en" else "\n这些数字成立的设定（各结果文件的设置）：")
    for name, regime in dict.fromkeys((n.experiment, n.regime) for sentence in ANSWERS[(length, language)] for n in sentence.numbers):
        if name == SCALE_MODEL:
            print("  " + (SCALE_MODEL_SETTING if language == "en" else SCALE_MODEL_SETTING_ZH))
            continue
        found = results_in(regime) if regime else results
        print("  " + (result_setting(name, found, language) if name in found else f"{name}: " + ("no result" if language == "en" else "没有结果")))


def say_it_aloud(length: str = "30s", language: str = "en") -> TimedAnswer:
    """The timed rehearsal widget for this answer: the cues, a countdown, then the model answer."""
    from .timed_answer import TimedAnswer

    check_choice(length, language)
    return TimedAnswer(CUES[language], model_answer(length, language), SECONDS[length], language)


# --- the card's own answer ------------------------------------------------------------------------------

CARD = Path(__file__).resolve().parents[2] / "seed" / "000_7e9a11e1b2d7703d.txt"
CARD_ANSWER_HEADING = "30 秒电梯版"


def card_answer(path: str | os.PathLike = CARD) -> str:
    """The card's own 30-second answer: the quoted paragraph under its '30 秒电梯版' heading."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: the card ships in the repository's seed/ folder")
    lines = path.read_text(encoding="utf-8").splitlines()
    heading = next((index for index, line in enumerate(lines) if CARD_ANSWER_HEADING in line), None)
    answer = next((line.strip() for line in lines[heading + 1 :] if line.strip()), "") if heading is not None else ""
    if not answer:
        raise ValueError(f"{path} has no paragraph under a {CARD_ANSWER_HEADING!r} heading")
    return answer


def print_card_answer(language: str = "en") -> None:
    """The card's 30-second answer and its spoken length against the course's Chinese limit."""
    check_choice("30s", language)
    text = card_answer()
    size, limit = spoken_length(text, "zh"), LIMITS[("30s", "zh")]
    print(text)
    print(f"\n({size} Chinese characters, limit {limit})" if language == "en" else f"\n（{size} 字，上限 {limit}）")


# --- follow-ups ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FollowUp:
    """An interview follow-up: question and short answer in both languages, the paper, and where the
    course shows it (or what it does not show)."""

    key: str
    question: dict[str, str]
    answer: dict[str, str]
    paper: str
    where: dict[str, str]


FOLLOW_UPS = load_text("follow_ups.json", lambda items: tuple(FollowUp(**item) for item in items))


def follow_ups_markdown(language: str = "en", full: bool = False) -> str:
    """The follow-ups as markdown: the questions, one numbered line each (to answer aloud before reading on); with
    ``full``, each question's short answer, the paper to cite and where the course shows it."""
    check_choice("30s", language)
    if not full:
        return "\n".join(f"{number}. {item.question[language]}" for number, item in enumerate(FOLLOW_UPS, 1))
    labels = {"en": ("Answer:", "Paper:", "In the course:"), "zh": ("回答：", "论文：", "课程中：")}[language]
    blocks = []
    for number, item in enumerate(FOLLOW_UPS, 1):
        blocks.append(
            f"**{number}. {item.question[language]}**\n\n- *{labels[0]}* {item.answer[language]}\n"
            f"- *{labels[1]}* {item.paper}\n- *{labels[2]}* {item.where[language]}"
        )
    return "\n\n".join(blocks)


# --- reading list ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """A paper or post, checked against its arXiv page or site: title, where, why (en, zh)."""

    title: str
    where: str
    why: dict[str, str]


READING, CARD_READING = load_text(
    "reading.json",
    lambda text: (
        tuple(Reading(**item) for item in text["reading"]),
        tuple((item["title"], item["found"]) for item in text["card_reading"]),  # (the card's title, what we found)
    ),
)


def reading_list_markdown(language: str = "en") -> str:
    """The verified reading list, then the card's own list with what was found for each title."""
    check_choice("30s", language)
    lines = [f"- *{item.title}*, {item.where}: {item.why[language]}" for item in READING]
    lines.append("\n" + ("The card's reading list, checked:" if language == "en" else "卡片上的延伸阅读，逐条核对："))
    lines += [f"- “{title}”: {found[language]}" for title, found in CARD_READING]
    return "\n".join(lines)
