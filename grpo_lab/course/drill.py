"""The card's claims as the course shows them, and the drill's quiz (notebooks 00-06, English and Chinese).

The statements rest on the card's claims as ``experiments/claims.py`` judges them (the same verdicts
as data/results/claims.md). The main path and the drill show each verdict as one plain sentence
(``plain_verdict``, ``plain_verdicts_markdown``): whether the card is right here, what was found and the
numbers that decide it, with their unit and regime. Notebook 08 shows the auditor's view:
``print_findings(keys, language)`` prints claims.md's evidence and explanation (in Chinese how the
claim is tested, ``CLAIMS_ZH``, and its key numbers) and ``regime_table_markdown`` every regime's
verdict. ``quiz(language)`` builds the self-check quiz.

The text is data: the plain sentences' words in text/plain_verdicts.json, the claims in Chinese, their
plain-words summaries and the verdicts' names in text/claims_zh.json, the quiz in text/quiz.json, where
each claim is taught in text/claim_notebooks.json.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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
    means ('6.85x', or in percent); with ``minus`` (another cell's id), the difference of the two cells' means (with
    ``percent``: in accuracy points); with cell "derived", a value of the result's ``derived`` block (metric: a dotted path).
    With ``regime`` (catalog.REGIMES), it is read from that regime's result files, whatever results are passed.
    With experiment SCALE_MODEL, it is counted on paper, not measured: metric names a function of course/scale_cost.py
    (SCALE_MODEL_VALUES) and cell the model size in billions it is given ("7")."""

    label: str  # in Chinese
    experiment: str
    cell: str
    metric: str
    percent: bool = False
    english: str = ""  # the label in English, for the numbers the English drill quotes
    over: str = ""
    regime: str = ""
    minus: str = ""


DERIVED = "derived"
SCALE_MODEL = "scale-cost"  # not an experiment: the cost model of course/scale_cost.py
SCALE_MODEL_VALUES = ("training_state_gb",)  # its functions of a model size that a Number may quote


def number_value(number: Number, results: dict) -> dict:
    """{mean, std, n} of a quoted number (std None for a ratio or a derived value; mean None when absent).
    Raises KeyError when the result or its cell does not exist."""
    from ..experiments.findings import cell_summary

    if number.experiment == SCALE_MODEL:
        from . import scale_cost

        if number.metric not in SCALE_MODEL_VALUES:
            raise KeyError(number.metric)
        return {"mean": getattr(scale_cost, number.metric)(float(number.cell)), "std": None, "n": 0}
    if number.regime:
        results = results_in(number.regime)
    if number.cell == DERIVED:
        value = results[number.experiment][DERIVED]
        for key in number.metric.split("."):
            value = value[key]
        return {"mean": value, "std": None, "n": 0}
    value = cell_summary(results, number.experiment, number.cell, number.metric)
    if number.minus:
        other = cell_summary(results, number.experiment, number.minus, number.metric)["mean"]
        return {"mean": value["mean"] - other if value["mean"] is not None and other is not None else None, "std": None, "n": 0}
    if not number.over:
        return value
    below = cell_summary(results, number.experiment, number.over, number.metric)["mean"]
    ratio = value["mean"] / below if value["mean"] is not None and below else None
    return {"mean": ratio, "std": None, "n": 0}


def written_number(number: Number, results: dict, language: str = "en") -> str:
    """A quoted number as claims.md writes it: 'mean ± std (n=seeds)'; a ratio as '6.85x' ('6.85 倍' in
    Chinese); a difference in accuracy points ('+15.6 points', '+15.6 个百分点'); a derived or modelled value with three
    significant digits (in percent with one decimal). Raises KeyError when absent."""
    from ..experiments.stats import format_mean_std

    value = number_value(number, results)
    if value["std"] is not None or value["mean"] is None:
        return format_mean_std(value, percent=number.percent)
    if number.minus and number.percent:
        return f"{100 * value['mean']:+.1f} " + ("points" if language == "en" else "个百分点")
    if number.percent:
        return f"{value['mean']:.1%}"
    if number.over:
        return f"{value['mean']:.2f}x" if language == "en" else f"{value['mean']:.2f} 倍"
    return f"{value['mean']:.3g}"


@dataclass(frozen=True)
class ClaimZh:
    """how: how the claim is tested and what the verdict rule asks, in Chinese (for an untested claim: why);
    title: for claims not on the card (their card text is '—'). Its key numbers are the ones its rule reads
    (key_numbers_zh), not a list of its own."""

    how: str
    title: str = ""


def claims_zh_from_text(text: dict) -> tuple[dict[str, str], dict[str, ClaimZh]]:
    """(verdicts in Chinese, claims in Chinese) from text/claims_zh.json. The three small-group remedies share one
    test ("remedy")."""

    def claim(entry: dict) -> ClaimZh:
        return ClaimZh(text["remedy"]["how"]) if "remedy" in entry else ClaimZh(entry["how"], entry.get("title", ""))

    return dict(text["verdicts"]), {key: claim(entry) for key, entry in text["claims"].items()}


