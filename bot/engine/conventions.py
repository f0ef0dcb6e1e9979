"""A PR title read by the conventions teams write it in, never guessed from its words.

Read in this order, each convention taking its part off the title's front:
- a merge commit's `Merge pull request #N from owner/branch` (its branch then reads as
  the title) and `Merge branch 'a' into b`;
- gitmoji, as a character (🐛 ✨ ⬆️ 📝 ♻️ 🔥 🚑 🔒 …) or a shortcode (`:bug:`), and an
  emoji of no meaning taken off;
- `Revert "…"`: a revert of the title in quotes, read in turn;
- bracket tags (`[BREAKING][npu, ckpt]`, `[Bugfix][ROCm]`, `【PAC】`), a type tag's
  scopes after it (`[Fix](mongodb-cdc) …`);
- a conventional prefix `type(scope)!: …` with the scope in any script, split at `,`
  `，` `、` `/` `|`, and a full-width colon (`fix(仪表板)：…`); the NumPy style's short
  types (`ENH:`, `MAINT:`, `BLD:`), several before one colon (`MAINT, TST:`);
- a scope without a type (`cask/audit: …`, `docs/ssl: …`), a path's folders its modules;
- a branch's name as the title (`Pr@dev v2@feat symbol map`), its last part read.
What a title's maintainers wrote is all that marks a PR as a security fix, breaking or
a revert (`bot.engine.classify` adds its labels): its type, tag, scope or gitmoji, or
a CVE or GHSA id in the title; a name that contains the word (`open-security-tools`)
marks nothing. A title that only moves one branch into another (`master->dev`, `Dev`,
`Merge branch 'dev' into main`) is a branch sync.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from typing import NamedTuple

import msgspec

from bot.engine.areas import GENERIC_FOLDERS

# Words used for a type in titles, labels and tags, mapped to the canonical type.
_TYPE_WORDS = {
    "feat": "feat", "feature": "feat", "features": "feat", "enhancement": "feat",
    "enhance": "feat", "improvement": "feat",
    "fix": "fix", "bugfix": "fix", "bug": "fix", "hotfix": "fix", "fixes": "fix",
    "security": "fix",
    "perf": "perf", "performance": "perf", "pref": "perf", "optimize": "perf",
    "refactor": "refactor", "refactoring": "refactor", "cleanup": "refactor",
    "doc": "docs", "docs": "docs", "documentation": "docs",
    # The project's website and its demos and examples (ant-design's `site:`, `demo:`).
    "site": "docs", "website": "docs", "demo": "docs", "demos": "docs", "example": "docs",
    "examples": "docs",
    "test": "test", "tests": "test", "ut": "test",
    "ci": "ci", "build": "build", "deps": "build", "dependencies": "build",
    "chore": "chore", "misc": "chore", "style": "style", "revert": "revert",
    "i18n": "chore", "release": "chore", "maintenance": "chore", "maintain": "chore",
}
# Type words some teams write before any improvement, a fix or a removal alike.
_LOOSE_TYPE_WORDS = frozenset({"optimize", "optimise", "optimization", "improvement",
                               "improve", "enhancement", "enhance"})
# The short type words of the NumPy style (NumPy, SciPy, pandas, scikit-learn: `ENH:`,
# `MAINT:`, `BLD:`, `TST:`). Matched exactly, never as a typo of a longer word: `main`
# is not `maint`.
_TYPE_ABBREVIATIONS = {
    "enh": "feat", "fea": "feat", "maint": "chore", "mnt": "chore", "tst": "test",
    "bld": "build", "sty": "style", "cln": "refactor", "rev": "revert", "rel": "chore",
    "dep": "chore", "depr": "chore",
}
# Tags that name a type in bracket conventions, not a module.
_TYPE_TAGS = {
    "bugfix": "fix", "fix": "fix", "hotfix": "fix", "feat": "feat", "feature": "feat",
    "perf": "perf", "performance": "perf", "refactor": "refactor", "doc": "docs",
    "docs": "docs", "misc": "chore", "chore": "chore", "test": "test", "tests": "test",
    "ut": "test", "security": "fix", "revert": "revert", "enhancement": "feat",
    "improve": "feat", "improvement": "feat",
}
# Tags, scopes and types by which maintainers call a change a security fix.
_SECURITY_NAMES = frozenset({"security", "sec", "vuln", "vulnerability", "cve"})
_BREAKING_NAMES = frozenset({"breaking", "breaking-change", "breaking-changes"})
# A CVE or GitHub advisory id: a security fix named by its id.
ADVISORY_ID = re.compile(r"\bCVE-\d{4}-\d{4,}\b|\bGHSA(?:-[0-9a-z]{4}){3}\b", re.I)

# Gitmoji (gitmoji.dev) by character and by shortcode: the type each says, and whether
# it says security (🔒), breaking (💥) or a dependency bump (⬆️ ⬇️ 📌 ➕ ➖). 🎨 ("improve
# structure / format") and 💄 ("UI and style files") say no type: teams lead every kind of
# improvement with them (`:art: Fix …`, `:art: Improve …`), so the words decide.
_GITMOJI: dict[str, str] = {
    "🐛": "fix", "🚑": "fix", "🩹": "fix", "🥅": "fix", "👽": "fix", "✏": "docs",
    "🔒": "fix", "✨": "feat", "🎉": "feat", "🚩": "feat", "📈": "feat", "♿": "feat",
    "📱": "feat", "🥚": "feat", "🛂": "feat", "💫": "feat", "🌐": "chore", "💬": "chore",
    "📝": "docs", "💡": "docs", "📄": "docs", "♻": "refactor", "🔥": "refactor",
    "🚚": "refactor", "⚰": "refactor", "🗑": "refactor", "🏗": "refactor",
    "🏷": "refactor", "🎨": "", "💄": "", "🚨": "style", "⚡": "perf",
    "🐎": "perf", "✅": "test", "🧪": "test", "🤡": "test", "📸": "test", "👷": "ci",
    "💚": "ci", "🚀": "ci", "⬆": "build", "⬇": "build", "📌": "build", "➕": "build",
    "➖": "build", "📦": "build", "🔨": "build", "🔧": "chore", "🔖": "chore",
    "👥": "chore", "🙈": "chore", "🔇": "chore", "🔊": "chore", "🧑‍💻": "chore",
    "🌱": "chore", "🍱": "chore", "🔐": "chore", "🗃": "chore", "🔍": "chore",
    "🔀": "chore", "🚧": "chore", "⏪": "revert", "💥": "",
}
_SHORTCODES = {
    "bug": "🐛", "ambulance": "🚑", "adhesive_bandage": "🩹", "goal_net": "🥅",
    "alien": "👽", "pencil2": "✏", "lock": "🔒", "sparkles": "✨", "tada": "🎉",
    "triangular_flag_on_post": "🚩", "chart_with_upwards_trend": "📈",
    "wheelchair": "♿", "iphone": "📱", "egg": "🥚", "passport_control": "🛂",
    "dizzy": "💫", "globe_with_meridians": "🌐", "speech_balloon": "💬", "memo": "📝",
    "bulb": "💡", "page_facing_up": "📄", "recycle": "♻", "fire": "🔥", "truck": "🚚",
    "coffin": "⚰", "wastebasket": "🗑", "building_construction": "🏗", "label": "🏷",
    "art": "🎨", "lipstick": "💄", "rotating_light": "🚨", "zap": "⚡", "racehorse": "🐎",
    "white_check_mark": "✅", "test_tube": "🧪", "clown_face": "🤡",
    "camera_flash": "📸", "construction_worker": "👷", "green_heart": "💚",
    "rocket": "🚀", "arrow_up": "⬆", "arrow_down": "⬇", "pushpin": "📌",
    "heavy_plus_sign": "➕", "heavy_minus_sign": "➖", "package": "📦", "hammer": "🔨",
    "wrench": "🔧", "bookmark": "🔖", "busts_in_silhouette": "👥", "see_no_evil": "🙈",
    "mute": "🔇", "loud_sound": "🔊", "technologist": "🧑‍💻", "seedling": "🌱",
    "bento": "🍱", "closed_lock_with_key": "🔐", "card_file_box": "🗃", "mag": "🔍",
    "twisted_rightwards_arrows": "🔀", "construction": "🚧", "rewind": "⏪", "boom": "💥",
}
_BUMP_GITMOJI = frozenset({"⬆", "⬇", "📌", "➕", "➖"})
# Characters that only dress an emoji: variation selectors, joiners, skin tones.
_EMOJI_DRESS = re.compile("[\ufe0e\ufe0f\u200d\U0001f3fb-\U0001f3ff]")
_GITMOJI = {_EMOJI_DRESS.sub("", emoji): kind for emoji, kind in _GITMOJI.items()}
_SHORTCODES = {code: _EMOJI_DRESS.sub("", emoji) for code, emoji in _SHORTCODES.items()}
_LEADING_SHORTCODE = re.compile(r"^:([a-z0-9_+-]+):\s*")
# A symbol or pictograph opening a title: an emoji whatever its meaning.
_LEADING_EMOJI = re.compile(
    "^(?:[\u2190-\u21ff\u2300-\u23ff\u2460-\u27bf\u2900-\u297f\u2b00-\u2bff"
    "\U0001f000-\U0001faff][\ufe0e\ufe0f\u200d\U0001f3fb-\U0001f3ff]*)+\\s*")

_MERGE_PULL = re.compile(r"^Merge pull request #\d+ from (\S+)\s*(.*)$", re.I | re.S)
_MERGE_BRANCH = re.compile(
    r"^(?:auto[- ]?)?Merge (?:remote-tracking )?branch(?:es)?(?:\s.*?)?(?: into .*)?$", re.I)
_REVERT = re.compile(r"^Revert\s*[\"“'](.+)[\"”']\s*$", re.I | re.S)
# A revert said in a title's own words (`Revert moving tests`, `Reverting the cache`).
_PLAIN_REVERT = re.compile(r"^Revert(?:s|ing)?\b\s*(.+)$", re.I | re.S)
_LEADING_TAGS = re.compile(r"^\s*((?:[\[【][^\]】]*[\]】]\s*)+)")
# Scopes in parentheses right after a type tag (`[Fix](cdc)(MongoDB) …`).
_LEADING_SCOPES = re.compile(r"^\s*((?:[(（][^)）]*[)）]\s*)+)")
_SCOPE = re.compile(r"[(（]([^)）]*)[)）]")
_TAG = re.compile(r"[\[【]([^\]】]*)[\]】]")
# Parts of a tag that name no module: a series number (`[1/n]`, `[2/3]`), an issue the
# PR answers (`[ISSUE #12191]`, `[#88]`, `[fixes #3]`).
_NOT_A_MODULE = re.compile(
    r"^(?:n|part-?\d+|(?:(?:issues?|fix(?:es)?|closes?|refs?|pr)-?)?#?\d+)$", re.I)
# Several types before one colon (`MAINT, TST: …`, `BUG/ENH: …`): the first is the type.
_TYPE_LIST = re.compile(r"^\s*([A-Za-z]+)((?:\s*[,/&+]\s*[A-Za-z]+)+)\s*[:：]\s*(.*)$", re.S)
_CONVENTIONAL = re.compile(
    r"^\s*([A-Za-z]+)\s*(?:[(（]([^)）]*)[)）])?\s*(!)?\s*[:：;；]\s*(.*)$", re.S)
# A title GitHub made from a branch named after its type: `Refactor/triple comments
# helpers` (the branch's dashes become spaces).
_BRANCH_TYPE = re.compile(r"^([A-Za-z]+)/([a-z][^/\s]*\s+\S.*)$")
# The branch prefixes that are types (`Test/eval mode mismatch`, `CI/CD pipeline` and
# `Demo/API keys` are words, not branches).
_BRANCH_TYPES = {"feat": "feat", "feature": "feat", "fix": "fix", "bugfix": "fix",
                 "hotfix": "fix", "refactor": "refactor", "chore": "chore"}
# A scope with no type before the colon: one word or a path (`cask/audit`, `图表`).
_SCOPE_ONLY = re.compile(
    r"^\s*([^\W\d][\w.\-]*(?:/[\w.\-]+)*)\s*(?::\s+|：\s*)(\S.*)$", re.S)
_SCOPE_SPLIT = re.compile(r"[,，、/|]")
# A branch's name given as the title (`Pr@dev v2@feat symbol map`).
_BRANCH_TITLE = re.compile(r"^[\w .-]*[\w.-]@[\w.-][\w .@-]*$")
# Names of branches that hold a line of work rather than a change.
_BRANCH = (r"(?:(?:main|master|dev|develop|development|staging|stable|trunk|next)"
           r"(?:[ ._-]?v?\d+(?:\.\d+)*)?|release[/-][\w./-]+|v?\d+(?:\.[\dx]+)+)")
_SYNC = re.compile(
    rf"^(?:(?:merge|sync|synchroni[sz]e)\s+)?(?:branch\s+)?['\"`]?(?:[\w.-]+/)?{_BRANCH}['\"`]?"
    rf"(?:\s*(?:->|→|=>|>|to|into)\s*['\"`]?{_BRANCH}['\"`]?)?"
    rf"(?:\s+(?:branch|sync))?$", re.I)
# Issue references a title closes with (`#13410`, `issue #12805`): its PR's number is
# beside it already, a second number there reads as the same PR.
_TRAILING_ISSUES = re.compile(
    r"(?:(?:[\s,，]+|(?<=[\u3400-\u9fff]))(?:(?:issues?|fix(?:es)?|closes?|refs?|see)\s*)?"
    r"#\d+)+\.?\s*$", re.I)


class Title(msgspec.Struct, frozen=True, kw_only=True):
    """What a title's conventions say: its modules, type, the marks its maintainers
    gave it (breaking, security, the CVE ids it names) and its text without them;
    `sync` for a title that only moves a branch into another, `bump` for a dependency
    update (`⬆ Bump x from 1 to 2`, `build(deps): bump …`), `release` for a version's
    release (`Bump version to 0.12.2`, `chore(release): v5.32.5`, 🔖)."""

    modules: tuple[str, ...]
    type: str | None
    breaking: bool
    text: str
    security: bool = False
    advisories: tuple[str, ...] = ()
    sync: bool = False
    bump: bool = False
    release: bool = False
    # The type came from a word teams use for any improvement (`optimize: fix typos`,
    # Seata's convention): the text's opening verb says the kind better where it says one.
    loose: bool = False


# A type word joined to what it is about (`fixRegression`, `featUI`): echarts' style.
_CAMEL_TYPE = re.compile(r"^([a-z]+)[A-Z]")
# Only types no word of code opens with: `testUtils:` and `featureFlags:` are modules.
_CAMEL_TYPES = frozenset({"fix", "feat", "perf", "refactor"})


@lru_cache(maxsize=4096)
def canonical_type(word: str) -> str | None:
    """The conventional type a word names, tolerating one-letter typos (`chrore`); a
    camelCase word by the type it opens with (`fixRegression` is a fix)."""
    camel = _CAMEL_TYPE.match(word.strip())
    if camel and camel.group(1) in _CAMEL_TYPES:
        return _TYPE_WORDS[camel.group(1)]
    lowered = word.lower().strip()
    if lowered in _TYPE_WORDS:
        return _TYPE_WORDS[lowered]
    if lowered in _TYPE_ABBREVIATIONS:
        return _TYPE_ABBREVIATIONS[lowered]
    if not lowered.isascii():
        return None
    close = difflib.get_close_matches(lowered, list(_TYPE_WORDS), n=1, cutoff=0.8)
    # A typo is a letter or two off (`chrore`), not a longer word (`featureFlags`).
    return _TYPE_WORDS[close[0]] if close and len(lowered) >= 4 \
        and abs(len(lowered) - len(close[0])) <= 2 else None


def type_word(word: str) -> str | None:
    """The type a word names exactly (a label's word: `bug`, `enhancement`)."""
    return _TYPE_WORDS.get(word.lower())


@lru_cache(maxsize=4096)
def normalise_module(tag: str) -> str:
    """A module as written, lower case and spaces joined (`KV Offloading` ->
    `kv-offloading`); letters of every script kept (`仪表板`)."""
    return re.sub(r"\s+", "-", tag.strip().lower())


def is_branch_sync(title: str) -> bool:
    """Whether a title only names branches (`master->dev`, `Dev`, `Merge branch 'dev'
    into main`, `Sync main to dev`): a sync of two lines of work, no change of its own."""
    text = title.strip()
    return bool(_MERGE_BRANCH.match(text) or _SYNC.match(text))


def _gitmoji(text: str) -> tuple[str, str | None, bool]:
    """The title without its leading emoji, and the emoji that said a type ("" for an
    emoji of no meaning); None where the title opens with none."""
    shortcode = _LEADING_SHORTCODE.match(text)
    if shortcode and shortcode.group(1) in _SHORTCODES:
        return text[shortcode.end():], _SHORTCODES[shortcode.group(1)], True
    found = _LEADING_EMOJI.match(text)
    if not found:
        return text, None, False
    emoji = _EMOJI_DRESS.sub("", found.group(0).strip())
    known = next((e for e in _GITMOJI if emoji.startswith(e)), "")
    return text[found.end():], known, True


def _scope_modules(scope: str) -> list[str]:
    return [name for part in _SCOPE_SPLIT.split(scope)
            if (name := normalise_module(part)) and not _NOT_A_MODULE.match(name)]


# Links a team appends to its titles (`… https://github.com/o/r/issues/17540`): where
# the discussion is, not what changed.
_TRAILING_LINKS = re.compile(r"(?:\s+<?https?://\S+>?)+\s*$")


@lru_cache(maxsize=8192)
def parse_title(title: str) -> Title:
    """The conventions of `title` (see the module's docstring), read off its front;
    read once per title (classification and the risk rules both ask)."""
    rest = _TRAILING_LINKS.sub("", title.strip()) or title.strip()
    merge = _MERGE_PULL.match(rest)
    if merge:
        rest = merge.group(2).strip() or merge.group(1).split("/", 1)[-1]
    sync = is_branch_sync(rest)
    rest, emoji, had_emoji = _gitmoji(rest)
    kind: str | None = _GITMOJI.get(emoji or "") or None
    security = emoji == "🔒"
    breaking = emoji == "💥"
    bump = emoji in _BUMP_GITMOJI
    reverted = _REVERT.match(rest)
    if reverted:
        inner = parse_title(reverted.group(1))
        return Title(modules=inner.modules, type="revert", breaking=inner.breaking,
                     text=f'Revert "{inner.text}"', security=inner.security,
                     advisories=_advisories(title))
    tags: list[str] = []
    loose_tag = False
    leading = _LEADING_TAGS.match(rest)
    if leading:
        rest = rest[leading.end():]
        for group in _TAG.findall(leading.group(1)):
            for tag in _typed_scope(group) or re.split(r"[,，/|、]", group):
                name = normalise_module(tag)
                if name in _BREAKING_NAMES:
                    breaking = True
                elif name and name not in tags and not _NOT_A_MODULE.match(name):
                    tags.append(name)
    rest = _one_type(rest)
    branch = _BRANCH_TYPE.match(rest)
    if branch and branch.group(1).lower() in _BRANCH_TYPES:
        # GitHub's title for a branch `refactor/triple-comments-helpers`.
        kind, rest = kind or _BRANCH_TYPES[branch.group(1).lower()], branch.group(2)
    conventional = _CONVENTIONAL.match(rest)
    word_type = canonical_type(conventional.group(1)) if conventional else None
    modules: list[str] = []
    if conventional and word_type is not None:
        # `[doc] chore: ...`: the type is after the tags, so every tag is a module.
        security = security or conventional.group(1).lower() in _SECURITY_NAMES
        kind, rest = word_type, conventional.group(4)
        breaking = breaking or bool(conventional.group(3))
        modules = list(tags)
        for name in _scope_modules(conventional.group(2) or ""):
            if name not in modules:
                modules.append(name)
        after = _LEADING_TAGS.match(rest)
        if after:  # `perf: 【PAC】流水线…`: a tag after the type names a module too
            rest = rest[after.end():]
            modules += [n for g in _TAG.findall(after.group(1)) for n in _scope_modules(g)
                        if n not in modules]
    else:
        # `[Bugfix][ROCm] ...`: a tag that names a type is the type, the rest are modules.
        for name in tags:
            tagged = _TYPE_TAGS.get(name)
            security = security or name in _SECURITY_NAMES
            if tagged and kind is None:
                kind, loose_tag = tagged, name in _LOOSE_TYPE_WORDS
            elif tagged is None:
                modules.append(name)
        scopes = _LEADING_SCOPES.match(rest) if kind is not None and tags else None
        if scopes:  # `[Fix](mongodb-cdc) …`: a type tag, then the change's scopes
            rest = rest[scopes.end():]
            modules += [n for g in _SCOPE.findall(scopes.group(1)) for n in _scope_modules(g)
                        if n not in modules]
        scoped = _SCOPE_ONLY.match(rest) if not tags else None
        if scoped and canonical_type(scoped.group(1)) is None:
            modules = _path_modules(scoped.group(1))
            rest = scoped.group(2)
        elif _BRANCH_TITLE.match(rest) and not had_emoji and not sync:
            rest, kind = _branch_title(rest, kind)
    security = security or any(m in _SECURITY_NAMES for m in modules)
    modules = [m for m in modules if m not in _SECURITY_NAMES]
    text = re.sub(r"\s+", " ", rest.strip().lstrip(":：-– ").strip())
    text = _without_trailing_issues(text)
    # `chore: auto merge branches`: a merge of branches behind a type is still one.
    sync = sync or (kind in (None, "chore") and bool(_MERGE_BRANCH.match(text)))
    if kind is None and _PLAIN_REVERT.match(text):
        kind = "revert"  # `Revert moving tests`: the title says so in its own words
    elif kind == "revert" and not _PLAIN_REVERT.match(text):
        text = _reverting(text)  # `revert: add caching` reads as a revert, not as the change
    release = (emoji == "🔖" or "release" in modules or bool(_RELEASE.match(text))
               or bool(conventional and conventional.group(1).lower() in _RELEASE_TYPES))
    bump = not release and (bump or _names_a_bump(text, modules))
    loose = loose_tag or bool(conventional and word_type is not None
                              and conventional.group(1).lower() in _LOOSE_TYPE_WORDS)
    return Title(modules=tuple(modules), type=kind, breaking=breaking, text=text or title,
                 security=security, advisories=_advisories(title), sync=sync, bump=bump,
                 release=release, loose=loose)


# A tag holding a type and its scope (`[Bugfix (rlhf)]`, `[feat(rollout)]`).
_TAG_TYPE_SCOPE = re.compile(r"^\s*([A-Za-z]+)\s*[(（]([^)）]+)[)）]\s*$")


def _typed_scope(tag: str) -> list[str]:
    """A tag written `type (scope)` as its type and scopes, each a tag of its own; []
    for any other tag."""
    found = _TAG_TYPE_SCOPE.match(tag)
    if found is None or found.group(1).lower() not in _TYPE_TAGS:
        return []
    return [found.group(1), *_SCOPE_SPLIT.split(found.group(2))]


def _one_type(text: str) -> str:
    """`MAINT, TST: x` as `MAINT: x` when every word before the colon is a type; any
    other text as it is (`TYP/DOC: x` names a module first)."""
    listed = _TYPE_LIST.match(text)
    if listed is None:
        return text
    words = re.split(r"\s*[,/&+]\s*", listed.group(2).strip(" ,/&+"))
    if all(canonical_type(w) is not None for w in [listed.group(1), *words]):
        return f"{listed.group(1)}: {listed.group(3)}"
    return text


def reverted_text(text: str) -> str | None:
    """What a revert's text (`Revert "use x on macOS"`, `Revert moving tests`) says it
    takes back, or None for a text that is no revert."""
    found = _REVERT.match(text) or _PLAIN_REVERT.match(text)
    return found.group(1).strip() if found else None


def _reverting(text: str) -> str:
    """A revert's text said as one: `add caching` -> `Revert add caching`."""
    if not text:
        return text
    lowered = text[:1].lower() + text[1:] if text[1:2].islower() else text
    return f"Revert {lowered}"


# A title's last word that needs the reference after it (`changes from #13457`).
_DANGLING = re.compile(r"\b(?:from|in|of|to|by|after|since|on|at|for|with|into|than|via|"
                       r"per|like|before|and|or|see)$", re.I)


def _without_trailing_issues(text: str) -> str:
    """The text without the issue numbers it closes with (`… #13410`), unless its words
    need them (`Revert some docs changes from #13457`)."""
    cut = _TRAILING_ISSUES.sub("", text).strip()
    return cut if cut and not _DANGLING.search(cut) else text


def _advisories(title: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.group(0).upper() for m in ADVISORY_ID.finditer(title)))


