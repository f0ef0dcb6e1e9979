"""A chat's own settings as people type them, in English and Chinese: `follow acme/lumen`,
`关注 acme/lumen`, `unfollow`, `schedule mon 9:00`, `每周一 9 点`, `schedule off`,
`timezone Europe/Berlin`, `时区 北京时间`, `lang en`, `用中文`, `settings`, `设置`, and the
merged-PR notices muted for a while: `mute 1d`, `snooze 3 days`, `静音 1 周`, `免打扰 2 小时`,
`unmute`, `取消静音`.

Each reader takes the grammar's cleaned text and gives a `Setting` or None; values are
only read here (a time zone is checked by the handler, which can say what is wrong).
`schedule_text` writes a schedule back in the form `schedule_of` reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.config import NO_SCHEDULE
from bot.models import CommandKind

_OWNER = r"[A-Za-z0-9][A-Za-z0-9-]{0,38}"
_NAME = r"[A-Za-z0-9._-]{1,100}"
_REPO = rf"(?:https?://)?(?:www\.)?(?:github\.com/)?(?P<repo>{_OWNER}/{_NAME}?)(?:\.git)?/?"

_FOLLOW = re.compile(
    r"^(?:please\s+|pls\s+|请|帮我|我要|我想|麻烦)?"
    r"(?:(?P<en>unsubscribe|unsub|unfollow|unwatch|subscribe|sub|follow|watch|track)\s+"
    r"(?:to\s+)?"
    r"|(?P<zh>取消关注|取消订阅|不再关注|退订|关注|订阅|跟踪)\s*)"
    rf"(?:repo(?:sitory)?\s+|仓库\s*)?{_REPO}\s*$",
    re.I,
)
_UNFOLLOW_WORDS = frozenset({"unsubscribe", "unsub", "unfollow", "unwatch", "取消关注",
                             "取消订阅", "不再关注", "退订"})

_SETTINGS_WORDS = frozenset({
    "settings", "setting", "config", "configuration", "status", "showsettings",
    "chatsettings", "mysettings", "channelsettings", "whatdoesthischatget",
    "设置", "配置", "状态", "当前设置", "本群设置", "群设置", "我的设置", "查看设置", "显示设置",
})

# --- schedules ----------------------------------------------------------------------

_OFF_WORDS = r"(?:off|none|never|stop|disable|disabled|no)"
_SCHEDULE_EN = re.compile(
    r"^(?:set\s+)?(?:the\s+)?(?:weekly\s+)?(?:digest\s+)?(?P<verb>schedule|post(?:ing)?|weekly)"
    r"(?:\s+(?:is|to|at|on|every))*\s+(?P<spec>.+)$", re.I)
_SCHEDULE_ZH_VERB = re.compile(
    r"^(?:请|帮我)?(?:把)?(?:周报|每周周报|周报推送|周报发送)?(?:时间|定时|推送时间|发送时间|推送)?"
    r"(?:改为|改成|设为|设置为|设置成|定为|定在|为|在|:)?\s*(?P<spec>每(?:周|星期|礼拜).+)$")
_SCHEDULE_ZH_NAMED = re.compile(
    r"^(?:周报时间|定时|推送时间|发送时间|周报定时)\s*(?:改为|改成|设为|设置为|为|:)?\s*(?P<spec>.+)$")
_SCHEDULE_ZH_OFF = re.compile(
    r"^(?:请|帮我)?(?:关闭|停止|取消|不要|暂停)(?:周报|定时|每周周报|周报推送|定时推送)(?:推送|了)?$"
    r"|^(?:周报|定时)(?:推送)?\s*(?:关闭|停止|取消)$")

_EN_DAYS = {
    "mon": "MON", "monday": "MON", "mondays": "MON",
    "tue": "TUE", "tues": "TUE", "tuesday": "TUE", "tuesdays": "TUE",
    "wed": "WED", "weds": "WED", "wednesday": "WED", "wednesdays": "WED",
    "thu": "THU", "thur": "THU", "thurs": "THU", "thursday": "THU", "thursdays": "THU",
    "fri": "FRI", "friday": "FRI", "fridays": "FRI",
    "sat": "SAT", "saturday": "SAT", "saturdays": "SAT",
    "sun": "SUN", "sunday": "SUN", "sundays": "SUN",
}
_ZH_DAYS = {"一": "MON", "二": "TUE", "三": "WED", "四": "THU", "五": "FRI", "六": "SAT",
            "日": "SUN", "天": "SUN"}
WEEK_ORDER = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI")

_EN_TIME = re.compile(r"(?<![0-9])(?P<hour>[0-9]{1,2})(?:[:.h](?P<minute>[0-9]{2}))?\s*"
                      r"(?P<half>a\.?m\.?|p\.?m\.?)?(?![0-9])", re.I)
_ZH_NUMBER = r"[0-9零〇一二两三四五六七八九十]{1,3}"
_ZH_TIME = re.compile(
    rf"(?P<part>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上)?\s*(?P<hour>{_ZH_NUMBER})\s*(?:点|时|:|：)"
    rf"\s*(?:(?P<half>半)|(?P<minute>{_ZH_NUMBER})\s*分?)?")
_ZH_DAY_RUN = re.compile(r"(?:每)?(?:周|星期|礼拜)(?P<days>[一二三四五六日天](?:[、,，和及与/]?"
                         r"(?:周|星期|礼拜)?[一二三四五六日天])*)")
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}


@dataclass(frozen=True)
class Setting:
    """A setting command read from text: its kind and its repository or value."""

    kind: CommandKind
    repo: str | None = None
    value: str = ""


def read_setting(text: str) -> Setting | None:
    """The setting `text` asks for, or None when it asks for none."""
    compact = re.sub(r"[\W_]+", "", text.lower())
    if compact in _SETTINGS_WORDS:
        return Setting("settings")
    mute = mute_of(text)
    if mute is not None:
        return mute
    follow = _FOLLOW.match(text)
    if follow:
        verb = (follow["en"] or follow["zh"]).lower()
        kind: CommandKind = "unfollow" if verb in _UNFOLLOW_WORDS else "follow"
        return Setting(kind, repo=follow["repo"].rstrip("/"))
    schedule = schedule_of(text)
    if schedule is not None:
        return Setting("schedule", value=schedule)
    zone = _zone_of(text)
    if zone is not None:
        return Setting("timezone", value=zone)
    lang = _lang_of(text)
    if lang is not None:
        return Setting("lang", value=lang)
    return None


def schedule_of(text: str) -> str | None:
    """The cron (or "off") a schedule command sets; "" for a schedule command whose days
    and time cannot be read (`schedule sometimes`), None when `text` is not one."""
    if _SCHEDULE_ZH_OFF.match(text):
        return NO_SCHEDULE
    english = _SCHEDULE_EN.match(text)
    if english:
        spec = english["spec"].strip()
        if re.fullmatch(_OFF_WORDS, spec, re.I):
            return NO_SCHEDULE
        cron = _english_schedule(spec)
        if cron is None and english["verb"].lower() == "schedule":
            return ""
        return cron
    named = _SCHEDULE_ZH_NAMED.match(text)
    if named:
        spec = named["spec"].strip()
        if re.fullmatch(r"关闭|停止|取消|无|不要|" + _OFF_WORDS, spec, re.I):
            return NO_SCHEDULE
        return _chinese_schedule(spec) or ""
    weekly = _SCHEDULE_ZH_VERB.match(text)
    if weekly and _ZH_DAY_RUN.search(weekly["spec"]):
        return _chinese_schedule(weekly["spec"]) or ""
    return None


def _cron(days: list[str], hour: int, minute: int) -> str | None:
    if not days or not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    ordered = [day for day in WEEK_ORDER if day in days]
    return f"{minute} {hour} * * {','.join(ordered)}"


def _english_schedule(spec: str) -> str | None:
    words = re.split(r"[\s,;/&+]+|\band\b", spec.lower())
    days: list[str] = []
    rest: list[str] = []
    for word in filter(None, words):
        if word in _EN_DAYS:
            days.append(_EN_DAYS[word])
        elif word in ("weekdays", "weekday", "workdays"):
            days.extend(_WEEKDAYS)
        elif word in ("daily", "everyday"):
            days.extend(WEEK_ORDER)
        elif word not in ("at", "on", "every", "each", "the", "of", "week", "o'clock", "oclock"):
            rest.append(word)
    hour, minute = 9, 0
    if rest:
        found = _EN_TIME.fullmatch(" ".join(rest).replace(" ", "")) or \
            _EN_TIME.fullmatch(" ".join(rest))
        if found is None:
            return None
        hour, minute = int(found["hour"]), int(found["minute"] or 0)
        half = (found["half"] or "").lower().replace(".", "")
        if half and not 1 <= hour <= 12:
            return None
        if half == "pm" and hour != 12:
            hour += 12
        elif half == "am" and hour == 12:
            hour = 0
    return _cron(days, hour, minute)


def _zh_number(text: str) -> int | None:
    """`9`, `九`, `十`, `十一`, `二十三`, `两` as a number."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        high = _ZH_DIGITS.get(tens, -100) if tens else 1
        low = _ZH_DIGITS.get(ones, -100) if ones else 0
        value = high * 10 + low
        return value if value >= 0 else None
    if len(text) == 1 and text in _ZH_DIGITS:
        return _ZH_DIGITS[text]
    return None