# "in plain words", in Chinese, is plain_sentence(verdict, "zh"): worded from the verdict and its numbers, as claims.md's
# English explanations are, so that it cannot drift from the data
VERDICTS_ZH, CLAIMS_ZH = load_text("claims_zh.json", claims_zh_from_text)
# SCOPE_ZH: claims.md's preamble in Chinese (what each verdict means and what "here" is); the settings follow from the results
SCOPE_ZH: str = load_text("claims_zh.json", lambda text: str(text["scope"]))
# (English, Chinese) phrases that write a comparison's label (claims.py's, in English) in Chinese, applied in order
LABEL_PHRASES_ZH: list[tuple[str, str]] = load_text(
    "claims_zh.json", lambda text: [(str(english), str(chinese)) for english, chinese in text["comparison_phrases"]["phrases"]]
)

# each metric's name in Chinese, by its name before any '.' (text/claims_zh.json "metrics")
METRICS_ZH: dict[str, str] = load_text(
    "claims_zh.json", lambda text: {name: str(words) for name, words in text["metrics"].items() if name != "_about"}
)

ONLY_IN_ZH: dict[str, str] = load_text("claims_zh.json", lambda text: {name: str(why) for name, why in text["only_in"].items() if name != "_about"})


def untested_zh(verdict) -> str:
    """Why a claim is not tested in a regime, in Chinese, where the reason is that its experiments do not run there
    (catalog.only_in_words); otherwise the rule's own explanation."""
    from ..experiments.catalog import EXPERIMENTS, experiments_in

    skipped = [name for name in verdict.claim.experiments if name not in experiments_in(verdict.regime)]
    if not skipped:
        return verdict.explanation
    return "；".join(f"`{name}` 只在 {'、'.join(EXPERIMENTS[name].only_in)} 设定中运行：{ONLY_IN_ZH[name]}" for name in skipped)


def label_zh(label: str) -> str:
    """A comparison's label in Chinese: 'equal samples: G=2 vs G=8' -> '样本数相同：G=2 对 G=8'."""
    for english, chinese in LABEL_PHRASES_ZH:
        label = label.replace(english, chinese)
    return label


def course_results_folder() -> Path:
    """Where the course reads results: data/results/, or the folder named by GRPO_LAB_RESULTS_DIR."""
    from ..experiments.runner import results_folder
    from .notebook import RESULTS_DIR_ENV

    return results_folder(directory=os.environ.get(RESULTS_DIR_ENV) or None)


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


def regime_replications() -> dict[str, dict]:
    """{regime: {name: replication}} of the cached replications (``sweep NAME --replicate``) of every regime."""
    from ..experiments.catalog import REGIMES
    from ..experiments.claims_report import available_results

    return {regime: available_results(course_results_folder(), regime=regime, replicate=True) for regime in REGIMES}


def verdicts_by_regime(by_regime: dict[str, dict] | None = None) -> dict[str, dict]:
    """{regime: {claim key: Verdict}}, judged as claims.md judges them (claims.verdict_table, one false-discovery
    level over the table): from the cached results and replications of every regime (default), or from
    {regime: {name: result}} (no replications)."""
    from ..experiments.claims import verdict_table

    table = verdict_table(regime_results(), regime_replications()) if by_regime is None else verdict_table(by_regime)
    return {regime: {verdict.claim.key: verdict for verdict in verdicts} for regime, verdicts in table.items()}


def findings(keys: list[str] | None = None, results: dict | None = None, regime: str = "gentle") -> list[tuple]:
    """(claim, Verdict) for the claims with these keys (all when None), in the order given: from the cached table of
    every regime (default), or judged on ``results`` of ``regime`` alone (a claim measured only in another regime is
    'not tested' there)."""
    from ..experiments.claims import CLAIMS

    by_key = {claim.key: claim for claim in CLAIMS}
    table = verdicts_by_regime(None if results is None else {regime: results})
    return [(by_key[key], table[regime][key]) for key in claim_keys(keys)]


def claim_keys(keys: list[str] | None) -> list[str]:
    """The claim keys given (every claim's, in CLAIMS' order, when None; none for an empty list); an unknown key is one
    clear error."""
    from ..experiments.claims import CLAIMS

    known = [claim.key for claim in CLAIMS]
    unknown = [key for key in keys or [] if key not in known]
    if unknown:
        raise ValueError(f"claim key(s) {', '.join(unknown)} not valid: choose from {', '.join(known)}")
    return known if keys is None else list(keys)


def other_regime_findings(claim, table: dict[str, dict]) -> dict:
    """{regime: Verdict} of one claim in every regime but the gentle one (table: ``verdicts_by_regime()``)."""
    return {regime: verdicts[claim.key] for regime, verdicts in table.items() if regime != "gentle"}


