"""``ConfigError``: a bad value for a knob, as one line naming the knob, the value and what is allowed.

Every check of user input in the library raises it (``validate_config``, ``Task.parse``,
``resolve_device``, ``check_destination``, the sweep's options, ...). It is a ValueError, so
``except ValueError`` keeps working, and its text is ``"{knob}={value!r} is not valid: {allowed}"``.
The command line rebuilds the same line in flag form from its parts (``--group-size=1 is not
valid: ...``), and the lab can point at the control that holds the knob.
"""

from __future__ import annotations

LONGEST_SHOWN = 120  # characters of a value an error line shows; a longer one is cut, with its length


def shortened(text: str, limit: int = LONGEST_SHOWN) -> str:
    """``text`` itself, or its start and its length when it is longer than ``limit`` characters
    (a 5,000-character value is not echoed whole): "'aaaa...' (5002 characters)"."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 30]}... ({len(text)} characters)"


class ConfigError(ValueError):
    """knob: the name that was given a bad value (a TrainConfig field, an option such as ``out``);
    value: the value given; allowed: what is allowed, in words; value_text: how the message shows
    the value (``repr(value)``, cut to its start and length past LONGEST_SHOWN characters, unless the caller gives it)."""

    def __init__(self, knob: str, value: object, allowed: str, value_text: str | None = None):
        self.knob, self.value, self.allowed = knob, value, allowed
        self.value_text = shortened(repr(value)) if value_text is None else value_text
        super().__init__(self.message_for(knob))

    def message_for(self, name: str) -> str:
        """The error's line with the knob called ``name`` (e.g. its command-line flag)."""
        return f"{name}={self.value_text} is not valid: {self.allowed}"

    def __reduce__(self):  # rebuilt from its parts when it crosses a process boundary (the sweep's workers)
        return type(self), (self.knob, self.value, self.allowed, self.value_text)