def _chinese_schedule(spec: str) -> str | None:
    spec = spec.replace(" ", "")
    days: list[str] = []
    remainder = spec
    run = _ZH_DAY_RUN.search(spec)
    if run:
        days = [_ZH_DAYS[c] for c in re.sub(r"周|星期|礼拜|[、,，和及与/]", "", run["days"])]
        remainder = spec[:run.start()] + spec[run.end():]
    elif re.search(r"工作日", spec):
        days = list(_WEEKDAYS)
        remainder = re.sub(r"(?:每个?)?工作日", "", spec)
    elif re.search(r"每天|每日", spec):
        days = list(WEEK_ORDER)
        remainder = re.sub(r"每天|每日", "", spec)
    remainder = re.sub(r"^[的,，]|(?:推送|发送|发|发布|整)$", "", remainder)
    hour, minute = 9, 0
    if remainder:
        found = _ZH_TIME.fullmatch(remainder) or _EN_TIME.fullmatch(remainder)
        if found is None:
            return None
        parsed_hour = _zh_number(found["hour"])
        if parsed_hour is None:
            return None
        hour = parsed_hour
        groups = found.groupdict()
        if groups.get("half") == "半":
            minute = 30
        elif found["minute"]:
            parsed_minute = _zh_number(found["minute"])
            if parsed_minute is None:
                return None
            minute = parsed_minute
        part = groups.get("part") or ""
        if (part in ("下午", "傍晚", "晚上") and 1 <= hour < 12) or (part == "中午" and hour < 3):
            hour += 12
    return _cron(days, hour, minute)


