"""The lab in a real browser: JupyterLab and Voila in Debian's headless Chromium, driven by Playwright.

Two tests open notebooks/03_interactive_lab.ipynb (a copy, in fast mode), let its default run
finish, drag the group-size slider (which re-runs training), press Run, and each time wait until
the plot image has changed and the status line says the new run finished. A third loads the Voila
page on a 1440 x 900 screen and checks that the controls and the whole plot are on the first
screen (the classroom view). Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, CHROMIUM, chromium_page, closest_pair_delta_e, contrast_ratio, parse_color, serve

from grpo_lab.lab.dashboard import LARGE_VIEW_DPI
from grpo_lab.live_figure import LIVE_FONT_SIZES

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"),
]

RUN_SECONDS = 150_000  # ms: one fast-mode run, including the kernel's first torch import, on two busy cores
FINISHED = re.compile(r"Finished run (\d+): (G=\d+)")

LAST_FINISHED_RUN = """() => {
    const status = document.querySelector('.grpo-status');
    const match = status && status.textContent.match(/Finished run (\\d+)/);
    return match ? Number(match[1]) : 0;
}"""
NEWER_RUN_FINISHED = """([run, source]) => {
    const status = document.querySelector('.grpo-status');
    const plot = document.querySelector('img.grpo-plot');
    const match = status && status.textContent.match(/Finished run (\\d+)/);
    return match && Number(match[1]) > run && plot && plot.src !== source;
}"""

SCROLL_TO_DASHBOARD = """() => {
    if (document.querySelector('img.grpo-plot')) return true;
    const panel = document.querySelector('.jp-NotebookPanel-notebook, .jp-WindowedPanel-outer');
    if (panel) panel.scrollTop = 0;
    return false;
}"""


CELL_STARTED = """() => [...document.querySelectorAll('.jp-InputArea-prompt')].some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""


def run_all_cells(page, attempts: int = 3) -> None:
    """Run > Run All Cells once the kernel is connected and idle, and again if no cell started: a
    click while the kernel is still connecting can be dropped."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=RUN_SECONDS)
    for _ in range(attempts):
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        try:
            page.wait_for_function(CELL_STARTED, timeout=30_000)
            return
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    raise AssertionError(f"Run All Cells did not start any cell in {attempts} attempts")


def plot_source(page) -> str:
    return page.locator("img.grpo-plot").get_attribute("src") or ""


def wait_for_next_finished_run(page, run: int, source: str) -> tuple[int, str]:
    """Wait until a run newer than ``run`` has finished and the plot shows something new than
    ``source``; return (that run's number, its 'G=...' label part)."""
    page.wait_for_function(NEWER_RUN_FINISHED, arg=[run, source], timeout=RUN_SECONDS)
    status = page.locator(".grpo-status").text_content()
    match = FINISHED.search(status)
    assert match, status
    return int(match.group(1)), match.group(2)


def drag_group_size_to(page, index: int, count: int) -> None:
    """Drag the group-size slider's handle to option ``index`` of ``count`` and release it."""
    handle = page.locator(".grpo-group-size .noUi-handle")
    track = page.locator(".grpo-group-size .noUi-base").bounding_box()
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(track["x"] + track["width"] * index / (count - 1), box["y"] + box["height"] / 2, steps=8)
    page.mouse.up()


def exercise_dashboard(page, screenshot: str) -> None:
    """The first run (started by the notebook) has finished or will; then slider, then Run."""
    page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
    first = page.evaluate(LAST_FINISHED_RUN)
    assert "Failed" not in page.locator(".grpo-status").text_content()

    page.locator(".grpo-group-size").scroll_into_view_if_needed()
    source = plot_source(page)
    drag_group_size_to(page, index=1, count=6)  # 2, [4], 8, 16, 32, 64
    after_slider, group = wait_for_next_finished_run(page, first, source)
    assert group == "G=4", page.locator(".grpo-status").text_content()
    assert page.locator(".grpo-group-size .widget-readout").inner_text().strip() == "4"

    source = plot_source(page)
    page.locator(".grpo-run").click()
    after_run, group = wait_for_next_finished_run(page, after_slider, source)
    assert group == "G=4"
    assert page.locator("img.grpo-plot").evaluate("img => img.complete && img.naturalWidth") > 0

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator(".grpo-run").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / screenshot))


