"""`/` lists the configured repositories' report pages; an address with no page gets a
page with a way back; `/metrics` carries no `*_created` series and can need a token."""

from __future__ import annotations

import msgspec
import pytest

from bot.config import parse_config
from testkit.pages import Page, app_with
from testkit.server_support import clear_env, example_config, serving


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


def _two_repos() -> object:
    raw = msgspec.to_builtins(example_config())
    raw["repos"]["acme/secret"] = {"private": True}
    raw["repos"]["zeta/public"] = {"timezone": "UTC"}
    return parse_config(raw)


async def test_the_front_page_lists_each_public_repository_and_its_last_week() -> None:
    async with serving(app_with(_two_repos())) as http:  # type: ignore[arg-type]
        answer = await http.get("/?lang=en")
        assert answer.status_code == 200
        page = Page(answer.text)
        # testkit's clock is in 2026-W30 (Shanghai), so the last full week is W29.
        assert "/reports/acme/lumen?lang=en" in page.links
        assert "/reports/acme/lumen/2026-W29?lang=en" in page.links
        assert "/reports/zeta/public?lang=en" in page.links
        assert not any("secret" in link for link in page.links)  # private: never listed
        assert "acme/secret" not in answer.text
        # Each listed link opens a page.
        for link in page.links:
            if link.startswith("/reports/"):
                assert (await http.get(link)).status_code == 200, link
        zh = await http.get("/?lang=zh")
        assert "PR 周报" in Page(zh.text).h1


@pytest.mark.parametrize("path", ["/nothing/here", "/reports/acme/lumen/2099-W01",
                                  "/reports/nobody/none"])
async def test_a_missing_page_has_a_way_back(path: str) -> None:
    async with serving(app_with()) as http:
        answer = await http.get(path)
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html")
    links = Page(answer.text).links
    assert "/" in links
    if path.startswith("/reports/acme/lumen/"):
        assert any(link.startswith("/reports/acme/lumen?") for link in links)


async def test_metrics_carry_no_created_series() -> None:
    async with serving(app_with()) as http:
        await http.get("/reports/acme/lumen/2026-W29")
        body = (await http.get("/metrics")).text
    assert "prdigest_report_pages_total{" in body
    assert "_created" not in body


async def test_metrics_need_the_token_once_one_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRDIGEST_METRICS_TOKEN", "s3cret")
    async with serving(app_with()) as http:
        assert (await http.get("/metrics")).status_code == 401
        wrong = await http.get("/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "s3cret" not in wrong.text
        right = await http.get("/metrics", headers={"Authorization": "Bearer s3cret"})
        assert right.status_code == 200 and "prdigest_" in right.text
        assert (await http.get("/healthz")).status_code == 200  # health stays open
