"""Chat text -> `Command`: one grammar for every platform, in English and Chinese.

Parsing never fails. Text outside the grammar becomes a `help` command marked
`unknown`, so every message gets an answer in the user's language. Values are only
extracted here: whether a week exists, a PR number is in range or a topic is known is
checked by the handlers, which can say precisely what is wrong in a reply.

The parse works in three passes over normalised text: take out the week (`2026-W29`,
`last week`, `上周`), take out PR references (`owner/repo#N`, `#N`, `pr N`, a PR URL,
a bare number), then read what is left as the verb after dropping filler words
(`for`, `the`, `有什么`, `一下`, ...); words that name no verb may still ask a question
about the week (`bot.chat.question_phrases`). A chat's settings (`follow owner/repo`,
`schedule mon 9:00`, `lang en`: `bot.chat.setting_phrases`) and subscriptions are read
by their leading verb, because the rest of the text is a value or a list of names.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from datetime import date

from bot.chat.question_phrases import read_question, without_greeting
from bot.chat.setting_phrases import read_setting, schedule_text
from bot.models import Command, CommandKind, Lang

# Longer text is not a command; the cap also keeps every number small enough for int().
MAX_COMMAND_CHARS = 2000

DEFAULT_BOT_NAMES = ("prdigest",)

_CJK = re.compile(
    r"[\u3001-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)
_CJK_RUN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(rf"(?<=[{_CJK_RUN}])\s+(?=[{_CJK_RUN}])")

# Slack wraps mentions, channels and links in angle brackets: <@U1|ann>, <#C1|x>, <url|label>.
_ANGLE_REFERENCE = re.compile(r"<[@#!][^>]*>")
_ANGLE_LINK = re.compile(r"<((?:https?://|mailto:)[^>|]*)(?:\|[^>]*)?>")
_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
# `/risks@prdigest_bot 7035` (Telegram in groups): the command's bot suffix.
_SLASH_COMMAND = re.compile(r"^/+([^\s@/]*)(?:@[A-Za-z0-9_]+)?")
# A mention as its own word (`@bot`, `@_user_1`, `@周报机器人`), or glued before a command.
_MENTION_WORD = re.compile(r"(?<!\S)@\S+(?=\s|$)")
_MENTION_PREFIX = re.compile(r"(?<![A-Za-z0-9_.])@[A-Za-z0-9_.\-]+")

_ISO_WEEK = re.compile(
    r"(?<![0-9A-Za-z])(?P<year>[0-9]{4})\s*-?\s*w\s*(?P<week>[0-9]{1,3})(?![0-9A-Za-z])",
    re.I,
)
_DATE = re.compile(
    r"(?<![0-9])(?P<year>[0-9]{4})[-/.](?P<month>[0-9]{1,2})[-/.](?P<day>[0-9]{1,2})(?![0-9])"
)
_LAST_WEEK = re.compile(
    r"(?<![A-Za-z])(?:last|previous|prev)\s+week(?:'s)?(?![A-Za-z])"
    r"|上(?:个)?(?:周|週|星期|礼拜)|上一(?:周|週|星期)",
    re.I,
)
_THIS_WEEK = re.compile(
    r"(?<![A-Za-z])(?:this|current)\s+week(?:'s)?(?![A-Za-z])"
    r"|(?:本|这|這)(?:个|一)?(?:周|週|星期|礼拜)",
    re.I,
)
# `digest last`: a week word right after the verb; `this` is a filler (`risks for this pr`).
_WEEK_WORDS = {"last": "last", "previous": "last", "prev": "last", "current": "this"}

_OWNER = r"[A-Za-z0-9][A-Za-z0-9-]*"
_NAME = r"[A-Za-z0-9._-]+"
_PULL_REFERENCE = re.compile(
    # https://github.com/owner/repo/pull/7035/files
    rf"(?:https?://)?(?:www\.)?github\.com/(?P<url_repo>{_OWNER}/{_NAME})"
    r"/pulls?/(?P<url_number>[0-9]+)(?:[/?#]\S*)?"
    # owner/repo#7035
    rf"|(?<![A-Za-z0-9_./-])(?P<repo>{_OWNER}/{_NAME}?)\s*#\s*(?P<repo_number>[0-9]+)"
    r"(?![A-Za-z0-9_])"
    # pr 7035, PR#7035, pull request 7035
    r"|(?<![A-Za-z0-9_])(?:pull\s+request|pull|pr)\s*[#-]?\s*(?P<word_number>[0-9]+)"
    r"(?![A-Za-z0-9_])"
    # #7035
    r"|#\s*(?P<hash_number>[0-9]+)(?![A-Za-z0-9_])"
    # 7035
    r"|(?<![A-Za-z0-9_#/.\-])(?P<bare_number>[0-9]+)(?![A-Za-z0-9_.\-/])",
    re.I,
)

_SUBSCRIPTION = re.compile(
    r"^(?:please\s+|pls\s+|请|帮我|我要|我想|麻烦)?"
    r"(?:(?P<en>unsubscribe|unsub|unfollow|subscribe|sub|follow)(?=$|[^A-Za-z0-9_])"
    r"|(?P<zh>取消订阅|取消关注|退订|订阅|关注))"
    r"(?P<rest>.*)$",
    re.I | re.S,
)
# `topics npu rollout`: follow these topics.
_TOPICS_LIST = re.compile(r"^(?:topics|topic|主题|话题)\s+(?P<rest>\S.*)$", re.I | re.S)
_SUBSCRIPTION_KINDS: dict[str, CommandKind] = {
    "unsubscribe": "unsubscribe", "unsub": "unsubscribe", "unfollow": "unsubscribe",
    "取消订阅": "unsubscribe", "取消关注": "unsubscribe", "退订": "unsubscribe",
    "subscribe": "subscribe", "sub": "subscribe", "follow": "subscribe",
    "订阅": "subscribe", "关注": "subscribe",
}
_TOPIC_SEPARATORS = re.compile(r"[\s,;/|+&、]+|以及|还有|和|与|及|跟")
_TOPIC_FILLERS = frozenset({
    "to", "from", "and", "the", "topic", "topics", "module", "modules", "on",
    "主题", "话题", "模块", "这些",
})
_TOPIC_EDGES = ".!?:\"'`#()[]{}<>「」『』“”‘’《》。！？：（）【】"

# Words that carry no meaning for the command; dropped before the verb is looked up.
_FILLER_WORDS = frozenset({
    "a", "about", "all", "an", "any", "are", "can", "could", "do", "does", "for", "get",
    "give", "hey", "i", "in", "is", "it", "list", "me", "my", "of", "on", "please", "pls",
    "plz", "s", "see", "show", "tell", "that", "the", "there", "this", "to", "us", "want",
    "what", "whats", "which", "with", "would", "you",
})
_CJK_FILLERS = re.compile(
    "|".join(sorted(
        ("请问", "请", "帮我", "帮忙", "给我", "麻烦", "一下", "看看", "看下", "查看", "查询",
         "查一下", "查下", "显示", "列出", "所有", "全部", "这个", "那个", "有没有", "有什么",
         "有哪些", "有啥", "是什么", "什么", "哪些", "存在", "主要", "我想", "我要", "我",
         "如何", "怎么样", "怎样", "是", "的", "了", "吗", "呢", "吧", "啊", "呀"),
        key=len, reverse=True,
    ))
)
# The word for "a PR" is dropped when another verb is there: `这个 pr 有什么风险`.
_PULL_NOUNS = frozenset({"pr", "pull", "request", "pulls", "prs"})

_VERBS: dict[str, CommandKind] = {
    "risks": "risks", "risk": "risks", "risky": "risks", "concerns": "risks",
    "风险": "risks", "有风险": "risks", "风险点": "risks", "隐患": "risks",
    "summary": "summary", "summarize": "summary", "summarise": "summary",
    "summarize pr": "summary", "overview": "summary", "explain": "summary",
    "pr": "summary", "pull": "summary", "pull request": "summary",
    "总结": "summary", "摘要": "summary", "概要": "summary", "概述": "summary",
    "简介": "summary", "介绍": "summary", "内容": "summary", "改动": "summary",
    # `#6974 是做什么的`, `#6974 讲了什么`, `#6974 改了什么` once the fillers are gone
    "做": "summary", "干": "summary", "干嘛": "summary", "讲": "summary", "改": "summary",
    "digest": "digest", "weekly": "digest", "weekly digest": "digest",
    "report": "digest", "weekly report": "digest", "周报": "digest", "週報": "digest",
    "周报告": "digest", "每周总结": "digest",
    "topics": "topics", "topic": "topics", "modules": "topics", "subscriptions": "topics",
    "主题": "topics", "话题": "topics", "模块": "topics",
    "help": "help", "h": "help", "commands": "help", "usage": "help", "start": "help",
    "帮助": "help", "怎么用": "help", "用法": "help", "命令": "help", "说明": "help",
    "使用说明": "help", "菜单": "help",
    "pending": "pending", "pending reviews": "pending", "review queue": "pending",
    "待审": "pending", "待评审": "pending", "待审查": "pending",
}
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~\u3000-\u3003\u3008-\u3011\u2018-\u201f…·]+")

MAX_PULL_NUMBER = 2**31 - 1


# Ways to ask which topics the channel follows that begin like a subscription does.
_SUBSCRIPTION_LISTS = frozenset({
    "订阅列表", "我的订阅", "已订阅", "订阅了哪些", "我订阅了哪些", "我订阅了什么", "订阅情况",
    "subscriptions", "mysubscriptions", "listsubscriptions", "showsubscriptions",
})


def detect_lang(text: str, *, default: Lang = "en") -> Lang:
    """`zh` for any CJK character, `en` for Latin letters, else `default` (e.g. `#7035`)."""
    if _CJK.search(text):
        return "zh"
    if re.search(r"[A-Za-z]", text):
        return "en"
    return default


def clean_text(text: str, bot_names: Iterable[str] = DEFAULT_BOT_NAMES) -> str:
    """The text with platform decoration removed: full-width forms, Slack references,
    mentions, a leading slash, `@bot` suffixes and the bot's own name; one space apart."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    text = _ANGLE_LINK.sub(r" \1 ", text)
    text = _ANGLE_REFERENCE.sub(" ", text)
    text = " ".join(text.split())
    text = _SLASH_COMMAND.sub(r"\1", text)
    text = _MENTION_WORD.sub(" ", text)
    text = _MENTION_PREFIX.sub(" ", text)
    text = " ".join(text.split())
    # Chinese is written without spaces: `取消 订阅` is `取消订阅`.
    text = _CJK_GAP.sub("", text)
    names = [re.escape(name) for name in bot_names if name]
    if names:
        own_name = re.compile(rf"^/?(?:{'|'.join(names)})(?![A-Za-z0-9_])[\s:,，：]*", re.I)
        text = own_name.sub("", text)
    return _SLASH_COMMAND.sub(r"\1", text).strip()