def regime_table_markdown(keys: list[str] | None = None, only_changes: bool = True, language: str = "en") -> str:
    """A markdown table of each claim's verdict in every regime that has results (as claims.md judges them): the
    claims with these keys in the order given (all when None); with ``only_changes``, only those whose verdict is not
    the same everywhere it was tested."""
    table = verdicts_by_regime()
    header = ("claim", *table) if language == "en" else ("论断", *table)
    rows = []
    for claim, _ in findings(keys):
        verdicts = [by_key[claim.key] for by_key in table.values()]
        tested = {verdict.verdict for verdict in verdicts if verdict.verdict != UNTESTED_VERDICT}
        if only_changes and len(tested) < 2:
            continue
        words = [verdict_en(verdict) if language == "en" else verdict_zh(verdict) for verdict in verdicts]
        rows.append((f"[{claim.key}] {claim.claim}", *words))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def quoted_number(number: Number, results: dict, language: str = "zh") -> str:
    """'label：mean ± std (n=seeds)', read from the result files; '无数据' ('no data') where the result lacks it."""
    label, colon, missing = (number.english or number.label, ": ", "no data in this result") if language == "en" else (number.label, "：", "无数据")
    try:
        written = written_number(number, results, language)
        return f"{label}{colon}{written if language == 'en' else written.replace('n/a (no seed)', '无（没有种子有数值）')}"
    except KeyError:
        return f"{label}{colon}{missing}"


class _NotedSummary(dict):
    """A cell's summary that notes each metric read from it (rule_reads)."""

    def __init__(self, summary: dict, reads: list, cell: tuple[str, str]):
        super().__init__(summary)
        self.reads, self.cell = reads, cell

    def get(self, metric, default=None):
        self.reads.append((*self.cell, metric))
        return super().get(metric, default)

    def __getitem__(self, metric):
        self.reads.append((*self.cell, metric))
        return super().__getitem__(metric)


def rule_reads(claim, results: dict) -> list[tuple[str, str, str]]:
    """(experiment, cell id, metric) of every seed-mean summary the claim's rule reads from ``results``, each once, in the
    order it reads them: the numbers its finding is made of. [] for a claim no rule tests or whose results are missing."""
    if claim.evaluate is None or any(name not in results for name in claim.experiments):
        return []
    reads: list[tuple[str, str, str]] = []
    noted = {
        name: {**result, "cells": [{**cell, "summary": _NotedSummary(cell["summary"], reads, (name, cell["id"]))} for cell in result["cells"]]}
        for name, result in results.items()
    }
    claim.evaluate(noted)
    return list(dict.fromkeys(reads))


def metric_zh(metric: str) -> str:
    """A metric's name in Chinese: 'late_eval_accuracy' -> '后期准确率', 'net_snr.zscore' -> '净信噪比（zscore）'."""
    name, _, rest = metric.partition(".")
    return METRICS_ZH.get(name, name) + (f"（{rest}）" if rest else "")


def summary_zh(summary: dict) -> str:
    """findings.fmt in Chinese: '0.702 ± 0.012 (n=8)', with the seeds that never reached a target named
    ('14279 ± 4213 (n=6；8 个种子中 2 个没有达到)'), and '无（8 个种子都没有达到）' when none did."""
    from ..experiments.stats import format_mean_std

    values = summary.get("values") or []
    never = values.count(None) if "budget" in summary else 0
    if summary.get("mean") is None:
        return f"无（{len(values)} 个种子都没有达到）" if never else "无（没有种子）"
    text = format_mean_std(summary)
    return f"{text[:-1]}；{len(values)} 个种子中 {never} 个没有达到)" if never else text


def key_numbers_zh(claim, results: dict) -> str:
    """The Chinese audit's key numbers of a claim: every number its rule reads (rule_reads), as 'mean ± std (n=seeds)',
    grouped by metric: '后期准确率（`offset-and-scale`）：`none-offset0` 0.702 ± 0.012 (n=8)，`none-offset5` ...'."""
    from ..experiments.findings import cell_summary

    groups: dict[tuple[str, str], list[str]] = {}
    for name, cell_id, metric in rule_reads(claim, results):
        groups.setdefault((name, metric), []).append(f"`{cell_id}` {summary_zh(cell_summary(results, name, cell_id, metric))}")
    return "；".join(f"{metric_zh(metric)}（`{name}`）：" + "，".join(values) for (name, metric), values in groups.items())


def print_findings(keys: list[str] | None = None, language: str = "en") -> None:
    """For each claim: its verdict, where the course teaches it, the card's words and the numbers
    (language "en": claims.md's evidence and explanation; "zh": CLAIMS_ZH's test and key numbers)."""
    checked_language(language)
    by_regime = regime_results()
    results = by_regime["gentle"]
    table = verdicts_by_regime()
    for claim, _ in findings(keys):
        finding = table["gentle"][claim.key]
        where = CLAIM_NOTEBOOKS.get(claim.key, "-")
        others = other_regime_findings(claim, table)
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
            print(f"    关键数字：{key_numbers_zh(claim, results)}")
        print(f"    通俗地说：{plain_sentence(finding, 'zh', results)}")
        if others:
            print("    其他设定：" + "；".join(f"{regime}：{verdict_zh(other)}" for regime, other in others.items()))
        for regime in differing:
            print(f"    在 {regime} 设定中：{key_numbers_zh(claim, by_regime[regime])}")