@contextmanager
def screenshot_on_failure(page, name: str):
    """Save what the browser showed when a step failed (tests/artifacts/NAME), then re-raise."""
    try:
        yield
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / name), full_page=True)
        raise


def test_jupyterlab_runs_the_lab_notebook_and_the_slider_reruns(tmp_path):
    with serve("lab", tmp_path) as url, chromium_page() as page, screenshot_on_failure(page, "jupyterlab_failure.png"):
        page.goto(url)
        run_all_cells(page)
        # "Run All" scrolls to the last cell, and JupyterLab may detach cells out of view: scroll back
        # to the top until the dashboard's plot is on the page
        page.wait_for_function(SCROLL_TO_DASHBOARD, timeout=RUN_SECONDS, polling=500)
        page.locator(".grpo-group-size").scroll_into_view_if_needed()
        exercise_dashboard(page, "jupyterlab_lab.png")


def test_voila_serves_the_lab_and_the_slider_reruns(tmp_path):
    with serve("voila", tmp_path) as url, chromium_page() as page, screenshot_on_failure(page, "voila_failure.png"):
        elsewhere = []  # the classroom page must work offline: nothing fetched from another host (Voila's lab template asks a CDN for FontAwesome)
        page.on(
            "request",
            lambda request: (
                elsewhere.append(request.url) if not request.url.startswith(("http://127.0.0.1", "data:", "blob:http://127.0.0.1")) else None
            ),
        )
        page.goto(url, timeout=RUN_SECONDS)
        page.wait_for_selector("img.grpo-plot", state="attached", timeout=RUN_SECONDS)
        exercise_dashboard(page, "voila_lab.png")
        assert elsewhere == []


CLASSROOM_SCREENS = ({"width": 1440, "height": 900}, {"width": 1280, "height": 720}, {"width": 1024, "height": 768})
FIRST_SCREEN_PARTS = (".grpo-group-size", ".grpo-std-eps", ".grpo-baseline", ".grpo-run", ".grpo-stop", ".grpo-status", "img.grpo-plot")
TICK_PX_IN_PNG = LIVE_FONT_SIZES["tick"] * 96 / 72  # the figure is drawn at 96 dpi: points -> pixels of the PNG
# at 1024 px the four panels share the page with a narrower controls column (440 px): ticks about 12.9 px
# (11 px beside the 520 px column); 16 px takes the large view (?plot=large)
MIN_TICK_PX_AT_1024 = 12.5


def parts_off_screen(page, screen: dict, selectors) -> dict:
    """The selectors whose first element is not wholly inside the ``screen`` (scrolled to the top)."""
    outside = {}
    for selector in selectors:
        box = page.locator(selector).first.bounding_box()
        if box is None or box["y"] < 0 or box["y"] + box["height"] > screen["height"] or box["x"] + box["width"] > screen["width"]:
            outside[selector] = box
    return outside


@pytest.mark.parametrize("screen", CLASSROOM_SCREENS, ids=lambda screen: f"{screen['width']}x{screen['height']}")
def test_voila_fits_controls_plot_and_status_on_one_projector_screen(tmp_path, screen):
    name = f"voila_first_screen_{screen['width']}x{screen['height']}"
    with serve("voila", tmp_path) as url, chromium_page(**screen) as page, screenshot_on_failure(page, f"{name}_failure.png"):
        page.goto(url, timeout=RUN_SECONDS)
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)  # the plot has its legend, and its final size
        page.evaluate("() => window.scrollTo(0, 0)")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        assert parts_off_screen(page, screen, FIRST_SCREEN_PARTS) == {}
        shown = page.locator("img.grpo-plot").evaluate("img => img.clientWidth / img.naturalWidth")
        least = 16 if screen["width"] >= 1280 else MIN_TICK_PX_AT_1024
        assert TICK_PX_IN_PNG * shown >= least, f"plot ticks {TICK_PX_IN_PNG * shown:.1f} px at display size"
        page.get_by_role("tab", name="Advanced").click()  # a tab, not an accordion: Run and the status stay put
        assert parts_off_screen(page, screen, (".grpo-run", ".grpo-status", "img.grpo-plot")) == {}
        assert page.get_by_text("Using 1 threads").count() == 0 and page.get_by_text("GRPO_LAB_FAST").count() == 0


