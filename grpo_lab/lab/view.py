"""When the lab redraws (``ViewTicker``, a thread of its own) and the words and colours of its status
line, progress bar and hints."""

from __future__ import annotations

import threading
from collections.abc import Callable

FIRST_FRAME_BEFORE_TRAINING = True  # draw a run's first frame before it trains (False: the ticker draws it)
FIRST_FRAMES = 3  # the first frames of a run come as soon as there is news, the rest every ``interval``
FIRST_FRAME_POLL = 0.02  # seconds between looks for news before those first frames are drawn


class ViewTicker:
    """Calls ``refresh`` in its own thread while ``changed()`` says there is something new: the
    first FIRST_FRAMES frames as soon as there is news (the step-0 evaluation, the first steps), then
    every ``interval`` seconds, and never sooner than 1.5x the last refresh took. Drawing holds the
    GIL that training's Python needs, so fewer frames make a faster run."""

    def __init__(self, refresh: Callable[[], float], changed: Callable[[], bool], interval: float, name: str):
        self.refresh, self.changed, self.interval = refresh, changed, interval
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        frames, pause = 0, FIRST_FRAME_POLL
        while not self._done.wait(pause):
            if self.changed():
                seconds = self.refresh()
                frames += 1
                pause = max(self.interval if frames >= FIRST_FRAMES else FIRST_FRAME_POLL, 1.5 * seconds)


STATUS_WORDS = {"waiting": "Starting", "running": "Running", "finished": "Finished", "failed": "Failed", "stopped": "Stopped"}
# an "i" in a circle drawn with CSS: the ⓘ character (U+24D8) is missing from many machines' fonts
NOTE_MARK = (
    "<span style='display:inline-block;width:1.15em;height:1.15em;line-height:1.15em;border:1.5px solid currentColor;"
    "border-radius:50%;text-align:center;font-weight:bold;font-style:normal;font-size:0.85em'>i</span>"
)


BAR_STYLES = {"waiting": "info", "running": "info", "finished": "success", "failed": "danger", "stopped": "warning"}

# The page's own styles (one HTML widget with a <style>): 16 px text on every control for the back row,
# readouts wide enough for "1e-04", a focus ring on every control (3 px, black on the light theme, yellow
# on the dark: over 10:1 on either page), inactive tabs in the theme's main text colour (about 7:1, not
# JupyterLab's 4.4:1 grey), a selected baseline that stands out (white on Okabe-Ito blue, 5.3:1), the
# announcer (ANNOUNCED) visible to screen readers only, a narrower controls column on narrow pages (a
# 1024 px projector, 150% zoom) so the plot stays beside it, and in the dark theme the plot inverted
# (hues kept), not a white slab.
PAGE_CSS = """<style>
.grpo-lab, .grpo-lab .widget-label, .grpo-lab .widget-readout, .grpo-lab .widget-html-content,
.grpo-lab .jupyter-button, .grpo-lab .lm-TabBar-tabLabel, .grpo-lab .widget-checkbox span, .grpo-lab label { font-size: 16px; }
.grpo-lab input, .grpo-lab select, .grpo-lab textarea { font-size: 16px !important; }
.grpo-lab .widget-readout { min-width: 5.5em; overflow: visible; }
.grpo-lab { --grpo-focus: #000; }
body[data-jp-theme-light="false"] .grpo-lab { --grpo-focus: #ffd24d; }
.grpo-lab :focus-visible, .grpo-lab .noUi-handle:focus-visible, .grpo-lab select:focus-visible,
.grpo-lab .widget-readout:focus-visible, .grpo-lab .lm-TabBar-tab:focus-visible,
.grpo-lab .widget-inline-hbox input[type="number"]:focus, .grpo-lab .widget-inline-hbox input[type="text"]:focus {
  outline: 3px solid var(--grpo-focus) !important; outline-offset: 2px; }
.grpo-lab .lm-TabBar-tab:not(.lm-mod-current) { color: var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87)) !important; }
.grpo-lab .widget-toggle-button.mod-active { background: #0072B2; color: #fff; }
.grpo-lab .grpo-controls .widget-hbox { flex-wrap: wrap; }
.grpo-lab .grpo-controls .widget-inline-hbox { max-width: 100%; }
.grpo-announce { position: absolute !important; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 1100px) {
  .grpo-lab .grpo-controls { flex: 0 0 440px !important; width: 440px !important; }
  .grpo-lab .grpo-plot-box { flex: 1 1 360px !important; min-width: 360px !important; }
  .grpo-lab .grpo-controls .widget-slider > .widget-label { width: 150px !important; flex-shrink: 0; }
  .grpo-lab .grpo-tabs .lm-TabBar-tab { flex: 0 1 auto !important; padding: 0 8px; }
}
@media (max-width: 900px) {
  .grpo-lab .grpo-controls { flex: 0 0 400px !important; width: 400px !important; }
  .grpo-lab .grpo-plot-box { flex: 1 1 300px !important; min-width: 300px !important; }
}
body[data-jp-theme-light="false"] .grpo-lab img.grpo-plot { filter: invert(0.9) hue-rotate(180deg); }
</style>"""

