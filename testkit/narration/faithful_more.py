"""More faithful sentences about verl's and vllm's week 29, written apart from the first
corpus (`testkit.narration.faithful`) and in other words: em-dash ranges ("7 月 13 日—
19 日", "July 13–19"), numerals as words ("五个 PR", "five PRs", "两项"), a figure with
"次", code spans with arguments (`data.gen_batch_size=1`, `pause_generation(...)`),
exception names, "已" in a PR's own work ("#7081 已修复…"), risk lines that keep their
status in words the engine does not use ("暂无处理记录", "nothing records whether this
was fixed", "the outcome is not recorded"). Every figure, name and identifier is in
the data of what the sentence cites. Told in round 2 of `corpus_answer`.
"""

from __future__ import annotations

from testkit.narration.faithful import VERL, VLLM, Line, _lines

ROUND = 2
PATH_7037 = "verl/trainer/ppo/v1/trainer_base.py"
SERVER = "verl/workers/rollout/vllm_rollout/vllm_async_server.py"

VERL_ZH = _lines(
    VERL, "zh",
    ("summary", "第 29 周（7 月 13 日—19 日）verl 合并了 28 个 PR，重点 PR 有 24 个。"),
    ("summary", "修复类 PR 最多，共 12 个，约占 43%；feat 有 7 个，chore 有 6 个。"),
    ("summary", "ci 是本周最活跃的主题（8 个 PR，占 29%），其次是 rollout 和 trainer。"),
    ("summary", "本周记录了 3 项风险观察，其中 #7037 有一项中风险，#6932 有两项低风险。",
     (7037, 6932)),
    ("trends", f"`{SERVER}` 是本周被改动最多的文件，涉及 #6473、#6680、#6932、#7038 和 "
               "#7042 五个 PR。", (6473, 6680, 6932, 7038, 7042)),
    ("trends", "checkpoint 主题有 4 个 PR，占 14%，与 #7061 的 LoRA-only checkpoint 和 #6974 的 "
               "delta 权重同步有关。", (7061, 6974)),
    ("trends", "build、docs、megatron、tool 和 vllm 各有 2 个 PR。"),
    ("changes", "CI 方面（8 个 PR），#6973 为 Ascend 新增 GRPO Qwen3.5-35B Megatron vLLM 夜间测试，"
                "#7081 已修复 NPU 夜间 CI 的异常退出。", (6973, 7081), 6973),
    ("changes", "Rollout 推理方面，#6974 引入基于 NCCL 的分片 delta 权重同步，#7044 让 "
                "`Qwen3XMLToolParser` 不再因格式错误的工具调用抛出 `ValueError`。",
     (6974, 7044), 6974),
    ("changes", "训练器方面，#7037 支持流式数据加载，#7051 让 `gen_batch_size` 回退到 "
                "`train_batch_size`。", (7037, 7051), 7037),
    ("changes", "检查点方面，#7061 新增 `save_lora_only`，#7076 恢复了 vllm 补丁。", (7061, 7076),
     7061),
    ("changes", "Megatron 相关的两个 PR 中，#6836 修复 CP>1 时 z/aux loss 的 grad_norm 爆炸，#6473 "
                "新增 DeepSeek V4 GRPO 支持。", (6836, 6473), 6836),
    ("changes", "构建与环境方面，#7028 固定了 PyArrow 版本，#7039 在 sglang docker 环境中加入 "
                "megatron-bridge。", (7028, 7039), 7028),
    ("changes", "文档方面，#7024 改进了 NPU profiling 文档的易用性，#7048 新增 rl-insight "
                "相关新闻。", (7024, 7048), 7024),
    ("changes", "其余 3 个 PR 中，#7041 缩小 `recv_buf` 解决 qwen2.5-0.5b 的 OOM，#7055 修复 "
                "`build_npu_attn_mask` 的 OOM。", (7041, 7055), 7041),
    ("suggestion", "复查 #7037 的 `_reissue_inflight_prompts` 与 `tq.kv_batch_put`，确认数据不会"
                   "丢失或被覆盖。", (7037,), 0),
    ("suggestion", "为 #7037 新增的 `data.gen_batch_size` 补充配置文档，并写明默认值。", (7037,),
     2),
    ("suggestion", f"`{SERVER}` 本周被五个 PR 修改，建议补充回归测试。", (), 4),
    ("pull", "#7037 引入流式 dataloader：设置 `data.gen_batch_size=1` 即可启用，resume 后还能"
             "重启未完成的 prompt。", (), 7037),
    ("pull", "#7061 为带 LoRA adapter 的模型提供 `save_lora_only` 选项，加载时自动识别并合并 "
             "LoRA-only checkpoint，完整 checkpoint 仍然兼容。", (), 7061),
    ("pull", "#6974 每次同步只把发生变化的 `(position, value)` 对稀疏收集到 rank 0，再通过现有的 "
             "NCCL 通信组广播。", (), 6974),
    ("pull", "#6836 修复 Megatron 与 verl 配合时的 CP 正确性问题：CP>1 时 Megatron 看到的 token "
             "总数为 0，跳过了归一化，导致 grad_norm 爆炸。", (), 6836),
    ("pull", "#7038 屏蔽 `<|image_pad|>` 与 `<|video_pad|>`，避免 `get_rope_index` 抛出 "
             "`StopIteration`。", (), 7038),
    ("pull", "#6932 在 vLLM 低于 0.22.0 时默认关闭多模态处理器缓存，否则 `update_weights()` 调用 "
             "`pause_generation(clear_cache=True)` 时会抛出 `AssertionError`。", (), 6932),
    ("risk", f"gemini-code-assist[bot] 提醒 `{PATH_7037}` 的 `_reissue_inflight_prompts` 调用 "
             "`tq.kv_batch_put` 时漏传 `fields`，resume 时可能读到空数据，目前没有处理记录。",
     (), 7037, 0),
    ("risk", "wuxibin89 建议把 `verl/workers/config/rollout.py` 里的逻辑挪到 "
             f"`{SERVER}`，该意见是否采纳未知。", (), 6932, 0),
    ("risk", "tardis-key 质疑该改动只覆盖 NPU，并认为版本检测应放在 Python 配置层，暂无处理记录。",
     (), 6932, 1),
    round=ROUND,
)

