"""The lab as a class sees it in Voila: the lab's settings in the page's address (``settings_from_query``:
``?group_size=2&baseline=mean`` opens the lab with those settings; ``query_for_config`` writes the
address part back, so a teacher can hand a class a link). Which cells the page leaves out (those
tagged ``voila-skip``) is Voila's prelaunch hook, in voila_page/voila.py: the Jupyter server loads
that file, and it must not import torch.

Voila puts the page's query string in the kernel's environment (``QUERY_STRING``, with
``SERVER_SOFTWARE=voila/...``); ``page_query`` reads it, and is empty anywhere else. A kernel that
`make voila` warmed in advance (Voila's preheated kernels: ``VOILA_PREHEAT=True``, started before
anyone asked for a page) learns the address only when a student opens the page: there
``page_query`` first waits for that moment, so the lab is imported and built before it, and its
first run starts with the page's settings after it.
"""

from __future__ import annotations

import io
import os
import sys
import urllib.parse
from dataclasses import fields, replace

from ..checks.config_rules import validate_config
from ..core.config import TrainConfig
from ..live_figure import ALL_PANELS
from .controls import ADVANCED_CONTROLS

SEEDS_KEY = "seeds"  # the lab's number of seeds, not a TrainConfig field
PLOT_KEY = "plot"  # the lab's plot view (PLOT_VIEWS): 'plot=large' for a projector
THEME_KEY = "theme"  # Voila's theme ('theme=dark'): the page's, not the lab's, but kept in the share link
THEMES = ("light", "dark")  # Voila's themes; light is its default
# the lab's plot views: key -> (the control's words, the live figure's panels); "large" shows two panels
# at a time in 16-point type at display size, for a projector at 1280 x 720 or 1024 x 768
PLOT_VIEWS = {
    "all": ("all four panels", ALL_PANELS),
    "large": ("reward, variance: large", ("reward", "variance")),
    "large-zero-std": ("zero-std, advantages: large", ("zero_std", "histogram")),
}
MAX_QUERY_SEEDS = 5
WARM_KERNEL_READY = "grpo-lab: a warm kernel is ready, waiting for a page"
VOILA_PREHEAT = "VOILA_PREHEAT"  # "True" in a kernel that Voila started before any page asked for it (voila.utils)
QUERY_KNOBS = ("group_size", "std_eps", "baseline", *ADVANCED_CONTROLS)  # what a link may set: the lab's controls


def terminal_stderr() -> int:
    """The file descriptor of the server's terminal (its log), not the page: an IPython kernel that
    captures the process's streams into the page hands its copy of the terminal's one as
    sys.stderr.fileno(); one that does not (under pytest, say) leaves fd 2 the terminal's."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, io.UnsupportedOperation):
        return sys.__stderr__.fileno()


def wait_for_the_page() -> None:
    """In a kernel Voila warmed in advance, block until a page is opened on it (Voila then hands the
    kernel the request's environment: QUERY_STRING, SERVER_SOFTWARE, ...); anywhere else, and in
    such a kernel once its page is open, return at once."""
    if os.environ.get(VOILA_PREHEAT) != "True":
        return
    from voila.utils import wait_for_request  # only a kernel that Voila started gets here

    os.write(terminal_stderr(), f"{WARM_KERNEL_READY}\n".encode())  # for the teacher (and the browser tests)
    wait_for_request()
    os.environ[VOILA_PREHEAT] = "False"  # this kernel now serves its page: a second lab in it must not wait again


def page_query() -> str:
    """The query string of the Voila page this kernel serves ('' outside Voila); in a kernel Voila
    warmed in advance, read once the page is opened (``wait_for_the_page``)."""
    wait_for_the_page()
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
        if key == PLOT_KEY:  # the view, not a setting of the runs: plot_view_from_query
            continue
        if key == SEEDS_KEY:
            if text.isdigit() and 1 <= int(text) <= MAX_QUERY_SEEDS:
                seeds = int(text)
            else:
                problems.append(f"{SEEDS_KEY} = {text} in the page address is not valid: a whole number 1 to {MAX_QUERY_SEEDS}")
            continue
        if key not in QUERY_KNOBS:
            if key not in ("token", "voila-template", "template", THEME_KEY):  # the server's own, not the lab's
                problems.append(f"{key} in the page address is not a setting of the lab: use {', '.join(QUERY_KNOBS)}, {SEEDS_KEY} or {PLOT_KEY}")
            continue
        try:
            value = _parse(text, kinds[key])
        except ValueError as error:
            allowed = str(error) if kinds[key] is bool else f"a {kinds[key].__name__}"
            problems.append(f"{key} = {text} in the page address is not valid: it must be {allowed}")
            continue
        try:
            validate_config(replace(base, **{key: value}))
        except ValueError as error:
            problems.append(f"{error} (from the page address)")
            continue
        values[key] = value
    return values, seeds, problems


def plot_view_from_query(query: str) -> tuple[str | None, list[str]]:
    """The plot view a page address asks for ('plot=large'): (a PLOT_VIEWS key or None, problems)."""
    views = [text for key, text in urllib.parse.parse_qsl(query.lstrip("?"), keep_blank_values=True) if key == PLOT_KEY]
    if not views:
        return None, []
    if views[-1] not in PLOT_VIEWS:
        return None, [f"{PLOT_KEY} = {views[-1]} in the page address is not valid: use {', '.join(PLOT_VIEWS)}"]
    return views[-1], []


def theme_from_query(query: str) -> str:
    """The Voila theme a page address asks for ('theme=dark' -> 'dark'), '' when none or not one of THEMES."""
    themes = [text for key, text in urllib.parse.parse_qsl(query.lstrip("?"), keep_blank_values=True) if key == THEME_KEY]
    return themes[-1] if themes and themes[-1] in THEMES else ""


def query_for_config(config: TrainConfig, base: TrainConfig, seeds: int = 1, plot: str = "all", theme: str = "") -> str:
    """The page-address part that opens the lab at ``config``: '?group_size=2&baseline=mean' (the
    knobs that differ from ``base``, then the seeds, the plot view and the page's theme when not the
    default ones), or '' when none does."""
    pairs = [(name, getattr(config, name)) for name in QUERY_KNOBS if getattr(config, name) != getattr(base, name)]
    if seeds > 1:
        pairs.append((SEEDS_KEY, seeds))
    if plot != "all":
        pairs.append((PLOT_KEY, plot))
    if theme and theme != THEMES[0]:
        pairs.append((THEME_KEY, theme))
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