# What ipywidgets leaves out for keyboard and screen-reader users, added in the page (JupyterLab and
# Voila alike) by a script that runs once when the HTML widget is shown and again whenever the
# widgets change: sliders named after their description and announcing their readout ("8", not the
# option's index; "1e-4", not "-4.000000000000001"), their editable readouts named too, toggle buttons
# with aria-pressed, the option rows named after their label, the announcer a live region (the visible
# status line, rewritten every frame, is not one), the plot described by its summary, the tabs
# reachable with Tab (Enter or Space opens one: Lumino's own key handling). It also tells the kernel
# how many CSS pixels the plot has beside the controls (the hidden PLOT_ROOM input), so that a large
# plot view is drawn as wide as the page allows.
ACCESSIBILITY_SCRIPT = """
if (!window.grpoLabAccessible) {
  window.grpoLabAccessible = true;
  const set = (element, name, value) => { if (element.getAttribute(name) !== value) element.setAttribute(name, value); };
  const reportPlotRoom = () => {
    const lab = document.querySelector('.grpo-lab');
    const controls = lab && lab.querySelector('.grpo-controls');
    const input = document.querySelector('.grpo-plot-room input');
    if (!lab || !controls || !input || !lab.offsetWidth) return;
    const beside = controls.offsetWidth + parseFloat(getComputedStyle(controls).marginRight || '0');
    const room = String(Math.floor((lab.clientWidth - beside) / 20) * 20);
    if (input.value === room) return;
    input.value = room;
    input.dispatchEvent(new Event('change', {bubbles: true}));
  };
  const apply = () => {
    document.querySelectorAll('.grpo-lab .noUi-handle').forEach(handle => {
      const slider = handle.closest('.widget-slider');
      if (!slider) return;
      const label = slider.querySelector('.widget-label');
      const readout = slider.querySelector('.widget-readout');
      if (label) set(handle, 'aria-label', label.textContent.trim());
      if (readout) set(handle, 'aria-valuetext', readout.textContent.trim());
      if (label && readout) set(readout, 'aria-label', label.textContent.trim() + ': type a value');
    });
    document.querySelectorAll('.grpo-lab .widget-toggle-buttons').forEach(group => {
      const row = group.parentElement && group.parentElement.querySelector(':scope > .widget-label');
      set(group, 'role', 'group');
      if (row) set(group, 'aria-label', row.textContent.trim());
      group.querySelectorAll('button').forEach(button => set(button, 'aria-pressed', String(button.classList.contains('mod-active'))));
    });
    document.querySelectorAll('.grpo-lab .grpo-announce').forEach(announcer => {
      set(announcer, 'role', 'status'); set(announcer, 'aria-live', 'polite'); set(announcer, 'aria-atomic', 'true');
    });
    document.querySelectorAll('.grpo-lab .grpo-plot-room input').forEach(input => { set(input, 'tabindex', '-1'); set(input, 'aria-hidden', 'true'); });
    document.querySelectorAll('.grpo-lab img.grpo-plot').forEach(plot => {
      const summary = document.querySelector('.grpo-lab .grpo-summary');
      set(plot, 'alt', 'Training curves of the runs: ' + (summary ? summary.textContent.trim() : ''));
    });
    document.querySelectorAll('.grpo-lab .grpo-tabs .lm-TabBar-tab').forEach(tab => set(tab, 'tabindex', '0'));
    reportPlotRoom();
  };
  let pending = false;
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; apply(); });
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['class'], characterData: true});
  window.addEventListener('resize', reportPlotRoom);
  apply();
}
"""
# an HTML widget's <script> does not run (it is set as innerHTML), an image's error handler does
PAGE_EXTRAS = PAGE_CSS + "<img src='data:,' alt='' style='display:none' onerror=\"" + ACCESSIBILITY_SCRIPT.replace('"', "&quot;") + '">'
