"""`prdigest init`: a config from the repository's own PRs, which the loader reads and
`digest` uses; offline from a snapshot or live from (the fake) GitHub."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.config import load_config
from bot.snapshot import read_snapshot
from bot.week import current_week, shift_week
from testkit import EXAMPLES
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week

SNAPSHOT = str(EXAMPLES / "snapshot.json")


def _run(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def _tags_in_titles(titles: list[str]) -> Counter[str]:
    """Leading `[a, b]` tags per title, counted once per PR (independent of the engine)."""
    counts: Counter[str] = Counter()
    for title in titles:
        lead = re.match(r"^((?:\[[^\]]*\]\s*)+)", title)
        tags = {t.strip().lower() for group in re.findall(r"\[([^\]]*)\]", lead[1] if lead
                                                         else "") for t in group.split(",")}
        counts.update(tags)
    return counts


def test_init_from_a_snapshot_writes_a_config_of_the_repositorys_own_topics(
        tmp_path: Path) -> None:
    out = tmp_path / "prdigest.toml"
    code, stdout, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o", str(out))
    assert code == 0, stderr
    config = load_config(out)  # the written file loads with the real loader
    topics = config.repo("acme/lumen").topics
    # The title tags of two or more PRs, except those naming a type (`[ci]`, `[doc]`).
    counts = _tags_in_titles([p.title for p in read_snapshot(Path(SNAPSHOT)).pulls])
    expected = {tag for tag, n in counts.items() if n >= 2} - {"ci", "doc", "breaking"}
    assert expected == {"npu", "rollout", "trainer"}
    assert expected <= set(topics)
    # A tag is matched in titles, not wherever a body mentions the word.
    assert all(topics[tag].title == (tag,) and not topics[tag].keywords for tag in expected)
    # lumen/checkpoint/ is touched by three PRs and named by no tag: a path topic.
    assert topics["checkpoint"].paths == ("lumen/checkpoint/**",)
    [channel] = config.channels
    assert (channel.platform, channel.repo, channel.schedule) == ("slack", "acme/lumen",
                                                                  "0 9 * * MON")
    assert set(channel.topics) <= set(topics)
    assert "# " in out.read_text()  # commented for the reader
    assert channel.lang == "zh"  # as `digest` defaults
    # The next commands are printed with the week `--week last` picks from the file, and
    # the first of them works as printed.
    code, last, stderr = _run("digest", "acme/lumen", "--week", "last", "--config", str(out),
                              "--snapshot", SNAPSHOT, "--format", "json")
    assert code == 0, stderr
    week = json.loads(last)["week"]
    assert f"prdigest digest acme/lumen --week {week} " in stdout
    code, digest, stderr = _run("digest", "acme/lumen", "--week", "2026-W29", "--config",
                                str(out), "--snapshot", SNAPSHOT, "--format", "json")
    assert code == 0, stderr
    assert "checkpoint" in {t["name"] for t in json.loads(digest)["topics"]}


def test_init_keeps_an_existing_file_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "prdigest.toml"
    out.write_text("# mine\n")
    code, _, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o", str(out))
    assert code == 2 and "exists" in stderr and out.read_text() == "# mine\n"
    code, _, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o", str(out),
                           "--force")
    assert code == 0, stderr
    assert load_config(out).repo("acme/lumen").topics


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    last = shift_week(current_week(datetime.now(UTC), "Asia/Shanghai"), -1)
    with FakeGitHub(token="ghp_fake") as server:
        server.add_repo("acme/widgets", build_week("acme/widgets", count=30, week=last))
        yield server


def test_init_reads_the_last_weeks_from_github(github: FakeGitHub, tmp_path: Path) -> None:
    settings = tmp_path / "github.toml"
    settings.write_text(f'[github]\napi_url = "{github.base_url}"\ntoken_env = "TEST_GH"\n')
    out = tmp_path / "prdigest.toml"
    code, stdout, stderr = _run("init", "acme/widgets", "-o", str(out), "--config",
                                str(settings), "--weeks", "2", env={"TEST_GH": "ghp_fake"})
    assert code == 0, stderr
    config = load_config(out)
    titles = [p.title for p in github.repos["acme/widgets"].pulls.values()]
    counts = _tags_in_titles(titles)
    # Each tag topic's tags (one area's spellings, `[ckpt]` in checkpoint) are in two PRs
    # or more.
    tag_topics = [rule.title for rule in config.repo("acme/widgets").topics.values()
                  if rule.title]
    assert tag_topics and all(sum(counts[tag] for tag in tags) >= 2 for tags in tag_topics)
    assert "prdigest digest acme/widgets --week last" in stdout


def test_an_unknown_time_zone_is_one_line(tmp_path: Path) -> None:
    code, _, stderr = _run("init", "acme/lumen", "--snapshot", SNAPSHOT, "-o",
                           str(tmp_path / "x.toml"), "--timezone", "Mars/Olympus")
    assert code == 2 and "Mars/Olympus" in stderr and not (tmp_path / "x.toml").exists()


# --- a real repository (the target report's) ------------------------------------------


def _verl_init(shared_data: Path, tmp_path: Path, *extra: str) -> tuple[Path, str]:
    out = tmp_path / "verl.toml"
    code, stdout, stderr = _run("init", "verl-project/verl", "--snapshot",
                                str(shared_data / "verl-2026-07.json"), "-o", str(out), *extra)
    assert code == 0, stderr
    return out, stdout


@pytest.mark.realdata
def test_init_of_verl_knows_its_npu_work(shared_data: Path, tmp_path: Path) -> None:
    """verl's titles carry no [npu] tag, yet NPU is 12 of its 28 W29 PRs (the seed
    report): NPU, Ascend in titles and bodies, docker/ascend/** in paths. Its generic
    folders (verl/workers, verl/utils) are no subject, `[ckpt]` is checkpoint, and vLLM,
    which verl integrates with, is a tag matched in titles, not in every body."""
    out, stdout = _verl_init(shared_data, tmp_path)
    config = load_config(out)
    topics = config.repo("verl-project/verl").topics
    npu = topics["npu"]
    assert {"npu", "ascend"} <= set(npu.keywords)
    assert not {"workers", "utils", "ckpt", "experimental"} & set(topics)
    globs = {glob for rule in topics.values() for glob in rule.paths}
    assert not {"verl/workers/**", "verl/utils/**"} & globs
    assert "ckpt" in topics["checkpoint"].aliases
    assert not topics["vllm"].keywords
    [channel] = config.channels
    assert channel.lang == "zh"
    code, digest, stderr = _run("digest", "verl-project/verl", "--week", "2026-W29",
                                "--config", str(out), "--snapshot",
                                str(shared_data / "verl-2026-07.json"), "--format", "json")
    assert code == 0, stderr
    counted = {t["name"]: t for t in json.loads(digest)["topics"]}
    assert counted["npu"]["count"] == 12 and round(counted["npu"]["share"] * 100) == 43
    assert counted["vllm"]["share"] < 0.25  # it read "vllm 相关 PR 占比 50%"
    # `--week last` of this file is W29 (its data runs into W30): init suggests that.
    assert "--week 2026-W29 " in stdout


@pytest.mark.realdata
def test_init_lang_can_be_english(shared_data: Path, tmp_path: Path) -> None:
    out, _ = _verl_init(shared_data, tmp_path, "--lang", "en")
    assert [c.lang for c in load_config(out).channels] == ["en"]


@pytest.mark.realdata
def test_init_of_verl_folds_a_tags_folder_into_its_topic(shared_data: Path,
                                                         tmp_path: Path) -> None:
    """verl tags fully-async PRs `[fully_async]` and keeps their code in
    verl/experimental/fully_async_policy: one topic, the tag's."""
    out, _ = _verl_init(shared_data, tmp_path)
    topics = load_config(out).repo("verl-project/verl").topics
    assert "fully_async" in topics and "fully_async_policy" not in topics
    globs = {glob for rule in topics.values() for glob in rule.paths}
    assert not any("fully_async_policy" in glob for glob in globs)


# --- conventions of other teams: Chinese scopes, generic folders, verbs -----------------


def _pull(number: int, title: str, *paths: str, week_day: int = 13) -> dict[str, object]:
    merged = f"2026-07-{week_day:02d}T03:00:00Z"
    return {"number": number, "title": title, "url": f"https://github.com/acme/shop/pull/{number}",
            "author": "dev", "state": "merged", "merged_at": merged, "closed_at": merged,
            "labels": [], "body": None, "files": [{"path": p, "additions": 5, "deletions": 1}
                                                 for p in paths]}


def _shop(tmp_path: Path) -> Path:
    """A team writing `fix(模块): …` in Chinese, all of its code under src/ and app/
    (generic folders), one scope a verb (`bump`), and one module every PR's folder."""
    pulls = [
        _pull(1, "fix(订单): 修复订单导出为空的问题", "src/app/order/export.ts"),
        _pull(2, "feat(订单、支付): 支持合并支付", "src/app/order/pay.ts", "src/app/pay/merge.ts"),
        _pull(3, "fix(支付)：解决退款重复提交", "src/app/pay/refund.ts"),
        _pull(4, "refactor(支付/订单): 调整金额计算", "src/app/pay/amount.ts"),
        _pull(5, "feat(库存): 库存预警", "src/app/stock/alert.ts", week_day=14),
        _pull(6, "fix(库存): 修复库存扣减竞态", "src/app/stock/deduct.ts", week_day=14),
        _pull(7, "bump: 更新依赖版本", "package.json", week_day=15),
        _pull(8, "bump: 升级构建工具", "package.json", week_day=15),
        _pull(9, "chore(utils): 整理工具函数", "src/utils/date.ts", week_day=15),
        _pull(10, "chore(utils): 删除无用代码", "src/utils/str.ts", week_day=16),
    ]
    path = tmp_path / "shop.json"
    path.write_text(json.dumps({"format": "prdigest.snapshot/1", "repository": "acme/shop",
                                "fetched_at": "2026-07-21T00:00:00Z", "pulls": pulls},
                               ensure_ascii=False), encoding="utf-8")
    return path


def test_init_proposes_a_teams_chinese_modules_and_no_folder_or_verb(tmp_path: Path) -> None:
    snapshot = _shop(tmp_path)
    out = tmp_path / "shop.toml"
    code, stdout, stderr = _run("init", "acme/shop", "--snapshot", str(snapshot), "-o", str(out))
    assert code == 0, stderr
    text = out.read_text(encoding="utf-8")
    topics = load_config(out).repo("acme/shop").topics
    assert {"订单", "支付", "库存"} <= set(topics)
    assert '"订单" = { title = ["订单"] }' in text  # quoted: a TOML key of any script
    assert not {"src", "app", "lib", "utils", "common", "bump"} & set(topics)
    globs = {glob for rule in topics.values() for glob in rule.paths}
    assert not any(glob.startswith(("src/**", "src/app/**", "src/utils/**")) for glob in globs)
    # The channel follows the busiest topics: 支付 (4 PRs), 订单 (3) and 库存 (2).
    [channel] = load_config(out).channels
    assert channel.topics == ("支付", "订单", "库存")
    # A public address to fill, commented: chat digests say where the report is until then.
    assert '# public_url = "https://prdigest.example.com"' in text
    assert load_config(out).server.public_url is None
    # The first command runs as printed, and its digest groups the PRs by those modules.
    command = next(line.split()[1:] for line in stdout.splitlines()
                   if line.strip().startswith("prdigest digest") and "--format text" in line)
    code, digest, stderr = _run(*command[:-2], "--format", "json")
    assert code == 0, stderr
    areas = {t["title"] for t in json.loads(digest)["themes"]}
    assert {"支付", "库存"} <= areas


def test_a_chat_digest_without_a_public_address_says_where_its_report_is(
        tmp_path: Path) -> None:
    snapshot = _shop(tmp_path)
    out = tmp_path / "shop.toml"
    assert _run("init", "acme/shop", "--snapshot", str(snapshot), "-o", str(out))[0] == 0
    for lang, said in (("zh", "完整报告未附链接（未设置 server.public_url），服务上的地址是 "
                              "<code>/reports/acme/shop/2026-W29?lang=zh</code>"),
                       ("en", "server.public_url is unset; the service serves it at "
                              "<code>/reports/acme/shop/2026-W29?lang=en</code>")):
        code, preview, stderr = _run("digest", "acme/shop", "--week", "2026-W29", "--config",
                                     str(out), "--snapshot", str(snapshot), "--format",
                                     "telegram", "--lang", lang)
        assert code == 0, stderr
        assert said in preview and "localhost" not in preview
    with_url = out.read_text(encoding="utf-8").replace(
        '# public_url = "https://prdigest.example.com"', 'public_url = "https://bot.acme.dev"')
    out.write_text(with_url, encoding="utf-8")
    code, preview, _ = _run("digest", "acme/shop", "--week", "2026-W29", "--config", str(out),
                            "--snapshot", str(snapshot), "--format", "telegram")
    assert "https://bot.acme.dev/reports/acme/shop/2026-W29?lang=zh" in preview
    assert "server.public_url" not in preview


@pytest.mark.realdata
def test_init_of_a_one_week_file_prints_a_week_it_holds(shared_data: Path,
                                                         tmp_path: Path) -> None:
    """vllm's file holds W29 only: `--week last` of its data is W28, which it holds no
    PR of (init printed `--week 2026-W28`, which failed)."""
    out = tmp_path / "vllm.toml"
    snapshot = str(shared_data / "vllm-2026-W29.json")
    code, stdout, stderr = _run("init", "vllm-project/vllm", "--snapshot", snapshot,
                                "-o", str(out))
    assert code == 0, stderr
    assert "--week 2026-W29 " in stdout
    for line in stdout.splitlines():
        if line.strip().startswith("prdigest digest"):
            code, _, stderr = _run(*line.split("#")[0].split()[1:])
            assert code == 0, (line, stderr)