def _take_weeks(text: str) -> tuple[str, list[str]]:
    """Week expressions out of the text: `2026-W29`, a date's week, `last`/`this`."""
    weeks: list[str] = []

    def iso(match: re.Match[str]) -> str:
        weeks.append(f"{match['year']}-W{int(match['week']):02d}")
        return " "

    def day(match: re.Match[str]) -> str:
        try:
            iso_date = date(int(match["year"]), int(match["month"]), int(match["day"]))
        except ValueError:
            weeks.append(match.group(0))  # not a date; the handler says so
        else:
            calendar = iso_date.isocalendar()
            weeks.append(f"{calendar.year}-W{calendar.week:02d}")
        return " "

    def last(_: re.Match[str]) -> str:
        weeks.append("last")
        return " "

    def this(_: re.Match[str]) -> str:
        weeks.append("this")
        return " "

    text = _ISO_WEEK.sub(iso, text)
    text = _DATE.sub(day, text)
    text = _LAST_WEEK.sub(last, text)
    text = _THIS_WEEK.sub(this, text)
    return text, weeks


def weeks_in(text: str) -> list[str]:
    """The weeks a message names, as the grammar reads them (`2026-W29`, `last`,
    `this`)."""
    return _take_weeks(clean_text(text[: MAX_COMMAND_CHARS + 1]))[1]


