"""The interview drill's evidence and quiz (notebooks 06, English and Chinese).

The drill's statements rest on the card's claims as ``experiments/claims.py`` measures them (the
same verdicts as data/results/claims.md). ``print_findings(keys, language)`` prints, for the claims
a section cites, the verdict, where the course teaches it and the numbers: in English the evidence and
explanation of claims.md; in Chinese how the claim is tested (``CLAIMS_ZH``) and its key numbers, read
from the same result files. ``quiz(language)`` builds the self-check quiz.

The text is data: the claims in Chinese, their plain-words summaries and the verdicts' names are in
text/claims_zh.json, the quiz in text/quiz.json, where each claim is taught in text/claim_notebooks.json.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .text_files import load_text

if TYPE_CHECKING:
    from .widgets import Question, Quiz


# where the course teaches each claim of experiments/claims.py (key -> notebook and section)
CLAIM_NOTEBOOKS: dict[str, str] = load_text("claim_notebooks.json", dict)


# --- the claims in Chinese --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    """One number the drill quotes, read from a result file: a metric of one cell of one experiment (``cell``:
    the cell's catalog id, e.g. "g2"; an id the catalog lacks raises catalog.UnknownCellError), as
    mean ± std over seeds; with ``over`` (another cell's id), the ratio of the two cells'
    means ('6.85x', or in percent); with cell "derived", a value of the result's ``derived`` block (metric: a dotted path).
    With ``regime`` (catalog.REGIMES), it is read from that regime's result files, whatever results are passed."""

    label: str  # in Chinese
    experiment: str
    cell: str
    metric: str
    percent: bool = False
    english: str = ""  # the label in English, for the numbers the English drill quotes
    over: str = ""
    regime: str = ""


DERIVED = "derived"


def number_value(number: Number, results: dict) -> dict:
    """{mean, std, n} of a quoted number (std None for a ratio or a derived value; mean None when absent).
    Raises KeyError when the result or its cell does not exist."""
    from ..experiments.claims import cell_summary

    if number.regime:
        results = results_in(number.regime)
    if number.cell == DERIVED:
        value = results[number.experiment][DERIVED]
        for key in number.metric.split("."):
            value = value[key]
        return {"mean": value, "std": None, "n": 0}
    value = cell_summary(results, number.experiment, number.cell, number.metric)
    if not number.over:
        return value
    below = cell_summary(results, number.experiment, number.over, number.metric)["mean"]
    ratio = value["mean"] / below if value["mean"] is not None and below else None
    return {"mean": ratio, "std": None, "n": 0}


def written_number(number: Number, results: dict, language: str = "en") -> str:
    """A quoted number as claims.md writes it: 'mean ± std (n=seeds)'; a ratio as '6.85x' ('6.85 倍' in
    Chinese); a derived value with three significant digits (in percent with one decimal). Raises KeyError when absent."""
    from ..experiments.stats import format_mean_std

    value = number_value(number, results)
    if value["std"] is not None or value["mean"] is None:
        return format_mean_std(value, percent=number.percent)
    if number.percent:
        return f"{value['mean']:.1%}"
    if number.over:
        return f"{value['mean']:.2f}x" if language == "en" else f"{value['mean']:.2f} 倍"
    return f"{value['mean']:.3g}"


@dataclass(frozen=True)
class ClaimZh:
    """how: how the claim is tested and what the verdict rule asks, in Chinese (for an untested claim: why);
    numbers: its key numbers; title: for claims not on the card (their card text is '—')."""

    how: str
    numbers: tuple[Number, ...] = ()
    title: str = ""


def claims_zh_from_text(text: dict) -> tuple[dict[str, str], dict[str, ClaimZh], dict[str, str]]:
    """(verdicts in Chinese, claims in Chinese, plain words) from text/claims_zh.json. The three small-group
    remedies share one test ("remedy"), each with its own cell of small-group-remedies in place of {remedy}."""
    remedy = text["remedy"]

    def claim(entry: dict) -> ClaimZh:
        if "remedy" in entry:
            cell = entry["remedy"]
            return ClaimZh(
                remedy["how"], tuple(Number(**{**number, "cell": number["cell"].replace("{remedy}", cell)}) for number in remedy["numbers"])
            )
        return ClaimZh(entry["how"], tuple(Number(**number) for number in entry.get("numbers", ())), entry.get("title", ""))

    return dict(text["verdicts"]), {key: claim(entry) for key, entry in text["claims"].items()}, dict(text["plain_words"])


# PLAIN_ZH: "in plain words" for the claims the drill explains in Chinese: what the numbers mean, whatever the
# verdict (claims.md's English explanations are written from the numbers; these say the mechanism)
VERDICTS_ZH, CLAIMS_ZH, PLAIN_ZH = load_text("claims_zh.json", claims_zh_from_text)
# SCOPE_ZH: claims.md's preamble in Chinese (what each verdict means and what "here" is); the settings follow from the results
SCOPE_ZH: str = load_text("claims_zh.json", lambda text: str(text["scope"]))


def course_results_folder() -> Path:
    """Where the course reads results: data/results/, or the folder named by GRPO_LAB_RESULTS_DIR."""
    from ..experiments.runner import results_folder
    from .notebook import RESULTS_DIR_ENV

    return results_folder(directory=os.environ.get(RESULTS_DIR_ENV) or None)


def claims_audit() -> str:
    """The text of claims.md, the card's claims with their verdicts (``python -m grpo_lab sweep claims``)."""
    path = course_results_folder() / "claims.md"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: make it with `python -m grpo_lab sweep claims`")
    return path.read_text()


def cached_results() -> dict:
    """Every cached experiment result, by name (data/results/, or the folder in GRPO_LAB_RESULTS_DIR)."""
    from ..experiments.claims_report import available_results

    return available_results(course_results_folder())


def results_in(regime: str) -> dict:
    """The cached results of one regime, by name (empty when it has none)."""
    from ..experiments.claims_report import available_results

    return available_results(course_results_folder(), regime=regime)


def regime_results() -> dict[str, dict]:
    """{regime: {name: result}} of the cached results of every regime (catalog.REGIMES) that has some, the gentle one first."""
    from ..experiments.catalog import DEFAULT_REGIME, REGIMES
    from ..experiments.claims_report import available_results

    found = {regime: available_results(course_results_folder(), regime=regime) for regime in REGIMES}
    return {regime: results for regime, results in found.items() if results or regime == DEFAULT_REGIME}


def results_sources(results: dict | None = None) -> list[str]:
    """One line per result the drill reads: its folder, whether it is a --fast run, when and by which command it was made."""
    results = cached_results() if results is None else results
    folder = course_results_folder()
    return [
        f"{name}: {folder / (name + '.json')} ({'fast' if result.get('fast') else 'full'} run, {result.get('created', '?')}): "
        f"`{result.get('command', '?')}`"
        for name, result in results.items()
    ]


def result_setting(name: str, results: dict, language: str = "en") -> str:
    """The setting one experiment's numbers hold in, from its result file: its regime (when the result names
    one), its default task, reference policy and learning rate (a cell may change one: its label says so),
    seeds and whether it was a --fast run; in English or Chinese."""
    from ..experiments.catalog import REGIMES

    result = results[name]
    train = {**result.get("train_defaults", {}), **(REGIMES[result["regime"]].train if result.get("regime") in REGIMES else {})}
    fast = bool(result.get("fast"))
    if language == "en":
        words = {"regime": "regime", "task": "task", "reference": "reference", "lr": "lr"}
        run = f"{result.get('seeds', '?')} seeds, {'fast' if fast else 'full'} run"
        separator, colon = ", ", ": "
    else:
        words = {"regime": "设定", "task": "任务", "reference": "参考策略", "lr": "学习率"}
        run = f"{result.get('seeds', '?')} 个种子，{'快速' if fast else '完整'}运行"
        separator, colon = "，", "："
    parts = [f"{words['regime']} {result['regime']}"] if result.get("regime") else []
    parts += [f"{words[key]} {train[key]}" for key in ("task", "reference", "lr") if key in train]
    return name + colon + separator.join([*parts, run])


def findings(keys: list[str] | None = None, results: dict | None = None, regime: str = "gentle") -> list[tuple]:
    """(claim, finding) for the claims with these keys (all when None), in the order given, from
    ``results`` (default: the cached results) of ``regime`` (a claim measured only in another regime is 'not tested' here)."""
    from ..experiments.claims import CLAIMS
    from ..experiments.claims_report import regime_finding

    by_key = {claim.key: claim for claim in CLAIMS}
    unknown = [key for key in keys or [] if key not in by_key]
    if unknown:
        raise ValueError(f"claim key(s) {', '.join(unknown)} not valid: choose from {', '.join(by_key)}")
    results = cached_results() if results is None else results
    return [(by_key[key], regime_finding(by_key[key], results, regime)) for key in (keys or list(by_key))]


def other_regime_findings(claim, by_regime: dict[str, dict]) -> dict:
    """{regime: finding} of one claim in every regime but the gentle one that has results (regime_results())."""
    from ..experiments.claims_report import regime_finding

    return {regime: regime_finding(claim, found, regime) for regime, found in by_regime.items() if regime != "gentle"}


def regime_table_markdown(keys: list[str] | None = None, only_changes: bool = True, language: str = "en") -> str:
    """A markdown table of each claim's verdict in every regime that has results (read from the result
    files, as claims.md judges them): the claims with these keys in the order given (all when None);
    with ``only_changes``, only those whose verdict is not the same everywhere it was tested."""
    from ..experiments.claims_report import regime_finding

    by_regime = regime_results()
    header = ("claim", *by_regime) if language == "en" else ("论断", *by_regime)
    rows = []
    for claim, _ in findings(keys, by_regime["gentle"]):
        verdicts = [regime_finding(claim, found, regime) for regime, found in by_regime.items()]
        tested = {finding.verdict for finding in verdicts if finding.verdict != UNTESTED_VERDICT}
        if only_changes and len(tested) < 2:
            continue
        words = [verdict_en(finding) if language == "en" else verdict_zh(finding) for finding in verdicts]
        rows.append((f"[{claim.key}] {claim.claim}", *words))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def quoted_number(number: Number, results: dict, language: str = "zh") -> str:
    """'label：mean ± std (n=seeds)', read from the result files; '无数据' ('no data') where the result lacks it."""
    label, colon, missing = (number.english or number.label, ": ", "no data in this result") if language == "en" else (number.label, "：", "无数据")
    try:
        return f"{label}{colon}{written_number(number, results, language)}"
    except KeyError:
        return f"{label}{colon}{missing}"


def print_findings(keys: list[str] | None = None, language: str = "en") -> None:
    """For each claim: its verdict, where the course teaches it, the card's words and the numbers
    (language "en": claims.md's evidence and explanation; "zh": CLAIMS_ZH's test and key numbers)."""
    if language not in ("en", "zh"):
        raise ValueError(f"language={language!r} is not valid: choose en or zh")
    by_regime = regime_results()
    results = by_regime["gentle"]
    for claim, finding in findings(keys, results):
        where = CLAIM_NOTEBOOKS.get(claim.key, "-")
        others = other_regime_findings(claim, by_regime)
        # a regime whose verdict differs from the gentle one's gets its own numbers: the card may be right only there
        differing = {regime: other for regime, other in others.items() if other.verdict != finding.verdict and other.verdict != UNTESTED_VERDICT}
        if language == "en":
            print(f"[{claim.key}] {claim.claim}  ->  {verdict_en(finding).upper()} (gentle regime)")
            print(f"    taught in: {where};  card: {claim.card}")
            print(f"    measured: {finding.evidence}")
            if finding.explanation:
                print(f"    in plain words: {finding.explanation}")
            if others:
                print("    other regimes: " + "; ".join(f"{regime}: {verdict_en(other)}" for regime, other in others.items()))
            for regime, other in differing.items():
                print(f"    in {regime}: {other.evidence}")
            continue
        chinese = CLAIMS_ZH[claim.key]
        print(f"[{claim.key}] {chinese.title or claim.card}  ->  {verdict_zh(finding)}（gentle 设定）")
        print(f"    对应笔记本：{where}")
        if claim.evaluate is None:
            print(f"    为什么不测：{chinese.how}")
            continue
        print(f"    怎么检验：{chinese.how}")
        missing = [name for name in claim.experiments if name not in results]
        if finding.verdict == UNTESTED_VERDICT and not missing:
            pass  # measured only in another regime: its numbers follow
        elif missing:
            print("    还没有结果：运行 " + "；".join(f"`python -m grpo_lab sweep {name}`" for name in missing))
        else:
            print("    关键数字：" + "；".join(quoted_number(number, results) for number in chinese.numbers))
        if claim.key in PLAIN_ZH:
            print(f"    通俗地说：{PLAIN_ZH[claim.key]}")
        if others:
            print("    其他设定：" + "；".join(f"{regime}：{verdict_zh(other)}" for regime, other in others.items()))
        for regime in differing:
            print(f"    在 {regime} 设定中：" + "；".join(quoted_number(number, by_regime[regime]) for number in chinese.numbers))


UNTESTED_VERDICT = "not tested"  # claims.UNTESTED, without importing the experiments at import time


NEAR_LINE_ZH = "（接近判定线）"


def verdict_en(finding) -> str:
    """A verdict as claims.md words it, with its mark when it hangs on a difference near the line: 'holds here (near the line)'."""
    return finding.verdict_text + (" (near the line)" if finding.near_line else "")


def verdict_zh(finding) -> str:
    """A verdict's Chinese name, with the detectable effect of 'not detected' ('未检出（检验力不足），可检出 ≥ 0.034')
    and the near-the-line mark ('成立（接近判定线）')."""
    if finding.verdict == "not detected" and finding.detectable is not None:
        words = f"{VERDICTS_ZH['not detected']}，可检出 ≥ {finding.detectable:.3g}"
    else:
        words = VERDICTS_ZH[finding.verdict]
    return words + (NEAR_LINE_ZH if finding.near_line else "")


def claims_audit_zh(results: dict | None = None) -> str:
    """The claims audit in Chinese, as markdown: claims.md's preamble (what the verdicts mean, what "here" is,
    each result's setting), then for every claim of the card (and of the literature), its verdict in
    each regime with results (one column each, as in claims.md), the notebook that teaches it, how it is
    tested, its key numbers per regime and the commands that regenerate them, from the same result files
    as claims.md. ``results``: the gentle regime's only (default: every regime's cached results)."""
    by_regime = regime_results() if results is None else {"gentle": results}
    settings = [f"- {result_setting(name, found, 'zh')}" for found in by_regime.values() for name in found]
    columns = " | ".join(f"结论：{regime}" for regime in by_regime)
    lines = [SCOPE_ZH, "", *settings, "", f"| # | 论断 | 实验 | {columns} |", "|---|---|---|" + "---|" * len(by_regime)]
    per_regime = {regime: findings(None, found, regime) for regime, found in by_regime.items()}
    sections = []
    for index, (claim, _) in enumerate(per_regime["gentle"], 1):
        chinese = CLAIMS_ZH[claim.key]
        title = chinese.title or claim.card
        experiments = "、".join(f"`{name}`" for name in claim.experiments) or "—"
        verdicts = " | ".join(f"**{verdict_zh(per_regime[regime][index - 1][1])}**" for regime in by_regime)
        lines.append(f"| {index} | {title}（{claim.key}） | {experiments} | {verdicts} |")
        body = [f"### {index}. {title}\n", f"*对应笔记本：* {CLAIM_NOTEBOOKS.get(claim.key, '-')}  "]
        if claim.evaluate is None:
            body.append(f"*结论：* **{VERDICTS_ZH[UNTESTED_VERDICT]}**；*为什么不测：* {chinese.how}")
            sections.append("\n".join(body))
            continue
        body.append(f"*怎么检验：* {chinese.how}  ")
        for regime, found in by_regime.items():
            finding = per_regime[regime][index - 1][1]
            body.append(f"*{regime} 设定，结论：* **{verdict_zh(finding)}**  ")
            missing = [name for name in claim.experiments if name not in found]
            if finding.verdict == UNTESTED_VERDICT and not missing:
                continue  # measured only in another regime
            if missing:
                body.append("*还没有结果：* 运行 " + "；".join(f"`python -m grpo_lab sweep {name}`" for name in missing) + "  ")
                continue
            body.append("*关键数字：* " + "；".join(quoted_number(number, found) for number in chinese.numbers) + "  ")
            body.append("*重新生成：* " + "；".join(f"`{found[name]['command']}`" for name in claim.experiments) + "  ")
        if claim.key in PLAIN_ZH:
            body.append(f"*通俗地说：* {PLAIN_ZH[claim.key]}")
        sections.append("\n".join(body))
    return "\n".join(lines) + "\n\n" + "\n\n".join(sections) + "\n"


def quiz_from_text(items: list) -> list[dict]:
    """The quiz of text/quiz.json, checked: for each question, where the course shows it ("source"), the
    index of the right option ("answer"), and per language the question, its options and why each is right or wrong."""
    for index, item in enumerate(items, 1):
        for language in ("en", "zh"):
            text = item[language]
            if not 0 <= item["answer"] < len(text["options"]) == len(text["why"]):
                raise ValueError(f"question {index} ({language}) needs one explanation per option and an answer index among them")
    return items


QUIZ = load_text("quiz.json", quiz_from_text)


def quiz_questions(language: str = "en") -> list[Question]:
    """The drill's self-check questions, in English or Chinese (the same questions)."""
    from .widgets import Question

    return [Question(item[language]["question"], item[language]["options"], item["answer"], item[language]["why"], item["source"]) for item in QUIZ]


def quiz(language: str = "en") -> Quiz:
    """The drill's quiz as a widget: choosing an answer shows at once whether it is right and why."""
    from .widgets import Quiz

    return Quiz(quiz_questions(language), language)
