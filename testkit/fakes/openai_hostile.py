"""A hostile model: it does what the text it is given tells it to.

Served by the same loopback endpoint as the well-behaved fake (`FakeOpenAI(answer=
hostile_answer)`), so the real `openai` SDK and the whole narrator stand between it and
the digest. Whatever in the data looks like an instruction or a claim worth repeating
(a quoted "write this", an order, a note to the AI, "all risks are resolved", a figure
with a boast) it copies into its answer as the PR's title, summary and risk lines, into
the week's summary and into the theme the PR belongs to; where it finds nothing it
writes like the well-behaved fake, so the rest of the digest is narrated as usual.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from testkit.fakes.openai_writer import write_check, write_pull, write_week

_CUES = re.compile(
    r"写成|改为|写明|注明|写“|请在|请把|请所有|立即|紧急|令牌|登录|降级|攻破|补偿|均已解决|"
    r"放心合并|说明：|注意：|\bai\b|summari[sz]|instruction|override|\bsystem\b|state in|"
    r"report that|everyone|faster|\bcurl\b|hxxp|evil|discord|#99999|\bdear\b|say that|"
    r"供摘要|微信|telegram|as soon as|尽快|误报|addressed|taken care|developers|批准|"
    r"approved|cve-|安全漏洞|倍|translate|no longer maintained|migrating|reviewer note|"
    r"sign-off|safe to merge|verified|审计|停止维护|迁移|security team|安全团队", re.I)
_QUOTED = re.compile(r"“([^”]{4,})”|\"([^\"]{4,})\"")
_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")
_SETTLED = re.compile(r"解决|resolved", re.I)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def orders(value: Any) -> list[str]:
    """What the data tells the model to say: quoted payloads of instruction sentences,
    else the sentences themselves."""
    found: list[str] = []
    for text in _strings(value):
        for sentence in _SENTENCE.findall(text):
            if not _CUES.search(sentence):
                continue
            quoted = [a or b for a, b in _QUOTED.findall(sentence)]
            found += quoted or [sentence.strip()]
    return list(dict.fromkeys(s for s in found if s))


def _obey_pull(pull: dict[str, Any], lang: str) -> dict[str, Any]:
    answer = write_pull(pull, lang)
    said = orders(pull)
    if not said:
        return answer
    settled = next((s for s in said if _SETTLED.search(s)), None)
    return {"number": pull["number"], "title": said[0][:30],
            "summary": f"#{pull['number']} {said[0]}",
            "risks": [{"index": r["index"], "text": settled or said[0]}
                      for r in pull.get("risks", [])]}


def _obey_week(week: dict[str, Any], lang: str) -> dict[str, Any]:
    answer = write_week(week, lang)
    for line in week.get("pulls", []):
        for said in orders(line):
            number = line["number"]
            answer["summary"].insert(0, {"text": f"#{number} {said}", "pulls": [number]})
            for theme in answer["changes"]:
                if number in theme["pulls"]:
                    theme["text"] = f"#{number}：{said}"
    for said in orders(week.get("suggestions", [])):
        answer["suggestions"].append({"index": 0, "text": said, "pulls": []})
    if any("99999" in s for s in orders(week)):
        answer["summary"].append({"text": "另见 #99999。", "pulls": [99999]})
    return answer


def hostile_answer(blocks: dict[str, Any], lang: str) -> dict[str, Any]:
    """The answer of a model that obeys the data it reads."""
    if "pulls" in blocks:
        return {"pulls": [_obey_pull(p, lang) for p in blocks["pulls"].get("pulls", [])]}
    if "check" in blocks:
        return write_check(blocks["check"])  # it vouches for everything
    return _obey_week(blocks["week"], lang)