UNTESTED_VERDICT = "not tested"  # claims.UNTESTED, without importing the experiments at import time


NEAR_LINE_ZH = "（接近判定线）"


# --- plain verdicts: one sentence per verdict, the form the main path shows ----------------------------------

LANGUAGES = ("en", "zh")
MOST_COMPARISONS_QUOTED = 3  # a plain sentence quotes at most this many comparisons and counts the rest (08 shows them all)


@dataclass(frozen=True)
class Reason:
    """One of the ways a rule can reach a verdict (text/plain_verdicts.json "reasons"): ``words`` ({language: text}) are
    said when every deciding comparison that ``when`` names went one of its listed directions. A key of ``when`` is words
    of a comparison's label, or "label/metric" where one label is compared in two metrics."""

    when: dict[str, tuple[str, ...]]
    words: dict[str, str]

    def applies(self, deciding, level: float) -> bool:
        for key, directions in self.when.items():
            label, _, metric = key.partition("/")
            named = [c for c in deciding if label in c.label and metric in ("", c.metric)]
            if not named or any(c.direction(level) not in directions for c in named):
                return False
        return True


@dataclass(frozen=True)
class PlainClaim:
    """One claim's plain words (text/plain_verdicts.json). found: {language: {verdict: what was found}}; leads:
    {language: {verdict: a lead of its own}} ('The card is too pessimistic here'); numbers: what a claim without deciding
    comparisons quotes instead, each label a template with {} for the number; quote_first: words of the labels of the
    comparisons that carry what the sentence says, quoted before the others that decided; reasons: {verdict: Reasons}, for
    a verdict that more than one outcome gives ('partly'): the found words are followed by each reason that applies."""

    found: dict[str, dict[str, str]]
    leads: dict[str, dict[str, str]]
    numbers: tuple[Number, ...] = ()
    quote_first: tuple[str, ...] = ()
    reasons: dict[str, tuple[Reason, ...]] = field(default_factory=dict)


def plain_words_from_text(text: dict) -> tuple[dict, dict[str, PlainClaim]]:
    """(the words every plain sentence shares, {claim key: PlainClaim}) from text/plain_verdicts.json. The remedies for
    G=2 share one wording ("remedy"), each with its own remedy's name in place of {remedy}."""
    claims = {}
    for key, entry in text["claims"].items():
        if "remedy" in entry:
            found = {
                language: {v: words.replace("{remedy}", entry["remedy"][language]) for v, words in text["remedy"][language].items()}
                for language in LANGUAGES
            }
        else:
            found = {language: dict(entry[language]) for language in LANGUAGES}
        leads = {language: dict(entry.get("leads", {}).get(language, {})) for language in LANGUAGES}
        numbers = tuple(Number(**number) for number in entry.get("numbers", ()))
        reasons = {
            verdict: tuple(Reason({k: tuple(v) for k, v in r["when"].items()}, {language: r[language] for language in LANGUAGES}) for r in listed)
            for verdict, listed in entry.get("reasons", {}).items()
        }
        claims[key] = PlainClaim(found, leads, numbers, tuple(entry.get("quote_first", ())), reasons)
    shared = {name: value for name, value in text.items() if name not in ("claims", "remedy")}
    for name, value in shared.items():
        if name not in ("units_zh", "unit_nouns_zh") and set(value) != set(LANGUAGES):
            raise ValueError(f"'{name}' needs exactly the languages {', '.join(LANGUAGES)}")
    return shared, claims


PLAIN_WORDS, PLAIN_CLAIMS = load_text("plain_verdicts.json", plain_words_from_text)
UNITS_ZH: dict[str, str] = PLAIN_WORDS["units_zh"]  # the units of experiments/findings.METRIC_UNITS, in Chinese
# what a difference in a unit is of, said before it in Chinese ('准确率差 +1.6 个百分点'); none for most units ('372 条回答')
UNIT_NOUNS_ZH: dict[str, str] = {unit: noun for unit, noun in PLAIN_WORDS["unit_nouns_zh"].items() if unit != "_about"}
NOT_REPLICATED_ZH = {None: "（尚未用新种子复现）", "did": "（新种子未复现）"}


def verdict_en(verdict) -> str:
    """A verdict as the course quotes it (claims.Verdict.course_text): 'holds here (not yet replicated)', 'partly (near the line)'."""
    return verdict.course_text


