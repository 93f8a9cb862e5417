"""The lab as a class sees it in Voila: the lab's settings in the page's address (``settings_from_query``:
``?group_size=2&baseline=mean`` opens the lab with those settings; ``query_for_config`` writes the
address part back, so a teacher can hand a class a link). Which cells the page leaves out (those
tagged ``voila-skip``) is Voila's prelaunch hook, in voila_page/voila.py: the Jupyter server loads
that file, and it must not import torch.

Voila puts the page's query string in the kernel's environment (``QUERY_STRING``, with
``SERVER_SOFTWARE=voila/...``); ``page_query`` reads it, and is empty anywhere else.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import fields, replace

from ..trainer import TrainConfig
from .controls import ADVANCED_CONTROLS

SEEDS_KEY = "seeds"  # the lab's number of seeds, not a TrainConfig field
MAX_QUERY_SEEDS = 5
QUERY_KNOBS = ("group_size", "std_eps", "baseline", *ADVANCED_CONTROLS)  # what a link may set: the lab's controls


def page_query() -> str:
    """The query string of the Voila page this kernel serves ('' outside Voila)."""
    if not os.environ.get("SERVER_SOFTWARE", "").startswith("voila"):
        return ""
    return os.environ.get("QUERY_STRING", "")


def _parse(text: str, kind: type):
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("true or false")
    if kind is int:
        return int(text)
    if kind is float:
        return float(text)
    return text


def settings_from_query(query: str, base: TrainConfig) -> tuple[dict, int | None, list[str]]:
    """The settings a page address asks for: (TrainConfig values, number of seeds or None, problems).

    query: 'group_size=2&baseline=mean&seeds=3' (a leading '?' is fine). Each value is checked on
    its own against ``base`` (TrainConfig's ranges); a bad or unknown one is left out and named in
    ``problems`` as one line: "group_size = 3 in the page address is not valid: ...".
    """
    values, seeds, problems = {}, None, []
    kinds = {f.name: type(getattr(base, f.name)) for f in fields(TrainConfig)}
    for key, text in urllib.parse.parse_qsl(query.lstrip("?"), keep_blank_values=True):
        if key == SEEDS_KEY:
            if text.isdigit() and 1 <= int(text) <= MAX_QUERY_SEEDS:
                seeds = int(text)
            else:
                problems.append(f"{SEEDS_KEY} = {text} in the page address is not valid: a whole number 1 to {MAX_QUERY_SEEDS}")
            continue
        if key not in QUERY_KNOBS:
            if key not in ("token", "voila-template", "template", "theme"):  # the server's own, not the lab's
                problems.append(f"{key} in the page address is not a setting of the lab: use {', '.join(QUERY_KNOBS)} or {SEEDS_KEY}")
            continue
        try:
            value = _parse(text, kinds[key])
        except ValueError as error:
            allowed = str(error) if kinds[key] is bool else f"a {kinds[key].__name__}"
            problems.append(f"{key} = {text} in the page address is not valid: it must be {allowed}")
            continue
        try:
            replace(base, **{key: value}).validate()
        except ValueError as error:
            problems.append(f"{error} (from the page address)")
            continue
        values[key] = value
    return values, seeds, problems


def query_for_config(config: TrainConfig, base: TrainConfig, seeds: int = 1) -> str:
    """The page-address part that opens the lab at ``config``: '?group_size=2&baseline=mean' (the
    knobs that differ from ``base``), or '' when none does."""
    pairs = [(name, getattr(config, name)) for name in QUERY_KNOBS if getattr(config, name) != getattr(base, name)]
    if seeds > 1:
        pairs.append((SEEDS_KEY, seeds))
    return (
        "?"
        + urllib.parse.urlencode(
            [
                (name, str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value))
                for name, value in pairs
            ]
        )
        if pairs
        else ""
    )
