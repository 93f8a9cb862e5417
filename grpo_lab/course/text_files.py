"""The course's text as data: the JSON files in ``grpo_lab/course/text/`` (quiz, the claims in Chinese,
model answers, follow-ups, reading list, widget labels), read by the modules that show them.

Text a learner reads lives in those files; code that computes or formats numbers stays in Python.
A file that is missing, is not valid JSON, or lacks a field the course needs is one clear error
naming the file (a wheel that left the files out, or a hand edit that broke one).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

TEXT_DIR = Path(__file__).resolve().parent / "text"
T = TypeVar("T")


def load_text(name: str, build: Callable[[Any], T]) -> T:
    """``build(data)`` for the JSON in text/NAME; ``build`` turns it into the objects the course uses
    (a KeyError, TypeError, ValueError or IndexError it raises is reported as a malformed file)."""
    path = TEXT_DIR / name
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} is missing: the course's text files ship in grpo_lab/course/text/ (reinstall grpo-lab)") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    try:
        return build(data)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        if isinstance(error, KeyError):
            detail = f"missing key {error}"
        else:
            detail = str(error) if type(error) is ValueError else f"{type(error).__name__}: {error}"
        raise ValueError(f"{path} is malformed: {detail}") from None
