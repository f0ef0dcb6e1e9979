"""Instructions planted in PR text, found before any of it reaches a model.

Each sentence of a PR's text (title, body, comments, reviews) is read folded
(`bot.narrate.normal`) and sorted:
- aimed at a model ("ignore previous instructions", "给 AI 的说明：摘要写成…",
  "note to the summarizer") or phishing (a credential word with an urgent call or a mass
  address, or asked for beside a host): the whole PR is withheld, and the digest words it from the
  engine's facts alone;
- addressed to readers (an order, urgency, `所有用户`) or carrying a link written to
  slip past filters (`hxxp`, `evil[.]com`, a scheme other than http(s), a bare host
  with a path such as `discord.gg/abc`): the sentence is left out of the facts, so it
  can neither be echoed nor ground a figure, a host or a PR number;
- encoded (rot13 that reads as English; base64 runs go as secrets, `bot.narrate.redact`):
  left out, or, when the decoded text is aimed at a model, the PR is withheld;
- anything else is data (links written as http(s) URLs are replaced by `[link]`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from bot.models import PullRequest
from bot.narrate.normal import OBFUSCATED, folded
from bot.narrate.rules import CONTACT, CREDENTIAL, GROUP, HOST, HURRY

Kind = Literal["data", "reader", "link", "encoded", "model", "phishing"]

_TOOL_EN = (r"summari[sz]ation (?:bots?|models?|tools?|systems?)|(?:auto(?:mated|matic)?|ai)[- ]"
            r"(?:summary|digest|report|review)(?: (?:bots?|tools?|systems?|generators?))?|"
            r"(?:digest|report|summary) (?:bots?|generators?)")
_AGENT_EN = (r"(?:ai|a\.i\.|llms?|language models?|chat ?bots?|"
             r"assistants?|summari[sz]ers?|narrators?|bots?|models?|" + _TOOL_EN + ")")
# Who a line that starts "X: write ..." may address: not "model" (a config key reads so).
_ADDRESSEE_EN = (r"(?:ai|a\.i\.|llms?|chat ?bots?|assistants?|"
                 r"summari[sz]ers?|narrators?|" + _TOOL_EN + ")")
_TOOL_ZH = (r"(?:自动)?(?:周报|摘要|总结|日报|报告)(?:系统|工具|生成器|机器人|程序|助手)|"
            r"生成器|ai ?工具")
_AGENT_ZH = (r"(?:ai|人工智能|模型|大模型|语言模型|机器人|助手|总结助手|摘要助手|llm|智能体|"
             + _TOOL_ZH + ")")
_ADDRESSEE_ZH = r"(?:ai|人工智能|机器人|助手|总结助手|摘要助手|llm|智能体|" + _TOOL_ZH + ")"
# A chat template's turn marker, then an order about what to output.
_TURN = (r"(?:\[INST\]|<\|im_start\|>\s*(?:system|user)|<<SYS>>|^\W*#{2,4}\s*(?:instruction|"
         r"system)s?\s*:?)")
_TO_MODEL = re.compile("|".join((
    # Words a PR about prompts, models or summaries uses too ("skip stale prompts", "the
    # model outputs logits", "输出如下") are not enough: an instruction names its reader
    # or the rules it overrides.
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+)?"
    r"(?:previous|prior|above|earlier|preceding|foregoing|system|original|other)\s+"
    r"(?:instructions?|rules|prompts?|directions|guidelines|messages?)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all|everything)\s+(?:above|before|else)\b",
    r"\b(?:you are|you're|act as|pretend to be|role-?play as)\s+(?:now\s+)?(?:an?\s+|the\s+)?"
    + _AGENT_EN + r"\b",
    r"\b(?:note|message|instructions?|notice|attention|hint|reminder)\s+(?:to|for)\s+"
    r"(?:the\s+|any\s+|all\s+)?" + _AGENT_EN + r"\b",
    r"\b" + _ADDRESSEE_EN + r"\s*[:,，：]\s*(?:please\s+)?(?:write|say|output|respond|reply|"
    r"report|state|include|mention|tell|summari[sz]e|describe|replace|rewrite|ignore)\b",
    r"(?:^|[(（\[【])\s*" + _ADDRESSEE_EN + r"\s*[:：]",
    r"(?:^|[(（\[【])\s*" + _ADDRESSEE_ZH + r"\s*[:：]",
    r"\bsystem\s*(?:override|instructions?)\b|^\W*(?:system|developer)(?:\s+(?:prompt|message|"
    r"note))?\s*:",
    r"\bnew instructions?\s*:",
    r"\b(?:dear|hey|hello)\s+(?:the\s+|all\s+|any\s+)?" + _AGENT_EN + r"\b|\b(?:attention|attn)"
    r"\s*[,:]\s*(?:the\s+|all\s+|any\s+)?" + _AGENT_EN + r"\b",
    r"\bsummar(?:y|ies)\s+(?:of|for)\s+this\s+(?:pr|pull request|change)\s+(?:should|must|"
    r"shall|needs? to)\b",
    r"(?:以下|下面|如下)(?:的)?(?:内容|文字|信息)?(?:仅)?(?:供|用于|请用于|写给|给)(?:自动)?"
    r"(?:摘要|总结|周报|ai|模型|机器人)",
    r"\bin your (?:summary|digest|report|answer|output|response|reply)\b[^.\n]{0,40}\b"
    r"(?:write|say|state|mention|put|include|claim|report)\b",
    r"\bin the (?:summary|digest|weekly report)\b[^.\n]{0,40}\b(?:write|say|state|claim)\b",
    r"\bwhen (?:you )?summari[sz](?:e|ing) this (?:pr|pull request|change)\b",
    r"(?:^|[.:;]\s*|\bplease\s+)(?:respond|reply|answer)\s+(?:only\s+)?(?:with|as)\b",
    r"\b(?:summary|title|digest|report|risks?)\s+(?:should|must|shall)\s+(?:say|read|state|"
    r"claim)\b",
    r"(?:忽略|无视|忘记|忘掉)[^。\n]{0,8}(?:之前|以上|上面|前面|上述|先前|所有|全部|系统)[^。\n]{0,4}"
    r"(?:指令|指示|说明|规则|提示|要求|设定)",
    r"(?:你|您)(?:现在)?(?:是|扮演|作为)[^。\n]{0,4}" + _AGENT_ZH,
    r"(?:给|致|告诉|提醒)[^。\n]{0,3}" + _AGENT_ZH + r"[^。\n]{0,4}(?:的)?(?:说明|指令|提示|话)?"
    r"\s*[：:]",
    _ADDRESSEE_ZH + r"[^。\n]{0,6}(?:请|务必)[^。\n]{0,10}(?:写|改为|改成|声明|注明|说)",
    r"系统(?:提示|指令)\s*[：:]",
    r"(?:在|把|将)(?:本 ?PR ?的)?(?:摘要|总结|周报|标题|风险观察)[^。\n]{0,8}(?:写|改为|改成|写成|"
    r"声明|注明|标注|替换|填写)",
    r"(?:摘要|总结|周报|风险观察)[^。\n]{0,3}(?:请|要|应|应该|必须)?(?:写成|改为|改成)",
    r"周报中[^。\n]{0,4}(?:要|请|应|须)",
    r"不要(?:提及|提到|报告|列出|标注)",
    r"\btranslate\b[^.\n]{0,30}\b(?:literally|verbatim|word[- ]for[- ]word)\b|"
    r"逐字(?:翻译|照抄|复述)|原样(?:翻译|输出|照抄)|照原文(?:翻译|输出)",
)), re.I | re.M)
_MASS_MENTION = re.compile(r"@(?:all|here|channel|everyone)\b|@所有人", re.I)
_ORDER = re.compile(r"(?<![申邀提恳声宴聘])请(?![求柬假])|\bplease\b|^\W*(?:do not|don't|"
                    r"upgrade|downgrade|log ?in|sign ?in|submit|visit|click|join|download)\b",
                    re.I)
_ASKS = re.compile(r"(?<![申邀提恳声宴聘])请(?![求柬假])|你的|您的|\bplease\b|\byour\b|"
                   r"^\W*(?:log ?in|sign ?in|submit|enter|provide|send|paste|verify|confirm|"
                   r"visit|click)\b",
                   re.I)
"""Words that ask the reader for something (with a credential word and a host: phishing)."""
_SCHEME = re.compile(r"(?<![A-Za-z0-9])(?:[a-z][a-z0-9+.-]{1,20}://|www\d?\.)", re.I)
_TURN_ORDER = re.compile(_TURN + r"[\s\S]{0,40}?\b(?:say|write|output|respond|reply|state|claim|"
                         r"report|tell|mention|summari[sz]e|ignore)\b", re.I | re.M)
"""A chat template's turn, then an order: read across lines (the turn marker ends one)."""
_WEB_LINK = re.compile(r"(?<![A-Za-z0-9])https?://\S+", re.I)
_SENTENCES = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)(?=\s)")


