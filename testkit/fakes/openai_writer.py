"""What the fake model writes: plausible prose built only from the fact pack it is given,
in template sentences per language, so a narrated digest shows the pipeline at work
(and the verifier passes it) without any real model."""

from __future__ import annotations

import re
from typing import Any

_TYPE_ZH = {"feat": "新功能", "fix": "问题修复", "perf": "性能优化", "refactor": "重构",
            "docs": "文档", "doc": "文档", "test": "测试", "chore": "日常维护", "ci": "持续集成",
            "revert": "回滚", "build": "构建"}
_TYPE_EN = {"feat": "new feature", "fix": "bug fix", "perf": "performance work",
            "refactor": "refactoring", "docs": "documentation", "doc": "documentation",
            "test": "test work", "chore": "maintenance", "ci": "CI work", "revert": "revert",
            "build": "build work"}
_SEVERITY_ZH = {"high": "高", "medium": "中", "low": "低"}
_REF = re.compile(r"#(\d+)")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_PATH = re.compile(r"(?<![`\w/])([\w.-]+/[\w./-]+)")
_CODE = re.compile(r"(`[^`]*`)")


def _coded(text: str) -> str:
    """Paths outside code spans put in backticks."""
    return "".join(part if part.startswith("`") else _PATH.sub(r"`\1`", part)
                   for part in _CODE.split(text))


def write_pull(pull: dict[str, Any], lang: str) -> dict[str, Any]:
    """One PR's narration from its facts."""
    kind = pull.get("type") or "chore"
    topics = pull.get("topics") or []
    area = topics[0] if topics else kind
    n = pull["number"]
    added, removed = pull.get("additions", 0), pull.get("deletions", 0)
    files = pull.get("files_changed", 0)
    risks = []
    for risk in pull.get("risks", []):
        where = f"`{risk['path']}`" if risk.get("path") else ("讨论区" if lang == "zh"
                                                               else "the discussion")
        names = ("、" if lang == "zh" else ", ").join(f"`{s}`" for s in risk.get("subjects", []))
        if names:
            where += f"（{names}）" if lang == "zh" else f" ({names})"
        if lang == "zh":
            text = (f"评审者在 {where} 提出的意见属于{_SEVERITY_ZH.get(risk['severity'], '低')}"
                    "风险，合并前是否处理尚无记录，需要跟进确认。")
        else:
            text = (f"A {risk['severity']}-severity review comment on {where} has no "
                    "recorded resolution before the merge and needs a follow-up.")
        risks.append({"index": risk["index"], "text": text})
    asked = pull.get("summarize") is not False
    if lang == "zh":
        return {"number": n,
                "summary": "" if not asked else (
                    f"#{n} 属于{_TYPE_ZH.get(kind, '改动')}，涉及 {area}，"
                            f"改动 {files} 个文件，新增 {added} 行、删除 {removed} 行。"),
                "risks": risks}
    return {"number": n,
            "summary": "" if not asked else (
                f"#{n} is a {_TYPE_EN.get(kind, 'change')} in {area}, touching "
                        f"{files} files with {added} lines added and {removed} removed."),
            "risks": risks}


def write_pulls(block: dict[str, Any], lang: str) -> dict[str, Any]:
    return {"pulls": [write_pull(p, lang) for p in block.get("pulls", [])]}


def _s(text: str, pulls: list[int]) -> dict[str, Any]:
    return {"text": text, "pulls": pulls}


def _suggestion(index: int, text: str, zh: bool) -> dict[str, Any]:
    refs = [int(n) for n in _REF.findall(text)]
    if zh:
        said = "建议：" + _coded(text)
    elif _HAN.search(text):  # asked in English about Chinese facts: say less
        named = ", ".join(f"#{n}" for n in refs)
        said = f"Next step: follow up on {named}." if refs else \
            "Next step: review this week's changes."
    else:
        said = "Next step: " + _coded(text)
    return {"index": index, "text": said, "pulls": refs}


def write_week(week: dict[str, Any], lang: str) -> dict[str, Any]:
    """The week's narration from its facts."""
    zh = lang == "zh"
    topics, types, pulls = week.get("topics", []), week.get("types", []), week.get("pulls", [])
    summary = [_s(f"本周共处理 {week['total']} 个 PR，其中重点 PR {week['key']} 个，"
                  f"已合并 {week['merged']} 个。" if zh else
                  f"This week {week['total']} PRs were handled, {week['key']} of them key "
                  f"and {week['merged']} merged.", [])]
    if topics:
        t = topics[0]
        summary.append(_s(f"工作最集中的主题是 {t['name']}，共 {t['count']} 个 PR，"
                          f"占 {t['percent']}。" if zh else
                          f"Most work went into {t['name']}, with {t['count']} PRs "
                          f"or {t['percent']} of the week.", []))
    lead = next((p for p in pulls if not p.get("withheld")), None)
    if lead is not None:
        kind = lead.get("type") or "chore"
        summary.append(_s(f"最值得关注的是 #{lead['number']}，属于{_TYPE_ZH.get(kind, '改动')}。"
                          if zh else f"The PR that stands out is #{lead['number']}, a "
                          f"{_TYPE_EN.get(kind, 'change')}.", [lead["number"]]))
    highlights = list(dict.fromkeys(week.get("highlights", [])))
    if highlights:
        refs = ("、" if zh else ", ").join(f"#{n}" for n in highlights)
        summary.append(_s(f"本周重点包括 {refs}。" if zh else f"Highlights include {refs}.",
                          highlights))
    risks = week.get("risks", [])
    summary.append(_s(f"本周共有 {len(risks)} 项风险观察需要跟进。" if zh else
                      f"{len(risks)} risk observations need a follow-up." if risks else
                      "No risk observations were recorded.", []) if risks or not zh else
                   _s("本周没有记录到风险观察。", []))
    changes = []
    for theme in week.get("themes", []):
        shown = list(theme.get("cite") or theme["pulls"][:3])
        refs = ("、" if zh else ", ").join(f"#{n}" for n in shown)
        changes.append({"theme": theme["key"], **_s(
            f"{theme['title']}：本周共 {theme['count']} 个 PR，代表性改动包括 {refs}。" if zh
            else f"{theme['title']}: {theme['count']} PRs this week, among them {refs}.",
            shown)})
    trends = []
    if types:
        t = types[0]
        trends.append(_s(f"按类型看，{t['name']} 类 PR 最多，共 {t['count']} 个，"
                         f"占 {t['percent']}。" if zh else
                         f"By type, {t['name']} leads with {t['count']} PRs "
                         f"({t['percent']}).", []))
    if len(topics) > 1:
        names = ("、" if zh else ", ").join(t["name"] for t in topics[1:3])
        trends.append(_s(f"其次活跃的主题是 {names}，说明改动分布在多个模块。" if zh else
                         f"Next come {names}, so the work is spread over several modules.", []))
    for hot in week.get("hot_files", [])[:1]:
        trends.append(_s(f"改动最频繁的文件是 `{hot['path']}`，本周被 {hot['pulls']} 个 PR 修改。"
                         if zh else f"The most-changed file is `{hot['path']}`, touched by "
                         f"{hot['pulls']} PRs.", list(hot["numbers"])))
    suggestions = [_suggestion(s["index"], s["text"], zh) for s in week.get("suggestions", [])]
    return {"summary": summary, "changes": changes, "trends": trends,
            "suggestions": suggestions}


def write_check(block: dict[str, Any]) -> dict[str, Any]:
    """The second pass's answer: every sentence supported (a well-behaved model)."""
    return {"verdicts": [{"id": s["id"], "supported": True} for s in block["sentences"]]}