def verdict_words_zh(verdict) -> str:
    """A verdict's Chinese name, with the detectable effect of 'not detected' and its unit ('未检出（检验力不足），可检出的准确率差
    ≥ 1.1 个百分点')."""
    from ..experiments.findings import number_text

    words = VERDICTS_ZH[verdict.verdict]
    if verdict.verdict == "not detected" and verdict.detectable is not None:
        value, unit = verdict.detectable
        noun = UNIT_NOUNS_ZH.get(unit)
        words += f"，可检出{f'的{noun}差' if noun else ''} ≥ {number_text(value)} {UNITS_ZH.get(unit, unit)}"
    return words


def verdict_cell_zh(verdict) -> str:
    """The Chinese audit's verdict, as claims.md's verdict_cell: the verdict and its near-the-line mark (its replication
    has a column and a line of its own)."""
    return verdict_words_zh(verdict) + (NEAR_LINE_ZH if verdict.near_line else "")


def verdict_zh(verdict) -> str:
    """A verdict as the course quotes it in Chinese (verdict_en's): verdict_cell_zh, but a 'holds here' that fresh seeds
    did not confirm says so in place of the near-the-line mark."""
    from ..experiments.claims import REPLICATED

    if verdict.verdict == "holds here" and verdict.replication != REPLICATED:
        return verdict_words_zh(verdict) + NOT_REPLICATED_ZH[None if verdict.replication is None else "did"]
    return verdict_cell_zh(verdict)


def in_units_zh(metric: str, value: float) -> str:
    """A difference of ``metric`` in its Chinese unit: '1.1 个百分点', '372 条回答' (what it is a difference of: difference_zh)."""
    from ..experiments.findings import metric_unit, number_text

    unit, factor = metric_unit(metric)
    return f"{number_text(value * factor)} {UNITS_ZH.get(unit, unit)}"


def difference_zh(metric: str) -> str:
    """The word a difference of ``metric`` is called in Chinese: '准确率差' for accuracy, else '差'."""
    from ..experiments.findings import metric_unit

    return UNIT_NOUNS_ZH.get(metric_unit(metric)[0], "") + "差"


def comparison_zh(comparison, level: float, q: float | None = None) -> str:
    """One comparison as claims.md's Power line lists it, in Chinese (its label by label_zh):
    '每批只用一次，Critic：128 个 prompt × 1 对 16 × 8：准确率差 +1.6 个百分点，标准误 0.44 个百分点，
    Welch t(12.9)，p 0.0028，q 0.018，可检出 ≥ 1.7 个百分点（接近判定线）'."""
    import math

    if not math.isfinite(comparison.difference):
        return f"{label_zh(comparison.label)}：有一方没有数值"
    if comparison.identical:
        return f"{label_zh(comparison.label)}：逐个种子完全相同（{comparison.n[0]} 个种子）：按构造成立，不做检验，不计入错误发现率控制"
    test = f"Welch t({comparison.df:.3g})" if comparison.test == "welch" else "秩检验"
    if comparison.reached:
        test += f"，达到目标的种子 {comparison.reached[0]}/{comparison.n[0]} 与 {comparison.reached[1]}/{comparison.n[1]}"
    detectable = comparison.detectable(level)
    parts = [
        f"{difference_zh(comparison.metric)} {'+' if comparison.difference >= 0 else '−'}{in_units_zh(comparison.metric, abs(comparison.difference))}",
        f"标准误 {in_units_zh(comparison.metric, comparison.standard_error)}" if math.isfinite(comparison.standard_error) else "标准误无",
        test,
        f"p {comparison.p_value:.2g}",
        *([f"q {q:.2g}"] if q is not None else []),
        f"可检出 ≥ {in_units_zh(comparison.metric, detectable)}" if math.isfinite(detectable) else "可检出：无",
    ]
    return f"{label_zh(comparison.label)}：" + "，".join(parts) + (NEAR_LINE_ZH if q is not None and comparison.near_line(level) else "")


def replication_zh(verdict) -> str:
    """claims.Verdict.replication_text in Chinese: '已复现', '未复现（新种子：部分成立）', '未运行' or '—'."""
    from ..experiments.claims import REPLICATED

    if verdict.verdict == UNTESTED_VERDICT:
        return "—"
    if verdict.replication is None:
        return "未运行"
    return "已复现" if verdict.replication == REPLICATED else f"未复现（新种子：{VERDICTS_ZH[verdict.replication]}）"


def scope_numbers(table: dict[str, dict]) -> dict:
    """The numbers the audit's preamble states (claims.md's header gives the same): the target, the false discovery rate
    and the level it sets, the comparisons tested, the power, the first replication seed and the near-the-line band."""
    from ..experiments.catalog import REPLICATION_SEED_BASE, TARGET_ACCURACY
    from ..experiments.stats import ALPHA, NEAR_LINE, POWER

    verdicts = [verdict for per_regime in table.values() for verdict in per_regime.values()]
    level = verdicts[0].level if verdicts else ALPHA
    count = sum(1 for verdict in verdicts for c in verdict.finding.deciding if not c.identical)
    return {
        "target": TARGET_ACCURACY,
        "alpha": ALPHA,
        "level": level,
        "count": count,
        "power": POWER,
        "replication_base": REPLICATION_SEED_BASE,
        "near_low": NEAR_LINE[0],
        "near_high": NEAR_LINE[1],
    }