def weekly_parts(schedule: str) -> tuple[tuple[str, ...], str] | None:
    """The days (`MON`, ...) and time (`09:00`) of a cron that fires at one time on some
    weekdays (what `schedule_of` makes), or None for any other cron."""
    parts = schedule.split()
    if len(parts) != 5 or parts[2:4] != ["*", "*"] or not (parts[0].isdigit()
                                                           and parts[1].isdigit()):
        return None
    days = tuple(day.upper() for day in parts[4].split(","))
    if not all(day in WEEK_ORDER for day in days):
        return None
    return days, f"{int(parts[1]):02d}:{int(parts[0]):02d}"


def schedule_text(schedule: str) -> str:
    """The command that sets `schedule` again: `schedule mon,thu 9:05` for a cron
    `schedule_of` made, `schedule off`, `schedule ?` for one that could not be read."""
    if schedule == NO_SCHEDULE:
        return "schedule off"
    if not schedule:
        return "schedule ?"
    parts = schedule.split()
    if len(parts) == 5 and parts[2:4] == ["*", "*"] and parts[0].isdigit() and \
            parts[1].isdigit():
        return f"schedule {parts[4].lower()} {int(parts[1])}:{int(parts[0]):02d}"
    return f"schedule {schedule}"


# --- time zones and languages ----------------------------------------------------------