def _path_modules(scope: str) -> list[str]:
    """A scope written as a path (`cask/audit`, `utils/git`): its first folder that is
    not a generic one (those hold other areas: `bot.engine.areas.GENERIC_FOLDERS`)."""
    parts = [normalise_module(p) for p in scope.split("/") if p.strip()]
    named = [p for p in parts if p not in GENERIC_FOLDERS]
    return (named or parts)[:1]


def _branch_title(text: str, kind: str | None) -> tuple[str, str | None]:
    """A branch's name as the title (`Pr@dev v2@feat symbol map`): its last part, whose
    first word may be a type (`fix_export` -> fix)."""
    last = text.rsplit("@", 1)[-1].replace("_", " ").strip()
    first, _, after = last.partition(" ")
    said = canonical_type(first)
    if said is None:
        said = next((t for t in ("fix", "feat", "refactor", "perf", "style", "docs")
                     if first.lower().startswith(t) and len(first) > len(t)), None)
        if said is not None:
            return first[len(said):] + (f" {after}" if after else ""), kind or said
        return text, kind
    return after or last, kind or said


_BUMP = re.compile(
    r"^(?:bump|update|upgrade)\s+(?:the\s+)?\S+(?:\s+group)?\b.*\b(?:from\s+\S+\s+to\s+\S+|"
    r"with\s+\d+\s+updates?|across\s+\d+\s+director(?:y|ies))|^bump\s+\S+|"
    # `chore: upgrade deps`, `Update all npm dependencies`: every dependency at once.
    r"^(?:update|upgrade|refresh)\s+(?:all\s+)?(?:the\s+)?(?:(?:npm|pnpm|yarn|pip|python|"
    r"node|js|go|cargo|rust|dev|frontend|backend|web|ui|docs?|test)\s+)?"
    r"(?:deps|dependencies)$", re.I)