def _take_pulls(text: str) -> tuple[str, list[tuple[str | None, int]]]:
    """PR references out of the text, as (repository or None, number)."""
    found: list[tuple[str | None, int]] = []

    def take(match: re.Match[str]) -> str:
        repo = match["url_repo"] or match["repo"]
        digits = next(
            match[name] for name in
            ("url_number", "repo_number", "word_number", "hash_number", "bare_number")
            if match[name] is not None
        )
        reference = (repo, int(digits))
        if reference not in found:
            found.append(reference)
        return " "

    return _PULL_REFERENCE.sub(take, text), found


def _verb_words(text: str) -> list[str]:
    """The words left once punctuation and filler words are gone, CJK runs apart."""
    words: list[str] = []
    for token in _PUNCTUATION.sub(" ", text.lower()).split():
        for run in re.findall(rf"[{_CJK_RUN}]+|[^{_CJK_RUN}]+", token):
            if re.match(rf"[{_CJK_RUN}]", run):
                run = _CJK_FILLERS.sub("", run)
                if run:
                    words.append(run)
            elif run not in _FILLER_WORDS:
                words.append(run)
    return words


def _verb(words: list[str]) -> tuple[CommandKind | None, str | None]:
    """The command a phrase names and a relative week said in words (`digest last`).

    Returns (None, None) when the phrase is not a command at all.
    """
    if not words:
        return None, None
    phrase = " ".join(words)
    if phrase in _VERBS:
        return _VERBS[phrase], None
    without_nouns = [w for w in words if w not in _PULL_NOUNS]
    if without_nouns and " ".join(without_nouns) in _VERBS:
        return _VERBS[" ".join(without_nouns)], None
    # `digest last`, `last digest`: the week word alone.
    rest = [w for w in without_nouns if w not in _WEEK_WORDS]
    week_words = [w for w in without_nouns if w in _WEEK_WORDS]
    if len(week_words) == 1 and rest and _VERBS.get(" ".join(rest)) == "digest":
        return "digest", _WEEK_WORDS[week_words[0]]
    return _misspelled(words), None