SIXTEEN_POINTS_CSS_PX = 16 * 96 / 72  # 16 pt at display size, in CSS pixels (the issue asks it of the projector layout)


@pytest.mark.parametrize("screen", CLASSROOM_SCREENS[1:], ids=lambda screen: f"{screen['width']}x{screen['height']}")
def test_voila_large_plot_has_16_point_type_and_three_runs_on_one_projector_screen(tmp_path, screen):
    name = f"voila_projector_{screen['width']}x{screen['height']}"
    with serve("voila", tmp_path) as url, chromium_page(**screen) as page, screenshot_on_failure(page, f"{name}_failure.png"):
        page.goto(url + "?plot=large", timeout=RUN_SECONDS)  # the link `make voila` prints for a projector
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        page.get_by_role("tab", name="Guided tasks").click()
        page.get_by_role("button", name="G = 2 vs 16", exact=True).click()  # runs 2 and 3, one after the other
        page.wait_for_function(f"() => ({LAST_FINISHED_RUN})() >= 3", timeout=RUN_SECONDS)
        page.locator(".grpo-new-seed").click()  # run 4: three runs on the plot, the legend at its longest
        page.wait_for_function(f"() => ({LAST_FINISHED_RUN})() >= 4", timeout=RUN_SECONDS)
        page.get_by_role("tab", name="Main").click()
        page.evaluate("() => window.scrollTo(0, 0)")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        assert parts_off_screen(page, screen, FIRST_SCREEN_PARTS + (".grpo-plot-view",)) == {}
        shown = page.locator("img.grpo-plot").evaluate("img => img.clientWidth / img.naturalWidth")
        for size in ("tick", "label", "legend"):
            css_px = LIVE_FONT_SIZES[size] * LARGE_VIEW_DPI / 72 * shown
            assert css_px >= SIXTEEN_POINTS_CSS_PX - 0.01, f"plot {size} text {css_px * 72 / 96:.1f} pt at display size"
        assert "plot=large" in page.locator(".grpo-share-link").text_content()  # the link keeps the view
        # the plot fills the page beside the controls (drawn as wide as the page reports room for)
        empty = page.evaluate(
            "() => document.querySelector('.grpo-lab').getBoundingClientRect().right"
            " - document.querySelector('img.grpo-plot').getBoundingClientRect().right"
        )
        assert empty <= 40, f"{empty:.0f} px empty right of the plot"


FOCUSED = """() => {
    const element = document.activeElement;
    if (!element || element === document.body) return null;
    const part = [...element.classList, ...(element.closest('[class*="grpo-"]') || {classList: []}).classList].find(c => c.startsWith('grpo-')) || '';
    return {part, role: element.getAttribute('role') || element.tagName.toLowerCase(),
            name: element.getAttribute('aria-label') || element.textContent.trim().slice(0, 40),
            outline: parseFloat(getComputedStyle(element).outlineWidth) || 0};
}"""