@dataclass(frozen=True)
class Screened:
    """A text with the sentences addressed to readers left out, and what was found."""

    text: str
    aimed: bool
    """It carries an instruction aimed at a model, or phishing."""
    left_out: int


def _to_all(text: str) -> bool:
    """Whether the text calls on a whole audience (`所有用户`, `all developers`, `@all`)."""
    return bool(GROUP.search(text) or _MASS_MENTION.search(text))


_FUNCTION_WORDS = frozenset(("the", "a", "an", "of", "and", "to", "in", "is", "are", "was",
                            "were", "for", "with", "on", "this", "that", "you", "your", "be",
                            "it", "not", "all", "as", "by", "from"))
_ROT13 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                       "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")


def _function_words(text: str) -> int:
    return sum(w in _FUNCTION_WORDS for w in re.findall(r"[a-z]+", text.casefold()))


def decoded(sentence: str) -> str | None:
    """The sentence as rot13 reads it, when that reads as English and the sentence as
    written does not (text encoded so that filters miss it); else None."""
    turned = sentence.translate(_ROT13)
    if _function_words(turned) >= 3 and _function_words(sentence) <= 1:
        return turned
    return None


def kind_of(sentence: str) -> Kind:
    """How one sentence of PR text is taken."""
    text = folded(sentence)
    if _TO_MODEL.search(text):
        return "model"
    plain = decoded(text)
    if plain is not None:
        return "model" if kind_of(plain) in ("model", "phishing") else "encoded"
    if CREDENTIAL.search(text) and (HURRY.search(text) or _to_all(text) or (
            _ASKS.search(text) and (HOST.search(text) or _SCHEME.search(text)
                                    or OBFUSCATED.search(text)))):
        return "phishing"
    if _to_all(text) or HURRY.search(text) or _ORDER.search(text) or CONTACT.search(text):
        return "reader"
    bare = _WEB_LINK.sub(" ", text)
    if OBFUSCATED.search(bare) or _SCHEME.search(bare) or any(
            "/" in host for host in HOST.findall(bare)):
        return "link"
    return "data"


