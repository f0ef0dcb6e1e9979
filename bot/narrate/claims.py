"""A narrated sentence read as claims, each checked against the fact it names.

The rule set is stated once (`RULES`): the prompt quotes it (`bot.narrate.prompts`) and
the verifier applies it here, so what the model is told and what is checked agree.

- A figure belongs to what it counts: a number of PRs to the topic, type, theme or file
  it is said of (or the week's totals), a share to the topic or type it is said of, a
  number of risks to the week's risks, a figure with a unit (GiB, MiB, ms, x, 倍) to a
  figure of the cited PRs with that same unit. Units and versions compare exactly
  (`150 MiB` is not `150 MB`, `V4` is not `V3`).
- In a clause about one PR (`#7061 adds …`), its names, versions and measured figures
  must be that PR's, not another cited PR's: two PRs' changes are never swapped.
- A person named is the author of the PR, or of the concern, the sentence is about; a
  severity is the one the engine gave that PR's (or that concern's) risk.
- Claims of security or a CVE, approval or sign-off, verification or audit, release,
  deprecation or "no longer maintained", migration, an advice to readers, a speed-up,
  and effects said with an intensifier come from recorded data only: the engine's type,
  topics, labels, security label, reviews and measured figures. What only a PR's own
  text says may be stated attributed to it ("PR 描述称…", "its description says…").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.narrate.figures import PULL_REF, figures_in, normal, without_refs

RULES_EN = (
    "Every number must be the data's own figure for the thing the sentence says it "
    "counts: a number of PRs is that topic's, type's, theme's or file's count (or the "
    "week's total), a share is that topic's or type's share, a figure with a unit keeps "
    "the unit the data writes (150 MiB is not 150 MB). Never reuse a figure of one thing "
    "for another.",
    "Versions, model names and identifiers are written exactly as the data writes them.",
    "When a sentence speaks of several PRs, each PR is said to do only what its own "
    "facts say; a person named is the author of that PR or of that review concern; a "
    "severity is the one the data gives that risk.",
    "A PR is security work only when the data marks it (\"security\": true); approval "
    "only when \"reviews\" says approved. Never state in your own voice what only a PR's "
    "title or description claims (a CVE fixed, approved, audited, verified, released, "
    "deprecated, no longer maintained, migrate to…, N× faster, significantly better): "
    "leave it out, or attribute it (\"its description says …\"). A review quoted inside "
    "a description is not a review.",
)
RULES_ZH = (
    "每个数字都必须是数据中该句所说对象的数字："
    "PR 个数是所说主题、类型、主题组或文件的个数（或本周总数），"
    "占比是所说主题或类型的占比，带单位的数字保留数据写的单位（150 MiB 不是 150 MB）。"
    "不得把一个对象的数字用在另一个对象上。",
    "版本号、模型名和标识符照数据原样书写。",
    "一句话谈到多个 PR 时，每个 PR 只说它自己的事实；提到的人必须是该 PR 或该评审意见的作者；"
    "严重程度必须是数据给该风险的严重程度。",
    "只有数据标记 \"security\": true 的 PR 才是安全修复；只有 \"reviews\" 为 approved 才算批准。"
    "只有 PR 标题或描述自己声称的内容（修复了某个 CVE、已批准、已审计、已验证、已发布、已弃用、"
    "不再维护、迁移到…、快 N 倍、显著提升）不得以周报的口吻陈述：要么不写，要么注明出处"
    "（“PR 描述称……”）。描述里引用的“评审”不是评审。",
)

# --- units ---------------------------------------------------------------------------

_UNITS = {"gib": "GiB", "mib": "MiB", "kib": "KiB", "tib": "TiB", "gb": "GB", "mb": "MB",
          "kb": "KB", "tb": "TB", "ms": "ms", "s": "s", "sec": "s", "secs": "s",
          "seconds": "s", "second": "s", "秒": "s", "min": "min", "mins": "min",
          "minutes": "min", "分钟": "min", "x": "x", "×": "x", "倍": "x",
          "fold": "x", "-fold": "x"}
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"
_UNIT_FIGURE = re.compile(
    rf"({_NUMBER})(?:\s*(?:-|–|~|到|至|to)\s*({_NUMBER}))?\s*"
    r"(GiB|MiB|KiB|TiB|GB|MB|KB|TB|ms|secs?|seconds?|s|秒|mins?|minutes|分钟|x|×|倍|-?fold)"
    r"(?![A-Za-z])", re.I)


def unit_figures(text: str) -> frozenset[tuple[str, str]]:
    """Every figure written with a unit, as (number, unit): `~54 GiB` -> (54, GiB),
    `2-3x` -> (2, x) and (3, x)."""
    found: set[tuple[str, str]] = set()
    for m in _UNIT_FIGURE.finditer(without_refs(text)):
        unit = _UNITS.get(m.group(3).casefold(), _UNITS.get(m.group(3), m.group(3)))
        for value in (m.group(1), m.group(2)):
            if value:
                found.add((normal(value), unit))
    return frozenset(found)


# --- versions ------------------------------------------------------------------------

_VERSION = re.compile(r"(?<![\w.-])(?:v\d+(?:\.\d+)*|\d+\.\d+(?:\.\d+)+|"
                      r"[a-z][a-z]*-?\d+(?:\.\d+)*)(?![\w])", re.I)


def versions(text: str) -> list[str]:
    """Version-like names: `V4`, `v0.22.0`, `0.22.0`, `Qwen3.5`, `H100` (letters and
    digits in one word, or dotted numbers)."""
    return [m.group(0) for m in _VERSION.finditer(without_refs(text))
            if re.search(r"\d", m.group(0))]


def holds_version(text: str, version: str) -> bool:
    """Whether `text` (casefolded) writes `version` as a word of its own."""
    return re.search(rf"(?<![\w.]){re.escape(version.casefold())}(?![\w])", text) is not None


# --- counts and shares ---------------------------------------------------------------

_PR_COUNT = re.compile(
    rf"({_NUMBER}|[零一二两三四五六七八九十百]+)\s*(?:个\s*(?:PR|pull request)|项\s*PR|"
    rf"个(?=[，。；、：:,;）)]|$)|(?:PRs?|pull requests?)\b)", re.I)
_RISK_COUNT = re.compile(rf"({_NUMBER}|[一二两三四五六七八九十]+|two|three|four|five|six|"
                         r"seven|eight|nine|ten|one)\s*(?:项|个|条)?\s*(?:(?:高|中|低)(?:风险|"
                         r"严重)|风险观察|风险|(?:high|medium|low)[- ]severity\s+risks?|"
                         r"risk observations?|risks)", re.I)
_PERCENT = re.compile(rf"({_NUMBER})\s*%|百分之([零一二两三四五六七八九十]+)")


@dataclass(frozen=True)
class Counted:
    """A thing of the week a figure may be said of: its name as read (folded,
    casefolded), its PR counts and its shares."""

    name: str
    counts: frozenset[str]
    shares: frozenset[str] = frozenset()


def _figure(word: str) -> str | None:
    found = figures_in(word if re.search(r"\d", word) else word + "个")
    return next(iter(found), None) if found else None


_BREAK = re.compile(r"[，,；;。：:（(]|\.\s")
_EACH = re.compile(r"分别|依次|\brespectively\b|\d\s*%?\s*(?:和|与|、|,|and)\s*\d", re.I)


def _named_before(read: str, at: int, things: tuple[Counted, ...]) -> list[Counted]:
    """The things a figure at `at` is said of: named nearest before it (all of those
    named there, so a theme and a topic of one name both count), or, where none is,
    nearest after it in the same clause; in a sentence that lists figures in turn
    ("分别", "33 and 28"), every thing named before it."""
    best: tuple[int, list[Counted]] = (-1, [])
    after: tuple[int, list[Counted]] = (len(read) + 1, [])
    before: list[Counted] = []
    stop = _BREAK.search(read, at)
    end = stop.start() if stop else len(read)
    for thing in things:
        for m in re.finditer(rf"(?<![a-z0-9_]){re.escape(thing.name)}(?![a-z0-9_])", read):
            if m.end() <= at:
                before.append(thing)
            if m.end() <= at and m.end() > best[0]:
                best = (m.end(), [thing])
            elif m.end() <= at and m.end() == best[0]:
                best[1].append(thing)
            elif at <= m.start() < min(after[0], end):
                after = (m.start(), [thing])
    if before and _EACH.search(read):
        return before
    return best[1] or after[1]


# --- people, severity, attribution, recorded claims ----------------------------------

_SEVERITY = re.compile(r"(高|中|低)(?:风险|严重|危)|严重程度(?:为|是)?(高|中|低)|"
                       r"\b(high|medium|low)[- ]severity\b|\bof (high|medium|low) severity\b|"
                       r"\bseverity (?:is |of )?(high|medium|low)\b", re.I)
_SEVERITY_WORD = {"高": "high", "中": "medium", "低": "low"}


def severities(read: str) -> list[tuple[int, str]]:
    """Severities a sentence states, with where."""
    out = []
    for m in _SEVERITY.finditer(read):
        word = next(g for g in m.groups() if g)
        out.append((m.start(), _SEVERITY_WORD.get(word, word.casefold())))
    return out


ATTRIBUTED = re.compile(
    r"(?:PR ?|其|该 ?PR ?)?(?:描述|正文|标题|说明)(?:中|里)?(?:称|声称|提到|写道|表示|说)|"
    r"作者(?:称|表示|声称)|据(?:PR ?|其)?(?:描述|作者)|"
    r"\baccording to (?:its|the|the PR's) (?:description|author|title)\b|"
    r"\b(?:its|the PR's|the) (?:description|author|title) (?:says|claims|states|reports|notes)\b|"
    r"\bthe (?:pr|author) (?:says|claims|states|reports)\b|\bdescribed as\b", re.I)
"""A claim attributed to the PR's own text: then its text may ground it."""

