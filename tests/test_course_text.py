"""The course's text is data (grpo_lab/course/text/*.json): every file is read by the course, and a
missing or broken file is one clear error naming it."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from conftest import assert_one_line_naming

from grpo_lab.course import drill, drill_answers, text_files


def test_every_text_file_is_valid_json_that_the_course_reads():
    names = sorted(path.name for path in text_files.TEXT_DIR.glob("*.json"))
    assert names == [
        "answers.json",
        "claim_notebooks.json",
        "claims_zh.json",
        "follow_ups.json",
        "labels.json",
        "plain_verdicts.json",
        "quiz.json",
        "reading.json",
    ]
    for name in names:
        assert text_files.load_text(name, lambda data: data), name


def test_a_missing_file_names_it(tmp_path, monkeypatch):
    monkeypatch.setattr(text_files, "TEXT_DIR", tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        text_files.load_text("quiz.json", list)
    assert_one_line_naming(caught.value, tmp_path / "quiz.json")


def test_a_file_that_is_not_json_names_it_and_where(tmp_path, monkeypatch):
    monkeypatch.setattr(text_files, "TEXT_DIR", tmp_path)
    (tmp_path / "quiz.json").write_text('[{"source": "01 §2",]', encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        text_files.load_text("quiz.json", list)
    assert_one_line_naming(caught.value, tmp_path / "quiz.json", "line 1 column 21")  # the file, and where in it


def test_a_file_without_a_field_the_course_needs_names_the_file_and_the_field(tmp_path, monkeypatch):
    quiz = json.loads((text_files.TEXT_DIR / "quiz.json").read_text(encoding="utf-8"))
    del quiz[2]["zh"]["why"]
    monkeypatch.setattr(text_files, "TEXT_DIR", tmp_path)
    (tmp_path / "quiz.json").write_text(json.dumps(quiz, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        text_files.load_text("quiz.json", drill.quiz_from_text)
    assert_one_line_naming(caught.value, tmp_path / "quiz.json", "'why'")


def test_a_quiz_answer_outside_its_options_is_malformed(tmp_path, monkeypatch):
    quiz = json.loads((text_files.TEXT_DIR / "quiz.json").read_text(encoding="utf-8"))
    quiz[0]["answer"] = len(quiz[0]["en"]["options"])
    monkeypatch.setattr(text_files, "TEXT_DIR", tmp_path)
    (tmp_path / "quiz.json").write_text(json.dumps(quiz, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        text_files.load_text("quiz.json", drill.quiz_from_text)
    assert_one_line_naming(caught.value, tmp_path / "quiz.json", "1", "en")  # the file, the question and its language


def test_an_answer_number_that_no_sentence_quotes_is_malformed():
    text = json.loads((text_files.TEXT_DIR / "answers.json").read_text(encoding="utf-8"))
    text["numbers"]["spare"] = dict(text["numbers"]["tied_g8"], metric="critic_parameters")
    with pytest.raises(ValueError) as caught:
        drill_answers.answers_from_text(text)
    assert_one_line_naming(caught.value, "spare")


def test_plain_words_without_a_language_are_malformed(tmp_path, monkeypatch):
    text = json.loads((text_files.TEXT_DIR / "plain_verdicts.json").read_text(encoding="utf-8"))
    del text["leads"]["zh"]
    monkeypatch.setattr(text_files, "TEXT_DIR", tmp_path)
    (tmp_path / "plain_verdicts.json").write_text(json.dumps(text, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        text_files.load_text("plain_verdicts.json", drill.plain_words_from_text)
    assert_one_line_naming(caught.value, tmp_path / "plain_verdicts.json", "'leads'")


def test_the_remedies_share_one_test():
    for key in ("g2-ema", "g2-kl", "g2-lr"):
        assert drill.CLAIMS_ZH[key].how == drill.CLAIMS_ZH["g2-ema"].how


ROOT = Path(__file__).resolve().parent.parent
# "04a §1", "05a §3", "08 §05b": a notebook's number, then a section ("## 3. ..."; in 08 "## 05b · ...")
SECTION_POINTER = re.compile(r"(?<![\d.])(0\d[a-c]?),? ?§ ?(\d+[a-z]?)")


def notebook_sections() -> dict[str, set[str]]:
    """{notebook number: the sections its headings name}: '04a' -> {'1'}, '08' -> {'01b', '04a', ...}."""
    sections = {}
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        headings = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown")
        sections[path.stem.split("_")[0]] = set(re.findall(r"^#{2,3} (\d+[a-z]?)(?:\.| ·) ", headings, flags=re.MULTILINE))
    return sections


def test_every_section_pointer_names_a_section_that_exists():
    """A pointer such as '04 §1' written before 04 was split into 04a-c fails here: the course's text,
    notebooks, library strings and READMEs point only at headings that exist."""
    sections = notebook_sections()
    files = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "grpo_lab").rglob("*.py"), *text_files.TEXT_DIR.glob("*.json")]
    files += [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "data" / "results" / "README.md", ROOT / "data" / "results" / "claims.md"]
    broken = [
        f"{path.relative_to(ROOT)}: {match[0]!r}"
        for path in files
        for match in SECTION_POINTER.finditer(path.read_text(encoding="utf-8"))
        if match[2] not in sections.get(match[1], set())
    ]
    assert not broken, "pointers to no section:\n" + "\n".join(broken)


def test_a_notebook_reads_another_regimes_cached_result_and_can_rerun_it(monkeypatch):
    """04a, 04c, 05a and 05c print the regime numbers their prose quotes with load_or_run(..., regime=R),
    and RERUN = True re-runs that regime's experiment, as it does the gentle one's."""
    from grpo_lab.course import notebook

    monkeypatch.delenv(notebook.RESULTS_DIR_ENV, raising=False)
    result = notebook.load_or_run("small-group-remedies", regime="large-step")
    assert "--regime large-step" in result["command"]
    assert notebook.load_or_run("small-group-remedies")["command"] != result["command"]
    calls = []
    monkeypatch.setattr("grpo_lab.experiments.run_experiment", lambda name, **options: calls.append((name, options["regime"])) or {})
    notebook.load_or_run("critic-fit", rerun=True, regime="long-answer")
    assert calls == [("critic-fit", "long-answer")]


def test_a_printed_table_fits_a_notebook_width_and_keeps_every_value(capsys):
    from grpo_lab.course.notebook import TABLE_CHARACTERS, TABLE_LABEL_CHARACTERS, mean_std_text, print_table
    from grpo_lab.experiments import load_result
    from grpo_lab.experiments.catalog import cell_label

    versus = load_result("grpo-vs-ppo")  # the widest table of the course: long labels, five metrics
    metrics = ["late_eval_accuracy", "samples_to_target", "time_to_target_s", "time_per_step_s", "eval_max_drawdown"]
    print_table(versus, metrics, digits=2)
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= TABLE_CHARACTERS
    for cell in versus["cells"]:
        for metric in metrics:
            assert mean_std_text(versus, cell["id"], metric, 2) in printed
        for piece in textwrap.wrap(cell_label("grpo-vs-ppo", cell["id"]), TABLE_LABEL_CHARACTERS):  # the label, wrapped, not cut
            assert piece in printed, piece
    assert printed.count("late_eval_accuracy") == 1 and "eval_max_drawdown" in printed  # each metric once, in some block


def test_a_count_is_printed_in_whole_numbers_and_a_fraction_with_its_digits():
    from grpo_lab.course.notebook import mean_std_text
    from grpo_lab.experiments.runner import load_result

    result = load_result("grpo-vs-ppo")
    assert re.fullmatch(r"\d+ ± \d+ \(8 seeds\)", mean_std_text(result, "grpo", "samples_to_target"))
    assert re.fullmatch(r"0\.\d{3} ± 0\.\d{3} \(8 seeds\)", mean_std_text(result, "grpo", "late_eval_accuracy"))