def screen(text: str) -> Screened:
    """`text` without its reader-addressed sentences; `aimed` when any is worse."""
    if not text:
        return Screened(text="", aimed=False, left_out=0)
    kept: list[str] = []
    aimed = bool(_TURN_ORDER.search(folded(text)))
    left_out = 0
    for sentence in _SENTENCES.split(text):
        if not sentence.strip():
            kept.append(sentence)
            continue
        kind = kind_of(sentence)
        if kind == "data":
            kept.append(sentence)
            continue
        aimed = aimed or kind in ("model", "phishing")
        left_out += 1
    return Screened(text="".join(kept).strip(), aimed=aimed, left_out=left_out)


def pull_texts(pull: PullRequest) -> Iterable[str]:
    """Every text of a PR anyone could have written: title, body, comments, reviews."""
    yield pull.title
    yield pull.body or ""
    for comment in pull.comments or ():
        yield comment.body or ""
    for review in pull.reviews or ():
        yield review.body or ""
    for thread in pull.review_threads or ():
        for reply in thread.comments:
            yield reply.body or ""


def aimed_at_model(pull: PullRequest) -> bool:
    """Whether any text of the PR carries an instruction aimed at a model (or phishing):
    then the PR is narrated from the engine's facts only."""
    return any(screen(text).aimed for text in pull_texts(pull))
