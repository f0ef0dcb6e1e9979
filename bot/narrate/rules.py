"""What a narrated sentence may never do, whatever its facts: these rules need no
grounds. They read the folded text (`bot.narrate.normal`) with code spans taken out.

- mention: `@` anything, `<!channel>`, `<at ...>`, `tg://user?id=`;
- url: a scheme, `www.`, or a link written to slip past filters (`hxxp`, `[.]`);
- markup: tags, emphasis, fences, link syntax, entities, list or heading starts, `|`,
  emoji;
- address: a sentence that speaks to its readers: whom (`所有人`, `everyone`, `you`),
  urgency (`立即`, `urgent`), an invitation elsewhere (`加微信`), a prize (`中奖`), or,
  outside suggestions, an order (`请…`, `Please`, `Upgrade to…`); PR titles may be
  imperative (they are by convention);
- resolved: a risk line that says its concern is settled, or any sentence saying the
  week's reviews, comments or risks were resolved (the data never says so).

Host-like tokens (`evil.sh`, `discord.gg/abc`, `trainer_base.py`) and credential words
are found here and judged against the facts by `bot.narrate.verify`.
"""

from __future__ import annotations

import re
from typing import Literal

from bot.narrate.figures import CODE_SPAN
from bot.narrate.normal import OBFUSCATED
from bot.narrate.settled import settles

Part = Literal["title", "summary", "risk", "week", "changes", "trends", "suggestion"]

_MENTION = re.compile(r"@|<[!@#]|<\s*at\b|tg://|user\?id=", re.I)
# No `\b`: Han characters are word characters, so "见https://" has none.
_SCHEME = re.compile(r"(?<![A-Za-z0-9])(?:[a-z][a-z0-9+.-]{1,20}://|(?:mailto|javascript|data|"
                     r"tel|file|slack|tg|discord|vbscript):|www\d?\.)", re.I)
_TAG = re.compile(r"<\s*/?\s*[a-z][a-z0-9]*(?:\s+[a-z-]+\s*=[^>]*)?\s*/?\s*>", re.I)
_MARKUP = re.compile(r"\*\*|~~|```|\]\(|\[[^\]]*\]\s*\(|&[a-z]+;|&#\d+;|\||"
                     r"^\s*(?:#{1,6}\s|>\s|[-*+]\s|\d+\.\s)", re.I)
_BROKEN_CODE = re.compile(r"``|(?<=[A-Za-z0-9_/.])`(?=[A-Za-z0-9_/])")
"""An empty code span, or one glued to a word (`verl/`workers): not what was meant."""
SPECIAL_TOKEN = re.compile(r"<\|[^|<>\s]{1,40}\|>")
"""A model's special token written in prose (`<|image_pad|>`): an identifier."""
HOST = re.compile(r"(?<![A-Za-z0-9_.-])(?:[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?\.)+"
                  r"[A-Za-z][A-Za-z0-9-]{1,23}(?![A-Za-z0-9_-])(?:/[^\s，。；、）)]*)?")
"""Any `label.label` a chat client could turn into a link (no list of TLDs)."""

GROUP = re.compile(
    # A whole audience named: whom an order or a call to act is for.
    # People only: "全体 token" and "all operators" are a kernel's, not an audience.
    r"所有人|大家|大伙|各位|诸位|所有用户|全部用户|广大用户|(?:用户|开发者|同学|朋友|成员)们|"
    r"(?:所有|全部|全体|各位)的?(?:开发者|使用者|贡献者|维护者|成员|同学|同事|团队|用户|人员)|"
    r"\b(?:everyone|everybody|all users)\b|\b(?:all|every|each)\s+(?:of\s+(?:the\s+|our\s+)?)?"
    r"(?:users?|developers?|contributors?|maintainers?|teams?|engineers?)\b", re.I)
HURRY = re.compile(r"立即|立刻|马上|赶紧|赶快|紧急|火速|务必|速速|刻不容缓|尽快|尽早|抓紧|"
                   r"即刻|从速|第一时间|今天之内|今日之内|当天之内|限时|\b(?:immediately|urgent(?:ly)?|asap|"
                   r"right now|right away|at once|act now|as soon as possible|without delay|"
                   r"hurry|time-sensitive)\b", re.I)