_ZONE = re.compile(r"^(?:set\s+)?(?:the\s+)?(?:time\s*zone|timezone|tz|时区)"
                   r"(?:\s+(?:is|to))?\s*(?:=|:|设为|改为|设置为|为|是)?\s*(?P<zone>\S+)$", re.I)
_OFFSET = re.compile(r"^(?:utc|gmt)\s*(?P<sign>[+-])\s*(?P<hours>[0-9]{1,2})$", re.I)
_ZONE_NAMES = {"北京时间": "Asia/Shanghai", "中国": "Asia/Shanghai", "china": "Asia/Shanghai",
               "utc": "UTC", "gmt": "UTC", "z": "UTC"}


def zone_name(text: str) -> str:
    """A time zone as typed, in IANA's spelling where a common way of saying it has one
    (`utc+8` is `Etc/GMT-8`: IANA's offsets have the opposite sign)."""
    known = _ZONE_NAMES.get(text.lower())
    if known is not None:
        return known
    offset = _OFFSET.match(text)
    if offset:
        hours = int(offset["hours"])
        sign = "-" if offset["sign"] == "+" else "+"
        return "UTC" if hours == 0 else f"Etc/GMT{sign}{hours}"
    return text


def _zone_of(text: str) -> str | None:
    match = _ZONE.match(text)
    return zone_name(match["zone"]) if match else None


_LANG = re.compile(r"^(?:set\s+)?(?:lang|language|语言)(?:\s+(?:is|to))?\s*"
                   r"(?:=|:|设为|改为|设置为|为|是)?\s*(?P<lang>\S+)$", re.I)
_LANG_PHRASE = re.compile(
    r"^(?:请|以后|今后)?(?:用|说|使用|改用|切换到|换成)(?P<lang>中文|汉语|英文|英语)(?:回答|回复|吧)?$"
    r"|^(?:please\s+)?(?:speak|answer|reply|use)\s+(?:in\s+)?(?P<en>english|chinese)$", re.I)
_LANGS = {"zh": "zh", "cn": "zh", "chinese": "zh", "中文": "zh", "汉语": "zh",
          "en": "en", "english": "en", "英文": "en", "英语": "en"}


def _lang_of(text: str) -> str | None:
    match = _LANG.match(text)
    if match:
        return _LANGS.get(match["lang"].lower(), match["lang"].lower())
    phrase = _LANG_PHRASE.match(text)
    if phrase:
        return _LANGS[(phrase["lang"] or phrase["en"]).lower()]
    return None


# --- muting merged-PR notices -----------------------------------------------------------

_NOTICE_WORDS = r"(?:merged?\s+)?(?:pr\s+)?(?:notices?|notifications?|alerts?)"
_UNMUTE_EN = re.compile(
    rf"^(?:please\s+)?(?:(?:unmute|unsnooze|un-mute|un-snooze)(?:\s+(?:the\s+)?{_NOTICE_WORDS})?"
    rf"|resume\s+(?:the\s+)?{_NOTICE_WORDS}|(?:mute|snooze)\s+off)$", re.I)
_MUTE_EN = re.compile(r"^(?:please\s+)?(?:mute|snooze|silence)(?:\s+(?P<spec>.*?))?$", re.I)
# `mute notices for 3 days`: what may come before the length, in either language's form.
_SPEC_LEAD = re.compile(rf"^(?:(?:the\s+)?{_NOTICE_WORDS}(?:\s+|$))?(?:for\s+(?=\S))?", re.I)
_OFF = re.compile(r"^(?:off|关闭|取消)$", re.I)
_UNMUTE_ZH = re.compile(
    r"^(?:请|帮我)?(?:取消|解除|关闭|结束|停止)(?:静音|免打扰|勿扰)(?:模式)?"
    r"|^(?:请|帮我)?(?:恢复|打开|开启|重新开启)(?:通知|提醒|推送)$")
_MUTE_ZH = re.compile(
    r"^(?:请|帮我)?(?:开启|打开)?(?:静音|免打扰|勿扰|暂停通知|暂停提醒|屏蔽通知)(?:模式)?"
    r"(?P<gap>\s*)(?P<spec>.*)$")