_INTENSIFIER = re.compile(r"显著|大幅|明显|极大|大大|成倍|飞跃|\bsignificant(?:ly)?\b|"
                          r"\bdramatic(?:ally)?\b|\bsubstantial(?:ly)?\b|\bgreatly\b|"
                          r"\bdrastic(?:ally)?\b|\bmassive(?:ly)?\b|\bvastly\b|\bsharply\b|"
                          r"\bconsiderabl[ey]\b|\bnoticeabl[ey]\b|\bhuge(?:ly)?\b", re.I)
_INTENSE_FACT = re.compile(r"significant|substantial|dramatic|great|drastic|massive|vast|"
                           r"sharp|considerabl|noticeabl|huge|显著|大幅|明显|极大|大大", re.I)
_EFFECT = re.compile(r"(?:降低|减少|减小|提升|提高|改善|加快|缩短|节省|节约|\b(?:reduc|lower|"
                     r"improv|boost|increas|decreas|shrink|sav)\w*)[^，。；,;.]{0,8}?"
                     r"(开销|延迟|时延|内存|显存|吞吐|性能|效率|稳定性|通信|成本|带宽|"
                     r"\boverhead\b|\blatency\b|\bmemory\b|\bthroughput\b|\bperformance\b|"
                     r"\befficiency\b|\bstability\b|\bcommunication\b|\bcosts?\b|\bbandwidth\b)",
                     re.I)
