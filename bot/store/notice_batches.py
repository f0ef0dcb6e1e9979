"""Notice batches: merges collected per channel until the batch is due, in the
coordination port's `BatchStore` (Redis for replicas).

A channel with `notice_batch_minutes` collects its merged-PR notices in an *open*
batch (a hash: its id, when it opened, when it is due, one field per PR). The first
merge opens it and sets its due time; later merges join it. Adding a PR also sets a
marker for (channel, PR) in the same step, so a PR joins a channel's batches once,
whatever replica, redelivery or poll sees the merge again (on Redis marker and batch
share the channel's hash tag: one script on one shard).

When the batch is due, one step moves it to the channel's *out* key (one batch out
at a time), so merges arriving while it is sent open the next batch. The out batch
stays until its sender drops it, after the post: a sender killed in between leaves
it for the next one (`bot.delivery.batches`).
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

import msgspec

from bot.models import Reply
from bot.store.coordination import Coordination
from bot.store.keys import Keys

_ITEM = "pr:"
_ID, _OPENED, _DUE = ".id", ".opened", ".due"


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
    """The open and out batches of every channel, in one coordination store."""

    def __init__(self, port: Coordination) -> None:
        self.store = port.batches
        self.keys = port.keys

    async def add(self, channel_key: str, item: BatchItem, *, now: datetime,
                  window_seconds: float, marker_ttl_seconds: float) -> bool:
        """Put the PR in the channel's open batch (opening one due `window_seconds`
        from now); False when it was put in one before."""
        marker = self.keys.claim(Keys.batched_notice(channel_key, item.repo, item.number))
        header = {_ID: secrets.token_hex(8).encode(), _OPENED: str(_ms(now)).encode(),
                  _DUE: str(_ms(now) + int(window_seconds * 1000)).encode()}
        return await self.store.add(
            marker, self.keys.notice_batch(channel_key),
            marker_ttl_ms=max(1, int(marker_ttl_seconds * 1000)),
            field=f"{_ITEM}{item.repo}#{item.number}", item=_encode(item), header=header)

    async def take(self, channel_key: str, now: datetime) -> DueBatch | None:
        """The channel's batch to send: the one already out (its sender may have died),
        else the open one once it is due; None when there is none."""
        fields = await self.store.take(self.keys.notice_batch(channel_key),
                                       self.keys.notice_batch_out(channel_key),
                                       due_field=_DUE, now_ms=_ms(now))
        if not fields:
            return None
        items = sorted((_decode_item(value) for name, value in fields.items()
                        if name.startswith(_ITEM)),
                       key=lambda i: (i.merged_at or datetime.max.replace(tzinfo=UTC),
                                      i.repo, i.number))
        opened = datetime.fromtimestamp(int(fields.get(_OPENED, b"0")) / 1000, UTC)
        return DueBatch(id=fields.get(_ID, b"").decode(), opened_at=opened,
                        items=tuple(items))

    async def drop(self, channel_key: str, batch_id: str) -> None:
        """The batch was sent: remove it (only if it is still the one out)."""
        await self.store.drop(self.keys.notice_batch_out(channel_key), id_field=_ID,
                              batch_id=batch_id)