# Command words long enough that a word one letter off is a typo of one (`sumary`,
# `digset`), not another word.
_TYPO_MIN = 5
_SPELLED_VERBS = tuple(v for v in _VERBS if v.isascii() and " " not in v
                       and len(v) >= _TYPO_MIN)


def _misspelled(words: list[str]) -> CommandKind | None:
    """The command a lone word misspells by about a letter (`sumary`, `summery`,
    `rsiks`), or None."""
    if len(words) != 1 or not words[0].isascii() or len(words[0]) < _TYPO_MIN:
        return None
    close = difflib.get_close_matches(words[0], _SPELLED_VERBS, n=1, cutoff=0.8)
    return _VERBS[close[0]] if close and abs(len(close[0]) - len(words[0])) <= 1 else None


def _topic_names(text: str) -> tuple[str, ...]:
    names: list[str] = []
    for part in _TOPIC_SEPARATORS.split(text):
        name = part.strip(_TOPIC_EDGES).lower()
        if name and name not in _TOPIC_FILLERS and name not in names:
            names.append(name)
    return tuple(names)


def parse_command(
    text: str,
    *,
    lang: Lang | None = None,
    default_lang: Lang = "en",
    bot_names: Iterable[str] = DEFAULT_BOT_NAMES,
) -> Command:
    """Read a chat message as a `Command`; never raises.

    `lang` is the user's language when the platform knows it; otherwise it is detected
    from the text (any CJK character means Chinese), and `default_lang` decides for text
    with no letters at all. The command keeps the original text.
    """
    cleaned = clean_text(text[: MAX_COMMAND_CHARS + 1], bot_names)
    user_lang: Lang = lang or detect_lang(cleaned, default=detect_lang(text, default=default_lang))

    def command(
        kind: CommandKind,
        *,
        repo: str | None = None,
        pull: int | None = None,
        week: str | None = None,
        topics: tuple[str, ...] = (),
        unknown: bool = False,
        value: str = "",
    ) -> Command:
        return Command(kind=kind, lang=user_lang, repo=repo, pull=pull, week=week,
                       topics=topics, text=text, unknown=unknown, value=value)

    if len(text) > MAX_COMMAND_CHARS or len(cleaned) > MAX_COMMAND_CHARS:
        return command("help", unknown=True)
    if not _PUNCTUATION.sub("", cleaned).strip():
        # Only a mention or a slash: the user is asking what the bot can do.
        return command("help", unknown=bool(cleaned))
    compact = re.sub(r"[\W_]+", "", cleaned.lower())
    if compact in _SUBSCRIPTION_LISTS:
        return command("topics")
    setting = read_setting(cleaned)
    if setting is not None:
        return command(setting.kind, repo=setting.repo, value=setting.value)
    listed = _TOPICS_LIST.match(cleaned)
    if listed and _topic_names(listed["rest"]) and not _take_pulls(listed["rest"])[1] \
            and not _take_weeks(listed["rest"])[1]:
        return command("subscribe", topics=_topic_names(listed["rest"]))
    subscription = _SUBSCRIPTION.match(cleaned)
    if subscription:
        verb = (subscription["en"] or subscription["zh"]).lower()
        return command(_SUBSCRIPTION_KINDS[verb], topics=_topic_names(subscription["rest"]))

    rest, weeks = _take_weeks(cleaned)
    rest, pulls = _take_pulls(rest)
    words = _verb_words(rest)
    kind, spoken_week = _verb(without_greeting(words))
    if spoken_week:
        weeks.append(spoken_week)
    if kind is None and len(pulls) <= 1:
        question = read_question(words, weeks=len(weeks), pulls=len(pulls))
        if question is not None and question.kind == "compare":
            return command("compare", week=_compared_week(weeks))
        if question is not None and len(weeks) <= 1:
            return command(question.kind, week=weeks[0] if weeks else None,
                           topics=(question.area,) if question.area else (),
                           value=question.value)
    if (words and kind is None) or len(weeks) > 1 or len(pulls) > 1:
        return command("help", unknown=True)
    week = weeks[0] if weeks else None
    repo, number = pulls[0] if pulls else (None, None)

    if kind is None:
        # A lone PR reference asks for its summary; a lone week for its digest.
        if pulls and not weeks:
            return command("summary", repo=repo, pull=number)
        if weeks and not pulls:
            return command("digest", week=week)
        return command("help", unknown=True)
    if kind == "help":
        return command("help")
    if kind in ("risks", "summary"):
        if week is None:
            return command(kind, repo=repo, pull=number)
        # `上周总结` / `summary last week`: a week's summary is its digest.
        if kind == "summary" and not pulls:
            return command("digest", week=week)
        # `risks last week`, `上周有什么风险`: the week's risks.
        if kind == "risks" and not pulls:
            return command("risks", week=week)
        return command("help", unknown=True)
    if pulls:
        return command("help", unknown=True)
    if kind == "digest":
        return command("digest", week=week)
    if week is not None:
        return command("help", unknown=True)
    return command(kind)


