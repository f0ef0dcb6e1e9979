"""Typed, immutable records shared by every part of prdigest.

Input records mirror the `prdigest.snapshot/1` format field for field, so a snapshot
decodes straight into them and encodes back unchanged. `None` always means "not
recorded" - the engine reports it as unknown and never guesses.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

import msgspec

SNAPSHOT_FORMAT = "prdigest.snapshot/1"

# A time must carry its zone: a naive time would shift PRs between weeks.
Time = Annotated[datetime, msgspec.Meta(tz=True)]

PullState = Literal["merged", "closed", "open"]
ReviewState = Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]
CheckState = Literal["success", "failure", "pending"]
Severity = Literal["high", "medium", "low"]
Lang = Literal["zh", "en"]
Style = Literal["full", "compact"]
Admission = Literal["answer", "repeat", "later"]
"""What the dedupe store says of an inbound delivery: answer it (this process holds it
now), a repeat (answered, or being answered here), or "later" - another process began
it and may have died, so the platform should send it again."""


class Record(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """Base for every record: frozen, keyword-only."""


class FileChange(Record, frozen=True, kw_only=True):
    path: str
    additions: int = 0
    deletions: int = 0
    status: str | None = None


class Review(Record, frozen=True, kw_only=True):
    author: str | None = None
    state: ReviewState
    submitted_at: Time | None = None
    body: str | None = None


class ThreadComment(Record, frozen=True, kw_only=True):
    author: str | None = None
    body: str | None = None
    created_at: Time | None = None
    url: str | None = None


class ReviewThread(Record, frozen=True, kw_only=True):
    path: str | None = None
    line: int | None = None
    resolved: bool | None = None
    outdated: bool | None = None
    comments: tuple[ThreadComment, ...] = ()


class Comment(Record, frozen=True, kw_only=True):
    author: str | None = None
    body: str | None = None
    created_at: Time | None = None


class PullRequest(Record, frozen=True, kw_only=True):
    number: int
    title: str
    url: str
    author: str | None = None
    state: PullState
    draft: bool | None = None
    created_at: Time | None = None
    updated_at: Time | None = None
    merged_at: Time | None = None
    closed_at: Time | None = None
    base: str | None = None
    labels: tuple[str, ...] = ()
    body: str | None = None
    additions: int | None = None
    deletions: int | None = None
    changed_files: int | None = None
    files: tuple[FileChange, ...] = ()
    reviews: tuple[Review, ...] | None = ()
    review_threads: tuple[ReviewThread, ...] | None = ()
    comments: tuple[Comment, ...] | None = ()
    checks: CheckState | None = None
    # How GitHub relates the author to the repository (`FIRST_TIME_CONTRIBUTOR`,
    # `FIRST_TIMER`, `MEMBER`...), as it says when the PR is fetched. Unset (left out of
    # the file, so older snapshots read and write back unchanged) or None: not recorded.
    author_association: str | msgspec.UnsetType | None = msgspec.UNSET

    @property
    def lines_changed(self) -> int:
        """Additions plus deletions, from the totals or, when absent, from the files."""
        if self.additions is not None and self.deletions is not None:
            return self.additions + self.deletions
        return sum(f.additions + f.deletions for f in self.files)


class Snapshot(Record, frozen=True, kw_only=True):
    format: Literal["prdigest.snapshot/1"] = "prdigest.snapshot/1"
    repository: str
    fetched_at: Time | None = None
    pulls: tuple[PullRequest, ...] = ()


# --- the digest -------------------------------------------------------------------


class Period(Record, frozen=True, kw_only=True):
    since: Time
    until: Time


class Counts(Record, frozen=True, kw_only=True):
    total: int
    key: int
    merged: int
    closed: int
    opened: int


class NameCount(Record, frozen=True, kw_only=True):
    name: str
    count: int
    share: float
    pulls: tuple[int, ...] = ()
    previous: int | None = None
    # What the reader sees for `name`, in the digest's language ("NPU", "问题修复").
    label: str = ""


class HotFile(Record, frozen=True, kw_only=True):
    path: str
    pulls: int
    numbers: tuple[int, ...] = ()


class Theme(Record, frozen=True, kw_only=True):
    """A change area: `pulls` are its key PRs (best first), `others` the rest of the
    week's PRs in it; `kind` is `area` (a topic, module or folder: `area`), `security`
    (the week's security fixes) or `other` (PRs of no theme); `kinds` counts its PRs by
    kind of change, `about` the other areas they touch, `topic` the name its area is
    counted under in the topics."""

    title: str
    pulls: tuple[int, ...]
    key: str = ""
    kind: str = ""
    area: str = ""
    others: tuple[int, ...] = ()
    kinds: str = ""
    about: tuple[NameCount, ...] = ()
    # The name its area is counted under in the digest's `topics` ("" for none).
    topic: str = ""


class RiskKind(StrEnum):
    """The rule that found a risk (`bot.engine.risks`): a review thread, a
    conversation comment, a review bot's marked finding, a request for changes, the
    approvals or the checks at merge."""

    THREAD = "thread"
    THREAD_MARKED = "thread-marked"
    COMMENT = "comment"
    COMMENT_MARKED = "comment-marked"
    REVIEW_MARKED = "review-marked"
    CHANGES_REQUESTED = "changes-requested"
    UNAPPROVED = "unapproved"
    CHECKS_FAILED = "checks-failed"
    CHECKS_PENDING = "checks-pending"

    @property
    def from_review(self) -> bool:
        """A concern a reviewer wrote (a thread or a comment), not a fact of the merge."""
        return self in {RiskKind.THREAD, RiskKind.THREAD_MARKED, RiskKind.COMMENT,
                        RiskKind.COMMENT_MARKED}


class Concern(StrEnum):
    """What a review concern says may go wrong (an outcome, most severe first), or what
    it asks for: a scope, an answer, another design, or a remark on naming, placement,
    style or unused code (`REMARKS`, never more than a low risk)."""

    SECURITY = "security"
    DATA_LOSS = "data-loss"
    CRASH = "crash"
    OOM = "oom"
    HANG = "hang"
    WRONG_RESULT = "wrong-result"
    FAILURE = "failure"
    BREAKS = "breaks"
    RACE = "race"
    LEAK = "leak"
    COMPATIBILITY = "compatibility"
    PERFORMANCE = "performance"
    SCOPE = "scope"
    QUESTION = "question"
    DESIGN = "design"
    UNUSED = "unused"
    NAMING = "naming"
    PLACEMENT = "placement"
    STYLE = "style"


REMARKS = frozenset({Concern.UNUSED, Concern.NAMING, Concern.PLACEMENT, Concern.STYLE})
OUTCOMES = (Concern.SECURITY, Concern.DATA_LOSS, Concern.CRASH, Concern.OOM, Concern.HANG,
            Concern.WRONG_RESULT, Concern.FAILURE, Concern.BREAKS, Concern.RACE, Concern.LEAK,
            Concern.COMPATIBILITY, Concern.PERFORMANCE)


class Risk(Record, frozen=True, kw_only=True):
    """A risk of a merged PR and its evidence. `concerns`: what the reviewer says may go
    wrong or asks for, the lead of `summary`; `subjects`: the code it names."""

    pull: int
    severity: Severity
    summary: str
    evidence_url: str
    # A risk made by hand (tests, fixtures) is a review thread's.
    kind: RiskKind = RiskKind.THREAD
    resolution: Literal["unresolved", "unknown", "not-applicable"] = "not-applicable"
    path: str | None = None
    author: str | None = None
    quote: str | None = None
    concerns: tuple[Concern, ...] = ()
    subjects: tuple[str, ...] = ()
    # What the change may be limited to, where the concern says so ("only affects NPU").
    scope: str | None = None


class KeyPull(Record, frozen=True, kw_only=True):
    number: int
    title: str
    summary: str
    url: str = ""
    short_title: str = ""
    type: str = ""
    topics: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    score: float = 0.0
    line: str = ""
    # The title said in Chinese (`bot.engine.headline`), in a zh digest; "" in en.
    headline: str = ""
    # Why it matters, said in the digest's language ("实测 ~54 GiB → ~150 MiB",
    # "新增配置 `save_lora_only`"): what the zh chat says after the headline.
    facts: tuple[str, ...] = ()


class PullEntry(Record, frozen=True, kw_only=True):
    """One PR of the week in the full report's list: where it sits and what it does."""

    number: int
    title: str
    type: str
    topics: tuple[str, ...]
    theme: str
    key: bool = False
    url: str = ""
    short_title: str = ""
    line: str = ""
    security: bool = False
    # A branch sync (`master->dev`): it moved work merged elsewhere, never key.
    sync: bool = False
    # What a merged release PR releases (`6.6.0`); "" for any other PR. Never key, but
    # news.
    release: str = ""
    # As KeyPull.headline: set for the PRs a zh digest names (key PRs, security fixes).
    headline: str = ""


class Fallback(Record, frozen=True, kw_only=True):
    """A section the narrator left deterministic, and why (`timeout`, `verifier`...)."""

    section: str
    reason: str


class NarratedProse(Record, frozen=True, kw_only=True):
    """A section's narrated sentences, verified, shown in place of its deterministic text.
    `keys`: what each sentence is about, where the section says (a theme's key in
    "changes", a role in "summary": count, focus, highlight, risk; a PR number in
    "key_prs"), so a shorter view can choose among them."""

    section: str
    sentences: tuple[str, ...]
    keys: tuple[str, ...] = ()


class DroppedSentence(Record, frozen=True, kw_only=True):
    """A sentence the model wrote that no format shows: where it was going
    (`summary`, `changes:ci`, `pull:7061:summary`, `pull:6932:risk:1`) and the rule
    that kept it out (`figure`, `claim-security`, `repeat`, `section`...)."""

    where: str
    rule: str


class Narration(Record, frozen=True, kw_only=True):
    """What the optional narrator did to a digest. Item sections (risks, key PRs,
    suggestions) carry their narrated words in their own fields; paragraph and theme
    sections (summary, changes, trends) in `prose`."""

    model: str
    sections_narrated: tuple[str, ...] = ()
    sentences_dropped: int = 0
    fallbacks: tuple[Fallback, ...] = ()
    prose: tuple[NarratedProse, ...] = ()
    # Every sentence the model wrote that the digest does not show, with its rule
    # (`sentences_dropped` counts them).
    dropped: tuple[DroppedSentence, ...] = ()


class LoginCount(Record, frozen=True, kw_only=True):
    login: str
    count: int


class Tie(Record, frozen=True, kw_only=True):
    """People tied on a count too many to name ("6 more wrote 2 PRs each")."""

    people: int
    count: int


class People(Record, frozen=True, kw_only=True):
    """Who did the week's work, bots left out (`bot_pulls` says how many PRs bots
    opened). `authors`: how many people authored its PRs, `top_authors` the most active
    of them by PRs; `reviewers` by PRs reviewed. `first_timers` and `reviewers` are None
    where the data does not record them (no author association, no reviews). People tied
    on the count where the names stop are all named, or, too many to name, counted in
    `authors_tie` / `reviewers_tie`: never some of them named as if they led."""

    authors: int
    top_authors: tuple[LoginCount, ...] = ()
    first_timers: tuple[str, ...] | None = None
    reviewers: tuple[LoginCount, ...] | None = None
    bot_pulls: int = 0
    authors_tie: Tie | None = None
    reviewers_tie: Tie | None = None


class ChatForm(Record, frozen=True, kw_only=True):
    """How a chat channel shows the digest: its `style` and whether its chat forms add
    the People line. The full report (Markdown, HTML, JSON) is the same either way."""

    style: Style = "full"
    people: bool = False
class RepositoryCounts(Record, frozen=True, kw_only=True):
    """One repository of a digest and its own counts (a digest of one lists one)."""

    name: str
    counts: Counts


class Digest(Record, frozen=True, kw_only=True):
    """A week's digest. One spanning several repositories (`parts` not empty) holds the
    combined counts, topics, types and suggestions itself and each repository's own
    digest in `parts`, whose themes, risks, key PRs, suggestions and PR list it shows per
    repository;
    its own `repository` is their names joined by ", "."""

    repository: str
    week: str
    period: Period
    counts: Counts
    topics: tuple[NameCount, ...]
    types: tuple[NameCount, ...]
    hot_files: tuple[HotFile, ...]
    themes: tuple[Theme, ...]
    risks: tuple[Risk, ...]
    key_pulls: tuple[KeyPull, ...]
    suggestions: tuple[str, ...]
    lang: Lang = "zh"
    notes: tuple[str, ...] = ()
    data_as_of: Time | None = None
    report_url: str | None = None
    # Where the service serves the full report (`/reports/...`) while no public address
    # is set (`server.public_url`): the chat says it in place of a link.
    report_path: str | None = None
    pulls: tuple[PullEntry, ...] = ()
    # The topics as the trends' prose counts them beside the themes
    # (`bot.engine.trends.area_counts`); empty in a digest of several repositories.
    areas: tuple[NameCount, ...] = ()
    narration: Narration | None = None
    people: People | None = None
    # Whether the data holds anything a risk is found in (a review, a review thread or
    # comment, a check state): without it "no risks were found" would claim a search
    # that had nothing to read.
    risk_data: bool = True
    chat_form: ChatForm = ChatForm()
    repositories: tuple[RepositoryCounts, ...] = ()
    parts: tuple[Digest, ...] = ()


# --- chat -------------------------------------------------------------------------

CommandKind = Literal[
    "risks", "summary", "digest", "topics", "subscribe", "unsubscribe", "help",
    # questions about the week, answered from its digest
    "changes", "people", "compare", "pending", "hello",
    # a chat's own settings
    "follow", "unfollow", "schedule", "timezone", "lang", "settings",
    # merged-PR notices held back for a while (`value`: "2h", "1d", "1w"; "" until unmuted)
    "mute", "unmute",
]


class Command(Record, frozen=True, kw_only=True):
    """What a chat user asked for, whatever platform it came from."""

    kind: CommandKind
    lang: Lang = "en"
    repo: str | None = None
    pull: int | None = None
    week: str | None = None
    topics: tuple[str, ...] = ()
    text: str = ""
    unknown: bool = False
    # What a setting is set to (`schedule`: a cron or "off"; `timezone`, `lang`; `mute`:
    # how long, "2h", "3d", "1w", or "" until unmuted), or which people a `people`
    # question asks about ("merged", "reviewed").
    value: str = ""


class PullAnswer(Record, frozen=True, kw_only=True):
    """The engine's answer about one PR: its summary and the risks found in it."""

    repository: str
    number: int
    title: str
    url: str
    state: str
    summary: str
    risks: tuple[Risk, ...]
    topics: tuple[str, ...] = ()
    type: str = ""
    notes: tuple[str, ...] = ()
    # `type` as the answer's language names it ("new feature", "新功能").
    type_name: str = ""
    # Whether `summary` is the PR's own description, not what its files say.
    described: bool = False
    # As `Digest.risk_data`: whether its data holds anything a risk is found in.
    risk_data: bool = True
    # The title said in Chinese, in a zh answer; "" in en.
    headline: str = ""
    # What the PR's change touched: files, lines and the figures its body measured (as
    # the answer's language writes them).
    files: int = 0
    lines: int = 0
    figures: tuple[str, ...] = ()


class AnswerPull(Record, frozen=True, kw_only=True):
    """A PR a week's answer names: its title (and, in a zh answer, its headline), who
    wrote it, and what the answer says of it - a risk's sentence and severity, how long
    it has waited for review."""

    number: int
    title: str
    url: str = ""
    repository: str = ""
    author: str | None = None
    headline: str = ""
    note: str = ""
    severity: str = ""
    # How many risks the PR has (the answer names its most severe), how long it has
    # waited for review.
    risks: int = 0
    waiting_days: int | None = None


class WeekAnswer(Record, frozen=True, kw_only=True):
    """A question about the week answered from its digest's own data (or, for the PRs
    waiting for review, from GitHub): `question` is the command's kind (`risks`,
    `changes`, `people`, `compare`, `pending`, `hello`); `pulls` the PRs it names,
    `total` how many there are in all; `area` the topic asked about as the digest
    names it; `counts` this week's and `previous` the week before's; `topics` the
    topics whose counts changed most, with the week before's counts."""

    question: str
    repository: str = ""
    week: str = ""
    area: str = ""
    pulls: tuple[AnswerPull, ...] = ()
    total: int = 0
    counts: Counts | None = None
    previous: Counts | None = None
    topics: tuple[NameCount, ...] = ()
    people: People | None = None
    report_url: str | None = None
    as_of: Time | None = None
    # As `Digest.risk_data`: whether the week's data holds anything a risk is found in.
    risk_data: bool = True


class ChatOverview(Record, frozen=True, kw_only=True):
    """What a chat gets and when, as `settings` shows it: where its settings come from
    (`file`, `chat`, both, or `none` for a chat not set up), its repositories, language,
    weekly schedule (a cron, or "off") in its time zone with the next post, its topics,
    and which settings the config file fixes (`fixed`: not changed from chat)."""

    chat: str
    origin: Literal["file", "chat", "both", "none"]
    repositories: tuple[str, ...] = ()
    lang: Lang = "zh"
    schedule: str = "off"
    # A weekly schedule said in words where the cron is one (`MON`, `THU`; `09:00`).
    days: tuple[str, ...] = ()
    time: str = ""
    timezone: str = ""
    next_post: Time | None = None
    topics: tuple[str, ...] = ()
    fixed: tuple[str, ...] = ()
    # Merged-PR notices muted: until when, in its time zone (`muted_until` None while
    # `muted` says until someone unmutes).
    muted: bool = False
    muted_until: Time | None = None


ReplyKind = Literal[
    "digest", "pull", "topics", "subscribed", "unsubscribed", "help", "error", "notices",
    "answer", "settings",
]


class Reply(Record, frozen=True, kw_only=True):
    """What the bot answers, as data; templates turn it into each platform's words.

    `template` names the template family that renders it; `error` carries a message
    key of the catalog (e.g. "pull-not-found") with its parameters.
    """

    kind: ReplyKind
    lang: Lang = "en"
    digest: Digest | None = None
    pull: PullAnswer | None = None
    mode: str = ""
    topics: tuple[str, ...] = ()
    available_topics: tuple[str, ...] = ()
    error: str = ""
    params: tuple[tuple[str, str], ...] = ()
    # kind "notices": merged-PR notices (each a `pull` reply) announced in one message.
    notices: tuple[Reply, ...] = ()
    # kind "answer": a question about the week; kind "settings": what the chat gets
    # (`mode` names the setting just changed, "" when only shown).
    answer: WeekAnswer | None = None
    overview: ChatOverview | None = None