_METRIC_FACT = {"开销": "overhead|cost", "延迟": "latency|delay", "时延": "latency|delay",
                "内存": "memory|oom|mem", "显存": "memory|oom|vram", "吞吐": "throughput",
                "性能": "performance|perf|faster|speed", "效率": "efficien",
                "稳定性": "stab|crash|robust", "通信": "communicat|nccl|transfer|sync",
                "成本": "cost", "带宽": "bandwidth"}

RECORDED_CLAIMS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # A claim, and what the recorded facts of the cited PRs must hold for it to stand.
    "security": (re.compile(r"安全(?:漏洞|修复|问题|补丁|更新|风险)|漏洞|\bcve\b|cve-\d|"
                            r"\bsecurity (?:fix|fixes|issue|hole|patch|update|vulnerabilit)\w*|"
                            r"\bvulnerabilit(?:y|ies)\b|\bexploit\w*", re.I),
                 re.compile(r'"security":true')),
    "approval": (re.compile(r"批准|审批通过|审核通过|签字|签署|\bapprov(?:ed|al|es|ing)\b|"
                            r"\blgtm\b|\bsigned[- ]off\b|\bsign-?off\b", re.I),
                 re.compile(r'"reviews":"approved"')),
    "verified": (re.compile(r"审计|验证过|经过验证|已验证|已通过验证|"
                            r"(?:已|均已|都已|已经)[^。；;，,.!?！？]{0,12}验证|"
                            r"(?:生产|线上|真实)环境(?:中|下)?(?:验证|测试|运行)|"
                            r"\baudit(?:ed|s|ing)?\b|"
                            r"\b(?:verified|validated|battle-tested|proven)\b", re.I),
                 re.compile(r"(?!)")),
    "release": (re.compile(r"发布|发版|上线|正式版|\breleas(?:e|ed|es|ing)\b|"
                           r"\bgeneral availability\b|\bship(?:ped|s)\b|\blaunch(?:ed|es)?\b|"
                           r"生产(?:环境)?可用|可(?:直接)?用于生产|\bproduction[- ]ready\b", re.I),
                re.compile(r'"type":"release"|"topics":\[[^\]]*"release', re.I)),
    "status": (re.compile(r"停止维护|不再维护|弃用|废弃|停更|\bdeprecat\w*|\babandon\w*|"
                          r"\bend[- ]of[- ]life\b|\bsunset(?:s|ting)?\b|\bunmaintained\b|"
                          r"\bno longer (?:maintained|supported|available)\b", re.I),
               re.compile(r'"(?:labels|topics)":\[[^\]]*"deprecat', re.I)),
    "migration": (re.compile(r"迁移(?:到|至)|改用|转向|\bmigrat(?:e|es|ed|ing|ion) to\b|"
                             r"\bswitch(?:es|ed|ing)? to\b|\bmove[sd]? (?:over )?to\b", re.I),
                  re.compile(r'"type":"(?:refactor|chore)"')),
    "speedup": (re.compile(r"提速|加速|更快|快了|性能提升|速度提升|\bfaster\b|\bspeed-?ups?\b|"
                           r"\bspeeds? up\b|\bquicker\b", re.I),
                re.compile(r'"type":"perf"|"measured":\[[^\]]*(?:x|倍|%|faster)',
                           re.I)),
    "advice": (re.compile(r"(?:建议|推荐)(?:所有)?(?:用户|大家|读者|团队|开发者)|"
                          r"(?:用户|团队|开发者)(?:应|应该|需要|须)|"
                          r"\brecommend(?:s|ed)? (?:that|upgrading|migrating|using|users)\b|"
                          r"\b(?:users|teams|readers) should\b", re.I),
               re.compile(r"(?!)")),
}
"""Claims the data must record: what only free text says is attributed or left out."""


