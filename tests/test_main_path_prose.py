"""The main-path notebooks' prose reads in plain sentences: a learner once met 60-100-word sentences in 01b, 02, 04b,
04c and 05c, so no sentence of a markdown cell (tables and code blocks excluded) may run past MAX_WORDS words."""

from __future__ import annotations

import re

import nbformat
import pytest
from test_notebooks import COURSE, NOTEBOOKS_DIR

# every unit a learner reads from 00 to 05c, the interactive lab included (the drills and the appendix are not prose)
PROSE_NOTEBOOKS = tuple(name for name in COURSE if not name.startswith(("06_", "08_")))
MAX_WORDS = 50

FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1[^\n]*$", flags=re.MULTILINE | re.DOTALL)
TABLE_LINE = re.compile(r"^\s*\|.*$", flags=re.MULTILINE)
CODE_SPAN = re.compile(r"(`+).+?\1", flags=re.DOTALL)
DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", flags=re.DOTALL)
INLINE_MATH = re.compile(r"\$[^$\n]+\$")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
HTML_TAG = re.compile(r"<[^>\n]+>")
# a heading, list item or block quote starts a new sentence; its marker is not a word
LINE_MARKER = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)")
# '. ', '? ' or '! ' before a capital or '(', a closing bold, italic, bracket or quote and an opening one allowed around it
SENTENCE_END = re.compile(r"(?<=[.?!])([*)\"'”’]*)\s+(?=[*\"'“‘]*[A-Z(])")
WORD = re.compile(r"\w")


def prose_sentences(markdown: str) -> list[str]:
    """The sentences of a markdown cell: code blocks and table lines dropped; a code span, a formula and a link each
    one word (the link its text); split at '. ', '? ' or '! ' before a capital or '(', at blank lines and at list
    items and headings."""
    text = TABLE_LINE.sub("", FENCE.sub("", markdown))
    text = CODE_SPAN.sub(" CODE ", text)
    text = DISPLAY_MATH.sub(" MATH ", text)
    text = INLINE_MATH.sub(" MATH ", text)
    text = HTML_TAG.sub(" ", LINK.sub(r"\1", text))
    sentences = []
    for block in re.split(r"\n\s*\n", text):
        items: list[str] = []
        for line in block.splitlines():
            if LINE_MARKER.match(line) or not items:
                items.append(LINE_MARKER.sub("", line))
            else:
                items[-1] += " " + line
        for item in items:
            sentences += [sentence.strip() for sentence in SENTENCE_END.sub(r"\1\n", item).split("\n") if sentence.strip()]
    return sentences


def word_count(sentence: str) -> int:
    return sum(1 for token in sentence.split() if WORD.search(token))


@pytest.mark.parametrize("name", PROSE_NOTEBOOKS)
def test_no_main_path_sentence_is_longer_than_a_learner_reads_easily(name):
    notebook = nbformat.read(NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
    long = [
        f"{name} cell {index}: {word_count(sentence)} words: {sentence[:80]!r}"
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown"
        for sentence in prose_sentences(cell.source)
        if word_count(sentence) > MAX_WORDS
    ]
    assert not long, f"split these sentences into plain ones of at most {MAX_WORDS} words:\n" + "\n".join(long)
