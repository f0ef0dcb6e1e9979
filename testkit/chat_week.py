"""A week built by hand for the chat tests, so each expected figure can be counted by eye:
week 2026-W29 (Asia/Shanghai) holds #7035 and #6974 merged and #7100 opened; #7001 was
merged in W28 and #7120 in W30, the week "now" falls in. Two channels: a Slack one open
to all (Chinese, following npu) and a Telegram one with an admin (English)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.config import ChannelConfig, Config, RepoConfig, TopicRule
from bot.models import (
    FileChange,
    PullRequest,
    Review,
    ReviewThread,
    Snapshot,
    ThreadComment,
)

SHANGHAI = ZoneInfo("Asia/Shanghai")


REPO = "verl-project/verl"


NOW = datetime(2026, 7, 22, 10, 0, tzinfo=SHANGHAI)  # Wednesday of 2026-W30


THREAD_URL = f"https://github.com/{REPO}/pull/7035#discussion_r1"


def at(day: int, hour: int = 12, month: int = 7) -> datetime:
    return datetime(2026, month, day, hour, tzinfo=SHANGHAI)


def pull(number: int, title: str, **values: Any) -> PullRequest:
    return PullRequest(number=number, title=title,
                       url=f"https://github.com/{REPO}/pull/{number}", author="dev",
                       **values)


SNAPSHOT = Snapshot(repository=REPO, pulls=(
    pull(7035, "[ci, npu] chore: update the NPU docker image", state="merged",
          merged_at=at(15), closed_at=at(15),
          files=(FileChange(path="docker/ascend/Dockerfile"),),
          reviews=(Review(author="lead", state="APPROVED", submitted_at=at(14)),),
          review_threads=(ReviewThread(
              path="scripts/run_npu.sh", line=12, resolved=False, outdated=False,
              comments=(ThreadComment(author="reviewer",
                                      body="enforce_eager=False breaks vLLM on Ascend NPU.",
                                      url=THREAD_URL),),
          ),)),
    pull(6974, "[ckpt, rollout] feat: sharded delta weight sync", state="merged",
          merged_at=at(16), closed_at=at(16),
          body="### What does this PR do?\n\nAdds a sharded delta weight sync engine that "
               "makes weight sync 2-3x faster.",
          files=(FileChange(path="verl/workers/rollout/sync.py", additions=400),),
          reviews=(Review(author="lead", state="APPROVED", submitted_at=at(16)),)),
    pull(7100, "[trainer] feat: streaming data loader", state="open", created_at=at(17)),
    pull(7001, "[trainer] fix: loss scale", state="merged", merged_at=at(8),
          closed_at=at(8),
          reviews=(Review(author="lead", state="APPROVED", submitted_at=at(8)),)),
    pull(7120, "[doc] chore: fix typos", state="merged", merged_at=at(21), closed_at=at(21),
          reviews=(Review(author="lead", state="APPROVED", submitted_at=at(21)),)),
))


CONFIG = Config(
    repos={REPO: RepoConfig(topics={"npu": TopicRule(keywords=("npu", "ascend"))})},
    channels=(
        ChannelConfig(platform="slack", id="C1", repo=REPO, lang="zh", topics=("npu",)),
        ChannelConfig(platform="telegram", id="42", repo=REPO, lang="en",
                      admins=("U_ADMIN",)),
    ),
)


OPEN_CHANNEL = CONFIG.channels[0]


ADMIN_CHANNEL = CONFIG.channels[1]
