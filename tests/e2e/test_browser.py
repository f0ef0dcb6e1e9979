"""A report page in a real browser: Debian's Chromium, driven by Playwright, with
JavaScript switched off (the page must not need it). Saves `artifacts/report.png`."""

from __future__ import annotations

import pytest

from testkit import ROOT
from testkit.browser import CHROMIUM, CHROMIUM_ARGS, NEEDS_CHROMIUM

SECTIONS = ["Executive summary", "Key changes", "Module and topic trends", "Risk observations",
            "Key PRs at a glance", "Follow-up suggestions", "People",
            "Every PR of the week, by theme"]

ARTIFACTS = ROOT / "artifacts"
pytestmark = [NEEDS_CHROMIUM, pytest.mark.slow]  # a real browser renders the pages


async def test_report_page_in_chromium(base_url: str) -> None:
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                   args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(java_script_enabled=False,
                                                viewport={"width": 1100, "height": 900})
            context.set_default_timeout(10_000)
            page = await context.new_page()
            # Only this server is asked for anything: the page loads nothing else.
            asked: list[str] = []
            page.on("request", lambda request: asked.append(request.url))
            answer = await page.goto(f"{base_url}/reports/acme/lumen/2026-W29?lang=en")
            assert answer is not None and answer.status == 200

            assert await page.title() == ("acme/lumen weekly report, 2026 week 29 "
                                          "(07-13 to 07-19)")
            assert await page.locator("h2").all_inner_texts() == SECTIONS
            for section in ("summary", "changes", "trends", "risks", "key-prs", "suggestions",
                            "all-pulls"):
                assert await page.locator(f"section#{section}").is_visible()
            summary = await page.locator("section#summary").inner_text()
            assert "This week 16 PRs were handled (11 key)" in summary

            chart = page.locator("section#trends svg.wide")
            assert await chart.is_visible()
            # Nine topics, `[ckpt]` counted as checkpoint: eight bars.
            assert await chart.locator("rect.bar").count() == 8
            box = await chart.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100

            risks = page.locator("section#risks li")
            # 10 from the review threads, reviews and checks; 1 from kenji-o's question in
            # #1212's conversation ("Is 30 minutes enough for 405B?").
            assert await risks.count() == 11
            hostile = page.locator("section#changes li li",
                                   has_text="Tool output containing <script>")
            assert "<!channel>" in await hostile.inner_text()

            pr_link = page.locator("section#key-prs li", has_text="#1201").get_by_role(
                "link", name="Open on GitHub")
            assert await pr_link.get_attribute("href") == (
                "https://github.com/acme/lumen/pull/1201")
            evidence = page.locator("section#risks a", has_text="evidence").first
            assert (await evidence.get_attribute("href") or "").startswith(
                "https://github.com/acme/lumen/pull/")

            await page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)

            # The language switch and the navigation work without any script.
            await page.get_by_role("link", name="中文").click()
            await page.wait_for_url("**/2026-W29?lang=zh")
            assert await page.locator("h1").inner_text() == (
                "acme/lumen 2026 年第 29 周周报（07-13 至 07-19）")
            assert await page.locator("h2").first.inner_text() == "执行摘要"
            await page.get_by_role("link", name="全部周报").click()
            await page.wait_for_url("**/reports/acme/lumen?lang=zh")
            assert await page.locator("h1").inner_text() == "acme/lumen 周报"
            await page.get_by_role("link", name="2026-W28").click()
            await page.wait_for_url("**/2026-W28?lang=zh")
            assert await page.locator("h2").count() == len(SECTIONS)
            await page.get_by_role("link", name="下一周 →").click()
            await page.wait_for_url("**/2026-W29?lang=zh")

            assert all(url.startswith(base_url) for url in asked), asked
        finally:
            await browser.close()
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
