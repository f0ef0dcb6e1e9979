"""Who may read and change what, through the running service on every platform.

A chat reads only the repository its channel is configured for: asking about another
repository's PR (by `owner/repo#N` or its URL) is refused without asking GitHub, and a
chat outside the config gets no data at all. A private repository's report pages
answer exactly as an unknown repository does without the signed key. Where a channel
names admins, only they change its subscriptions.
"""

from __future__ import annotations

import json

from bot.links import report_key
from testkit.fakes.telegram import private_chat
from testkit.reliability.harness import Service
from testkit.reliability.hostile import PRIVATE_TITLE
from testkit.reliability.names import (
    PRIVATE_REPO,
    REPO,
    SECRETS,
    SLACK_ADMIN,
    SLACK_VAULT_CHANNEL,
    WEEK,
)

OTHER_REPO_QUESTIONS = (
    f"risks for {PRIVATE_REPO}#77",
    f"summary https://github.com/{PRIVATE_REPO}/pull/77",
    f"{PRIVATE_REPO}#77 有什么风险",
)


def _github_asked_about(service: Service, repo: str) -> int:
    name = repo.split("/")[1]
    return sum(name in (r.body.decode("utf-8", "replace") + r.path)
               for r in service.world.github.requests)


def _shown(payloads: list[dict[str, object]]) -> str:
    return json.dumps(payloads, ensure_ascii=False)


async def test_a_channel_cannot_read_another_repositorys_pulls(service: Service) -> None:
    for question in OTHER_REPO_QUESTIONS:
        slack = _shown(await service.slack(question))
        telegram = _shown(await service.telegram(question))  # type: ignore[arg-type]
        feishu = _shown(await service.feishu(question))
        for answer in (slack, telegram, feishu):
            assert PRIVATE_TITLE not in answer
        for answer in (slack, telegram, feishu):
            assert "is not available here" in answer or "只能" in answer, answer[:300]
    assert _github_asked_about(service, PRIVATE_REPO) == 0


async def test_a_chat_outside_the_config_gets_no_data(service: Service) -> None:
    for question in ("digest last week", "risks for #1201", f"summary {PRIVATE_REPO}#77",
                     "topics", "subscribe npu"):
        slack = _shown(await service.slack(question, channel="CSTRANGER1"))
        telegram = _shown(await service.telegram(  # type: ignore[arg-type]
            question, chat=private_chat(555)))
        feishu = _shown(await service.feishu(question, chat="oc_stranger"))
        for answer in (slack, telegram, feishu):
            assert PRIVATE_TITLE not in answer and "paged KV cache" not in answer, answer
        # With Redis, a chat may set itself up: the refusal says how.
        assert "This chat is not set up yet: send" in slack
        assert "This chat is not set up yet: send" in telegram
    assert _github_asked_about(service, PRIVATE_REPO) == 0
    assert service.world.github.count() == 0


async def test_the_private_repositorys_own_channel_reads_it(service: Service) -> None:
    """The positive control: the refusals above are about the channel, not the data."""
    answer = _shown(await service.slack(f"summary {PRIVATE_REPO}#77",
                                        channel=SLACK_VAULT_CHANNEL))
    assert PRIVATE_TITLE in answer


async def test_private_report_pages_look_exactly_like_unknown_ones(service: Service) -> None:
    unknown = [await service.get(path) for path in
               ("/reports/acme/nothing", f"/reports/acme/nothing/{WEEK}")]
    private = [await service.get(path) for path in
               (f"/reports/{PRIVATE_REPO}", f"/reports/{PRIVATE_REPO}/{WEEK}",
                f"/reports/{PRIVATE_REPO}/{WEEK}?key=guess",
                f"/reports/{PRIVATE_REPO}/{WEEK}?key={report_key('wrong', PRIVATE_REPO)}",
                f"/reports/{PRIVATE_REPO.upper()}/{WEEK}")]
    assert {r.status_code for r in unknown + private} == {404}
    assert {r.text for r in private} == {unknown[0].text}
    assert all(PRIVATE_TITLE not in r.text for r in private)
    key = report_key(SECRETS["PRDIGEST_REPORT_SECRET"], PRIVATE_REPO)
    opened = await service.get(f"/reports/{PRIVATE_REPO}/{WEEK}?key={key}&lang=en")
    assert opened.status_code == 200 and PRIVATE_TITLE in opened.text
    assert "no-store" in opened.headers["cache-control"]
    public = await service.get(f"/reports/{REPO}/{WEEK}?lang=en")
    assert public.status_code == 200 and PRIVATE_TITLE not in public.text


async def test_only_admins_change_a_channels_subscriptions(service: Service) -> None:
    refused = _shown(await service.slack("subscribe rollout", user="U0SOMEONE"))
    assert "Only this chat's admins" in refused
    store = service.services.process.handler.subscriptions
    assert store is not None and store.topics("slack:C0123456") == set()
    accepted = _shown(await service.slack("subscribe rollout", user=SLACK_ADMIN))
    assert "Only this chat's admins" not in accepted
    assert store.topics("slack:C0123456") == {"rollout"}
    refused_removal = _shown(await service.slack("unsubscribe rollout", user="U0SOMEONE"))
    assert "Only this chat's admins" in refused_removal
    assert store.topics("slack:C0123456") == {"rollout"}
    # Telegram's channel names no admins: anyone in it may change its subscriptions.
    await service.telegram("/subscribe rollout")
    assert store.topics("telegram:-1001234567890") == {"rollout"}