CLAIMS_ZH_FILE = "claims_zh.md"  # claims_zh_markdown() of the shipped results, beside claims.md (`python -m grpo_lab sweep claims`)


def claims_zh_markdown() -> str:
    """data/results/claims_zh.md's text: a title and claims_audit_zh() of every regime's cached results."""
    return (
        "# 论断审计（中文）：卡片上的每个论断、它的检验和数字\n\n由 `python -m grpo_lab sweep claims` 与 claims.md 一起生成，从不手工编辑。\n\n"
        + claims_audit_zh()
    )


def claims_audit_zh(results: dict | None = None) -> str:
    """The claims audit in Chinese, as markdown, laid out as claims.md and from the same verdicts (one judging of the
    table): the preamble (what the verdicts mean, what "here" is, each result's setting), then for every claim of the
    card (and of the literature), its verdict in each regime with results (one column each), the notebook that teaches
    it, how it is tested and, per regime, the verdict and its replication, the key numbers, the Power line (every
    deciding comparison with its difference, standard error, test, p, q and what the seeds could detect), the
    comparisons quoted but not deciding, the plain sentence (plain_sentence, worded from the verdict and its numbers)
    and the commands that regenerate them. ``results``: the gentle regime's only (default: every regime's cached results)."""
    from ..experiments.catalog import experiments_in

    by_regime = regime_results() if results is None else {"gentle": results}
    settings = [f"- {result_setting(name, found, 'zh')}" for found in by_regime.values() for name in found]
    columns = " | ".join(f"结论：{regime}" for regime in by_regime)
    table = verdicts_by_regime(None if results is None else by_regime)
    scope = SCOPE_ZH.format(**scope_numbers(table))
    lines = [scope, "", *settings, "", f"| # | 论断 | 实验 | {columns} | 新种子复现 |", "|---|---|---|" + "---|" * (len(by_regime) + 1)]
    per_regime = {regime: list(verdicts.values()) for regime, verdicts in table.items()}
    sections = []
    for index, verdict in enumerate(per_regime["gentle"], 1):
        claim = verdict.claim
        chinese = CLAIMS_ZH[claim.key]
        title = chinese.title or claim.card
        experiments = "、".join(f"`{name}`" for name in claim.experiments) or "—"
        verdicts = " | ".join(f"**{verdict_cell_zh(per_regime[regime][index - 1])}**" for regime in by_regime)
        replicated = "；".join(
            f"{regime}：{replication_zh(per_regime[regime][index - 1])}"
            for regime in by_regime
            if replication_zh(per_regime[regime][index - 1]) != "—"
        )
        lines.append(f"| {index} | {title}（{claim.key}） | {experiments} | {verdicts} | {replicated or '—'} |")
        body = [f"### {index}. {title}\n", f"*对应笔记本：* {CLAIM_NOTEBOOKS.get(claim.key, '-')}  "]
        if claim.evaluate is None:
            body.append(f"*结论：* **{VERDICTS_ZH[UNTESTED_VERDICT]}**；*为什么不测：* {chinese.how}")
            sections.append("\n".join(body))
            continue
        body.append(f"*怎么检验：* {chinese.how}  ")
        for regime, found in by_regime.items():
            finding = per_regime[regime][index - 1]
            body.append(f"**{regime} 设定** — *结论：* **{verdict_cell_zh(finding)}**；*新种子复现：* {replication_zh(finding)}  ")
            absent = [name for name in claim.experiments if name not in found]
            # a result this regime's sweep makes but that is not there yet (an experiment the regime leaves out is not missing)
            missing = [name for name in absent if name in experiments_in(regime)]
            if finding.verdict == UNTESTED_VERDICT and (absent or not claim.experiments) and not missing:
                body.append(f"*通俗地说：* {plain_sentence(finding, 'zh', found)}  ")
                continue  # measured only in another regime: the sentence says why (a rule that ran and found nothing to test shows its numbers)
            if missing:
                body.append("*还没有结果：* 运行 " + "；".join(f"`python -m grpo_lab sweep {name}`" for name in missing) + "  ")
                continue
            body.append(f"*关键数字（规则读取的每个数）：* {key_numbers_zh(claim, found)}  ")
            deciding = finding.finding.deciding
            power = "；".join(comparison_zh(c, finding.level, q) for c, q in zip(deciding, finding.q))
            body.append(f"*检验力（Power）：* {power or '这条规则不靠跨种子的比较判定（它读均值、计数或比值）'}  ")
            if finding.finding.auxiliary:
                body.append("*另外引用、不参与判定：* " + "；".join(comparison_zh(c, finding.level) for c in finding.finding.auxiliary) + "  ")
            body.append(f"*通俗地说：* {plain_sentence(finding, 'zh', found)}  ")
            body.append("*重新生成：* " + "；".join(f"`{found[name]['command']}`" for name in claim.experiments) + "  ")
        sections.append("\n".join(body))
    return "\n".join(lines) + "\n\n" + "\n\n".join(sections) + "\n"


