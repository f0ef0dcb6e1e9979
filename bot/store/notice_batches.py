"""Notice batches in Redis: merges collected per channel until the batch is due.

A channel with `notice_batch_minutes` collects its merged-PR notices in an *open*
batch (a hash: its id, when it opened, when it is due, one field per PR). The first
merge opens it and sets its due time; later merges join it. Adding a PR also sets a
marker for (channel, PR) in the same script, so a PR joins a channel's batches once,
whatever replica, redelivery or poll sees the merge again. Marker and batch share the
channel's hash tag: the script is one step on one shard.

When the batch is due, one script moves it to the channel's *out* key (one batch out
at a time), so merges arriving while it is sent open the next batch. The out batch
stays until its sender drops it, after the post: a sender killed in between leaves
it for the next one (`bot.delivery.batches`).
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

import msgspec
import redis.asyncio as aioredis

from bot.models import Reply
from bot.store.keys import Keys
from bot.store.ledger import as_bytes

# KEYS: marker, open batch. ARGV: marker ttl ms, field, item, due ms, new id, now ms.
_ADD = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
redis.call('HSETNX', KEYS[2], '.id', ARGV[5])
redis.call('HSETNX', KEYS[2], '.opened', ARGV[6])
redis.call('HSETNX', KEYS[2], '.due', ARGV[4])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
# KEYS: open batch, out batch. ARGV: now ms. 1 = moved, 2 = one is already out, 0 = none due.
_TAKE = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
local due = redis.call('HGET', KEYS[1], '.due')
if not due or tonumber(due) > tonumber(ARGV[1]) then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1
"""
# KEYS: out batch. ARGV: its id. Drops it only while it is still that batch.
_DROP = """
if redis.call('HGET', KEYS[1], '.id') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_ITEM = "pr:"


class BatchItem(msgspec.Struct, frozen=True, kw_only=True):
    """One merged PR in a batch: the notice it would have had on its own."""

    repo: str
    number: int
    merged_at: datetime | None
    reply: Reply


class DueBatch(msgspec.Struct, frozen=True, kw_only=True):
    """A batch taken out to be sent: its id (stable across senders), when it opened,
    and its PRs in the order they merged."""

    id: str
    opened_at: datetime
    items: tuple[BatchItem, ...]


_encode = msgspec.json.Encoder().encode
_decode_item = msgspec.json.Decoder(BatchItem).decode


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class NoticeBatches:
    """The open and out batches of every channel, in one Redis."""

    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    async def add(self, channel_key: str, item: BatchItem, *, now: datetime,
                  window_seconds: float, marker_ttl_seconds: float) -> bool:
        """Put the PR in the channel's open batch (opening one due `window_seconds`
        from now); False when it was put in one before."""
        marker = self.keys.claim(Keys.batched_notice(channel_key, item.repo, item.number))
        added = await self.client.eval(
            _ADD, 2, marker, self.keys.notice_batch(channel_key),
            max(1, int(marker_ttl_seconds * 1000)), f"{_ITEM}{item.repo}#{item.number}",
            _encode(item), _ms(now) + int(window_seconds * 1000),
            secrets.token_hex(8), _ms(now))
        return bool(added)

    async def take(self, channel_key: str, now: datetime) -> DueBatch | None:
        """The channel's batch to send: the one already out (its sender may have died),
        else the open one once it is due; None when there is none."""
        await self.client.eval(_TAKE, 2, self.keys.notice_batch(channel_key),
                               self.keys.notice_batch_out(channel_key), _ms(now))
        raw = await self.client.hgetall(self.keys.notice_batch_out(channel_key))
        if not raw:
            return None
        fields = {(as_bytes(k) or b"").decode(): as_bytes(v) or b"" for k, v in raw.items()}
        items = sorted((_decode_item(value) for name, value in fields.items()
                        if name.startswith(_ITEM)),
                       key=lambda i: (i.merged_at or datetime.max.replace(tzinfo=UTC),
                                      i.repo, i.number))
        opened = datetime.fromtimestamp(int(fields.get(".opened", b"0")) / 1000, UTC)
        return DueBatch(id=fields.get(".id", b"").decode(), opened_at=opened,
                        items=tuple(items))

    async def drop(self, channel_key: str, batch_id: str) -> None:
        """The batch was sent: remove it (only if it is still the one out)."""
        await self.client.eval(_DROP, 1, self.keys.notice_batch_out(channel_key), batch_id)