# A version's release: `Bump version to 0.12.2`, `Release v1.2.0`, `v5.32.5`.
# Changesets' release PR is `Version Packages` (`Version Packages (beta)`); a release
# prepared is `Prepare release v2.14.0b1`, `Prepare for the 2.5.2 release`; a release
# may name what it releases (`Release tdesign-vue-next 1.20.1`); encode's projects title
# theirs `Version 0.47.3`; ant-design releases with `Add changelog for 6.6.0`.
_RELEASE = re.compile(r"^(?:(?:bump|update|set)\s+(?:the\s+)?version\s+to\s+|"
                      r"release\s+(?:[\w@/.-]+\s+)?|version\s+)?"
                      r"v?\d+\.\d+(?:\.\d+)*(?:[-+.]\w+)*(?:\s+\[skip ci\])?$|"
                      r"^(?:bump|update|set)\s+(?:the\s+)?version\s+to\s+v?\d|"
                      r"^version packages(?:\s*\([\w\s-]*\))?$|"
                      r"^(?:add|update|write)\s+(?:the\s+)?changelog\s+(?:(?:for|of)\s+)?v?\d+\.\d|"
                      # `Merge 6.1.0 release to master` (echarts and other Apache projects)
                      r"^merge\s+(?:the\s+)?(?:v?\d+\.\d+(?:\.\d+)*\s+)?release\s+(?:to|into)\s|"
                      r"^prepare\s+(?:for\s+)?(?:the\s+)?(?:release\s+(?:of\s+)?(?:[\w-]+\s+)?"
                      r"v?\d|(?:[\w-]+\s+)?v?\d[\w.+-]*\s+release\b|release$)", re.I)
