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
from browser_helpers import ARTIFACTS, CHROMIUM, chromium_page, serve

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
        if screen["width"] >= 1280:  # at 1024 px the plot beside the controls is about 460 px wide: ticks about 11 px
            assert TICK_PX_IN_PNG * shown >= 16, f"plot ticks {TICK_PX_IN_PNG * shown:.1f} px at display size"
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


FOCUSED = """() => {
    const element = document.activeElement;
    if (!element || element === document.body) return null;
    const part = [...element.classList, ...(element.closest('[class*="grpo-"]') || {classList: []}).classList].find(c => c.startsWith('grpo-')) || '';
    return {part, role: element.getAttribute('role') || element.tagName.toLowerCase(),
            name: element.getAttribute('aria-label') || element.textContent.trim().slice(0, 40),
            outline: parseFloat(getComputedStyle(element).outlineWidth) || 0};
}"""


def tab_through(page, presses: int) -> list[dict]:
    """Press Tab ``presses`` times from the top of the page; what had the focus after each press."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    focused = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        element = page.evaluate(FOCUSED)
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
        assert page.locator(".grpo-status").get_attribute("aria-live") == "polite"
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
