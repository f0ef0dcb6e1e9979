"""What a narrated sentence may never do, whatever its facts: these rules need no
grounds. They read the folded text (`bot.narrate.normal`) with code spans taken out.

- mention: `@` anything, `<!channel>`, `<at ...>`, `tg://user?id=`;
- url: a scheme, `www.`, or a link written to slip past filters (`hxxp`, `[.]`);
- markup: tags, emphasis, fences, link syntax, entities, list or heading starts, `|`;
- address: a sentence that speaks to its readers: whom (`所有人`, `everyone`, `you`),
  urgency (`立即`, `urgent`), or, outside suggestions, an order (`请…`, `Please`,
  `Upgrade to…`); PR titles may be imperative (they are by convention);
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

_WHO_ZH = re.compile(r"所有人|全体|大家|各位|诸位|所有用户|全部用户|广大用户|用户们|你|您")
_WHO_EN = re.compile(r"\b(?:everyone|everybody|all users|you|your|yours|you're|folks)\b", re.I)
_URGENT_ZH = re.compile(r"立即|立刻|马上|赶紧|赶快|紧急|火速|务必|速速|刻不容缓")
_URGENT_EN = re.compile(r"\b(?:immediately|urgent(?:ly)?|asap|right now|at once|"
                        r"act now)\b", re.I)
_ORDER_ZH = re.compile(r"(?<![申邀提恳声宴聘])请(?![求柬假])|一定要|千万|不要(?!求)|切勿|"
                       r"别忘")
_ORDER_EN = re.compile(
    r"^\W*(?:please|do not|don't|make sure|be sure|upgrade|downgrade|update to|install|"
    r"uninstall|log ?in|sign ?in|submit|visit|click|go to|join|contact|reply|download|"
    r"roll ?back to|switch to|beware)\b|\bplease\b", re.I)

# Phrases that say a resolution is not known; taken out before resolution words are
# looked for ("是否已解决未记录" states no resolution).
_UNSURE_ZH = re.compile(r"是否(?:已经|已|被)?(?:得到)?(?:解决|处理|修复|关闭|回应)|"
                        r"(?:解决|处理)(?:情况|状态|与否)?(?:均|都)?(?:未|尚未|没有|尚无)"
                        r"(?:被)?(?:记录|知|确认|明确)")
_UNSURE_EN = re.compile(r"\b(?:whether|if)\b[^.;]{0,60}?\b(?:resolved|addressed|fixed|"
                        r"handled|closed)\b|\b(?:resolved|addressed|fixed|handled)\b[^.;]"
                        r"{0,30}?\b(?:is|was|were|are)\s+(?:not recorded|unknown|unclear)",
                        re.I)
_SETTLED_ZH = re.compile(r"已解决|已处理|已修复|已被修复|已经修复|已经解决|得到解决|得以解决|"
                         r"已关闭|已消除|已排除|已清除|已清零|已解除|已澄清|已回应|已答复|已确认无|"
                         r"无需(?:担心|关注|"
                         r"处理|跟进)|不再(?:是|有|存在)|没有(?:风险|问题)|无风险|可以忽略|"
                         r"可忽略|不必(?:担心|关注)|解决了|修复了|处理了")
_SETTLED_EN = re.compile(r"\b(?:resolved|addressed|fixed|handled|mitigated|closed|"
                         r"no longer|not an? (?:issue|concern|problem|risk)|"
                         r"no (?:risks?|concerns?|issues?)|safe to (?:ignore|merge)|"
                         r"can be ignored)\b", re.I)
_ALL_SETTLED_ZH = re.compile(r"(?:风险|意见|讨论|评审|审查|review|concern|comment|问题)"
                             r"[^，。；]{0,12}(?:均|都|全部|全都)(?:已经|已)?(?:被)?(?:解决|"
                             r"处理|关闭|修复|批准|通过|消除|清零|清除|解除)|(?:风险|意见|讨论|"
                             r"评审|review)[^，。；]{0,6}(?:已经|已)(?:被)?(?:解决|处理|关闭|消除|"
                             r"清零|清除|解除)|所有[^，。；]{0,10}(?:已经|已|均)(?:被)?(?:解决|处理|"
                             r"关闭|消除|清零|清除|解除)|(?:没有|无|不存在)(?:任何)?(?:风险|隐患)",
                             re.I)
_ALL_SETTLED_EN = re.compile(
    r"\b(?:all|every|each)\b[^.;]{0,20}\b(?:risks?|concerns?|reviews?|comments?|"
    r"threads?|issues?|findings?)\b[^.;]{0,30}\b(?:resolved|addressed|fixed|approved|"
    r"closed|cleared)\b|\b(?:risks?|concerns?|threads?|comments?|findings?)\s+(?:were|"
    r"are|have been|has been|got)\s+(?:all\s+)?(?:resolved|addressed|fixed|closed|cleared)\b|"
    r"\bno (?:open |outstanding |remaining )?(?:risks?|concerns?)\b|\brisk-free\b",
    re.I)


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
    if _TAG.search(prose) or _MARKUP.search(prose):
        return "markup"
    if folded.count("`") % 2 or _BROKEN_CODE.search(folded):
        return "markup"
    if _addresses(prose, part):
        return "address"
    if _settles(prose, part):
        return "resolved"
    return None


def _addresses(prose: str, part: Part) -> bool:
    if _WHO_ZH.search(prose) or _WHO_EN.search(prose):
        return True
    if _URGENT_ZH.search(prose) or _URGENT_EN.search(prose):
        return True
    if part in ("suggestion", "title"):
        return False
    return bool(_ORDER_ZH.search(prose) or _ORDER_EN.search(prose))


def _settles(prose: str, part: Part) -> bool:
    rest = _UNSURE_EN.sub(" ", _UNSURE_ZH.sub(" ", prose))
    if part == "risk" and (_SETTLED_ZH.search(rest) or _SETTLED_EN.search(rest)):
        return True
    return bool(_ALL_SETTLED_ZH.search(rest) or _ALL_SETTLED_EN.search(rest))


def hosts_in(folded: str) -> list[str]:
    """Host-like tokens outside code spans, in the order written."""
    return [m.group(0) for m in HOST.finditer(CODE_SPAN.sub(" ", folded))]


def special_tokens(folded: str) -> list[str]:
    return SPECIAL_TOKEN.findall(CODE_SPAN.sub(" ", folded))


CREDENTIAL = re.compile(
    r"令牌|密码|口令|凭证|凭据|私钥|密钥|秘钥|验证码|助记词|登录|登陆|账号|帐号|"
    r"\bpasswords?\b|\bpasswd\b|\bpassphrase\b|\bcredentials?\b|\bsecrets?\b|"
    r"\bapi[ _-]?keys?\b|\bprivate keys?\b|\baccess tokens?\b|\bauth(?:entication)? tokens?\b|"
    r"\bbearer\b|\b(?:personal|github|slack|openai|session) tokens?\b|\blog ?in\b|"
    r"\bsign ?in\b|\bseed phrase\b|(?:提交|输入|发送|填写|粘贴|上传|提供|分享|泄露|交出)"
    r"[^，。；]{0,10}(?:token|key)", re.I)
"""Words about credentials: kept only where the cited facts use them too."""

CLAIMS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # A claim, and what the cited facts must hold for it to stand.
    "ci": (re.compile(r"(?:\bci\b|检查|测试|流水线|\bchecks?\b|\btests?\b|\bpipelines?\b)"
                      r"[^，。；.;]{0,12}(?:通过|全绿|\bpass(?:ed|es|ing)?\b|\bgreen\b|"
                      r"\bsucceed(?:ed|s)?\b|\bsuccessful(?:ly)?\b)", re.I),
           re.compile(r"通过|pass|green|success", re.I)),
    "approval": (re.compile(r"批准|审批通过|审核通过|\bapprov(?:ed|al|es|ing)\b|\blgtm\b|"
                            r"\bsigned off\b", re.I),
                 re.compile(r"批准|approv|lgtm", re.I)),
    "release": (re.compile(r"发布|发版|上线|正式版|\breleas(?:e|ed|es|ing)\b|"
                           r"\bgeneral availability\b", re.I),
                re.compile(r"发布|releas", re.I)),
}