_VERSION_NAMED = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*(?:[-+.]?[A-Za-z]+[\w.]*)?")


# A package a Changesets release PR publishes, as its body lists them (`## svelte@5.56.9`).
_CHANGESET_RELEASE = re.compile(r"^##\s+(@?[\w.-]+(?:/[\w.-]+)?@\d+\.\d+\.\d+[\w.+-]*)\s*$",
                                re.M)
# How many published packages a release's name lists.
RELEASED_NAMED = 3


def release_name(title: str, body: str | None = None) -> str:
    """What a release says it releases: the version its title names (`6.6.0`,
    `v2.14.0b1`), else the packages a Changesets body lists (`svelte@5.56.9`), else
    the title (`Version Packages`)."""
    found = _VERSION_NAMED.search(title)
    if found:
        return found.group()
    packages = _CHANGESET_RELEASE.findall(body or "")[:RELEASED_NAMED]
    return ", ".join(packages) if packages else title


# Type words that say a title is a version's release (`REL: Prepare for 2.5.2`).
_RELEASE_TYPES = frozenset({"rel", "release"})
_DEPENDENCY_SCOPES = frozenset({"deps", "deps-dev", "dependencies", "dependency"})


def _names_a_bump(text: str, modules: list[str]) -> bool:
    """A dependency update as tools write it: `Bump x from 1 to 2`, `bump the pip group
    with 3 updates`, `chore(deps): update …`."""
    return bool(_BUMP.search(text)) or (
        any(m in _DEPENDENCY_SCOPES for m in modules)
        and text.lower().startswith(("bump", "update", "upgrade", "pin", "lock")))