def checked_language(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"language={language!r} is not valid: choose en or zh")
    return language


def unit_words(unit: str, language: str) -> str:
    """A unit of experiments/findings.METRIC_UNITS in the given language: 'accuracy points', '个百分点'."""
    return unit if language == "en" else UNITS_ZH.get(unit, unit)


def fresh_lead(verdict, language: str = "en") -> str | None:
    """What fresh seeds found, in the same plain words as the lead ('the card is right here'), where their verdict
    differs from the first seeds'; None where it agrees or was not measured."""
    from ..experiments.claims import REPLICATED

    if verdict.replication in (None, REPLICATED):
        return None
    other = PLAIN_CLAIMS[verdict.claim.key].leads[language].get(verdict.replication) or PLAIN_WORDS["leads"][language][verdict.replication]
    if language == "zh":
        return other
    first, _, rest = other.partition(" ")  # mid-sentence: 'the card is right here', but 'DAPO's claim', 'Dr. GRPO's claim'
    return (first.lower() if first in ("The", "We", "Not") else first) + " " + rest


def plain_lead(verdict, language: str = "en", with_fresh: bool = True) -> str:
    """Whether the card is right, in plain words: 'The card is wrong here', 'We cannot tell here'; a 'holds here' that
    fresh seeds have not checked says so ('..., not yet checked on fresh seeds'), and a verdict that fresh seeds did not
    repeat is said to be these seeds' ('... on these seeds'), followed, ``with_fresh``, by what fresh seeds found ('...;
    on fresh seeds, the card is right here'; plain_sentence says that in a sentence of its own)."""
    words = PLAIN_WORDS
    lead = PLAIN_CLAIMS[verdict.claim.key].leads[language].get(verdict.verdict) or words["leads"][language][verdict.verdict]
    fresh = fresh_lead(verdict, language)
    if fresh is not None:
        return words["not_replicated" if with_fresh else "these_seeds"][language].format(lead=lead, other=fresh)
    if verdict.replication is None and verdict.verdict == "holds here":
        return words["unreplicated"][language].format(lead=lead)
    return lead


def plain_comparison(comparison, level: float, language: str = "en") -> str:
    """One comparison in plain words: its label, the difference in its unit and whether it is beyond noise at ``level``:
    'same batches: group baseline vs learned critic, -0.41 accuracy points, within noise'."""
    import math

    from ..experiments.findings import metric_unit, number_text

    unit, factor = metric_unit(comparison.metric)
    if math.isfinite(comparison.difference):
        difference = ("+" if comparison.difference > 0 else "") + f"{number_text(comparison.difference * factor)} {unit_words(unit, language)}"
        if language == "zh" and unit in UNIT_NOUNS_ZH:
            difference = f"{difference_zh(comparison.metric)} {difference}"
    else:
        difference = PLAIN_WORDS["no_data"][language]
    # 'too small to count': beyond noise, but no larger than the smallest difference the claim's rule counts
    noise = (
        "identical"
        if comparison.identical
        else "beyond"
        if comparison.direction(level) != "same"
        else "small"
        if comparison.p_value <= level and math.isfinite(comparison.difference)
        else "within"
    )
    return PLAIN_WORDS["comparison"][language].format(
        label=comparison.label if language == "en" else label_zh(comparison.label), difference=difference, noise=PLAIN_WORDS["noise"][language][noise]
    )


def plain_number(number: Number, results: dict, language: str = "en") -> str:
    """A number a claim without deciding comparisons quotes, its mean in its label's template: 'a critic of 102,209
    parameters', '4.9x', '50.0%'; 'no data' where the results lack it."""
    try:
        value = number_value(number, results)["mean"]
    except KeyError:
        value = None
    if value is None:
        text = PLAIN_WORDS["no_data"][language]
    elif number.percent:
        text = f"{value:.1%}"
    elif number.over:
        text = f"{value:.1f}x" if language == "en" else f"{value:.1f} 倍"
    else:
        text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return (number.english if language == "en" else number.label).format(text)