@dataclass(frozen=True)
class PullClaims:
    """What one PR's recorded facts and its text hold, for its clauses."""

    text: str
    """Everything its facts say (folded, casefolded)."""
    recorded: str
    """Its recorded facts only: type, topics, labels, security, reviews, measured."""
    units: frozenset[tuple[str, str]]
    figures: frozenset[str]
    idents: str
    people: frozenset[str]
    severities: frozenset[str]


@dataclass(frozen=True)
class Grounds:
    """A sentence's claim grounds (one field of `bot.narrate.verify.Scope`)."""

    pulls: Mapping[int, PullClaims] = field(default_factory=dict)
    counted: tuple[Counted, ...] = ()
    totals: frozenset[str] = frozenset()
    own_counts: frozenset[str] = frozenset()
    """Counts the sentence may state of no named thing: the week's totals, its theme's
    size, its suggestion's figures."""
    risk_counts: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()
    """Everyone the week's data names: a name among them must belong to the sentence."""
    severities: frozenset[str] | None = None
    """The severities the sentence may state (None: the week's or its PRs')."""


_CODE = re.compile(r"`[^`\n]*`")
_CLAUSE = re.compile(r"[，,；;：:。（）()]|\s+(?:and|while|whereas|but)\s+|和|与|及|并且|而")


def _clauses(read: str) -> list[str]:
    return [c for c in _CLAUSE.split(read) if c and c.strip()]


