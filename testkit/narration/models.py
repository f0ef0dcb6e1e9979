"""Scripted models for verl's week 29, answering through the fake endpoint:

- `strong`: a strong model's answer, every sentence faithful (the first round of the
  hand-written corpus, `testkit.narration.faithful`);
- `midsize`: the same answer with the six slips a 7B-14B model makes (a count of one
  thing given to another, `MB` for `MiB`, a PR summary that names another PR, an
  effect no data states, a wrong model version, a share of another type);
- `wrong`: thirteen plausible-but-wrong sentences put where a strong model writes
  (wrong counts, units, versions, authors, two PRs' changes swapped, shares swapped,
  wrong severities).

`reached` says which of a list of sentences any format of a digest shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.models import Digest
from bot.narrate.normal import visible
from testkit.narration.faithful import CORPUS, VERL, Line, corpus_answer


def strong_lines(lang: str) -> tuple[Line, ...]:
    return tuple(c for c in CORPUS if c.repo == VERL and c.lang == lang and c.round == 0)


@dataclass(frozen=True)
class Slip:
    """A sentence a model writes that its facts do not support, where it goes (it
    takes the place of the strong answer's sentence for that slot, or is added)."""

    line: Line
    kind: str


def _slip(lang: str, part: str, text: str, kind: str, pulls: tuple[int, ...] = (),
          key: int = 0, index: int = 0) -> Slip:
    return Slip(Line(VERL, lang, part, text, pulls, key, index), kind)


MIDSIZE: dict[str, tuple[Slip, ...]] = {
    "zh": (
        _slip("zh", "trends", "本周有 6 个 PR 修改了该文件。", "count of another thing"),
        _slip("zh", "pull", "#7061 新增 `save_lora_only`，27B 模型的 checkpoint 从约 54 GiB "
              "降到约 150 MB。", "unit", key=7061),
        _slip("zh", "pull", "#6836 和 #7014 修复了 MoE aux/z-loss 的梯度爆炸。",
              "another PR in a PR's summary", key=6836),
        _slip("zh", "pull", "#6974 新增稀疏权重同步引擎 `delta_sharded`，显著降低通信开销。",
              "effect no data states", key=6974),
        _slip("zh", "changes", "Megatron 方面共 2 个 PR：#6836 修复 CP>1 时的梯度爆炸，#6473 支持 "
              "DeepSeek V3 GRPO。", "version", (6836, 6473), 6473),
        _slip("zh", "summary", "按类型看，fix 类共 12 个，占 29%。", "share of another thing"),
    ),
    "en": (
        _slip("en", "trends", "This week 6 PRs changed that file.", "count of another thing"),
        _slip("en", "pull", "#7061 adds `save_lora_only`, cutting a 27B model's checkpoint "
              "from about 54 GiB to about 150 MB.", "unit", key=7061),
        _slip("en", "pull", "#6836 and #7014 fix the MoE aux/z-loss grad_norm blowup.",
              "another PR in a PR's summary", key=6836),
        _slip("en", "pull", "#6974 adds the sparse weight-sync engine `delta_sharded`, "
              "significantly reducing communication overhead.", "effect no data states",
              key=6974),
        _slip("en", "changes", "Megatron (2 PRs): #6836 fixes the grad blowup at CP>1 and #6473 "
              "supports DeepSeek V3 GRPO.", "version", (6836, 6473), 6473),
        _slip("en", "summary", "By type, fix has 12 PRs, 29% of the week.",
              "share of another thing"),
    ),
}

WRONG: dict[str, tuple[Slip, ...]] = {
    "zh": (
        _slip("zh", "trends", "ci 主题本周有 7 个 PR。", "count"),
        _slip("zh", "trends", "docs 主题本周有 3 个 PR。", "count"),
        _slip("zh", "trends", "`docs/index.rst` 本周被 4 个 PR 修改。", "count"),
        _slip("zh", "pull", "#7061 只保存 LoRA adapter 权重，27B 模型的 checkpoint 降到约 150 GB。",
              "unit", key=7061),
        _slip("zh", "pull", "#6974 新增 `delta_sharded`，每次同步只传输约 1–3 GiB 的参数。",
              "unit", key=6974),
        _slip("zh", "pull", "#6932 对 0.21.0 以下的 vLLM 默认关闭多模态处理器缓存。", "version",
              key=6932),
        _slip("zh", "changes", "Megatron 方面，#6473 支持 DeepSeek V3 GRPO。", "version", (6473,),
              6473),
        _slip("zh", "risk", "wuxibin89 在讨论中指出该改动只影响 NPU，合并前是否解决未记录。",
              "author", key=6932, index=1),
        _slip("zh", "summary", "#7037 由 Secbone 提交，让 dataloader 不再受 `train_batch_size` "
              "限制。", "author", (7037,)),
        _slip("zh", "summary", "#7061 新增 `delta_sharded`，#6974 只保存 LoRA adapter 权重。",
              "swapped PRs", (7061, 6974)),
        _slip("zh", "changes", "Rollout 推理方面，#7038 对 0.22.0 以下的 vLLM 默认关闭"
              "多模态处理器缓存，#6932 禁止策略采样 `<|image_pad|>`。", "swapped PRs",
              (7038, 6932), 7038),
        _slip("zh", "trends", "rollout 主题占 14%，trainer 占 18%。", "shares swapped"),
        _slip("zh", "summary", "本周有 3 项风险观察，其中 #7037 有 1 项高风险。", "severity",
              (7037,)),
    ),
    "en": (
        _slip("en", "trends", "The ci topic has 7 PRs this week.", "count"),
        _slip("en", "trends", "The docs topic has 3 PRs this week.", "count"),
        _slip("en", "trends", "`docs/index.rst` was changed by 4 PRs this week.", "count"),
        _slip("en", "pull", "#7061 saves only LoRA adapter weights, cutting a 27B model's "
              "checkpoint to about 150 GB.", "unit", key=7061),
        _slip("en", "pull", "#6974 adds `delta_sharded`, which sends only about 1–3 GiB of "
              "parameters per sync.", "unit", key=6974),
        _slip("en", "pull", "#6932 disables vLLM's multimodal processor cache by default below "
              "0.21.0.", "version", key=6932),
        _slip("en", "changes", "Megatron: #6473 supports DeepSeek V3 GRPO.", "version", (6473,),
              6473),
        _slip("en", "risk", "wuxibin89 notes in the conversation that the change only affects "
              "NPU; its resolution is not recorded.", "author", key=6932, index=1),
        _slip("en", "summary", "#7037, by Secbone, frees the dataloader from the "
              "`train_batch_size` limit.", "author", (7037,)),
        _slip("en", "summary", "#7061 adds `delta_sharded`, while #6974 saves only LoRA adapter "
              "weights.", "swapped PRs", (7061, 6974)),
        _slip("en", "changes", "Rollout: #7038 disables vLLM's multimodal processor cache below "
              "0.22.0, and #6932 stops the policy from sampling `<|image_pad|>`.",
              "swapped PRs", (7038, 6932), 7038),
        _slip("en", "trends", "rollout accounts for 14% of the PRs and trainer for 18%.",
              "shares swapped"),
        _slip("en", "summary", "There are 3 risk observations; #7037 has 1 of high severity.",
              "severity", (7037,)),
    ),
}


def with_slips(lang: str, slips: Sequence[Slip]) -> tuple[Line, ...]:
    """The strong answer with each slip in its slot: a PR's summary, a risk line or a
    theme's sentence is replaced, a summary or trends sentence added."""
    lines = list(strong_lines(lang))
    for slip in slips:
        s = slip.line
        if s.part in ("pull", "risk", "changes"):
            lines = [c for c in lines if not (c.part == s.part and c.key == s.key
                                              and c.index == s.index)]
        lines.append(s)
    return tuple(lines)


def answer(lines: Iterable[Line]) -> Any:
    """The model answering with `lines` (like the well-behaved fake elsewhere)."""
    return corpus_answer(tuple(replace(c, round=0) for c in lines), round=0)


_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)+")


def _norm(text: str) -> str:
    """Text without markup, spacing or a final stop, each path by its file name (the
    chat form names a file so)."""
    text = _PATH.sub(lambda m: m.group(0).rsplit("/", 1)[-1], visible(text))
    return "".join(text.replace("`", "").replace("\\", "").split()).rstrip("。.").casefold()


def reached(texts: Iterable[str], shown: Iterable[str]) -> list[str]:
    """Those of `texts` that any of `shown` (rendered formats) carries, compared without
    markup, spacing or the final stop; a sentence shown without the reference to its
    own PR it opens with (the chat's key-PR lines) counts too."""
    formats = [_norm(s) for s in shown]
    found = []
    for text in texts:
        whole = _norm(text)
        bare = _norm(text.split(" ", 1)[1]) if text.startswith("#") and " " in text else whole
        if any(whole in f or (len(bare) > 12 and bare in f) for f in formats):
            found.append(text)
    return found


def written(digest: Digest) -> int:
    """Sentences the model wrote for `digest`: shown, or dropped with a rule."""
    narration = digest.narration
    assert narration is not None
    return narration.sentences_dropped + sum(
        len(p.sentences) for p in narration.prose if p.section != "key_prs")
