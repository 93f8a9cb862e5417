"""The drill's "say it aloud" widget: the cues, a countdown, and the model answer revealed when time is up.

The logic is plain methods (``start``, ``tick``, ``reveal``), so it is tested without a browser and
without waiting: a test calls ``tick()`` instead of letting a second pass. In a live kernel ``start``
runs a background thread that calls ``tick`` once a second. Its labels, in English and Chinese, are in
text/labels.json.
"""

from __future__ import annotations

import html
import threading

import ipywidgets as widgets

from .text_files import load_text

LABELS: dict[str, dict[str, str]] = load_text("labels.json", lambda text: text["timed_answer"])  # by language; "left" takes the seconds


class TimedAnswer(widgets.VBox):
    """cues: what to cover; sentences: the model answer; seconds: the time allowed."""

    def __init__(self, cues: str, sentences: list[str], seconds: int, language: str = "en", tick_seconds: float = 1.0) -> None:
        if language not in LABELS:
            raise ValueError(f"language={language!r} is not valid: choose one of {', '.join(LABELS)}")
        if not isinstance(seconds, int) or seconds < 1:
            raise ValueError(f"seconds={seconds!r} is not valid: must be a whole number of seconds, 1 or more")
        self.labels = LABELS[language]
        self.sentences = sentences
        self.seconds = seconds
        self.remaining = seconds
        self.tick_seconds = tick_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.start_button = widgets.Button(description=self.labels["start"], button_style="primary")
        self.reveal_button = widgets.Button(description=self.labels["reveal"])
        self.clock = widgets.HTML(self.labels["ready"])
        self.answer = widgets.HTML("")
        self.start_button.on_click(lambda _button: self.start())
        self.reveal_button.on_click(lambda _button: self.reveal())
        cue_html = f"<b>{html.escape(self.labels['cues'])}</b> {html.escape(cues)}"
        super().__init__([widgets.HTML(cue_html), widgets.HBox([self.start_button, self.reveal_button]), self.clock, self.answer])

    @property
    def revealed(self) -> bool:
        return bool(self.answer.value)

    def start(self, background: bool = True) -> None:
        """Hide the answer, reset the clock and (with ``background``) tick once a second until time is up."""
        self.stop()
        self.remaining = self.seconds
        self.answer.value = ""
        self.clock.value = html.escape(self.labels["left"].format(self.remaining))
        if background:
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.tick_seconds):
            if not self.tick():
                return

    def tick(self) -> bool:
        """One second passes; at zero the answer is revealed. Returns whether the clock is still running."""
        if self.revealed:
            return False
        self.remaining = max(self.remaining - 1, 0)
        if self.remaining == 0:
            self.reveal()
            return False
        self.clock.value = html.escape(self.labels["left"].format(self.remaining))
        return True

    def reveal(self) -> None:
        """Stop the clock and show the model answer."""
        self._stop.set()
        self.clock.value = f"<b>{html.escape(self.labels['done'])}</b>"
        self.answer.value = "<ol>" + "".join(f"<li>{html.escape(sentence)}</li>" for sentence in self.sentences) + "</ol>"

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * self.tick_seconds)
        self._thread = None
