"""What the digest templates read: the digest plus the selections they show.

Choices of structure (how many PRs in the quick view, which PRs a theme lists, and,
from `bot.render.sections`, which sections in which order) live here in code; the
templates only put words around them.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta
from functools import cached_property
from itertools import zip_longest

from bot.engine.risk_words import says_what_may_go_wrong
from bot.engine.summarize import figure_text
from bot.engine.text import clause_cut, clip, cut_words, restates
from bot.engine.themes import DEPENDENCIES
from bot.models import Digest, KeyPull, NameCount, PullEntry, Risk, Theme
from bot.render import naming, narrated
from bot.render import sections as registry
from bot.render.brief import Brief
from bot.render.limits import FULL, THEME_ITEMS, Limits, ThemeLine, ThemeListing, ThemeView
from bot.render.limits import QUICK_VIEW as QUICK_VIEW
from bot.render.markup import Markup
from bot.render.sections import Section

TOP_TOPICS = 3
# The smallest move of a topic's PRs since the previous week that the trends name.
TOPIC_MOVE = 2
# PR numbers named after the most-changed file: a few say which, the count says how many.
HOT_NUMBERS = 10
CHAT_HOT_NUMBERS = 3
# How much longer than the line length a chat line with no clause boundary in reach may
# stay whole (longer still, it is cut: a title of 250 characters is no line).
WHOLE_LINE = 2
NARRATED_LINE = 240
"""A narrated sentence a chat line shows whole (the verifier's longest): never cut."""
# The longest English quote a zh full report's risk line shows (whole sentences).
ZH_QUOTE = 120


# A quotation in parentheses inside a sentence: ` (“…”)` or `（“…”）`.
_QUOTATION = re.compile(r" ?[（(]“[^”]*”[）)]")
# Where a suggestion's reason begins, after the action it asks for.
_REASON = re.compile(r"[；：]|; ")


class DigestView:
    """Read-only helpers over a `Digest` for templates of every format.

    `scope`: the repository of this view, set on the views of each repository of a
    digest that spans several (`parts`); their items are drawn under its name, so their
    PR numbers go without it (`#12`), while the buttons that stand alone name it."""

    def __init__(self, digest: Digest, limits: Limits = FULL, scope: str = "") -> None:
        self.d = digest
        self.limits = limits
        self.scope = scope

    # --- several repositories (a digest whose `parts` are theirs) -------------------

    @cached_property
    def parts(self) -> list[DigestView]:
        """One view per repository of a combined digest, with this view's limits; none
        for a digest of one repository."""
        limits = (dataclasses.replace(self.limits, compact=True) if self.limits.compact_parts
                  else self.limits)
        return [DigestView(part, limits, scope=part.repository) for part in self.d.parts]

    @property
    def each(self) -> list[DigestView]:
        """The views whose items a section lists: each repository's, or this one."""
        return self.parts or [self]

    def per_repository(self, section: Section) -> bool:
        """Whether `section` is drawn once per repository in this view. The follow-ups of
        repositories drawn in compact lines are only counted: one count for them all,
        not the same line under every name."""
        if section.id == "suggestions" and self.parts and self.parts[0].compact:
            return False
        return bool(self.parts) and section.per_repository

    def in_compact_lines(self, section: Section) -> bool:
        """Whether `section` is drawn in the compact form's lines (`common/compact.j2`):
        everywhere in the compact form, and in a full chat form whose repositories are
        drawn compact, their sections (the follow-ups then counted once for all)."""
        return self.compact or (self.limits.compact_parts and section.per_repository)

    def ref(self, number: int) -> str:
        """A PR as the digest writes it: `#12`, under its repository's name in a digest of
        several."""
        return f"#{int(number)}"

    def risk_ref(self, number: int) -> str:
        """A risk's PR: `PR#12`, or under a repository's name `#12`."""
        return self.ref(number) if self.scope else f"PR#{int(number)}"

    def pr(self, m: Markup, number: int, url: str = "") -> str:
        """`m.pr`; in the sentences of a digest of several repositories about them all
        (the summary), `org/a#12` (found by the PR's address, unique to one PR)."""
        scope = "" if self.scope else self._scope_by_url.get(url, "")
        return m.pr(number, url, scope) if scope else m.pr(number, url)

    @cached_property
    def _scope_by_url(self) -> dict[str, str]:
        return {url: part.scope for part in self.parts
                for url in (*(k.url for k in part.d.key_pulls), *(p.url for p in part.d.pulls))
                if url}

    @cached_property
    def all_risks(self) -> list[Risk]:
        """Every risk of the digest, each repository's in turn."""
        return [r for view in self.each for r in view.d.risks]

    @cached_property
    def pull_buttons(self) -> list[tuple[str, str]]:
        """(label, address) of the quick view's key PRs, each repository's in turn."""
        return [(f"{view.scope}#{k.number}" if view.scope else view.ref(k.number),
                 k.url or view.url(k.number))
                for view in self.each for k in view.quick]

    @cached_property
    def report_links(self) -> list[tuple[str, str]]:
        """(repository, address) of the full reports a reader can open; the repository
        is "" for a digest of one."""
        if not self.parts:
            return [("", self.report_link)] if self.report_link else []
        return [(part.d.repository, part.report_link) for part in self.parts
                if part.report_link]

    @cached_property
    def report_paths(self) -> list[tuple[str, str]]:
        """(repository, path) of the full reports that have no address to link while
        no public one is set (`Digest.report_path`); the repository is "" for a digest
        of one."""
        if not self.parts:
            return [("", self.d.report_path)] if self.d.report_path else []
        return [(part.d.repository, part.d.report_path) for part in self.parts
                if part.d.report_path]

    @cached_property
    def hot_view(self) -> DigestView | None:
        """The view whose most-changed file the trends name: this one, or of a combined
        digest the repository whose file most PRs touched (the first listed on a tie)."""
        touched = [view for view in self.each if view.d.hot_files]
        return max(touched, key=lambda view: view.d.hot_files[0].pulls, default=None)

    # --- one repository ---------------------------------------------------------------

    @property
    def report_link(self) -> str | None:
        """The full report's address, when it is a web address a reader can open."""
        url = self.d.report_url or ""
        return url if url.startswith(("https://", "http://")) else None

    @property
    def chat(self) -> bool:
        return self.limits.chat

    @property
    def compact(self) -> bool:
        return self.limits.compact

    @property
    def sections(self) -> tuple[Section, ...]:
        """The sections this view shows, in order; read from the registry at each
        render, so the registry alone decides (and the channel, for the sections shown
        in chat on request: `people = true`)."""
        return tuple(s for s in registry.DIGEST_SECTIONS if self._shows(s))

    def _shows(self, section: Section) -> bool:
        if section.id == "people" and self.d.people is None:
            return False  # a digest kept from before people were counted
        if not self.chat:
            return True
        if section.on_request:
            return self.d.chat_form.people
        if self.compact:
            # The follow-ups are one line there, and no line when there are none.
            return section.in_compact and (section.id != "suggestions" or
                                           bool(self.d.suggestions))
        return section.in_chat

    @cached_property
    def brief(self) -> Brief:
        """The compact form's selections (`bot.render.brief`)."""
        limits = self.limits
        return Brief(self.d, self.short, themes=limits.themes or 3,
                     numbers=limits.theme_items, risks=limits.risks or 2, quick=self.quick)

    def short(self, text: str) -> str:
        """`text` within the view's line length, marked with an ellipsis where cut. The
        compact form cuts at a clause, else at a word; the chat digest only after a
        punctuation mark that ends a clause, a line with none in reach kept whole (a
        title cut mid-phrase, "Guard lm-format-enforcer regex compile with…", says
        less than none), up to `WHOLE_LINE` times the line length."""
        line = self.limits.line
        if not line or len(text) <= line:
            return text
        if self.compact:
            return cut_words(text, line)
        cut = clause_cut(text, line, openers=False)
        if cut is not None:
            return cut
        longest = line * WHOLE_LINE
        return text if len(text) <= longest else cut_words(text, longest)

    def whole_line(self, sentence: str, title: str) -> str:
        """A PR in one chat line: the sentence that says its change where it fits the
        line length whole, else its title, whole as `short` keeps it."""
        line = self.limits.line
        if sentence and (not line or len(sentence) <= line or
                         naming.same_words(sentence, title)):
            return self.short(sentence)
        return self.short(title or sentence)

    def risk_quote(self, risk: Risk) -> str:
        """The quote a risk line shows: in chat, its consequence (the part after the
        ellipsis that joins it to the opening sentence) within the line length; none in
        the zh chat, whose line leads with the consequence in Chinese."""
        text = risk.quote or ""
        if not self.chat:
            if self.d.lang == "zh" and says_what_may_go_wrong(risk.concerns):
                # The Chinese lead says what may go wrong: the quote gives what the
                # reviewer saw (its opening sentences), the evidence link the rest.
                return clip(text.split(" … ", 1)[0], ZH_QUOTE)
            return text
        if self.d.lang == "zh" or says_what_may_go_wrong(risk.concerns):
            # The line leads with the consequence (in zh, in Chinese): the quote is in
            # the full report and behind the evidence link.
            return ""
        return self.short(text.rsplit(" … ", 1)[-1])

    def risk_summary(self, risk: Risk) -> str:
        """A risk's sentence; in chat the file by its name alone (the full report and
        the evidence link give its path)."""
        if self.chat and risk.path and "/" in risk.path:
            return risk.summary.replace(risk.path, risk.path.rsplit("/", 1)[-1])
        return risk.summary

    @cached_property
    def risks(self) -> list[Risk]:
        """The risks shown, most severe first (the digest holds them in that order)."""
        return list(self.d.risks[: self.limits.risks])

    @cached_property
    def suggestions(self) -> list[str]:
        """The suggestions shown; one too long for a chat line drops its quotation of
        the review, then its reason, and is never cut inside the action it asks for (the
        chat budget's steps count it whole)."""
        line = self.limits.line
        told = self.d.narration is not None and \
            "suggestions" in self.d.narration.sections_narrated
        if not line or told:  # a narrated suggestion is one sentence: shown whole
            return list(self.d.suggestions[: self.limits.suggestions])
        shown = []
        for text in self.d.suggestions[: self.limits.suggestions]:
            if len(text) > line:
                text = _QUOTATION.sub("", text)
            action = _REASON.split(text, 1)[0]
            if len(text) > line and action != text:  # the reason follows the action
                text = action + ("。" if self.d.lang == "zh" else ".")
            shown.append(text)  # never cut further: what remains is the action itself
        return shown

    @cached_property
    def security(self) -> list[PullEntry]:
        return [p for view in self.each for p in view.d.pulls if p.security]

    @cached_property
    def syncs(self) -> list[PullEntry]:
        """The week's branch syncs, which the summary says are no key change."""
        return [p for view in self.each for p in view.d.pulls if p.sync]

    @cached_property
    def releases(self) -> list[PullEntry]:
        """The week's releases, which the summary names: never key, but the news a
        team leads with."""
        return [p for view in self.each for p in view.d.pulls if p.release]

    @cached_property
    def security_named(self) -> list[PullEntry]:
        """The security fixes the summary names; the view's limit leaves the rest counted."""
        return self.security[: self.limits.security]

    @cached_property
    def all_themes(self) -> list[ThemeListing]:
        """Every theme with every PR of the week in it, for the full report's list."""
        by_number = {p.number: p for p in self.d.pulls}
        return [ThemeListing(theme, [by_number[n] for n in (*theme.pulls, *theme.others)
                                     if n in by_number])
                for theme in self.d.themes if theme.pulls or theme.others]

    # --- narration (bot.narrate): its sentences replace a section's engine text -----

    def narrated(self, section_id: str) -> tuple[str, ...] | None:
        """The verified narrated sentences shown instead of the section's own text, or
        None (no narrator, or the section fell back), as many as this view shows."""
        named = frozenset(k.number for k in (*self.features, *self.fixes)) | frozenset(
            p.number for p in self.security_named)
        return narrated.shown(self.d.narration, section_id, self.limits.chat,
                              self.limits.themes, named)

    def said(self, m: Markup, section_id: str, text: str, code: bool = True) -> str:
        """A section's text in the format's markup, narrated or the engine's."""
        return narrated.in_markup(m, text, self.d.narration, section_id,
                                  lambda n, repo: self._ref(m, n, repo), code=code)

    def told(self, m: Markup, text: str) -> str:
        """A narrated sentence in the format's markup."""
        return narrated.in_markup(m, text, self.d.narration, None,
                                  lambda n, repo: self._ref(m, n, repo))

    def _ref(self, m: Markup, number: int, repo: str) -> str:
        """A PR that narrated text names, written as the engine writes references."""
        if repo and repo != self.d.repository:
            return m.pr(number, f"https://github.com/{repo}/pull/{int(number)}", repo)
        return self.pr(m, number, self.url(number))

    @staticmethod
    def narrated_as_paragraph(section_id: str) -> bool:
        """Summary and trends read as one paragraph; other sections as one item each."""
        return section_id in {"summary", "trends"}

    @cached_property
    def key_by_number(self) -> dict[int, KeyPull]:
        return {k.number: k for k in self.d.key_pulls}

    def url(self, number: int) -> str:
        """A PR's address: from the digest when it is a key PR, else on the same host."""
        if number in self.key_by_number:
            return self.key_by_number[number].url
        sample = next((k.url for k in self.d.key_pulls if k.url), "")
        if sample and "/pull/" in sample:
            return f"{sample.rsplit('/pull/', 1)[0]}/pull/{int(number)}"
        return f"https://github.com/{self.d.repository}/pull/{int(number)}"

    @property
    def year(self) -> int:
        return int(self.d.week[:4])

    @property
    def week_number(self) -> int:
        return int(self.d.week.split("W")[1])

    @property
    def since(self) -> str:
        return self.d.period.since.strftime("%Y-%m-%d")

    @property
    def until(self) -> str:
        """The last day of the week (the period's end is the next Monday, exclusive)."""
        return (self.d.period.until - timedelta(days=1)).strftime("%Y-%m-%d")

    @property
    def since_short(self) -> str:
        return self.since[5:]

    @property
    def until_short(self) -> str:
        return self.until[5:]

    @cached_property
    def top_topics(self) -> list[NameCount]:
        """The busiest topics the summary and the trends name: counted beside the themes
        (`Digest.areas`), so a theme's heading never counts more PRs than its topic. A
        topic of one PR is no busy one where others hold more ("context (3), recovery
        (1) and response_writer (1)")."""
        ranked = list((self.d.areas or self.d.topics)[:TOP_TOPICS])
        if ranked and ranked[0].count > 1:
            ranked = [c for c in ranked if c.count > 1]
        return ranked

    @cached_property
    def topics_overlap(self) -> bool:
        """Whether a topic named in the trends counts more PRs than its theme shows: some
        of its PRs sit in another theme, which the trends then say."""
        sizes = {t.topic: len(t.pulls) + len(t.others) for t in self.d.themes if t.topic}
        return any(c.count > sizes[c.name] for c in self.top_topics if c.name in sizes)

    @cached_property
    def hot_numbers(self) -> list[int]:
        """The PRs named after the most-changed file (the rest only counted)."""
        if not self.d.hot_files:
            return []
        shown = CHAT_HOT_NUMBERS if self.chat else HOT_NUMBERS
        return list(self.d.hot_files[0].numbers[:shown])

    @property
    def hot_numbers_cut(self) -> bool:
        return bool(self.d.hot_files) and len(self.hot_numbers) < len(self.d.hot_files[0].numbers)

    @cached_property
    def features(self) -> list[KeyPull]:
        return self._notable({"feat", "perf"}, self.limits.notable)

    @cached_property
    def fixes(self) -> list[KeyPull]:
        # A security fix has a sentence of its own in the summary: not named twice. A
        # revert is no fix ("Notable fixes: Revert moving tests"; zh lines say the
        # reverted change itself): the key PRs name it as a revert.
        return self._notable({"fix"}, max(0, self.limits.notable - 1),
                             leave_out={p.url for p in self.security})

    def _notable(self, types: set[str], limit: int, *, leave_out: set[str] | None = None
                 ) -> list[KeyPull]:
        """The best key PRs of `types` (but those whose address is in `leave_out`): of a
        combined digest, each repository's best in turn, so every repository is named
        before any is named twice."""
        ranked = [[k for k in view.d.key_pulls
                   if k.type in types and k.url not in (leave_out or ())
                   and not naming.says_little(k)]  # "修复" alone names nothing
                  for view in self.each]
        return [k for row in zip_longest(*ranked) for k in row if k is not None][:limit]

    @cached_property
    def serious_risks(self) -> list[Risk]:
        return [r for r in self.all_risks if r.severity == "high"]

    @cached_property
    def quick(self) -> list[KeyPull]:
        """The key PRs the quick view names, best first; one whose title says the same
        as one named before ("【数据源】国际化" twice) or too little to tell it apart
        (`naming.says_little`) gives way to the next."""
        named: set[str] = set()
        first: list[KeyPull] = []
        later: list[KeyPull] = []
        for k in self.d.key_pulls:
            said = naming.title_of(k)
            (later if said in named or naming.says_little(k) else first).append(k)
            named.add(said)
        return (first + later)[: self.limits.quick]

    @cached_property
    def themes(self) -> list[ThemeView]:
        """Themes that hold key PRs, each PR as one line of what it does. The security
        theme lists every fix it holds (up to the full report's number): they are its
        whole point, and a reader counts them."""
        if not self.d.key_pulls:
            return self._quiet[: self.limits.themes]
        shown = [theme for theme in self.d.themes
                 if theme.pulls or theme.kind == DEPENDENCIES][: self.limits.themes]
        return [
            ThemeView(theme, [
                ThemeLine(k.number, k.url, naming.without_scope(self.pull_line(k), theme.title),
                          self.original(k))
                for k in (self.key_by_number[n] for n in theme.pulls if n in self.key_by_number)
            ], max(self.limits.theme_items, THEME_ITEMS if theme.kind == "security" else 0))
            for theme in shown
        ]

    @cached_property
    def _quiet(self) -> list[ThemeView]:
        """The themes of a week with no key PR, each PR a line (its title said as the
        digest says titles): a quiet week still says what it changed. Branch syncs and
        dependency updates are said by the summary and their theme."""
        by_number = {p.number: p for p in self.d.pulls}
        views = []
        for theme in self.d.themes:
            entries = [by_number[n] for n in theme.others
                       if n in by_number and not by_number[n].sync]
            if theme.kind == DEPENDENCIES or not entries:
                continue
            lines = [ThemeLine(p.number, p.url, self.short(p.headline or p.line or
                                                           p.short_title)) for p in entries]
            views.append(ThemeView(theme, lines, self.limits.theme_items, listed_others=True))
        return views

    @cached_property
    def busiest_area(self) -> Theme | None:
        """The area theme holding the most PRs (the first on a tie), for the trends."""
        return max((t for t in self.d.themes if t.kind == "area"),
                   key=lambda t: len(t.pulls) + len(t.others), default=None)

    @cached_property
    def more_themes(self) -> int:
        """Themes with key PRs that this view leaves to the full report."""
        if not self.d.key_pulls:
            return len(self._quiet) - len(self.themes)
        return sum(1 for theme in self.d.themes
                   if theme.pulls or theme.kind == DEPENDENCIES) - len(self.themes)

    @cached_property
    def named_types(self) -> list[NameCount]:
        """The types by count, "other" (no type recognised) left out: "the most PRs were
        other" says nothing (`untyped_week` says that none was told)."""
        return [c for c in self.d.types if c.name != "other"]

    @cached_property
    def untyped_week(self) -> bool:
        """Whether no PR of the week says what kind of change it is."""
        return bool(self.d.types) and not self.named_types

    @cached_property
    def untyped_lead(self) -> int:
        """How many PRs say no kind of change, where they outnumber every kind named:
        "the most PRs were CI, bug fixes and tests (1 each)" hides three of six; 0
        otherwise."""
        untyped = sum(c.count for c in self.d.types if c.name == "other")
        lead = self.named_types[0].count if self.named_types else 0
        return untyped if self.named_types and untyped > lead else 0

    @cached_property
    def leading_types(self) -> list[NameCount]:
        """The type, or the types tied, with the most PRs."""
        if not self.named_types:
            return []
        top = self.named_types[0].count
        return [c for c in self.named_types if c.count == top]

    @cached_property
    def leading_type(self) -> NameCount | None:
        return self.named_types[0] if self.named_types else None

    @cached_property
    def other_types(self) -> list[NameCount]:
        after = len(self.leading_types)
        return list(self.named_types[after:after + 2])

    def narrated_key(self, k: KeyPull) -> str:
        """A key PR's chat line in the narrator's sentence, whole, where it told one that
        fits `NARRATED_LINE` (it names the PR and says what it does: no title before
        it); "" for the engine's line."""
        told = narrated.key_summary(self.d.narration, k.number)
        if told is None or len(told) > NARRATED_LINE:
            return ""
        return told if f"#{k.number}" in told else f"{self.ref(k.number)} {told}"

    def quick_text(self, k: KeyPull) -> str:
        """What the chat's quick view says after a key PR's title: in zh the facts that
        made it key (what it measured, what it adds, how large it is), in Chinese; in
        en its line where it fits whole and says more than the title, else those
        facts."""
        if k.headline:
            title = self.title_of(k)
            return "；".join(f for f in k.facts if f != title)
        text = k.line or k.summary
        if naming.same_words(text, k.short_title) or naming.same_words(text, k.title):
            text = ""
        line = self.limits.line
        if text and (not line or len(text) <= line):
            return text
        # A sentence too long for the line: the facts that made the PR key, as in zh
        # (its figure, the setting it adds, its size), rather than the sentence cut.
        return "; ".join(k.facts)

    # How a PR is named (`bot.render.naming`), for the templates.
    title_of = staticmethod(naming.title_of)
    mention = staticmethod(naming.mention)
    quick_join = staticmethod(naming.quick_join)
    quick_close = staticmethod(naming.quick_close)

    def bold_title(self, k: KeyPull) -> str:
        """A key PR's reference and title for a bold span: code spans as plain words
        (bold text takes no code span in every format)."""
        return f"{self.ref(k.number)} {self.title_of(k).replace('`', '')}"

    def pull_line(self, k: KeyPull) -> str:
        """One key PR in a theme: in zh its Chinese headline alone (its English
        sentence is one click away: the PR, or the HTML page's collapsed original,
        `original`); in en the body's sentence that says the change."""
        if not k.headline:
            line = "" if naming.same_words(k.line, k.short_title) or not naming.change_sentence(
                k) else k.line  # a sentence that says the title again: the title
            return self.whole_line(line, k.short_title) if self.chat else self.short(
                line or k.short_title)
        return self.short(naming.title_of(k))

    @staticmethod
    def original(k: KeyPull) -> str:
        """What a zh line leaves to its PR: the body's sentence that says a key PR's
        change, where it says more than the title ("" in en, whose line is that
        sentence)."""
        return naming.change_sentence(k) if k.headline else ""

    def key_summary(self, k: KeyPull) -> str:
        """What the full report's key PRs say after a key PR's title: in en its summary
        (the facts that made it key where the summary only says the title again); in zh,
        whose title is said in Chinese, those facts in Chinese (the description is a
        click away, and on the HTML page under 原文); the narrator's summary where it
        told the section."""
        told = self.d.narration is not None and "key_prs" in self.d.narration.sections_narrated
        if told:
            return k.summary
        if not k.headline:
            if restates(k.summary, k.title):
                return "; ".join(k.facts)
            return k.summary
        return "；".join(f for f in k.facts if f != naming.title_of(k))

    def unsaid_figures(self, k: KeyPull, said: str) -> list[str]:
        """A key PR's measured figures its line does not give already."""
        return [f for f in k.figures if f not in said and figure_text(f, self.d.lang) not in said]

    @staticmethod
    def unsaid_reasons(k: KeyPull, said: str) -> list[str]:
        """Why a key PR is key, but the reasons its line says already ("改动较大（7 个
        文件共 369 行）" after "改动 7 个文件共 369 行")."""
        def told(reason: str) -> bool:
            inner = re.search(r"[（(]([^）)]*)[）)]", reason)
            return reason in said or bool(inner and inner.group(1) in said.replace("改动 ", ""))
        return [r for r in k.reasons if not told(r)]

    @cached_property
    def topic_changes(self) -> list[NameCount]:
        """Topics whose count moved by `TOPIC_MOVE` PRs or more since the previous week,
        largest move first: "disagg 0 → 1" is no trend."""
        moved = [t for t in (self.d.areas or self.d.topics) if t.previous is not None
                 and abs(t.count - t.previous) >= TOPIC_MOVE]
        return sorted(moved, key=lambda t: (-abs(t.count - (t.previous or 0)), t.name))[:3]
