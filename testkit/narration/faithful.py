"""A corpus of faithful sentences about verl's and vllm's week 29, written by hand in
Chinese and English: every figure, name and identifier in each is in the data of the
PRs (or the week's counts) it cites. The verifier must keep them (at least 95%).

They cover what real prose does: date ranges ("7 月 13 日至 19 日"), shares, units
(GiB, MiB, 行), thousands separators, Chinese numerals ("十二个", "两个"), code spans
(`<|image_pad|>`, `__init__.py`), bare identifiers, full-width punctuation, PR
references a body makes (#6853), English titles quoted in Chinese and Chinese titles
in English.

`corpus_answer` is a scripted model that answers with these sentences where it has
them (and like the well-behaved fake elsewhere); `kept` says which reached a digest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.models import Digest
from bot.narrate.normal import visible
from testkit.fakes.openai import write_answer


@dataclass(frozen=True)
class Line:
    """One sentence: `part` is where it goes (summary, trends, changes, suggestion,
    pull, risk); `key` the PR it is about (pull, risk), a PR of its theme (changes) or
    its suggestion's index; `index` a risk's index in its PR. A digest holds one
    sentence per slot and a few per section, so the corpus is told in `ROUNDS`."""

    repo: str
    lang: str
    part: str
    text: str
    pulls: tuple[int, ...] = ()
    key: int = 0
    index: int = 0
    round: int = 0


VERL, VLLM = "verl-project/verl", "vllm-project/vllm"


def _lines(repo: str, lang: str, *rows: tuple[Any, ...], round: int = 0) -> tuple[Line, ...]:
    return tuple(Line(repo, lang, *row, round=round) for row in rows)


VERL_ZH = _lines(
    VERL, "zh",
    ("summary", "本周（7 月 13 日至 19 日）共合并 28 个 PR，其中 24 个为重点 PR。"),
    ("summary", "改动主要集中在 ci、rollout 和 trainer，ci 相关 PR 占 29%。"),
    ("summary", "按类型看，fix 类共十二个，占 43%，feat 有 7 个，chore 有 6 个。"),
    ("summary", "本周有 3 项风险观察，分别来自 #7037 和 #6932。", (7037, 6932)),
    ("summary", "重点新功能包括 #7061 的 `save_lora_only` 和 #6974 的 `delta_sharded`。",
     (7061, 6974)),
    ("trends", "rollout 主题有 6 个 PR，占 21%；trainer 有 4 个，占 14%。"),
    ("trends", "改动最频繁的文件是 `verl/workers/rollout/vllm_rollout/vllm_async_server.py`，"
               "共被 5 个 PR 修改。"),
    ("trends", "`.github/workflows/nightly_ascend.yml` 与 `docs/index.rst` 各被 3 个 PR 修改。"),
    ("trends", "ckpt 主题本周有 3 个 PR，其中包括 #7061 和 #6974。", (7061, 6974)),
    ("changes", "Rollout 推理方面共 6 个 PR：#7038 禁止策略采样 `<|image_pad|>` 和 "
                "`<|video_pad|>`，#6932 对 0.22.0 以下的 vLLM 默认关闭多模态处理器缓存。",
     (7038, 6932), 7038),
    ("changes", "CI 方面共 8 个 PR，#7035 更新了 ascend CI 的 docker tag，"
                "#7042 移除了 vllm_ascend 补丁。", (7035, 7042), 7035),
    ("changes", "ckpt 新功能有两个 PR：#7061 只保存 LoRA 权重，可将 27B 模型的 checkpoint "
                "从约 54 GiB 降到约 150 MiB。", (7061,), 7061),
    ("changes", "其他改动共 3 个 PR，其中 #7014 在退出上下文前同步合并后的 LoRA 权重。", (7014,),
     7014),
    ("changes", "训练器方面共 3 个 PR：#7075 修正 rollout MoE 负载均衡指标的系统性偏差，"
                "#7051 让 `gen_batch_size` 回退到 `train_batch_size`。", (7075, 7051), 7075),
    ("changes", "Megatron 方面共 2 个 PR：#6836 修复 CP>1 时 MoE aux/z-loss 的梯度爆炸，"
                "#6473 支持 DeepSeek V4 GRPO。", (6836, 6473), 6473),
    ("changes", "#7024 重构了 NPU 的 profiling 文档，新增了一个快速上手示例。", (7024,), 7024),
    ("changes", "构建与环境方面，#7028 把 Qwen3.5 的 Dockerfile 从 0.8.0 分支同步到 main，#7039 "
                "在 sglang 的 docker 环境中加入 megatron-bridge。", (7028, 7039), 7039),
    ("suggestion", "确认 #7037 在 `verl/trainer/ppo/v1/trainer_base.py` 上关于 "
                   "`_reissue_inflight_prompts` 的 review 意见是否已处理。", (7037,), 0),
    ("suggestion", "在配置文档中补充 #7037 新增的 `data.gen_batch_size` 及其默认值。",
     (7037,), 2),
    ("suggestion", "在配置文档中写明 #7061 新增的 save_lora_only 选项，并确认默认值。",
     (7061,), 3),
    ("suggestion", "`verl/workers/rollout/vllm_rollout/vllm_async_server.py` 本周被 5 个 PR "
                   "修改，建议补充测试并留意相互冲突的改动。", (), 4),
    ("suggestion", "修复类 PR 占本周的 43%（12 个），建议确认 #6932、#7055 和 #7014 都补充了"
                   "回归测试。", (6932, 7055, 7014), 5),
    ("pull", "#7037 让 dataloader 可向生成阶段补充任意数量的 prompt，不再受 "
             "`train_batch_size` 限制，并支持 resume 后重启未完成的 prompt。", (), 7037),
    ("pull", "#7061 新增 `save_lora_only`，只保存 LoRA adapter 权重，27B 模型的 checkpoint "
             "从约 54 GiB 降到约 150 MiB。", (), 7061),
    ("pull", "#6974 新增稀疏权重同步引擎 `delta_sharded`，每次同步只传输约 1–3% 发生变化的"
             "参数字节。", (), 6974),
    ("pull", "#6836 在 CP>1 时让 Megatron 引擎的 loss 路径返回三元组，修复 z/aux loss 的 "
             "grad_norm 爆炸。", (), 6836),
    ("pull", "#7038 在 vLLM rollout 中禁止策略采样 `<|image_pad|>` 和 `<|video_pad|>`，"
             "避免视觉占位 token 与 `image_grid_thw` 的配对被破坏，并修复 #5817。", (), 7038),
    ("pull", "#6932 对 0.22.0 以下的 vLLM 默认关闭多模态处理器缓存，避免 pause/resume 时"
             "缓存不同步。", (), 6932),
    ("risk", "gemini-code-assist[bot] 指出 `verl/trainer/ppo/v1/trainer_base.py` 中 "
             "`_reissue_inflight_prompts` 调用 `tq.kv_batch_put` 时未传 `fields` 参数，"
             "合并前是否解决未记录。", (), 7037, 0),
    ("risk", "wuxibin89 建议把 `verl/workers/config/rollout.py` 中的改动移到 "
             "vllm_async_server，合并前是否处理未记录。", (), 6932, 0),
    ("risk", "tardis-key 在讨论中指出该改动只影响 NPU，并询问问题是否只出现在 NPU 上，合并前"
             "是否解决未记录。", (), 6932, 1),
)

VERL_EN = _lines(
    VERL, "en",
    ("summary", "From July 13 to 19, 28 PRs were merged, 24 of them key."),
    ("summary", "Most of the work went into ci, rollout and trainer; ci alone accounts for 29% "
                "of the PRs."),
    ("summary", "By type, fix leads with twelve PRs (43%), followed by feat and chore with "
                "7 each."),
    ("summary", "There are 3 risk observations, on #7037 and #6932.", (7037, 6932)),
    ("summary", "The notable features are `save_lora_only` in #7061 and `delta_sharded` in "
                "#6974.", (7061, 6974)),
    ("trends", "rollout has 6 PRs (21%) and trainer 4 (14%)."),
    ("trends", "The most-changed file is `verl/workers/rollout/vllm_rollout/vllm_async_server.py`, "
               "touched by 5 PRs."),
    ("trends", "`.github/workflows/nightly_ascend.yml` and `docs/index.rst` were each changed "
               "by 3 PRs."),
    ("trends", "The ckpt topic has 3 PRs this week, among them #7061 and #6974.", (7061, 6974)),
    ("changes", "Rollout (6 PRs): #7038 stops the policy from sampling "
                "`<|image_pad|>` and `<|video_pad|>`, and #6932 disables vLLM's multimodal "
                "processor cache below 0.22.0.", (7038, 6932), 7038),
    ("changes", "CI (8 PRs): #7035 updates the Ascend CI docker tag and "
                "#7042 removes the vllm_ascend patch.", (7035, 7042), 7035),
    ("changes", "New ckpt features (2 PRs): #7061 saves only LoRA adapter weights, shrinking a "
                "27B model's checkpoint from about 54 GiB to about 150 MiB.", (7061,), 7061),
    ("changes", "Other changes (3 PRs): #7014 syncs merged LoRA weights before the context "
                "exits.", (7014,), 7014),
    ("changes", "Trainer (3 PRs): #7075 removes a systematic bias in the rollout MoE "
                "load-balance metrics introduced in #6853, and #7051 makes `gen_batch_size` "
                "fall back to `train_batch_size`.", (7075, 7051), 7075),
    ("changes", "Megatron (2 PRs): #6836 fixes the z/aux-loss grad_norm blowup at CP>1 and "
                "#6473 supports DeepSeek V4 GRPO.", (6836, 6473), 6473),
    ("changes", "#7024 reworks the NPU profiling docs and adds a quick start case.", (7024,),
     7024),
    ("changes", "Build and environment: #7028 syncs the Qwen3.5 Dockerfile from the 0.8.0 "
                "branch to main and #7039 adds megatron-bridge to the sglang docker env.",
     (7028, 7039), 7039),
    ("suggestion", "Confirm whether the review concern on `_reissue_inflight_prompts` in #7037 "
                   "(`verl/trainer/ppo/v1/trainer_base.py`) was addressed.", (7037,), 0),
    ("suggestion", "Document `data.gen_batch_size`, added by #7037, and check its default.",
     (7037,), 2),
    ("suggestion", "Document save_lora_only, added by #7061, in the configuration reference.",
     (7061,), 3),
    ("suggestion", "Add tests around `verl/workers/rollout/vllm_rollout/vllm_async_server.py`, "
                   "changed by 5 PRs this week, and watch for conflicting changes.", (), 4),
    ("suggestion", "Bug fixes are 43% of the week (12 PRs): make sure #6932, #7055 and #7014 "
                   "each come with a regression test.", (6932, 7055, 7014), 5),
    ("pull", "#7037 lets the dataloader feed any number of prompts to generation without the "
             "`train_batch_size` limit, and restarts pending prompts after a resume.", (), 7037),
    ("pull", "#7061 adds `save_lora_only`, which saves only LoRA adapter weights and cuts a 27B "
             "model's checkpoint from ~54 GiB to ~150 MiB.", (), 7061),
    ("pull", "#6974 adds `delta_sharded`, a sparse weight-sync engine that sends only the ~1–3% "
             "of parameter bytes that change between syncs.", (), 6974),
    ("pull", "#6836 makes the Megatron loss path return a 3-tuple when "
             "`calculate_per_token_loss` is on, fixing the grad_norm explosion at CP>1.", (),
     6836),
    ("pull", "#7038 stops the policy from sampling `<|image_pad|>` and `<|video_pad|>` during "
             "vLLM rollout, which broke the pairing with `image_grid_thw`.", (), 7038),
    ("pull", "#6932 disables vLLM's multimodal processor cache by default below 0.22.0 to "
             "avoid a cache desync across pause/resume.", (), 6932),
    ("risk", "gemini-code-assist[bot] notes that `_reissue_inflight_prompts` in "
             "`verl/trainer/ppo/v1/trainer_base.py` calls `tq.kv_batch_put` without `fields`; "
             "whether this was resolved before the merge is not recorded.", (), 7037, 0),
    ("risk", "wuxibin89 suggested moving the change in `verl/workers/config/rollout.py` into "
             "the vLLM async server; its resolution is not recorded.", (), 6932, 0),
    ("risk", "tardis-key notes in the conversation that the change only affects NPU and asks "
             "whether the issue exists only there; its resolution is not recorded.", (), 6932, 1),
)

VLLM_ZH = _lines(
    VLLM, "zh",
    ("summary", "本周共合并 222 个 PR，其中重点 PR 30 个。"),
    ("summary", "rocm 与 ci 是最活跃的主题，分别有 33 个和 28 个 PR，占 15% 和 13%。"),
    ("summary", "按类型看，fix 最多，共 71 个，占 32%；feat 有 45 个。"),
    ("summary", "本周有 3 项风险观察，来自 #48583 和 #47782。", (48583, 47782)),
    ("summary", "安全方面有三个修复：#48583、#47595 和 #44549。", (48583, 47595, 44549)),
    ("trends", "`vllm/v1/worker/gpu_model_runner.py` 本周被 9 个 PR 修改，是改动最频繁的文件。"),
    ("trends", "`tests/models/registry.py` 和 "
               "`vllm/model_executor/layers/attention/mla_attention.py` 各被 8 个 PR 修改。"),
    ("trends", "model 主题有 29 个 PR，rust-frontend 有 8 个，xpu 有 7 个。"),
    ("changes", "安全修复共 3 个：#48583 修复绕过 CVE 修补的稀疏不变量竞争，#47595 为 "
                "lm-format-enforcer 的正则编译加上超时。", (48583, 47595), 48583),
    ("changes", "模型主题共 28 个 PR，其中 #48799、#48869 和 #48884 分别为 Inkling 加入模型、"
                "MTP=1 与 LoRA 支持。", (48799, 48869, 48884), 48799),
    ("changes", "ROCm 方面共 33 个 PR，#40977 新增 `HybridW4A16LinearKernel`，#47287 为 "
                "MiniMax-M3 加入 AITER 稀疏 paged attention。", (40977, 47287), 40977),
    ("changes", "#48596 在请求结束时 offload 最后一个 block，并防止复用时的竞争。", (48596,),
     48596),
    ("suggestion", "确认 #48583 在 `vllm/utils/sparse_utils.py` 上关于 "
                   "`torch.sparse.check_sparse_tensor_invariants()` 的 review 意见是否已处理。",
     (48583,), 0),
    ("suggestion", "`vllm/v1/worker/gpu_model_runner.py` 本周被 9 个 PR 修改，建议补充测试并"
                   "留意冲突。", (), 2),
    ("pull", "#48583 修复并发下绕过 CVE 修补的稀疏不变量竞争，改动 5 个文件，新增 298 行、"
             "删除 13 行。", (), 48583),
    ("pull", "#47595 为 lm-format-enforcer 的正则编译加上超时保护，只改动 "
             "`vllm/v1/structured_output/backend_lm_format_enforcer.py` 一个文件。", (), 47595),
    ("pull", "#44549 替换 diskcache，消除 pickle 反序列化，改动 7 个文件。", (), 44549),
    ("pull", "#48481 修复混合注意力模型在 PD 异步调度下的竞争条件，改动 4 个文件"
             "（+158/-7 行）。", (), 48481),
    ("pull", "#48596 在请求结束时 offload 最后一个 block，防止 block 复用时出现竞争，改动 "
             "3 个文件。", (), 48596),
    ("pull", "#40977 新增 `HybridW4A16LinearKernel`，用 Triton 做 prefill、用 HIP skinny "
             "kernel 做 decode，新增 2,165 行代码。", (), 40977),
    ("risk", "DarkLight1337 建议把 `vllm/utils/sparse_utils.py` 中的 "
             "`torch.sparse.check_sparse_tensor_invariants()` 包进一个带锁的 context manager，"
             "合并前是否解决未记录。", (), 48583, 0),
    ("risk", "DarkLight1337 建议将 `vllm/utils/sparse_utils.py` 里的函数改名为 "
             "`check_sparse_tensor_invariants_threadsafe`，是否已处理未记录。", (), 48583, 1),
    ("risk", "ivanium 询问该改动与 chunked prefill 如何配合，并担心 "
             "`request.shared_prefix_boundary` 一带的处理会破坏 marconi 式缓存，合并前是否解决"
             "未记录。", (), 47782, 0),
)

VLLM_EN = _lines(
    VLLM, "en",
    ("summary", "This week 222 PRs were merged, 30 of them key."),
    ("summary", "rocm and ci were the busiest topics with 33 and 28 PRs, 15% and 13% of the "
                "week."),
    ("summary", "By type, fix leads with 71 PRs (32%), and feat follows with 45."),
    ("summary", "There are 3 risk observations, on #48583 and #47782.", (48583, 47782)),
    ("summary", "Three security fixes landed: #48583, #47595 and #44549.",
     (48583, 47595, 44549)),
    ("trends", "`vllm/v1/worker/gpu_model_runner.py` was the most-changed file, touched by 9 "
               "PRs."),
    ("trends", "`tests/models/registry.py` and "
               "`vllm/model_executor/layers/attention/mla_attention.py` were changed by 8 PRs "
               "each."),
    ("trends", "The model topic has 29 PRs; rust-frontend has 8 and xpu 7."),
    ("changes", "Security fixes (3 PRs): #48583 fixes a concurrent sparse invariant race that "
                "bypassed the CVE remediation, and #47595 guards the lm-format-enforcer regex "
                "compile with a timeout.", (48583, 47595), 48583),
    ("changes", "Models (28 PRs): #48799, #48869 and #48884 add Inkling model, "
                "MTP=1 and LoRA support.", (48799, 48869, 48884), 48799),
    ("changes", "ROCm (33 PRs): #40977 adds `HybridW4A16LinearKernel` and #47287 "
                "adds AITER sparse paged attention for MiniMax-M3.", (40977, 47287), 40977),
    ("changes", "#48596 offloads the last block at request finish and prevents a reuse race.",
     (48596,), 48596),
    ("suggestion", "Check whether the review concern on "
                   "`torch.sparse.check_sparse_tensor_invariants()` in #48583 was addressed.",
     (48583,), 0),
    ("suggestion", "Add tests around `vllm/v1/worker/gpu_model_runner.py`, changed by 9 PRs, "
                   "and watch for conflicting changes.", (), 2),
    ("pull", "#48583 fixes a concurrent sparse invariant race that bypassed the CVE "
             "remediation, changing 5 files (+298/-13 lines).", (), 48583),
    ("pull", "#47595 guards the lm-format-enforcer regex compile with a timeout in "
             "`vllm/v1/structured_output/backend_lm_format_enforcer.py`.", (), 47595),
    ("pull", "#44549 replaces diskcache to eliminate pickle deserialization, across 7 files.",
     (), 44549),
    ("pull", "#48481 fixes a PD async scheduling race for hybrid attention models in 4 files.",
     (), 48481),
    ("pull", "#48596 offloads the last block when a request finishes and prevents the block "
             "from being reused in a race.", (), 48596),
    ("pull", "#40977 adds `HybridW4A16LinearKernel`, with Triton for prefill and a HIP skinny "
             "kernel for decode, in 2,165 added lines.", (), 40977),
    ("risk", "DarkLight1337 asks to wrap `torch.sparse.check_sparse_tensor_invariants()` in "
             "`vllm/utils/sparse_utils.py` in a context manager that takes the lock; whether it "
             "was resolved is not recorded.", (), 48583, 0),
    ("risk", "DarkLight1337 asks to rename the helper in `vllm/utils/sparse_utils.py` to "
             "`check_sparse_tensor_invariants_threadsafe`; its resolution is not recorded.",
     (), 48583, 1),
    ("risk", "ivanium asks how this works with chunked prefill and worries that the handling "
             "around `request.shared_prefix_boundary` breaks marconi-style caching; its "
             "resolution is not recorded.", (), 47782, 0),
)

VERL_ZH_2 = _lines(
    VERL, "zh",
    ("summary", "第 29 周（07-13 至 07-19）verl 共合并 28 个 PR，没有关闭未合并或仍在打开的 PR。"),
    ("summary", "重点 PR 共 24 个，占全部 28 个 PR 的大部分。"),
    ("summary", "本周记录到 3 项风险观察：#7037 有 1 项中风险，#6932 有 2 项低风险。",
     (7037, 6932)),
    ("trends", "ci 是最大的主题，共 8 个 PR，占 28.6%。"),
    ("trends", "fix、chore、feat 分别有 12、7、7 个 PR，refactor 与 test 各 1 个。"),
    ("trends", "`docs/index.rst` 被 #6473、#6680 和 #6974 三个 PR 修改。", (6473, 6680, 6974)),
    ("changes", "rollout 问题修复中，#7044 让 `Qwen3XMLToolParser` 容忍格式错误的 XML 工具调用头，"
                "不再抛出 `ValueError`。", (7044,), 7038),
    ("changes", "CI、构建与维护方面，#7081 调整 save_freq 以解决 nightly CI 异常退出，#7042 删除了 "
                "194 行 vllm_ascend 补丁代码。", (7081, 7042), 7035),
    ("changes", "其他改动中，#7055 直接以 bool 分配 causal mask，避免 `_build_npu_attn_mask` OOM；"
                "#7041 缩小 recv_buf，解决 qwen2.5-0.5b 的 OOM。", (7055, 7041), 7041),
    ("changes", "检查点方面，#7076 恢复了 vllm 补丁。", (7076,), 7061),
    ("suggestion", "确认 #6932 在 `verl/workers/config/rollout.py` 上的 review 意见是否已处理。",
     (6932,), 1),
    ("suggestion", "确认 #6932、#7055、#7014 这三个修复类 PR 都带有回归测试。",
     (6932, 7055, 7014), 5),
    ("pull", "#7037 改动 12 个文件共 1,143 行（+1044/-99），为 v1 异步 trainer 引入新的 drop "
             "策略。", (), 7037),
    ("pull", "#6974 改动 28 个文件，其中包括 `verl/checkpoint_engine/__init__.py`，新增 2,056 行。",
     (), 6974),
    ("pull", "#7061 改动 7 个文件（+366/-3），涉及 "
             "`verl/utils/checkpoint/fsdp_checkpoint_manager.py`。", (), 7061),
    ("pull", "#6836 修复 CP>1 时 Megatron-Bridge 启用 `calculate_per_token_loss=True` 后 verl "
             "未返回 `num_tokens` 的问题。", (), 6836),
    ("pull", "#7038 改动 4 个文件，并新增测试 "
             "tests/workers/rollout/test_vision_placeholder_tokens_on_cpu.py。", (), 7038),
    ("pull", "#6932 只改动了 `verl/workers/rollout/vllm_rollout/vllm_async_server.py` 一个"
             "文件（+5/-2），保留用户显式设置的覆盖值。", (), 6932),
    ("risk", "`verl/trainer/ppo/v1/trainer_base.py` 的 review 指出：`_reissue_inflight_prompts` "
             "里的 `tq.kv_batch_put` 不带 `fields`，若 prompt 完成前又保存 checkpoint，下次 resume "
             "会读到空的 prompt 数据，合并前是否解决未记录。", (), 7037, 0),
    ("risk", "wuxibin89 在 `verl/workers/config/rollout.py` 留下的 review 意见尚无处理记录。",
     (), 6932, 0),
    ("risk", "tardis-key 认为版本检测和参数覆盖应放在 Python 配置层而不是 shell 脚本里，"
             "尚无处理记录。", (), 6932, 1),
    round=1,
)

VERL_EN_2 = _lines(
    VERL, "en",
    ("summary", "In week 29 (07-13 to 07-19) verl merged 28 PRs and closed none unmerged."),
    ("summary", "24 of the 28 PRs are key."),
    ("summary", "Three risk observations were recorded: 1 of medium severity on #7037 and 2 "
                "of low severity on #6932.", (7037, 6932)),
    ("trends", "ci is the largest topic with 8 PRs, 28.6% of the week."),
    ("trends", "fix, chore and feat have 12, 7 and 7 PRs; refactor and test have 1 each."),
    ("trends", "`docs/index.rst` was changed by three PRs: #6473, #6680 and #6974.",
     (6473, 6680, 6974)),
    ("changes", "Among the rollout fixes, #7044 makes `Qwen3XMLToolParser` tolerate malformed "
                "XML tool-call headers instead of raising `ValueError`.", (7044,), 7038),
    ("changes", "In CI and maintenance, #7081 edits save_freq to stop the nightly CI's abnormal "
                "exit and #7042 deletes 194 lines of vllm_ascend patch.", (7081, 7042), 7035),
    ("changes", "Among other changes, #7055 allocates the causal mask as bool to avoid an OOM "
                "in `_build_npu_attn_mask`, and #7041 shrinks recv_buf to fix the qwen2.5-0.5b "
                "OOM.", (7055, 7041), 7041),
    ("changes", "In checkpoints, #7076 restores the vllm patch.", (7076,), 7061),
    ("suggestion", "Check whether the review concern on `verl/workers/config/rollout.py` in "
                   "#6932 was addressed.", (6932,), 1),
    ("suggestion", "Make sure the three fixes #6932, #7055 and #7014 each come with a regression "
                   "test.", (6932, 7055, 7014), 5),
    ("pull", "#7037 changes 12 files and 1,143 lines (+1044/-99) and gives the v1 async "
             "trainers a new drop strategy.", (), 7037),
    ("pull", "#6974 changes 28 files, `verl/checkpoint_engine/__init__.py` among them, with "
             "2,056 lines added.", (), 6974),
    ("pull", "#7061 changes 7 files (+366/-3), including "
             "`verl/utils/checkpoint/fsdp_checkpoint_manager.py`.", (), 7061),
    ("pull", "#6836 fixes verl not returning `num_tokens` when Megatron-Bridge turns on "
             "`calculate_per_token_loss=True` at CP>1.", (), 6836),
    ("pull", "#7038 changes 4 files and adds the test "
             "tests/workers/rollout/test_vision_placeholder_tokens_on_cpu.py.", (), 7038),
    ("pull", "#6932 changes one file, `verl/workers/rollout/vllm_rollout/vllm_async_server.py` "
             "(+5/-2), and keeps explicit user overrides intact.", (), 6932),
    ("risk", "A review on `verl/trainer/ppo/v1/trainer_base.py` warns that `tq.kv_batch_put` in "
             "`_reissue_inflight_prompts` may leave the next resume with empty prompt data; its "
             "resolution is not recorded.", (), 7037, 0),
    ("risk", "The review comment by wuxibin89 on `verl/workers/config/rollout.py` has no "
             "recorded resolution.", (), 6932, 0),
    ("risk", "tardis-key thinks the version detection and parameter override belong in the "
             "Python configuration layer, not the shell script; no resolution is recorded.", (),
     6932, 1),
    round=1,
)

VLLM_ZH_2 = _lines(
    VLLM, "zh",
    ("summary", "第 29 周 vllm 共合并 222 个 PR，没有关闭未合并的 PR。"),
    ("trends", "rocm 主题共 33 个 PR，占 15%；ci 共 28 个，占 12.6%。"),
    ("trends", "`vllm/_custom_ops.py` 与 `vllm/model_executor/models/registry.py` 各被 6 个 PR "
               "修改。"),
    ("changes", "model 新功能中，#48869 改动了 `vllm/models/inkling/__init__.py` 等 11 个文件。",
     (48869,), 48799),
    ("pull", "#48583 涉及 `vllm/utils/sparse_utils.py` 和 `vllm/renderers/embed_utils.py` 等 "
             "5 个文件。", (), 48583),
    ("pull", "#40977 改动 11 个文件（+2165/-5 行），新增 `csrc/rocm/skinny_gemms_int4.cu`。",
     (), 40977),
    round=1,
)

VLLM_EN_2 = _lines(
    VLLM, "en",
    ("summary", "In week 29 vllm merged 222 PRs and closed none unmerged."),
    ("trends", "rocm has 33 PRs (15%) and ci 28 (12.6%)."),
    ("trends", "`vllm/_custom_ops.py` and `vllm/model_executor/models/registry.py` were each "
               "changed by 6 PRs."),
    ("changes", "Among the model features, #48869 touches 11 files including "
                "`vllm/models/inkling/__init__.py`.", (48869,), 48799),
    ("pull", "#48583 touches 5 files, among them `vllm/utils/sparse_utils.py` and "
             "`vllm/renderers/embed_utils.py`.", (), 48583),
    ("pull", "#40977 changes 11 files (+2165/-5 lines) and adds `csrc/rocm/skinny_gemms_int4.cu`.",
     (), 40977),
    round=1,
)

CORPUS: tuple[Line, ...] = (*VERL_ZH, *VERL_EN, *VLLM_ZH, *VLLM_EN, *VERL_ZH_2, *VERL_EN_2,
                            *VLLM_ZH_2, *VLLM_EN_2)
ROUNDS = (0, 1)
WEEK_PARTS = ("summary", "trends")


def corpus_answer(lines: Iterable[Line] = CORPUS, round: int = 0) -> Any:
    """A model answering with one round of the corpus where it has a sentence for the
    slot (like the well-behaved fake elsewhere)."""
    corpus = [c for c in lines if c.round == round]

    def answer(blocks: dict[str, Any], lang: str) -> dict[str, Any]:
        out = write_answer(blocks, lang)
        mine = [c for c in corpus if c.lang == lang]
        if "pulls" in blocks:
            for pull in out["pulls"]:
                for c in mine:
                    if c.key == pull["number"] and c.part == "pull":
                        pull["summary"] = c.text
                    if c.key == pull["number"] and c.part == "risk":
                        pull["risks"] = [{**r, "text": c.text} if r["index"] == c.index else r
                                         for r in pull["risks"]]
            return out
        if "week" not in blocks:
            return out
        week = blocks["week"]
        mine = [c for c in mine if c.repo == week["repository"]]
        for part in WEEK_PARTS:
            out[part] = [{"text": c.text, "pulls": list(c.pulls)} for c in mine
                         if c.part == part]
        themes = {n: t["key"] for t in week["themes"] for n in t["pulls"]}
        told = {themes[c.key]: c for c in mine if c.part == "changes" and c.key in themes}
        out["changes"] = [{"theme": key, "text": told[key].text, "pulls": list(told[key].pulls)}
                          if key in told else s for s in out["changes"]
                          for key in [s["theme"]]]
        said = {c.key: c for c in mine if c.part == "suggestion"}
        out["suggestions"] = [{"index": s["index"], "text": said[s["index"]].text,
                               "pulls": list(said[s["index"]].pulls)}
                              if s["index"] in said else s for s in out["suggestions"]]
        return out

    return answer


def shown_sentences(digest: Digest) -> set[str]:
    """Every narrated sentence a digest holds, as written (risk lines without their stop)."""
    narration = digest.narration
    if narration is None:
        return set()
    found = {s for p in narration.prose for s in p.sentences}
    if "key_prs" in narration.sections_narrated:
        found |= {k.summary for k in digest.key_pulls}
    if "risks" in narration.sections_narrated:
        found |= {r.summary for r in digest.risks}
    if "suggestions" in narration.sections_narrated:
        found |= set(digest.suggestions)
    return found


def kept(digest: Digest, lines: Iterable[Line], round: int = 0
         ) -> tuple[list[Line], list[Line]]:
    """The corpus lines of a round for `digest`'s repository and language that it shows,
    and those it does not."""
    shown = shown_sentences(digest)
    mine = [c for c in lines if c.repo == digest.repository and c.lang == digest.lang
            and c.round == round]
    held = [c for c in mine if visible(c.text).strip().rstrip("。.") in
            {s.rstrip("。.") for s in shown}]
    return held, [c for c in mine if c not in held]


FILES = {VERL: "verl-2026-07.json", VLLM: "vllm-2026-W29.json"}


async def held(shared_data: Path, lines: Iterable[Line], lang: str, mode: str,
               rounds: Iterable[int] = ROUNDS) -> tuple[int, int, list[str]]:
    """How many of `lines` in `lang` both weeks keep, of how many, and the lost ones,
    answered by `corpus_answer` through the fake endpoint in `mode` (bare, `think`...)."""
    from bot.snapshot import read_snapshot
    from testkit.fakes.openai import FakeOpenAI
    from testkit.narration.week import snapshot_digests, week_config

    lines = list(lines)
    kept_count = total = 0
    lost: list[str] = []
    for round_ in rounds:
        with FakeOpenAI(answer=corpus_answer(lines, round=round_)) as fake:
            fake.mode = mode
            for repo, name in FILES.items():
                digests = snapshot_digests(week_config(repo, fake.base_url),
                                           read_snapshot(shared_data / name))
                digest = await digests.build(repo, "2026-W29", lang)  # type: ignore[arg-type]
                yes, no = kept(digest, lines, round_)
                kept_count, total = kept_count + len(yes), total + len(yes) + len(no)
                lost += [c.text for c in no]
    return kept_count, total, lost