"""Urgency: a digest reports a week, it never hurries its readers."""
CONTACT = re.compile(
    r"(?:加|添加|扫)\s*(?:我|作者)?的?\s*(?:微信|vx|v信|qq|群|好友)|微信号|微信群|qq\s*群|电报群|"
    r"飞书群|钉钉群|扫码|二维码|私信|私聊|进群|入群|"
    r"\b(?:dm|pm|message|contact|ping|e-?mail|text|reach)\b[^.;]{0,30}\b(?:on|via|at|through)\s+"
    r"(?:telegram|discord|whatsapp|wechat|signal|twitter|email|e-mail)\b|"
    r"\bjoin\s+(?:our|the|my)\s+(?:discord|telegram|slack|wechat|whatsapp|group|channel|"
    r"server|community)\b", re.I)
"""A call to get in touch elsewhere: never the digest's to make."""
SCAM = re.compile(r"中奖|领取|空投|红包|\b(?:airdrops?|giveaways?|prizes?)\b|"
                  r"\bfree (?:tokens|crypto|coins|credits)\b", re.I)
"""A prize or a giveaway: what no weekly report of PRs announces."""
_EMOJI = re.compile("[\u2600-\u27bf\U0001f000-\U0001faff]")
_WHO_ZH = re.compile(r"你|您")
_WHO_EN = re.compile(r"\b(?:you|your|yours|you're|folks)\b", re.I)
_ORDER_ZH = re.compile(r"(?<![申邀提恳声宴聘])请(?![求柬假])|一定要|千万|不要(?!求)|切勿|"
                       r"别忘|点击|点此|(?:用户|开发者|使用者|团队|维护者|贡献者)[^，。；]{0,4}(?:须|必须|"
                       r"务必|应当|应该|需要|要(?!求))[^，。；]{0,6}(?:升级|降级|迁移|回滚|切换|更新|安装|卸载|"
                       r"登录|提交|完成)")
_ORDER_EN = re.compile(
    r"(?:^|[;:.!?]\s+|;)\W*(?:please|do not|don't|make sure|be sure|upgrade|downgrade|"
    r"update to|install|uninstall|log ?in|sign ?in|submit|visit|click|go to|join|contact|"
    r"reply|download|roll ?back to|switch to|beware)\b|\bplease\b|"
    r"\b(?:users?|developers?|maintainers?|contributors?|teams?|engineers?)\s+"
    r"(?:should|must|need to|needs to|have to|has to|are required to)\b", re.I)

def prose_of(folded: str) -> str:
    """The sentence without its code spans and special tokens (each a space)."""
    return SPECIAL_TOKEN.sub(" ", CODE_SPAN.sub(" ", folded))


def text_problem(folded: str, part: Part) -> str | None:
    """Why the sentence must go whatever the facts say, or None."""
    prose = prose_of(folded)
    if _MENTION.search(prose):
        return "mention"
    if _SCHEME.search(prose) or OBFUSCATED.search(prose):
        return "url"
    if _TAG.search(prose) or _MARKUP.search(prose) or _EMOJI.search(prose):
        return "markup"
    if folded.count("`") % 2 or _BROKEN_CODE.search(folded):
        return "markup"
    if _addresses(prose, part):
        return "address"
    if settles(prose, risk=part == "risk"):
        return "resolved"
    return None


def _addresses(prose: str, part: Part) -> bool:
    if _WHO_ZH.search(prose) or _WHO_EN.search(prose) or GROUP.search(prose):
        return True
    if HURRY.search(prose) or CONTACT.search(prose) or SCAM.search(prose):
        return True
    if part in ("suggestion", "title"):
        return False
    return bool(_ORDER_ZH.search(prose) or _ORDER_EN.search(prose))


def hosts_in(folded: str) -> list[str]:
    """Host-like tokens outside code spans, in the order written."""
    return [m.group(0) for m in HOST.finditer(CODE_SPAN.sub(" ", folded))]