def tab_through(page, presses: int, describe: str = FOCUSED) -> list[dict]:
    """Press Tab ``presses`` times from the top of the page; what had the focus after each press, as the script
    ``describe`` reads it (one that returns nothing skips that stop)."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    focused = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        element = page.evaluate(describe)
        if element:
            focused.append(element)
    return focused


def test_voila_keyboard_reaches_every_control_and_screen_readers_hear_names_and_values(tmp_path):
    with serve("voila", tmp_path) as url, chromium_page() as page, screenshot_on_failure(page, "voila_accessibility_failure.png"):
        page.goto(url + "?group_size=4&baseline=mean", timeout=RUN_SECONDS)  # a teacher's link
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        assert "G=4, mean" in page.locator(".grpo-status").text_content()  # the link's settings were used

        group_size = page.locator(".grpo-group-size [role=slider]")
        assert (group_size.get_attribute("aria-label"), group_size.get_attribute("aria-valuetext")) == ("group size G", "4")
        assert page.locator(".grpo-std-eps [role=slider]").get_attribute("aria-valuetext") == "1e-4"
        pressed = {button.inner_text(): button.get_attribute("aria-pressed") for button in page.locator(".grpo-baseline button").all()}
        assert pressed["mean only"] == "true" and pressed["z-score"] == "false", pressed
        assert page.locator(".grpo-baseline").get_attribute("aria-label") == "baseline"
        assert page.locator(".grpo-announce").get_attribute("aria-live") == "polite"
        assert page.locator(".grpo-status").get_attribute("aria-live") is None  # rewritten every frame: not read out
        assert "held-out accuracy" in page.locator(".grpo-summary").text_content()
        assert "held-out accuracy" in page.locator("img.grpo-plot").get_attribute("alt")
        icons = "button => [...button.querySelectorAll('i')].filter(i => [...i.classList].some(c => /^fa-.+/.test(c))).length"
        for button in page.locator(".grpo-lab button").all():
            assert button.inner_text().strip() and button.evaluate(icons) == 0  # named, no icon glyphs

        focused = tab_through(page, 40)
        parts = [element["part"] for element in focused]
        for part in ("grpo-run", "grpo-stop", "grpo-new-seed", "grpo-group-size", "grpo-std-eps", "grpo-baseline"):
            assert part in parts, (part, focused)
        assert next(element for element in focused if element["part"] == "grpo-run")["outline"] >= 2  # a visible focus ring
        advanced = next(element for element in focused if element["role"] == "tab" and element["name"] == "Advanced")
        assert advanced, focused
        page.get_by_role("tab", name="Advanced").focus()
        page.keyboard.press("Enter")
        page.locator(".grpo-reward-offset").wait_for(state="visible", timeout=10_000)
        offset = page.locator(".grpo-reward-offset [role=slider]")
        offset.focus()
        assert offset.get_attribute("aria-label") == "reward offset"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "voila_advanced_tab.png"))


def test_voila_dark_theme_shows_the_plot_dark_not_a_white_slab(tmp_path):
    with serve("voila", tmp_path) as url, chromium_page() as page, screenshot_on_failure(page, "voila_dark_failure.png"):
        page.goto(url + "?theme=dark", timeout=RUN_SECONDS)
        page.wait_for_selector("img.grpo-plot", state="visible", timeout=RUN_SECONDS)
        assert page.evaluate("() => document.body.dataset.jpThemeLight") == "false"
        assert "invert" in page.locator("img.grpo-plot").evaluate("img => getComputedStyle(img).filter")
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        assert "theme=dark" in page.locator(".grpo-share-link").text_content()  # the link a teacher hands out keeps it
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "voila_dark.png"))


def test_voila_keeps_a_pinned_run_among_seven_and_exports_the_plot_and_runs(tmp_path):
    """A class's comparison on a projector: a pinned run outlives the lab's keep limit, the legend of
    seven runs stays on the screen, and the plot and the runs download as files that parse."""
    import csv
    import io
    import json

    import PIL.Image

    screen = {"width": 1280, "height": 720}
    with serve("voila", tmp_path) as url, chromium_page(**screen) as page, screenshot_on_failure(page, "voila_seven_runs_failure.png"):
        page.goto(url + "?steps=5", timeout=RUN_SECONDS)  # short runs: eight of them
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        page.get_by_role("tab", name="Runs").click()
        page.locator(".grpo-run-pin input").first.check()
        for run in range(2, 9):  # the pinned run, then seven more: one more than the six the lab keeps besides it
            page.locator(".grpo-new-seed").click()
            page.wait_for_function(f"() => ({LAST_FINISHED_RUN})() >= {run}", timeout=RUN_SECONDS)
        # "Finished run 8" can show a moment before the run's end updates the Runs tab and the status line
        page.wait_for_function(
            "() => { const rows = [...document.querySelectorAll('.grpo-run-row')];"
            " return rows.length === 7 && rows[6].innerText.includes('run 8'); }",
            timeout=10_000,
        )
        rows = page.locator(".grpo-run-row")
        assert rows.count() == 7 and rows.first.inner_text().startswith("● run 1")
        assert page.locator(".grpo-run-pin input").first.is_checked()
        page.wait_for_function("() => document.querySelector('.grpo-status').textContent.includes('run 2 left the plot')", timeout=10_000)
        page.evaluate("() => window.scrollTo(0, 0)")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "voila_seven_runs_1280x720.png"))
        assert parts_off_screen(page, screen, ("img.grpo-plot",)) == {}  # the plot, legend and all, on the first screen

        page.locator(".grpo-export").click()
        links = page.locator(".grpo-downloads a")
        links.nth(2).wait_for(timeout=30_000)
        files = {}
        for index in range(links.count()):
            with page.expect_download() as download:
                links.nth(index).click()
            files[download.value.suggested_filename] = Path(download.value.path()).read_bytes()
        assert PIL.Image.open(io.BytesIO(files["grpo-lab-plot.png"])).width == 900
        runs = json.loads(files["grpo-lab-runs.json"])["runs"]
        assert [run["run"] for run in runs] == [1, 3, 4, 5, 6, 7, 8] and runs[0]["pinned"]
        assert all(len(run["seeds"][0]["history"]) == 6 for run in runs)  # steps 0 to 5
        rows = list(csv.DictReader(io.StringIO(files["grpo-lab-runs.csv"].decode())))
        assert len(rows) == 7 * 6 and rows[0]["run"] == "1"


A11Y_TABS = ("Main", "Advanced", "Guided tasks", "Runs")
# every control's text (and the tab labels, readouts, buttons) in .grpo-lab shown now: [tag, text, px]
SMALL_CONTROL_TEXT = """() => [...document.querySelectorAll(
    '.grpo-lab select, .grpo-lab input, .grpo-lab button, .grpo-lab label, .grpo-lab .widget-label,'
    + ' .grpo-lab .widget-readout, .grpo-lab .lm-TabBar-tabLabel, .grpo-lab .widget-checkbox span')]
    .filter(element => element.getClientRects().length && getComputedStyle(element).visibility !== 'hidden')
    .map(element => [element.tagName, (element.textContent || element.value || '').trim().slice(0, 30), parseFloat(getComputedStyle(element).fontSize)])
    .filter(([, , size]) => size < 16)"""
# the element with the focus, if in .grpo-lab: its accessible name (as a screen reader finds it),
# its outline and the colour it is drawn on
FOCUSED_CONTROL = """() => {
    const element = document.activeElement;
    if (!element || !element.closest('.grpo-lab')) return null;
    const labelled = element.getAttribute('aria-labelledby');
    const name = element.getAttribute('aria-label') || (labelled && document.getElementById(labelled) ? document.getElementById(labelled).textContent : '')
        || (element.labels && element.labels.length ? element.labels[0].textContent : '') || element.getAttribute('title') || element.textContent || '';
    // what the ring is drawn on: the page under the whole control (a slider's track is inside it)
    let under = (element.closest('.widget-inline-hbox, .widget-toggle-buttons, .lm-TabBar') || element).parentElement;
    while (under && /rgba\\(0, 0, 0, 0\\)|transparent/.test(getComputedStyle(under).backgroundColor)) under = under.parentElement;
    const style = getComputedStyle(element);
    return {tag: element.tagName, text: (element.textContent || '').trim().slice(0, 30), name: name.trim(), outline: style.outlineStyle === 'none' ? 0 : parseFloat(style.outlineWidth),
            color: style.outlineColor, background: under ? getComputedStyle(under).backgroundColor : 'rgb(255, 255, 255)'};
}"""
TAB_COLORS = """() => [...document.querySelectorAll('.grpo-tabs .lm-TabBar-tab:not(.lm-mod-current)')].map(tab => {
    let under = tab;
    while (under && /rgba\\(0, 0, 0, 0\\)|transparent/.test(getComputedStyle(under).backgroundColor)) under = under.parentElement;
    return [tab.textContent, getComputedStyle(tab).color, getComputedStyle(under).backgroundColor];
})"""
CURRENT_TAB = "() => document.querySelector('.grpo-tabs .lm-TabBar-tab.lm-mod-current').textContent"


def over(color: str, background: str) -> str:
    """``color`` (which may be rgba) as drawn over the opaque ``background``: 'rgb(...)'."""
    parts = color[color.index("(") + 1 : color.index(")")].split(",")
    alpha = float(parts[3]) if len(parts) == 4 else 1.0
    drawn = [alpha * float(c) + (1 - alpha) * b for c, b in zip(parts[:3], parse_color(background))]
    return "rgb({:.0f}, {:.0f}, {:.0f})".format(*drawn)


def focus_stops_in_lab(page, presses: int = 45) -> list[dict]:
    """Tab from the top of the page ``presses`` times: what in .grpo-lab had the focus after each press."""
    return tab_through(page, presses, FOCUSED_CONTROL)


@pytest.mark.parametrize("theme", ("light", "dark"))
def test_voila_controls_have_16px_text_a_clear_focus_ring_and_a_name_at_every_tab_stop(tmp_path, theme):
    """Back row and keyboard, tab by tab at 1024 x 768: every control's text 16 px or more, every tab stop
    named and ringed (2 px or more, 3:1 against what it is drawn on), inactive tab labels 4.5:1 (WCAG AA);
    and a tab opened with Enter leaves the next mouse click on another tab working."""
    screen = {"width": 1024, "height": 768}
    name = f"voila_focus_{theme}"
    with serve("voila", tmp_path) as url, chromium_page(**screen) as page, screenshot_on_failure(page, f"{name}_failure.png"):
        page.goto(url + f"?theme={theme}", timeout=RUN_SECONDS)
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        for tab in A11Y_TABS:
            page.get_by_role("tab", name=tab, exact=True).click()
            assert page.evaluate(SMALL_CONTROL_TEXT) == [], tab
            stops = focus_stops_in_lab(page)
            assert len(stops) >= 5, (tab, stops)
            for stop in stops:
                assert stop["name"], (tab, stop)  # no unnamed tab stop
                assert stop["outline"] >= 2 and contrast_ratio(stop["color"], stop["background"]) >= 3, (tab, stop)
            if tab == "Main":
                kinds = {stop["tag"] for stop in stops}
                assert {"DIV", "SELECT", "BUTTON", "INPUT", "LI"} <= kinds, kinds  # slider handles and readouts, dropdowns, buttons, checkbox, tabs
                page.locator(".grpo-group-size [role=slider]").focus()  # after keys: its focus ring shows in the screenshot
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / f"{name}_slider_focus.png"))
        for label, color, background in page.evaluate(TAB_COLORS):
            assert contrast_ratio(over(color, background), background) >= 4.5, (label, color, background)

        # the tab-click bug: a tab opened with Enter, then a mouse click on another tab
        for by_key, by_mouse in (("Advanced", "Runs"), ("Guided tasks", "Main")):
            page.get_by_role("tab", name=by_key, exact=True).focus()
            page.keyboard.press("Enter")
            page.wait_for_function(f"() => ({CURRENT_TAB})() === {by_key!r}", timeout=5_000)
            page.get_by_role("tab", name=by_mouse, exact=True).click()
            page.wait_for_function(f"() => ({CURRENT_TAB})() === {by_mouse!r}", timeout=5_000)


ANNOUNCEMENTS = """() => {
    window.grpoHeard = [];
    window.grpoStatusTexts = [];
    const announcer = document.querySelector('.grpo-announce');
    const status = document.querySelector('.grpo-status');
    new MutationObserver(() => window.grpoHeard.push(announcer.textContent.trim()))
        .observe(announcer, {subtree: true, childList: true, characterData: true});
    new MutationObserver(() => window.grpoStatusTexts.push(status.textContent.trim()))
        .observe(status, {subtree: true, childList: true, characterData: true});
}"""


def test_voila_announces_a_run_at_its_start_and_end_not_every_frame(tmp_path):
    with serve("voila", tmp_path) as url, chromium_page() as page, screenshot_on_failure(page, "voila_announce_failure.png"):
        page.goto(url + "?steps=20", timeout=RUN_SECONDS)
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        announcer = page.locator(".grpo-announce")
        assert (announcer.get_attribute("role"), announcer.get_attribute("aria-live")) == ("status", "polite")
        assert announcer.evaluate("element => element.getBoundingClientRect().width") <= 1  # for screen readers only
        page.evaluate(ANNOUNCEMENTS)
        page.locator(".grpo-run").click()
        page.wait_for_function(f"() => ({LAST_FINISHED_RUN})() >= 2", timeout=RUN_SECONDS)
        page.wait_for_timeout(1_000)
        heard = [text for text in page.evaluate("() => window.grpoHeard") if text]
        statuses = set(page.evaluate("() => window.grpoStatusTexts"))
        assert [text.split(":")[0] for text in dict.fromkeys(heard)] == ["Started run 2", "Finished run 2"], heard
        assert len([text for text in statuses if "Running run 2" in text]) >= 2, statuses  # the visible line kept counting steps


def test_voila_at_150_percent_zoom_keeps_the_plot_beside_the_controls(tmp_path):
    """150% browser zoom of a 1280 x 720 window: 853 x 480 CSS pixels at 1.5 device pixels each."""
    screen = {"width": 853, "height": 480}
    with (
        serve("voila", tmp_path) as url,
        chromium_page(**screen, device_scale_factor=1.5) as page,
        screenshot_on_failure(page, "voila_zoom_150_failure.png"),
    ):
        page.goto(url, timeout=RUN_SECONDS)
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        page.locator(".grpo-run").scroll_into_view_if_needed()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "voila_zoom_150.png"))
        controls = page.locator(".grpo-controls").bounding_box()
        plot = page.locator("img.grpo-plot").bounding_box()
        assert plot["x"] >= controls["x"] + controls["width"] and plot["y"] < controls["y"] + controls["height"], (controls, plot)
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")  # nothing off to the right
        assert page.evaluate(SMALL_CONTROL_TEXT) == []


def test_voila_six_runs_stay_apart_under_protanopia_and_deuteranopia(tmp_path):
    """Six runs' colours, read off the Runs tab, simulated for protanopia and deuteranopia (Machado et al.
    2009, severity 1): every two differ by CIE76 delta E 20 or more, and each has a marker of its own."""
    with serve("voila", tmp_path) as url, chromium_page() as page, screenshot_on_failure(page, "voila_six_runs_failure.png"):
        page.goto(url + "?steps=5", timeout=RUN_SECONDS)
        page.wait_for_function(LAST_FINISHED_RUN, timeout=RUN_SECONDS)
        for run in range(2, 7):
            page.locator(".grpo-new-seed").click()
            page.wait_for_function(f"() => ({LAST_FINISHED_RUN})() >= {run}", timeout=RUN_SECONDS)
        page.get_by_role("tab", name="Runs").click()
        page.wait_for_function("() => document.querySelectorAll('.grpo-run-row').length === 6", timeout=10_000)
        tags = page.locator(".grpo-run-row span[style*=color]")
        looks = [(tag.evaluate("span => getComputedStyle(span).color"), tag.inner_text()) for tag in tags.all()]
        assert len(looks) == 6 and len({marker for _, marker in looks}) == 6, looks
        closest = closest_pair_delta_e([color for color, _ in looks])
        assert closest[0] >= 20, closest
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "voila_six_runs.png"))