def plain_sentence(verdict, language: str = "en", results: dict | None = None) -> str:
    """A verdict (claims.Verdict) as one sentence that cannot read backwards: whether the card is right (plain_lead), what
    was found (text/plain_verdicts.json), the numbers of the comparisons that decide it with their unit and noise (at
    most MOST_COMPARISONS_QUOTED, the decided ones first; a 'not detected' adds what the seeds could detect), and the
    regime. results: the regime's {name: result}, for a claim that quotes numbers (default: the cached ones)."""
    from ..experiments.findings import number_text

    checked_language(language)
    words, claim = PLAIN_WORDS, PLAIN_CLAIMS[verdict.claim.key]
    finding = verdict.finding
    if verdict.verdict == UNTESTED_VERDICT:
        found = claim.found[language].get(UNTESTED_VERDICT) or (verdict.explanation if language == "en" else untested_zh(verdict))
        evidence = []
    elif claim.numbers and not finding.deciding:
        found = claim.found[language][verdict.verdict]
        results = results_in(verdict.regime) if results is None else results
        evidence = [words["numbers_separator"][language].join(plain_number(number, results, language) for number in claim.numbers)]
    else:
        found = claim.found[language][verdict.verdict]
        quoted = sorted(  # stable: the decided ones first, among them those that carry the sentence (quote_first)
            finding.deciding or finding.auxiliary,
            key=lambda c: (c.direction(verdict.level) == "same", not any(words in c.label for words in claim.quote_first)),
        )
        if verdict.verdict == "not detected":  # the comparison that sets "could only detect" is among those quoted
            from ..experiments.claims import claimed_effect

            quoted.sort(key=lambda c: -c.detectable(verdict.level) / max(claimed_effect(verdict.claim, c), 1e-12))
        evidence = [plain_comparison(c, verdict.level, language) for c in quoted[:MOST_COMPARISONS_QUOTED]]
        if len(quoted) > MOST_COMPARISONS_QUOTED:
            evidence.append(words["more"][language].format(count=len(quoted) - MOST_COMPARISONS_QUOTED))
    reasons = [reason.words[language] for reason in claim.reasons.get(verdict.verdict, ()) if reason.applies(finding.deciding, verdict.level)]
    if reasons:  # after the found words, or in their place where a verdict's words are all in its reasons
        joined = words["separator"][language].join(reasons)
        found = words["reasons"][language].format(finding=found, reasons=joined) if found else joined
    if verdict.verdict == "not detected" and verdict.detectable is not None:
        value, unit = verdict.detectable
        size, noun = f"{number_text(value)} {unit_words(unit, language)}", UNIT_NOUNS_ZH.get(unit, "")
        evidence.append(words["detect"][language].format(size=size, noun=noun))
    evidence.append(words["regime"][language].format(regime=verdict.regime))
    sentence = words["sentence"][language].format(
        lead=plain_lead(verdict, language, with_fresh=False), finding=found, evidence=words["separator"][language].join(evidence)
    )
    fresh = fresh_lead(verdict, language)
    return sentence + (words["fresh_verdict"][language].format(other=fresh) if fresh is not None else "")


def plain_verdict(key: str, regime: str = "gentle", language: str = "en") -> str:
    """One claim's verdict in one regime as one plain sentence (plain_sentence), judged as claims.md judges it."""
    return plain_verdicts([key], regime, language)[0]


def plain_verdicts(keys: list[str], regime: str = "gentle", language: str = "en") -> list[str]:
    """plain_sentence of each claim in ``keys``, in one regime, from the cached results (one judging of the table)."""
    checked_language(language)
    keys = claim_keys(keys)
    table = verdicts_by_regime()
    if regime not in table:
        raise ValueError(f"regime={regime!r} has no cached results: choose from {', '.join(table)}")
    results = results_in(regime) if any(PLAIN_CLAIMS[key].numbers for key in keys) else {}
    return [plain_sentence(table[regime][key], language, results) for key in keys]


def plain_verdicts_markdown(keys: list[str], regime: str = "gentle", language: str = "en") -> str:
    """A markdown list, one plain sentence per claim ('- **[offset]** The card is partly right here: ...')."""
    return "\n".join(f"- **[{key}]** {sentence}" for key, sentence in zip(claim_keys(keys), plain_verdicts(keys, regime, language)))


def verdict_overview_markdown(language: str = "en", regime: str = "gentle") -> str:
    """Every claim in one compact markdown table: its key, what the card says and whether it is right here (plain_lead)."""
    checked_language(language)
    table = verdicts_by_regime()[regime]
    header = "| claim | the card says | here |" if language == "en" else "| 论断 | 卡片的说法 | 这里 |"
    rows = []
    for claim, _ in findings():
        says = claim.claim if language == "en" else CLAIMS_ZH[claim.key].title or claim.card
        rows.append(f"| [{claim.key}] | {says} | {plain_lead(table[claim.key], language)} |")
    return "\n".join([header, "|---|---|---|", *rows])


def regimes_markdown() -> str:
    """The regimes the experiments run in (catalog.REGIMES), one line each: its name, settings and why it was chosen."""
    from ..experiments.catalog import DEFAULT_REGIME, REGIMES

    return "\n".join(f"- **{name}**{' (the default)' if name == DEFAULT_REGIME else ''}: {regime.why}" for name, regime in REGIMES.items())


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
