"""Report pages share an hourly allowance of GitHub's points
(`server.report_points_per_hour`) beyond each client's request rate: a page the cache
holds is always served and costs nothing; a page that would ask GitHub beyond the
allowance gets a friendly 503 page in the visitor's language, with `Retry-After`, and
GitHub is not asked."""

from __future__ import annotations

from pathlib import Path

from testkit.reliability.harness import service_in_process
from testkit.reliability.names import REPO
from testkit.reliability.world import World


async def test_pages_beyond_the_hourly_points_get_503_and_cached_pages_stay_free(
        fakes: World, redis_url: str, tmp_path: Path) -> None:
    async with service_in_process(fakes, redis_url, tmp_path,
                                  report_points_per_hour=1) as service:
        first = await service.get(f"/reports/{REPO}/2026-W29?lang=en")
        assert first.status_code == 200  # a full allowance lets one page through
        asked = fakes.github.count()
        refused = [await service.get(f"/reports/{REPO}/2026-W2{n}?lang={lang}")
                   for n, lang in ((7, "en"), (6, "zh"))]
        assert fakes.github.count() == asked  # nothing more was asked of GitHub
        again = await service.get(f"/reports/{REPO}/2026-W29?lang=en")  # its digest cached
        other_lang = await service.get(f"/reports/{REPO}/2026-W29?lang=zh")  # its weeks cached
        health = await service.get("/healthz")
    assert [r.status_code for r in refused] == [503, 503]
    assert all(int(r.headers["Retry-After"]) > 0 for r in refused)
    assert "share of GitHub" in refused[0].text and "Traceback" not in refused[0].text
    assert "GitHub 额度" in refused[1].text
    assert again.status_code == other_lang.status_code == 200
    assert health.status_code == 200
