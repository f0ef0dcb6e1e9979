"""The digest's sections in reading order: the one list every format follows.

Markdown, plain text, Telegram, Slack, Feishu and the HTML report page all walk this
tuple (through `DigestView.sections`), so adding, dropping or moving a section is one
edit here plus its words in `templates/common/sections.j2`. Each format still decides
how a section looks; none decides which sections there are or in which order.
"""

from __future__ import annotations

from dataclasses import dataclass


def _(message: str) -> str:
    """Marks an English message id for the catalog extractor and returns it unchanged:
    the heading is translated where it is rendered, in the reader's language."""
    return message


@dataclass(frozen=True, slots=True)
class Section:
    """One part of the digest: `id` names its words in the templates (a macro of
    `templates/common/sections.j2`), `heading` is the English message id of its title,
    None for the header, which the title of the digest opens instead."""

    id: str
    heading: str | None = None
    # Whether the chat digest shows it; the full report (Markdown, HTML, JSON) shows all.
    in_chat: bool = True
    # Whether the compact chat digest (a channel's `style = "compact"`) shows it.
    in_compact: bool = True
    # Shown in chat only where the channel asks for it (`people = true`).
    on_request: bool = False
    # Whether a digest of several repositories draws it once per repository (under the
    # repository's name); the others speak of all of them at once.
    per_repository: bool = False

    @property
    def anchor(self) -> str:
        """The section's fragment id on the HTML report page (`#key-prs`)."""
        return self.id.replace("_", "-")


# The header holds the digest's title (on a Feishu card: in the card's own header),
# its facts (repository, period, PR counts) and the notes about its data.
HEADER = Section("header")

DIGEST_SECTIONS: tuple[Section, ...] = (
    HEADER,
    Section("summary", _("Executive summary")),
    Section("changes", _("Key changes"), per_repository=True),
    # Each repository's trends: a share of every repository's PRs together says little.
    Section("trends", _("Module and topic trends"), in_compact=False, per_repository=True),
    Section("risks", _("Risk observations"), per_repository=True),
    Section("key_prs", _("Key PRs at a glance"), per_repository=True),
    Section("suggestions", _("Follow-up suggestions"), per_repository=True),
    Section("people", _("People"), in_chat=False, in_compact=False, on_request=True,
            per_repository=True),
    Section("all_pulls", _("Every PR of the week, by theme"), in_chat=False,
            in_compact=False, per_repository=True),
)
