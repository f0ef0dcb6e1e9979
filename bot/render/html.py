"""Report pages: the digest as an HTML page, and the index of a repository's weeks.

The page is the Markdown report (`templates/markdown/digest.md.j2`) in HTML: the same
sections and the same sentences (the shared `common/prose.j2` macros with the HTML
markup), plus a bar chart of the topics as inline SVG. No JavaScript, no external
resources: one self-contained document that prints and reads well anywhere.

Geometry (bar lengths, label cuts) is computed here; the templates only draw it.
Every value from GitHub reaches the page through autoescaping or `markup_for("html")`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.models import Digest, Lang, NameCount
from bot.render import render_template
from bot.render.markup import markup_for
from bot.render.view import DigestView

CHART_TOPICS = 10
CHART_LABEL_CHARS = 22


@dataclass(frozen=True)
class ReportWeek:
    """One line of the weeks index: the week, its dates, whether a digest is cached. A
    server reading snapshot files can serve only the weeks they hold (`available`);
    `data_until` is the day their data ends, on the week it ends in."""

    week: str
    since: str
    until: str
    cached: bool
    current: bool
    available: bool = True
    data_until: str | None = None


@dataclass(frozen=True)
class Bar:
    """One topic's bar: label, count, share, and where it is drawn."""

    name: str
    label: str
    count: int
    share: float
    y: int
    text_y: int
    width: float
    focus: bool
    label_x: int = 0
    count_y: int = 0


@dataclass(frozen=True)
class TopicChart:
    """A horizontal bar chart of topic counts, in SVG user units."""

    bars: tuple[Bar, ...]
    width: int
    height: int
    label_width: int
    bar_height: int
    max_bar: int
    more: int = 0
    # Where bars start and how labels align: beside the bars (wide), above them (narrow).
    bar_x: int = 0
    anchor: str = "end"
    layout: str = "wide"


def _label(name: str) -> str:
    return name if len(name) <= CHART_LABEL_CHARS else name[: CHART_LABEL_CHARS - 1] + "…"


# The phone layout: labels above the bars in a chart this many units wide, so that on a
# 360 px screen a unit is about a pixel and the 13-unit labels stay 13 px tall (beside the
# bars, in the 610-unit wide chart, they would shrink to some 7 px).
NARROW_WIDTH = 340


def narrow_topic_chart(topics: Sequence[NameCount], *, focus: Sequence[str] = (),
                       limit: int = CHART_TOPICS) -> TopicChart:
    """The same bars for a phone: each label on its own line above its bar."""
    shown = list(topics[:limit])
    label_line, bar_height, gap, max_bar = 17, 12, 11, NARROW_WIDTH - 44
    row = label_line + bar_height + gap
    biggest = max((t.count for t in shown), default=0) or 1
    bars = tuple(
        Bar(name=t.label or t.name, label=_label(t.label or t.name), count=t.count,
            share=t.share,
            y=index * row + label_line, text_y=index * row + 13,
            width=round(max(t.count / biggest * max_bar, 2.0), 1), focus=t.name in focus,
            label_x=0, count_y=index * row + label_line + bar_height - 1)
        for index, t in enumerate(shown)
    )
    return TopicChart(bars=bars, width=NARROW_WIDTH, height=max(len(bars) * row - gap, 0),
                      label_width=0, bar_height=bar_height, max_bar=max_bar,
                      more=max(len(topics) - limit, 0), bar_x=0, anchor="start",
                      layout="narrow")


def topic_chart(topics: Sequence[NameCount], *, focus: Sequence[str] = (),
                limit: int = CHART_TOPICS) -> TopicChart:
    """Bars for the busiest `limit` topics, longest for the largest count.

    Bars keep the digest's order (a channel's focus topics come first there).
    """
    shown = list(topics[:limit])
    label_width, bar_height, gap, max_bar = 170, 22, 8, 380
    biggest = max((t.count for t in shown), default=0) or 1
    bars = tuple(
        Bar(
            name=t.label or t.name,
            label=_label(t.label or t.name),
            count=t.count,
            share=t.share,
            y=index * (bar_height + gap),
            text_y=index * (bar_height + gap) + round(bar_height * 0.7),
            width=round(max(t.count / biggest * max_bar, 2.0), 1),
            focus=t.name in focus,
            label_x=label_width - 10,
            count_y=index * (bar_height + gap) + round(bar_height * 0.7),
        )
        for index, t in enumerate(shown)
    )
    height = max(len(bars) * (bar_height + gap) - gap, 0)
    return TopicChart(bars=bars, width=label_width + max_bar + 60, height=height,
                      label_width=label_width, bar_height=bar_height, max_bar=max_bar,
                      more=max(len(topics) - limit, 0), bar_x=label_width)


@dataclass(frozen=True)
class PageLinks:
    """Where a page links to: itself in each language, the index, the weeks around it."""

    languages: dict[str, str] = field(default_factory=dict)
    index: str = ""
    previous: str = ""
    next: str = ""
    github: str = ""
    home: str = "/"


@dataclass(frozen=True)
class HomeEntry:
    """One repository on `/`: its weeks index and its last full week's report."""

    repo: str
    index: str
    latest: str
    week: str


def render_report_page(digest: Digest, links: PageLinks, *, focus: Sequence[str] = ()) -> str:
    """The full report of one week, as an HTML document in the digest's language."""
    view = DigestView(digest)
    # The trends of each repository of a digest of several draw its own chart.
    charts = {part.repository: (topic_chart(part.topics, focus=focus),
                                narrow_topic_chart(part.topics, focus=focus))
              for part in (digest, *digest.parts)}
    return render_template("html/report.html", digest.lang, v=view, d=digest,
                           m=markup_for("html"), charts=charts, links=links)


def render_index_page(repo: str, weeks: Sequence[tuple[ReportWeek, str]], lang: Lang,
                      links: PageLinks, *, snapshots: bool = False) -> str:
    """The list of a repository's weeks, each with the address of its report; with
    `snapshots` (a server reading snapshot files) it says that weeks the files do not
    hold have no report, and shows them unlinked."""
    return render_template("html/index.html", lang, repo=repo, weeks=weeks, links=links,
                           snapshots=snapshots, m=markup_for("html"))


def render_home_page(repos: Sequence[HomeEntry], lang: Lang, links: PageLinks) -> str:
    """`/`: the configured repositories' report pages."""
    return render_template("html/home.html", lang, repos=repos, links=links,
                           m=markup_for("html"))


def render_error_page(status: int, lang: Lang, message: str, links: PageLinks | None = None
                      ) -> str:
    """A short page for 400/404/503 answers, in the asked language."""
    return render_template("html/error.html", lang, status=status, message=message,
                           links=links or PageLinks(), m=markup_for("html"))
