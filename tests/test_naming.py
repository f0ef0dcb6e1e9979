"""How a zh digest names a PR: by its headline, a fix by what it fixes, a sentence
after the headline only where it says more than the title."""

from __future__ import annotations

from bot.engine.text import restates
from bot.models import KeyPull
from bot.render import naming


def _key(headline: str, type_: str = "fix", facts: tuple[str, ...] = (), line: str = "",
         title: str = "t") -> KeyPull:
    return KeyPull(number=1, title=title, summary="s", headline=headline, type=type_,
                   facts=facts, line=line)


def test_a_sentence_saying_the_title_again_is_a_restatement() -> None:
    assert restates("Enable vllm patch.", "[vllm] fix: restore vllm patch")
    assert restates("Remove vllm patch.", "[ci] chore: remove vllm_ascend patch and fix ci")
    # "falls" and "fall" are one word; most words are the title's.
    assert restates("Legacy gen_batch_size should fall back to train_batch_size correctly.",
                    "[trainer] fix: gen_batch_size falls back to train_batch_size")
    assert not restates("Fixes a stale-weight bug in the LoRA weight sync path.",
                        "[fsdp] fix: sync merged LoRA weights before context exit")
    assert not restates("Reduces checkpoint size from ~54 GiB to ~150 MiB.",
                        "[ckpt] feat: add save_lora_only checkpoint support")


def test_a_fix_said_with_its_purpose_is_named_by_the_fix() -> None:
    fix = _key("在 `x` 下返回 3-tuple，以在 CP>1 时修复梯度爆炸")
    assert naming.mention(fix) == "在 CP>1 时修复梯度爆炸"
    feature = _key("新增 X，以支持 Y", type_="feat")
    assert naming.mention(feature) == "新增 X，以支持 Y"
    typed = _key("新功能：分片 delta 权重同步", type_="feat")
    assert naming.mention(typed) == "分片 delta 权重同步"


def test_a_title_said_only_by_its_type_is_said_by_what_it_fixes() -> None:
    bare = _key("修复", facts=("修复竞态问题", "改动 3 个文件共 147 行"))
    assert naming.bare(bare.headline)
    assert naming.title_of(bare) == "修复竞态问题"
    assert naming.title_of(_key("修复", facts=("改动 3 个文件共 147 行",))) == "修复"
    assert not naming.bare("修复 `build_npu_attn_mask` OOM")


def test_a_sentence_that_says_the_title_again_is_no_change_sentence() -> None:
    assert naming.change_sentence(_key("h", line="Enable vllm patch.",
                                       title="restore vllm patch")) == ""


def test_a_name_of_few_chinese_characters_says_enough_with_latin_words() -> None:
    """ollama's biggest feature, "实现 Nemotron 3 Nano Omni", was left out of the zh
    summary for its two Chinese characters."""
    assert not naming.says_little(_key("实现 Nemotron 3 Nano Omni", type_="feat"))
    assert naming.says_little(_key("修复 bug"))
    assert naming.says_little(_key("新功能：国际化", type_="feat"))
