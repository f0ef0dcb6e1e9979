"""Each key PR's item in the compact chat form carries the button of the PR it names: a
key PR whose title says too little (`feat: 国际化`) gives way in the list, and its
button gives way with it (the first item named #1203 and opened #1206)."""

from __future__ import annotations

import msgspec

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.models import ChatForm, Lang, Snapshot
from bot.render.document import Items, PullRef
from bot.render.layouts import digest_document
from testkit.pulls import merged_pull


def _items_and_buttons(lang: Lang, style: str) -> list[tuple[int, str]]:
    pulls = (merged_pull(1, "feat: 国际化", ("src/intl/locale.ts",), lines=500),
             merged_pull(2, "feat(chart): support stacked bar charts with labels",
                         ("src/chart/bar.ts",), lines=400),
             merged_pull(3, "fix(table): keep the header row sticky while scrolling",
                         ("src/table/head.ts",), lines=300))
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)
    digest = msgspec.structs.replace(digest, chat_form=ChatForm(style=style))
    found = []
    for block in digest_document(digest).blocks:
        if isinstance(block, Items):
            for item in block.items:
                if item.button is not None:
                    refs = [s.number for s in item.line if isinstance(s, PullRef)]
                    text = "".join(getattr(s, "text", "") or getattr(s, "label", "")
                                   for s in item.line)
                    found.append((refs[0] if refs else int(text.split("#")[1].split()[0]),
                                  item.button.url))
    return found


def test_each_key_item_opens_the_pr_it_names() -> None:
    for lang in ("zh", "en"):
        for style in ("compact", "full"):
            pairs = _items_and_buttons(lang, style)  # type: ignore[arg-type]
            assert pairs, (lang, style)
            assert all(url.endswith(f"/pull/{n}") for n, url in pairs), (lang, style, pairs)