VERL_EN = _lines(
    VERL, "en",
    ("summary", "Week 29 (July 13–19) brought 28 merged PRs to verl, 24 of them key."),
    ("summary", "Fixes lead with 12 PRs (about 43%), while feat has 7 and chore 6."),
    ("summary", "ci is the busiest topic with 8 PRs (29%), ahead of rollout and trainer."),
    ("summary", "Three risk observations were recorded, one medium on #7037 and two low on "
                "#6932.", (7037, 6932)),
    ("trends", f"`{SERVER}` was touched by five PRs: #6473, #6680, #6932, #7038 and #7042.",
     (6473, 6680, 6932, 7038, 7042)),
    ("trends", "checkpoint has 4 PRs (14%), driven by #7061's LoRA-only checkpoints and "
               "#6974's delta weight sync.", (7061, 6974)),
    ("trends", "build, docs, megatron, tool and vllm have 2 PRs each."),
    ("changes", "CI (8 PRs): #6973 adds a nightly GRPO Qwen3.5-35B Megatron vLLM test for "
                "Ascend, and #7040 fixes an AssertionError around "
                "`CUDA_DEVICE_MAX_CONNECTIONS`.", (6973, 7040), 6973),
    ("changes", "Rollout: #6974 brings sharded delta weight sync over NCCL, and #7044 keeps "
                "`Qwen3XMLToolParser` from raising `ValueError` on malformed tool calls.",
     (6974, 7044), 6974),
    ("changes", "Trainer: #7037 adds a streaming dataloader and #7051 makes `gen_batch_size` "
                "fall back to `train_batch_size`.", (7037, 7051), 7037),
    ("changes", "Checkpoints: #7061 adds `save_lora_only` and #7076 restores the vllm patch.",
     (7061, 7076), 7061),
    ("changes", "Megatron (two PRs): #6836 fixes the z/aux-loss grad_norm blowup at CP>1 and "
                "#6473 adds DeepSeek V4 GRPO support.", (6836, 6473), 6836),
    ("changes", "Build and environment: #7028 pins the PyArrow version and #7039 adds "
                "megatron-bridge to the sglang docker env.", (7028, 7039), 7028),
    ("changes", "Docs: #7024 makes the NPU profiling docs easier to use and #7048 adds "
                "rl-insight news.", (7024, 7048), 7024),
    ("changes", "Among the other 3 PRs, #7041 shrinks `recv_buf` to fix the qwen2.5-0.5b OOM "
                "and #7055 fixes an OOM in `build_npu_attn_mask`.", (7041, 7055), 7041),
    ("suggestion", "Re-check `_reissue_inflight_prompts` and `tq.kv_batch_put` in #7037 so that "
                   "data is neither lost nor overwritten.", (7037,), 0),
    ("suggestion", "Document `data.gen_batch_size`, which #7037 adds, together with its "
                   "default.", (7037,), 2),
    ("suggestion", f"Add regression tests for `{SERVER}`, which five PRs changed this week.",
     (), 4),
    ("pull", "#7037 adds a streaming dataloader, enabled with `data.gen_batch_size=1`, and "
             "restarts pending prompts after a resume.", (), 7037),
    ("pull", "#7061 adds a `save_lora_only` option for models with LoRA adapters; LoRA-only "
             "checkpoints are detected and merged on load, so full checkpoints keep working.",
     (), 7061),
    ("pull", "#6974 sparsely gathers only the changed `(position, value)` pairs to rank 0 and "
             "broadcasts them over the existing NCCL group.", (), 6974),
    ("pull", "#6836 fixes a CP correctness bug: at CP>1 Megatron saw 0 total tokens, skipped "
             "normalization, and grad_norm exploded.", (), 6836),
    ("pull", "#7038 masks `<|image_pad|>` and `<|video_pad|>` so that `get_rope_index` no "
             "longer runs into `StopIteration`.", (), 7038),
    ("pull", "#6932 turns the multimodal processor cache off by default for vLLM older than "
             "0.22.0, which otherwise raised an `AssertionError` during `update_weights()`.",
     (), 6932),
    ("risk", f"gemini-code-assist[bot] warns that `_reissue_inflight_prompts` in `{PATH_7037}` "
             "calls `tq.kv_batch_put` without `fields`, so a resume may read empty prompt data; "
             "nothing records whether this was fixed.", (), 7037, 0),
    ("risk", "wuxibin89 suggests moving the logic from `verl/workers/config/rollout.py` into "
             f"`{SERVER}`; whether that happened is unknown.", (), 6932, 0),
    ("risk", "tardis-key questions whether the change only covers NPU and would put the "
             "version check in the Python configuration layer; the outcome is not recorded.",
     (), 6932, 1),
    round=ROUND,
)

