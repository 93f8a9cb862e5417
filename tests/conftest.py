"""Shared test setup: CPU only, and a fixed small thread count so runs are comparable; and the
checks that an error refuses a value the house way (one line naming the knob, the value and what is
allowed), which test its parts, never its sentence."""

import os

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import pytest  # noqa: E402

import grpo_lab.cli as cli  # noqa: E402 (after the line above: torch reads it on import)
from grpo_lab.errors import ConfigError, shortened  # noqa: E402

NOT_GIVEN = object()


@pytest.fixture
def no_training(monkeypatch):
    """Fail the test if the command line starts training: every check must come first."""

    def refuse(*args, **kwargs):
        raise AssertionError("training started before the input was checked")

    monkeypatch.setattr(cli, "train", refuse)


def assert_one_line_error(error: BaseException, knob: str, value: object = NOT_GIVEN) -> None:
    """``error`` is a ConfigError for ``knob`` (holding ``value``, when given) whose message is one
    line that names the knob, shows the value (its start, when long) and states what is allowed."""
    message = str(error)
    assert isinstance(error, ConfigError), f"{type(error).__name__}: {message}"
    assert error.knob == knob, message
    if value is not NOT_GIVEN:
        assert same_value(error.value, value), (error.value, value)
    assert "\n" not in message and knob in message, message
    assert shortened(repr(error.value)) in message, message
    assert error.allowed.strip() and error.allowed in message, message


def assert_one_line_naming(error: BaseException, *names: object) -> None:
    """``error``'s message is one line that names each of ``names`` (a file, an argument, a value)."""
    message = str(error)
    assert "\n" not in message, message
    for name in names:
        assert str(name) in message, (name, message)


def same_value(given: object, expected: object) -> bool:
    """Whether an error holds the value it was given (NaN holds NaN)."""
    if given is expected:
        return True
    try:
        return bool(given == expected) or (given != given and expected != expected)
    except (TypeError, ValueError, RuntimeError):  # e.g. a tensor of several numbers
        return False