_BUMPED = re.compile(
    r"^(?:bump|update|upgrade|pin|raise)\s+(?:the\s+)?(?:(?:rust\s+crate|crate|dependency|"
    r"npm\s+package|python\s+package|pre-commit\s+hook|module|docker\s+tag)\s+)?(\S+)",
    re.I)


def bump_subject(text: str) -> str:
    """What a dependency update updates (`Bump gitpython from 3.1.54 to 3.1.57` ->
    `gitpython`, `bump the github-actions group …` -> `github-actions`), or the text."""
    found = _BUMPED.match(text.strip())
    return found.group(1).strip("`") if found else text.strip()


# `upgrade to TypeScript 6`: what is upgraded is the rest of the title.
_UPGRADED_TO = re.compile(r"^(?:bump|update|upgrade|move|migrate)\s+to\s+(\S.{0,40}?)\s*$", re.I)
# The version an update goes to: `… to v30`, `… from 3.1.54 to 3.1.57`, `… to ^0.56.0`.
_TARGET = re.compile(r"\bto\s+([\^~]?v?\d+(?:\.[\w-]+)*)\s*(?:\[[^\]]*\]\s*)?$", re.I)
# Several dependencies in one update, as a list of names.
_NAME = r"[\w@/.+-]+"
_LISTED = re.compile(rf"^(?:bump|update|upgrade)\s+(?:the\s+)?((?:{_NAME},\s*)+{_NAME}"
                     rf"(?:,?\s+and\s+{_NAME})?|{_NAME}\s+and\s+{_NAME})"
                     r"(?:\s+(?:versions?|dependencies|packages))?\s*$", re.I)