VLLM_ZH = _lines(
    VLLM, "zh",
    ("summary", "vllm 第 29 周合并了 222 个 PR，其中 30 个被列为重点。"),
    ("summary", "fix 类 PR 有 71 个，占 32%，feat 有 45 个，other 有 42 个。"),
    ("summary", "本周有 3 项风险观察，集中在 #48583（2 项）和 #47782（1 项）。", (48583, 47782)),
    ("trends", "rocm（33 个，15%）和 ci（28 个，13%）是最大的两个主题。"),
    ("trends", "`vllm/v1/worker/gpu_model_runner.py` 本周被改动 9 次，居各文件之首。"),
    ("changes", "安全主题共 3 个 PR：#48583 修复绕过 CVE 修补的并发竞态，#44549 替换 diskcache，"
                "消除 pickle 反序列化。", (48583, 44549), 48583),
    ("changes", "ROCm 方面共 33 个 PR，其中 #40977 新增 `HybridW4A16LinearKernel`，prefill 用 "
                "Triton、decode 用 HIP skinny kernel。", (40977,), 40977),
    ("changes", "KV 缓存卸载方面共 8 个 PR，#48596 在请求结束时卸载最后一个 block，避免复用竞态。",
     (48596,), 48596),
    ("pull", "#48583 修复并发稀疏不变量检查的竞态，该竞态会绕过 CVE 修补；改动 5 个文件"
             "（+298/-13 行）。", (), 48583),
    ("pull", "#44549 替换 diskcache 以消除 pickle 反序列化，共改动 7 个文件，新增 162 行。", (),
     44549),
    ("pull", "#40977 新增 `HybridW4A16LinearKernel`，改动 11 个文件，新增 2,165 行、删除 5 行。",
     (), 40977),
    ("risk", "DarkLight1337 建议在 `vllm/utils/sparse_utils.py` 中用带锁的 context manager 包住 "
             "`torch.sparse.check_sparse_tensor_invariants()`，是否已采纳暂无记录。", (), 48583, 0),
    ("risk", "ivanium 担心 `request.shared_prefix_boundary` 附近的处理会悄悄破坏 Marconi 缓存，"
             "并询问与 chunked prefill 的配合，合并前是否解决未知。", (), 47782, 0),
    round=ROUND,
)