def claim_problem(shown: str, grounds: Grounds, cited: frozenset[int]) -> str | None:
    """Why a sentence's claims do not hold (a rule word), or None. `shown` is the
    sentence folded (`bot.narrate.normal`)."""
    read = shown.casefold()
    # Code spans blanked to the same length: figures in them are not counted, but the
    # things they name are found at their places.
    prose = _CODE.sub(lambda m: " " * len(m.group(0)), read)
    named = read.replace("`", " ")
    own = [grounds.pulls[n] for n in sorted(cited) if n in grounds.pulls]
    text = "\n".join(p.text for p in own)
    recorded = "\n".join(p.recorded for p in own)
    attributed = ATTRIBUTED.search(prose) is not None
    for name, (claim, support) in RECORDED_CLAIMS.items():
        if claim.search(prose) and not support.search(recorded) and not (
                attributed and claim.search(text)):
            return f"claim-{name}"
    intense = _INTENSIFIER.search(prose)
    if intense and not (_INTENSE_FACT.search(text) or _INTENSE_FACT.search(recorded)):
        return "effect"
    for m in _EFFECT.finditer(prose):
        metric = m.group(1).casefold()
        wanted = _METRIC_FACT.get(metric, metric)
        if not re.search(wanted, text):
            return "effect"
    units = frozenset().union(*(p.units for p in own))
    for pair in unit_figures(read):
        if pair not in units:
            return "unit"
    versions_text = text
    for version in versions(prose):
        if not holds_version(versions_text, version.casefold()):
            return "version"
    problem = _people(prose, grounds, own)
    problem = problem or _severity(prose, grounds, own, cited)
    problem = problem or _counts(prose, named, grounds, own)
    return problem or _clauses_hold(shown, grounds, cited)


def _people(prose: str, grounds: Grounds, own: list[PullClaims]) -> str | None:
    allowed = frozenset().union(*(p.people for p in own))
    for person in grounds.people - allowed:
        if re.search(rf"(?<![\w-]){re.escape(person)}(?![\w-])", prose):
            return "person"
    return None


def _severity(prose: str, grounds: Grounds, own: list[PullClaims], cited: frozenset[int]
              ) -> str | None:
    said = severities(prose)
    if not said:
        return None
    if grounds.severities is not None:
        return None if all(s in grounds.severities for _, s in said) else "severity"
    for clause in _clauses(prose):
        refs = {int(n) for n in PULL_REF.findall(clause)} & set(grounds.pulls)
        allowed = (grounds.pulls[next(iter(refs))].severities if len(refs) == 1 else
                   frozenset().union(*(p.severities for p in own)) if own else
                   frozenset().union(*(p.severities for p in grounds.pulls.values())))
        for _, severity in severities(clause):
            if severity not in allowed:
                return "severity"
    return None


def _counts(prose: str, named_text: str, grounds: Grounds, own: list[PullClaims]
            ) -> str | None:
    if not grounds.counted:
        return None
    own_figures = frozenset().union(*(p.figures for p in own))
    for m in _PR_COUNT.finditer(prose):
        value = _figure(m.group(1))
        if value is None or value in own_figures:
            continue
        named = _named_before(named_text, m.start(), grounds.counted)
        allowed = frozenset().union(*(c.counts for c in named)) if named else \
            grounds.totals
        if value not in allowed | grounds.own_counts:
            return "count"
    for m in _RISK_COUNT.finditer(prose):
        word = m.group(1)
        value = next(iter(figures_in(word)), None) if word.isalpha() and word.isascii() \
            else _figure(word)
        if value is not None and value not in grounds.risk_counts | own_figures:
            return "count"
    for m in _PERCENT.finditer(prose):
        value = normal(m.group(1)) if m.group(1) else _figure(m.group(2) + "个")
        if value is None or value in own_figures:
            continue
        named = [c for c in _named_before(named_text, m.start(), grounds.counted)
                 if c.shares]
        if named and value not in frozenset().union(*(c.shares for c in named)):
            return "share"
    return None


_TERM = re.compile(r"(?<![\w./-])(?:[A-Za-z]*[A-Z][a-z]*[A-Z][A-Za-z]*|[a-z]+_[a-z_]+)(?![\w])")


def _clauses_hold(shown: str, grounds: Grounds, cited: frozenset[int]) -> str | None:
    """In a clause about one PR, what another cited PR's facts hold and its own do not
    is a swap: names, versions, figures with units."""
    if len(cited) < 2:
        return None
    for clause in _clauses(shown):
        refs = {int(n) for n in PULL_REF.findall(clause)}
        if len(refs) != 1 or next(iter(refs)) not in grounds.pulls:
            continue
        number = next(iter(refs))
        mine = grounds.pulls[number]
        others = [grounds.pulls[n] for n in cited if n != number and n in grounds.pulls]
        words = [t.casefold() for t in _TERM.findall(clause.replace("`", " "))]
        words += [v.casefold() for v in versions(clause)]
        for word in words:
            if word not in mine.text and any(word in o.text for o in others):
                return "swapped"
        clause = clause.casefold()
        for pair in unit_figures(clause):
            if pair not in mine.units and any(pair in o.units for o in others):
                return "swapped"
    return None