_WORD_TOKEN = re.compile(r"(?<![A-Za-z0-9_./-])[A-Za-z0-9][A-Za-z0-9_./-]*[A-Za-z0-9_]")


def bare_identifiers(folded: str) -> list[str]:
    """Names written as code outside code spans: snake_case (`grad_norm`) and paths with
    a file or module part (`tests/x/test_y.py`). Their PR's facts must hold them, so a
    sentence moved to another PR (or made up) does not keep another PR's names."""
    found = []
    for token in _WORD_TOKEN.findall(prose_of(folded)):
        token = token.rstrip(".")
        if not re.search("[A-Za-z]", token):
            continue
        if "_" in token or ("/" in token and re.search(r"[._]", token)):
            found.append(token)
    return found


def special_tokens(folded: str) -> list[str]:
    return SPECIAL_TOKEN.findall(CODE_SPAN.sub(" ", folded))


CREDENTIAL = re.compile(
    r"令牌|密码|口令|凭证|凭据|私钥|密钥|秘钥|验证码|助记词|登录|登陆|账号|帐号|"
    r"\bpasswords?\b|\bpasswd\b|\bpassphrase\b|\bcredentials?\b|\bsecrets?\b|"
    r"\bapi[ _-]?keys?\b|\bprivate keys?\b|\baccess tokens?\b|\bauth(?:entication)? tokens?\b|"
    r"\bbearer\b|\b(?:personal|github|slack|openai|session) tokens?\b|\blog ?in\b|"
    r"\bsign ?in\b|\bseed phrase\b|(?:提交|输入|发送|填写|粘贴|上传|提供|分享|泄露|交出|更换|重置)"
    r"[^，。；]{0,10}(?:token|key)|授权|认证|验证身份|身份验证|\bre-?authori[sz]e|"
    r"\bre-?authenticate|\bverify (?:your|their|the) (?:account|identity)\b|"
    r"\b(?:rotate|revoke|reset|regenerate|re-?enter|paste|share|send|submit|provide)\s+"
    r"(?:your\s+|their\s+|the\s+|our\s+)?(?:[a-z]+\s+)?(?:tokens?|keys?)\b", re.I)
"""Words about credentials: kept only where the cited facts use them too."""

CLAIMS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # A claim, and what the cited facts must hold for it to stand (approval, release,
    # deprecation, verification and the other claims only recorded facts may ground
    # are `bot.narrate.claims.RECORDED_CLAIMS`).
    "ci": (re.compile(r"(?:\bci\b|检查|测试|流水线|\bchecks?\b|\btests?\b|\bpipelines?\b)"
                      r"[^，。；.;]{0,12}(?:通过|全绿|\bpass(?:ed|es|ing)?\b|\bgreen\b|"
                      r"\bsucceed(?:ed|s)?\b|\bsuccessful(?:ly)?\b)|(?:通过|\bpass(?:ed|es)?\b)"
                      r"[^，。；.;]{0,8}(?:\bci\b|检查|测试|\bchecks\b|\btests\b)", re.I),
           re.compile(r"通过|pass|green|success", re.I)),
    "reviewed": (re.compile(r"经过[^，。；]{0,8}(?:评审|审核|审查|review)|审核过|评审过|"
                            r"\b(?:were|was|been|got)\s+(?:all\s+)?(?:code-)?reviewed\b|"
                            r"\breviewed by\b", re.I),
                 re.compile(r'"reviews":"(?:approved|commented|changes requested)"')),
    "absence": (re.compile(r"(?:没有|未|无|零)(?:发现|出现|引入|检测到|报告)?[^，。；]{0,6}"
                           r"(?:漏洞|安全问题|回归)|\bno\s+(?:known\s+|new\s+|security\s+|open\s+)*"
                           r"(?:vulnerabilit(?:y|ies)|regressions?|security (?:issues|problems|"
                           r"holes))\b", re.I),
                re.compile(r"(?:no|without|没有|未|无)[^，。；.\n]{0,20}(?:漏洞|回归|vulnerab|"
                           r"regression)", re.I)),
}
