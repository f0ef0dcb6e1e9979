"""The names the reliability world is made of: its repositories, week, channels and
every secret of a full configuration (tests search logs and answers for each value)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from testkit.fakes import slack as slack_fake

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/lumen"
PRIVATE_REPO = "acme/vault"
TZ = "Asia/Shanghai"
# Wednesday of 2026-W30 in Shanghai: the example snapshot's week, W29, is last week.
NOW = datetime(2026, 7, 22, 4, 0, tzinfo=UTC)
WEEK = "2026-W29"

SLACK_CHANNEL = "C0123456"
SLACK_VAULT_CHANNEL = "CVAULT001"
TELEGRAM_CHAT = "-1001234567890"
FEISHU_CHAT = "oc_0123456789abcdef"
SLACK_ADMIN = "U0ADMIN1"

# Every secret of a full configuration; tests search logs and answers for each value.
GITHUB_TOKEN = "ghp_reliability_TOKEN_9f8e7d6c5b4a"
SECRETS: dict[str, str] = {
    "GITHUB_TOKEN": GITHUB_TOKEN,
    "GITHUB_WEBHOOK_SECRET": "gh-webhook-SECRET-0a1b2c3d4e5f",
    "PRDIGEST_REPORT_SECRET": "report-SECRET-5f4e3d2c1b0a",
    "SLACK_BOT_TOKEN": slack_fake.BOT_TOKEN,
    "SLACK_SIGNING_SECRET": slack_fake.SIGNING_SECRET,
    "TELEGRAM_BOT_TOKEN": "987654:RELIABILITY-token_QwErTy",
    "TELEGRAM_WEBHOOK_SECRET": "tg-webhook-SECRET_77aa88bb",
    "FEISHU_APP_SECRET": "feishu-app-SECRET-1122334455",
    "FEISHU_VERIFICATION_TOKEN": "feishu-verify-TOKEN-6677",
    "FEISHU_ENCRYPT_KEY": "feishu-encrypt-KEY-8899aabb",
}
