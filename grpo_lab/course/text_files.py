"""The course's text as data: the JSON files in ``grpo_lab/course/text/`` (quiz, the claims in Chinese,
model answers, follow-ups, reading list, widget labels), read by the modules that show them.

Text a learner reads lives in those files; code that computes or formats numbers stays in Python.
A file that is missing, is not UTF-8 JSON, or lacks a field the course needs is one clear error
naming the file (a wheel that left the files out, or a hand edit that broke one), when it is read:
a null or a fraction anywhere (the text holds strings, whole numbers and booleans only), or a
value of another type than the field of the object it builds declares (``Sentence.text: str``),
is refused then, not when a learner's cell first uses it.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
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
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text (byte {error.start} is {error.object[error.start]:#04x}): save it as UTF-8") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    except RecursionError:
        raise ValueError(f"{path} is malformed: nested too deeply") from None
    try:
        problem = leaf_problem(data, "")
        if problem:
            raise ValueError(problem)
        built = build(data)
        problem = built_problem(built, "")
        if problem:
            raise ValueError(problem)
        return built
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError) as error:
        if isinstance(error, KeyError):
            detail = f"missing key {error}"
        else:
            detail = str(error) if type(error) is ValueError else f"{type(error).__name__}: {error}"
        raise ValueError(f"{path} is malformed: {detail[:200]}") from None


def leaf_problem(data: Any, where: str) -> str | None:
    """The first null or fraction in the JSON ``data`` (the course's text has neither), as 'at
    answers.en.30s[2].text: null', or None."""
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = ((f"[{index}]", item) for index, item in enumerate(data))
    else:
        return (
            f"at {where or 'the top'}: {json.dumps(data)}, where text, a whole number or true/false belongs"
            if data is None or isinstance(data, float)
            else None
        )
    for key, item in items:
        problem = leaf_problem(item, f"{where}{key}" if str(key).startswith("[") else f"{where}.{key}" if where else str(key))
        if problem:
            return problem
    return None


def type_problem(value: Any, hint: Any, where: str) -> str | None:
    """What in ``value`` is not of the type ``hint`` (str, int, bool, dict[K, V], tuple[X, ...],
    X | None, a dataclass), or None. Types this does not know are taken as they are."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        problems = [type_problem(value, option, where) for option in arguments]
        return None if None in problems else problems[0]
    if hint is type(None):
        return None if value is None else f"{where} is {value!r}, not null"
    if origin in (dict, tuple, list):
        if not isinstance(value, origin):
            return f"{where} is a {type(value).__name__}, not a {origin.__name__}"
        if origin is dict and len(arguments) == 2:
            for key, item in value.items():
                problem = type_problem(key, arguments[0], f"{where} key") or type_problem(item, arguments[1], f"{where}[{key!r}]")
                if problem:
                    return problem
        elif arguments:
            item_hint = arguments[0]
            for index, item in enumerate(value):
                problem = type_problem(item, item_hint, f"{where}[{index}]")
                if problem:
                    return problem
        return None
    if isinstance(hint, type):
        if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
            return f"{where} is {value!r}"[:120] + f", not a {hint.__name__}"
        return built_problem(value, where) if dataclasses.is_dataclass(hint) else None
    return None


def built_problem(built: Any, where: str) -> str | None:
    """The first field of a dataclass in ``built`` (walking dicts, lists and tuples) whose value is
    not of the type the field declares, or None."""
    if dataclasses.is_dataclass(built) and not isinstance(built, type):
        hints = typing.get_type_hints(type(built))
        for field in dataclasses.fields(built):
            problem = type_problem(getattr(built, field.name), hints.get(field.name, Any), f"{where}{type(built).__name__}.{field.name}")
            if problem:
                return problem
        return None
    items = built.values() if isinstance(built, dict) else built if isinstance(built, (list, tuple)) else ()
    for item in items:
        problem = built_problem(item, where)
        if problem:
            return problem
    return None
