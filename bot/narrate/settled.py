"""Whether a sentence says a concern is settled, or says it is still open.

The data never records that a review concern was dealt with (a thread the engine saw
resolved is no risk at all), so no narrated sentence may say so: not a risk line
("已在后续提交中修复", "was taken care of", "is a false positive"), not a week
sentence ("review 意见都已落实", "the concerns on #7037 were settled"). Phrases that
say a resolution is *not known* ("合并前是否解决未记录", "whether it was addressed is
not recorded") are taken out before settling words are looked for.

A risk line whose finding carries an open or unknown resolution must say so in its
own words (`states_open`): a line that drops the status is a softened one, whatever
words it softens with.
"""

from __future__ import annotations

import re

_UNSURE_ZH = re.compile(r"是否(?:已经|已|被)?(?:得到)?(?:解决|处理|修复|关闭|回应|采纳|落实)|"
                        r"(?:解决|处理)(?:情况|状态|与否)?(?:均|都)?(?:未|尚未|没有|尚无)"
                        r"(?:被)?(?:记录|知|确认|明确)")
_UNSURE_EN = re.compile(r"\b(?:whether|if)\b[^.;]{0,60}?\b(?:resolved|addressed|fixed|"
                        r"handled|closed|settled|answered|safe|fine|correct)\b|\b(?:resolved|addressed|fixed|"
                        r"handled)\b[^.;]{0,30}?\b(?:is|was|were|are)\s+(?:not recorded|"
                        r"unknown|unclear)", re.I)
_SETTLING_ZH = ("解决|修复|修正|改正|更正|落实|采纳|闭环|搞定|完毕|处理完|消除|关闭|排除|清零|"
                "清除|解除")
_SETTLED_ZH = re.compile(
    r"已(?:经)?(?:在|于|被|由|经|随)?[^，。；]{0,12}?(?:" + _SETTLING_ZH + ")|"
    r"已(?:经)?(?:被)?(?:处理|跟进|回应|答复|澄清|修改|更新|调整)|已确认无|确认无误|"
    r"得到(?:了)?(?:解决|处理|修复)|得以解决|无需(?:担心|关注|处理|跟进)|不需要(?:担心|关注|处理|跟进)|"
    r"不再(?:是|有|存在)|没有(?:风险|问题)|没问题|无问题|不是问题|无风险|可以忽略|可忽略|"
    r"不必(?:担心|关注)|放心|误报|不影响(?:使用|功能|结果)|没有影响|无影响|解决了|修复了|处理了|"
    r"(?:问题|风险|担忧|隐患)(?:实际上|其实)?(?:并)?不存在|实际上(?:并)?不存在|不成立|已(?:被)?回滚")
_SETTLED_EN = re.compile(
    r"\b(?:resolved|addressed|fixed|handled|mitigated|closed|settled|taken care of|dealt with|"
    r"no longer|not an? (?:real |actual )?(?:issue|concern|problem|risk)|"
    r"no (?:risks?|concerns?|issues?|impact)|safe to (?:ignore|merge)|can be ignored|"
    r"false (?:positive|alarm)|does(?:n't| not) apply|not applicable|nothing to worry|"
    r"works as (?:intended|expected)|harmless|benign|moot|non-issue|no longer relevant|"
    r"(?:was|were|has been|have been|got) reverted|(?:is|are|looks?|seems?)\s+(?:now\s+)?"
    r"(?:safe|fine)|(?:was|were|has been|have been|got)\s+(?:since\s+|already\s+)?(?:accepted|"
    r"adopted|incorporated)|(?:has|have)\s+(?:since|already)\s+(?:been\s+)?(?:updated|changed|"
    r"reworked|corrected|adjusted)|"
    r"already\s+(?:fixed|handled|addressed|resolved|done|updated))\b", re.I)
_ALL_SETTLED_ZH = re.compile(
    r"(?:风险|意见|讨论|评审|审查|review|concern|comment|问题)[^，。；]{0,12}(?:均|都|全部|全都)"
    r"(?:已经|已)?(?:被)?(?:" + _SETTLING_ZH + r"|处理|批准|通过|回应|答复)|"
    r"(?:风险|意见|讨论|评审|审查|review|concern|comment|建议|反馈)[^，。；]{0,12}(?:已经|已)"
    r"[^，。；]{0,10}?(?:" + _SETTLING_ZH + r"|处理|批准|回应|答复)|"
    r"所有[^，。；]{0,10}(?:已经|已|均)(?:被)?(?:解决|处理|关闭|消除|清零|清除|解除)|"
    r"(?:没有|无|不存在)(?:任何)?(?:风险|隐患)", re.I)
_ALL_SETTLED_EN = re.compile(
    r"\b(?:all|every|each)\b[^.;]{0,20}\b(?:risks?|concerns?|reviews?|comments?|"
    r"threads?|issues?|findings?)\b[^.;]{0,30}\b(?:resolved|addressed|fixed|approved|"
    r"closed|cleared|settled)\b|\b(?:risks?|concerns?|reviews?|comments?|threads?|"
    r"findings?|feedback|questions?)\b[^.;]{0,40}?\b(?:were|was|are|is|have been|has been|got)"
    r"\s+(?:all\s+|since\s+|already\s+)?(?:resolved|addressed|fixed|settled|handled|closed|"
    r"cleared|answered|taken care of|dealt with|incorporated|adopted|applied|accepted)\b|"
    r"\bno (?:open |outstanding |remaining )?(?:risks?|concerns?)\b|\brisk-free\b", re.I)

_OPEN_ZH = re.compile(
    r"未记录|(?:没有|尚无|暂无|并无|无)[^，。；]{0,6}记录|尚无|未知|不明|不清楚|尚未|仍未|未解决|未处理|未回应|未答复|待确认|"
    r"待跟进|待处理|有待|仍需|需要?(?:跟进|确认|复查|核实|关注|留意|检查)|悬而未决|"
    r"是否(?:已经|已|被)?(?:得到)?(?:解决|处理|修复|回应)")
_OPEN_EN = re.compile(
    r"\b(?:not recorded|no recorded|unrecorded|unknown|unclear|not known|unresolved|"
    r"still open|left open|remains? open|outstanding|pending|open question|"
    r"needs? (?:a |an )?(?:follow-?up|check|confirmation|review|attention|answer)|"
    r"follow-?up|to be confirmed|no resolution|"
    r"not (?:been )?(?:resolved|addressed|answered))\b|"
    r"\b(?:whether|if)\b[^.;]{0,60}?\b(?:resolved|addressed|fixed|handled|answered)\b", re.I)


def settles(prose: str, *, risk: bool) -> bool:
    """Whether `prose` says a concern was settled: for a risk line any word that closes
    or softens it, for any sentence that the week's risks or reviews were dealt with."""
    rest = _UNSURE_EN.sub(" ", _UNSURE_ZH.sub(" ", prose))
    if risk and (_SETTLED_ZH.search(rest) or _SETTLED_EN.search(rest)):
        return True
    return bool(_ALL_SETTLED_ZH.search(rest) or _ALL_SETTLED_EN.search(rest))


def states_open(prose: str) -> bool:
    """Whether a risk line says its concern is open or that its resolution is unknown."""
    return bool(_OPEN_ZH.search(prose) or _OPEN_EN.search(prose))