VLLM_EN = _lines(
    VLLM, "en",
    ("summary", "vllm merged 222 PRs in week 29, 30 of which are key."),
    ("summary", "Fixes account for 71 PRs (32%); feat has 45 and other 42."),
    ("summary", "Three risk observations were recorded: two on #48583 and one on #47782.",
     (48583, 47782)),
    ("trends", "rocm (33 PRs, 15%) and ci (28 PRs, 13%) are the two largest topics."),
    ("trends", "`vllm/v1/worker/gpu_model_runner.py` was changed 9 times, more than any other "
               "file."),
    ("changes", "Security (3 PRs): #48583 fixes a concurrent race that bypassed a CVE "
                "remediation and #44549 removes pickle deserialization by replacing diskcache.",
     (48583, 44549), 48583),
    ("changes", "ROCm (33 PRs): #40977 adds `HybridW4A16LinearKernel`, using Triton for prefill "
                "and a HIP skinny kernel for decode.", (40977,), 40977),
    ("changes", "KV offloading (8 PRs): #48596 offloads the last block when a request finishes "
                "and prevents a reuse race.", (48596,), 48596),
    ("pull", "#48583 fixes a concurrent sparse-invariant race that bypassed the CVE "
             "remediation, across 5 files (+298/-13).", (), 48583),
    ("pull", "#44549 replaces diskcache to get rid of pickle deserialization, touching 7 files "
             "with 162 lines added.", (), 44549),
    ("pull", "#40977 adds `HybridW4A16LinearKernel` in 11 files, with 2,165 lines added and 5 "
             "removed.", (), 40977),
    ("risk", "DarkLight1337 suggests wrapping `torch.sparse.check_sparse_tensor_invariants()` in "
             "`vllm/utils/sparse_utils.py` in a locked context manager; the outcome is not "
             "recorded.", (), 48583, 0),
    ("risk", "ivanium worries that the handling around `request.shared_prefix_boundary` "
             "silently breaks Marconi caching and asks how it works with chunked prefill; it is "
             "unknown whether this was addressed.", (), 47782, 0),
    round=ROUND,
)

MORE: tuple[Line, ...] = (*VERL_ZH, *VERL_EN, *VLLM_ZH, *VLLM_EN)