_UNTIL_UNMUTED = re.compile(
    r"^(?:forever|indefinitely|until\s+(?:unmuted|further\s+notice)|永久|一直|直到取消)$", re.I)
_EN_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
              "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
              "twelve": 12}
_EN_LENGTH = re.compile(
    r"^(?P<count>[0-9]+|" + "|".join(_EN_COUNTS) + r")\s*"
    r"(?P<unit>h|hrs?|hours?|d|days?|w|wks?|weeks?|mo|mos|months?|y|yrs?|years?"
    r"|m|mins?|minutes?)$", re.I)
_ZH_LENGTH = re.compile(
    rf"^(?:持续|为期)?(?P<count>[0-9]+|{_ZH_NUMBER})\s*个?\s*"
    r"(?P<unit>小时|钟头|天|日|周|星期|礼拜|月|年|分钟)$")
_UNIT_DAYS = {"h": ("h", 1), "d": ("d", 1), "w": ("w", 1), "mo": ("d", 30), "y": ("d", 365),
              "m": ("m", 1)}
_EN_UNITS = {"h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "d": "d",
             "day": "d", "days": "d", "w": "w", "wk": "w", "wks": "w", "week": "w",
             "weeks": "w", "mo": "mo", "mos": "mo", "month": "mo", "months": "mo",
             "y": "y", "yr": "y", "yrs": "y", "year": "y", "years": "y", "m": "m",
             "min": "m", "mins": "m", "minute": "m", "minutes": "m"}
_ZH_UNITS = {"小时": "h", "钟头": "h", "天": "d", "日": "d", "周": "w", "星期": "w",
             "礼拜": "w", "月": "mo", "年": "y", "分钟": "m"}


def mute_of(text: str) -> Setting | None:
    """`mute`/`unmute` as typed, or None. A mute's value is its length in the short form
    `bot.store.mutes.mute_length` reads ("2h", "3d", "1w"; months and years as days,
    minutes as "30m", which it refuses), "" until unmuted, and the words themselves when
    they are no length (`mute banana`): the handler says what is wrong. Chinese glued
    to the verb (chat's cleaning drops the spaces between Chinese words) that names no
    number or unit of time (`静音乐`) is no mute."""
    if _UNMUTE_EN.match(text) or _UNMUTE_ZH.match(text):
        return Setting("unmute")
    found = _MUTE_EN.match(text) or _MUTE_ZH.match(text)
    if found is None:
        return None
    said = (found["spec"] or "").strip(_MUTE_TAIL)
    spec = _SPEC_LEAD.sub("", said, count=1).strip(_MUTE_TAIL)
    if _OFF.match(spec):
        return Setting("unmute")
    if not spec or _UNTIL_UNMUTED.match(spec):
        return Setting("mute")
    length = _mute_length(spec)
    if length is None and "gap" in found.groupdict() and not found["gap"] \
            and not _LENGTH_HINT.search(spec):
        return None
    # Words that are no length are kept as said, so that `mute <them>` reads the same.
    return Setting("mute", value=length or said[:_MOST_ECHOED].strip(_MUTE_TAIL).lower())


_MUTE_TAIL = " .!。！~～吧了"
_LENGTH_HINT = re.compile(r"[0-9]|小时|钟头|天|日|周|星期|礼拜|月|年|分钟")
_MOST_ECHOED = 64
"""Words that are no length are kept this long at most (the error reply quotes them)."""


def _mute_length(spec: str) -> str | None:
    english = _EN_LENGTH.match(spec)
    if english:
        count_text = english["count"].lower()
        count = _EN_COUNTS.get(count_text) or int(count_text)
        unit = _EN_UNITS[english["unit"].lower()]
    else:
        chinese = _ZH_LENGTH.match(spec.replace(" ", ""))
        count_number = _zh_number(chinese["count"]) if chinese else None
        if chinese is None or count_number is None:
            return None
        count, unit = count_number, _ZH_UNITS[chinese["unit"]]
    short, scale = _UNIT_DAYS[unit]
    return f"{count * scale}{short}"
