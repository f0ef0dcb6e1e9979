"""The Chinese report page in Debian's Chromium: its characters are drawn with a CJK
font (not as boxes), and on a phone the chart's labels are as large as the text."""

from __future__ import annotations

from typing import Any

import pytest

from testkit.browser import CHROMIUM, CHROMIUM_ARGS, NEEDS_CHROMIUM

pytestmark = [NEEDS_CHROMIUM, pytest.mark.slow]  # a real browser renders the pages

CJK_FAMILY = ("CJK", "Han", "PingFang", "YaHei", "Hiragino", "WenQuanYi", "Noto Sans SC")


async def _page(playwright: Any, base_url: str, path: str, **context: Any) -> tuple[Any, Any]:
    browser = await playwright.chromium.launch(executable_path=str(CHROMIUM),
                                               args=CHROMIUM_ARGS)
    page = await (await browser.new_context(**context)).new_page()
    answer = await page.goto(f"{base_url}{path}")
    assert answer is not None and answer.status == 200
    return browser, page


async def _fonts_of(page: Any, selector: str) -> list[dict[str, Any]]:
    """The fonts Chromium really drew the element's text with, glyphs per font."""
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("DOM.enable")
    await cdp.send("CSS.enable")
    root = await cdp.send("DOM.getDocument")
    node = await cdp.send("DOM.querySelector", {"nodeId": root["root"]["nodeId"],
                                                "selector": selector})
    found = await cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
    fonts: list[dict[str, Any]] = found["fonts"]
    return fonts


async def test_the_chinese_page_draws_its_characters_with_a_cjk_font(base_url: str) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser, page = await _page(playwright, base_url, "/reports/acme/lumen/2026-W29?lang=zh")
        try:
            heading = await page.locator("h2").first.inner_text()
            assert heading == "执行摘要"
            fonts = await _fonts_of(page, "h2")
            # Four Chinese glyphs, all from a font that has them: a page without a CJK
            # font would draw them from a last-resort font, as boxes.
            cjk = [f for f in fonts if any(name in f["familyName"] for name in CJK_FAMILY)]
            assert sum(f["glyphCount"] for f in cjk) == len(heading), fonts
        finally:
            await browser.close()


async def test_phone_chart_labels_are_as_tall_as_text(base_url: str) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser, page = await _page(playwright, base_url, "/reports/acme/lumen/2026-W29?lang=en",
                                    viewport={"width": 360, "height": 780})
        try:
            assert not await page.locator("figure.chart svg.wide").is_visible()
            label = page.locator("figure.chart svg.narrow text").first
            assert await label.is_visible()
            box = await label.bounding_box()
            assert box is not None and box["height"] >= 12, box
            # On a desktop the wide chart is the one shown.
            await page.set_viewport_size({"width": 1100, "height": 900})
            assert await page.locator("figure.chart svg.wide").is_visible()
            assert not await page.locator("figure.chart svg.narrow").is_visible()
        finally:
            await browser.close()