# A renovate group updated as a whole (`update all non-major dependencies`): no name.
_UNNAMED = frozenset({"all", "dependencies", "deps", "packages", "the"})


class Bumped(NamedTuple):
    """A dependency update as a reader wants it named: `jsdom v30`, `TypeScript 6`;
    several names when one update lists several (`jsoup`, `springdoc-openapi`), none
    for a group update that names nothing (`all non-major …`); `major` when it moves
    to a new major version (`v30`, `6`), which is worth reading first."""

    names: tuple[str, ...]
    major: bool


# Between the names of a list: `a, b and c`, `a, b, and c`.
_LIST_SEPARATOR = re.compile(r",\s*(?:and\s+)?|\s+and\s+", re.I)


def bumped(text: str) -> Bumped:
    """What a dependency update updates, with the version it goes to when it says one."""
    text = text.strip()
    whole = _UPGRADED_TO.match(text)
    if whole:
        name = whole.group(1).strip("`")
        return Bumped((name,), major=bool(re.search(r"\bv?\d+$", name)))
    listed = _LISTED.match(text)
    if listed:  # `bump jsoup, springdoc-openapi and gradle-git-properties versions`
        return Bumped(_names(listed.group(1)), major=False)
    subject = bump_subject(text).rstrip(",;:")
    if subject.lower() in _UNNAMED:
        return Bumped((), major=False)
    if len(re.findall(r"\bto\s+[\^~]?v?\d", text)) > 1:  # `Pinia to 4 and Vue Router to 5.2`
        moves = _names(re.sub(r"^\S+\s+(?:the\s+)?", "", text))
        return Bumped(tuple(re.sub(r"\s+to\s+", " ", move, flags=re.I) for move in moves),
                      major=False)
    target = _TARGET.search(text)
    if target is None or subject == text:
        return Bumped((subject,), major=False)
    version = target.group(1)
    return Bumped((f"{subject} {version}",), major=_new_major(text, version))


def _names(listed: str) -> tuple[str, ...]:
    """The names of a list written out in a title (`a, b and c`)."""
    return tuple(name.strip() for name in _LIST_SEPARATOR.split(listed) if name.strip())


_FROM = re.compile(r"\bfrom\s+[\^~]?v?(\d+)(?:\.(\d+))?", re.I)
_VERSION = re.compile(r"[\^~]?v?(\d+)(?:\.(\d+))?")


def _new_major(text: str, version: str) -> bool:
    """Whether an update goes to a new major version: `to v30`, `from 48.0.1 to 50.0.0`,
    `from 0.8.1 to 0.9.0` (a 0.x minor breaks as a major does)."""
    if re.fullmatch(r"v?\d+", version):
        return True
    before, after = _FROM.search(text), _VERSION.match(version)
    if before is None or after is None:
        return False
    if before.group(1) != after.group(1):
        return True
    return before.group(1) == "0" and before.group(2) != after.group(2)