_ISO_WEEK_TEXT = re.compile(r"(?P<year>[0-9]{4})-W(?P<week>[0-9]+)")


def _compared_week(weeks: list[str]) -> str | None:
    """The week a comparison is about (set against the week before it): the latest ISO
    week named, else this week - `上周和这周比`, `compare with last week`."""
    named = [(int(m["year"]), int(m["week"]), week) for week in weeks
             if (m := _ISO_WEEK_TEXT.fullmatch(week))]
    return max(named)[2] if named else None


def _week_words(week: str | None) -> str:
    """A week as the grammar reads it back after a command: ` last week`, ` 2026-W29`."""
    if week is None:
        return ""
    return f" {week} week" if week in ("last", "this") else f" {week}"


def canonical_text(command: Command) -> str:
    """The command written in the grammar's plainest English form; parsing it gives the
    same command back (`risks owner/repo#7035`, `digest last week`, `subscribe npu, ci`)."""
    if command.kind in ("risks", "summary"):
        if command.pull is None:
            return command.kind + (_week_words(command.week) if command.kind == "risks" else "")
        reference = f"{command.repo}#{command.pull}" if command.repo else f"#{command.pull}"
        return f"{command.kind} {reference}"
    if command.kind == "digest":
        if command.week is None:
            return "digest"
        if command.week in ("last", "this"):
            return f"digest {command.week} week"
        return f"digest {command.week}"
    if command.kind in ("subscribe", "unsubscribe"):
        # Commas, not spaces: spaces between Chinese names would join them into one.
        return f"{command.kind} {', '.join(command.topics)}".rstrip()
    return _question_or_setting_text(command)


def _question_or_setting_text(command: Command) -> str:
    week = _week_words(command.week)
    if command.kind == "changes":
        return f"changes {' '.join(command.topics)}{week}"
    if command.kind == "people":
        who = command.value or "merged"
        return f"who {who} the most{week}"
    if command.kind == "compare":
        return f"compare {command.week}" if command.week else "compare with last week"
    if command.kind == "pending":
        return "waiting for review"
    if command.kind in ("follow", "unfollow"):
        return f"{command.kind} {command.repo}"
    if command.kind == "schedule":
        return schedule_text(command.value)
    if command.kind in ("timezone", "lang"):
        return f"{command.kind} {command.value}"
    if command.kind == "mute":
        return f"mute {command.value}".rstrip()
    return command.kind
