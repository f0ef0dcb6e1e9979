"""A full run of the service, every platform on, GitHub serving a PR whose title, body,
review and review thread carry every mention and markup trick: chat questions in both
languages on every platform, the weekly posts, a merged-PR notice, the report pages,
/healthz and /metrics. Then: every payload any platform accepted is inert, no
response was a 5xx, and no secret appears in any log line, payload or response."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from testkit.reliability.harness import LogCapture, Service
from testkit.reliability.hostile import HOSTILE_NUMBER, hostile_pull
from testkit.reliability.live import html_live
from testkit.reliability.names import REPO, SECRETS, SLACK_ADMIN, WEEK
from testkit.schedule import tick_at
from testkit.server_support import merged_event

QUESTIONS = (
    f"risks for #{HOSTILE_NUMBER}",
    f"summary #{HOSTILE_NUMBER}",
    f"#{HOSTILE_NUMBER} 有什么风险",
    "digest last week",
    "topics",
    "help",
    "<!channel> please @all <at user_id=\"all\"></at>",
)
# Monday 09:05 in Shanghai of 2026-W30: every channel's weekly post for W29 is due.
MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)


async def test_a_full_run_is_inert_never_5xx_and_leaks_no_secret(
    service: Service, all_logs: LogCapture
) -> None:
    world = service.world
    for question in QUESTIONS:
        assert await service.slack(question), question
        assert await service.telegram(question), question
        assert await service.feishu(question), question
    assert await service.slack("subscribe rollout", user=SLACK_ADMIN)

    scheduler = service.services.process.scheduler
    assert scheduler is not None
    posted = await tick_at(scheduler, MONDAY)
    assert sorted(r.status for r in posted) == ["posted"] * 4, posted

    notice = await service.github(merged_event(hostile_pull(), REPO))
    assert notice.status_code == 200, notice.text
    assert notice.json()["notified"], notice.json()

    pages = [await service.get(f"/reports/{REPO}/{WEEK}?lang={lang}") for lang in ("en", "zh")]
    pages.append(await service.get(f"/reports/{REPO}"))
    assert [p.status_code for p in pages] == [200, 200, 200]
    health = await service.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    await service.get("/metrics")

    # The hostile PR reached every platform and the page (escaped), or this proves nothing.
    slack_text = json.dumps(world.slack_messages())
    assert "&lt;!channel&gt;" in slack_text
    assert any("<!channel>" in m.get("text", "") or "&lt;!channel&gt;" in m.get("text", "")
               for m in world.telegram_messages())
    assert "&#60;at user&#95;id=" in json.dumps(world.feishu_cards())
    assert "&lt;script&gt;" in pages[0].text

    assert world.live_mentions() == []
    for page in pages:
        assert html_live(page.text) == []
    assert [r.status_code for r in service.responses if r.status_code >= 500] == []

    seen = [all_logs.text, json.dumps(world.slack_messages()),
            json.dumps(world.telegram_messages()), json.dumps(world.feishu_cards()),
            *(r.text for r in service.responses), *(dict(r.headers).__repr__()
                                                    for r in service.responses)]
    for name, value in SECRETS.items():
        leaks = [text[max(0, text.find(value) - 80):text.find(value) + 40]
                 for text in seen if value in text]
        assert leaks == [], f"{name} appears in: {leaks[:2]}"
    assert len(all_logs.lines) > 50  # the capture really saw the run
