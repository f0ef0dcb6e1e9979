"""REST endpoints of the fake GitHub, with `Link` pagination: what the REST fallback,
PyGithub's calls and the naive bench use."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from bot.models import PullRequest
from testkit.fakes.github_graphql import association
from testkit.fakes.github_shapes import RUN, SEARCH_INVALID, FakeRepo, Recorded, iso, object_sha

if TYPE_CHECKING:
    from testkit.fakes.github import FakeGitHub


LEGACY_SEARCH_GONE = ("The legacy issue search is no longer available; search with "
                      "advanced_search=true")

_ROUTES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^/search/issues$"), "search"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)$"), "repository"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls$"), "pulls"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)$"), "pull"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/files$"), "files"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/reviews$"), "reviews"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/comments$"), "review_comments"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<n>\d+)/comments$"), "issue_comments"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/commits/(?P<sha>\w+)/status$"), "status"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/commits/(?P<sha>\w+)/check-runs$"), "check_runs"),
    (re.compile(r"^/rate_limit$"), "rate_limit"),
]


class RestApi:
    """One REST request: route, look up, answer in GitHub's JSON shape."""

    def __init__(self, fake: FakeGitHub, request: Recorded, *, authenticated: bool) -> None:
        self.fake = fake
        self.request = request
        self.authenticated = authenticated
        self.base = fake.base_url

    def answer(self) -> tuple[int, dict[str, str], Any]:
        for pattern, name in _ROUTES:
            match = pattern.match(self.request.path)
            if match:
                handler: Callable[..., tuple[int, dict[str, str], Any]] = getattr(self, name)
                return handler(**match.groupdict())
        return self._not_found()

    @staticmethod
    def _not_found() -> tuple[int, dict[str, str], Any]:
        return 404, {}, {"message": "Not Found",
                         "documentation_url": "https://docs.github.com/rest"}

    def _arg(self, name: str, default: int) -> int:
        values = self.request.query.get(name)
        return int(values[0]) if values else default

    def _page(self, items: list[Any]) -> tuple[int, dict[str, str], Any]:
        """One page of a list endpoint, with GitHub's `Link` header."""
        per_page = self.fake.cap(min(self._arg("per_page", 30), 100))
        page = max(self._arg("page", 1), 1)
        chunk = items[(page - 1) * per_page: page * per_page]
        return 200, self._links(page, per_page, len(items)), chunk

    def _links(self, page: int, per_page: int, total: int) -> dict[str, str]:
        last = max((total + per_page - 1) // per_page, 1)
        links = []

        def url(number: int) -> str:
            query = {k: v[0] for k, v in self.request.query.items()}
            query.update(page=str(number), per_page=str(per_page))
            return f"<{self.base}{self.request.path}?{urlencode(query)}>"

        if page < last:
            links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
        if page > 1:
            links += [f'{url(page - 1)}; rel="prev"', f'{url(1)}; rel="first"']
        return {"Link": ", ".join(links)} if links else {}

    def _user(self, login: str | None) -> dict[str, Any] | None:
        if login is None:
            return None
        return {"login": login, "id": int(object_sha(login)[:6], 16),
                "type": "Bot" if login.endswith("[bot]") else "User",
                "url": f"{self.base}/users/{login}", "html_url": f"https://github.com/{login}"}

    def _pull(self, repo: str, n: str) -> tuple[FakeRepo, PullRequest] | None:
        found = self.fake.visible(repo, authenticated=self.authenticated)
        pull = found.pulls.get(int(n)) if found else None
        return (found, pull) if found and pull else None

    # endpoints

    def rate_limit(self) -> tuple[int, dict[str, str], Any]:
        core = {"limit": 5000, "remaining": 4999, "reset": int(time.time()) + 3600, "used": 1}
        return 200, {}, {"resources": {"core": core, "search": core, "graphql": core},
                         "rate": core}

    def search(self) -> tuple[int, dict[str, str], Any]:
        query = (self.request.query.get("q") or [""])[0]
        if (self.request.query.get("advanced_search") or [""])[0] != "true":
            # GitHub is removing the legacy issue search; a client still on it fails here
            # rather than on the day GitHub turns it off.
            return 422, {}, {"message": LEGACY_SEARCH_GONE, "errors": [
                {"resource": "Search", "field": "advanced_search", "code": "invalid"}]}
        try:
            found = self.fake.search_repos(query, authenticated=self.authenticated)
        except ValueError as exc:
            return 422, {}, {"message": "Validation Failed",
                             "errors": [{"message": str(exc), "code": "invalid"}]}
        if found is None:
            return 422, {}, {"message": "Validation Failed", "errors": [
                {"message": SEARCH_INVALID, "resource": "Search", "field": "q",
                 "code": "invalid"}]}
        status, headers, chunk = self._page([self._issue(repo, p) for repo, p in found])
        return status, headers, {"total_count": len(found), "incomplete_results": False,
                                 "items": chunk}

    def _issue(self, repo: str, pull: PullRequest) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo}"
        return {
            "url": f"{api}/issues/{pull.number}", "repository_url": api,
            "html_url": pull.url, "id": pull.number, "number": pull.number,
            "title": pull.title, "user": self._user(pull.author),
            "state": "open" if pull.state == "open" else "closed",
            "labels": [{"name": name, "url": f"{api}/labels/{name}"} for name in pull.labels],
            "created_at": iso(pull.created_at), "updated_at": iso(pull.updated_at),
            "closed_at": iso(pull.closed_at), "body": pull.body, "draft": bool(pull.draft),
            "comments": len(pull.comments or ()),
            "pull_request": {"url": f"{api}/pulls/{pull.number}", "html_url": pull.url,
                             "merged_at": iso(pull.merged_at)},
        }

    def repository(self, repo: str) -> tuple[int, dict[str, str], Any]:
        found = self.fake.visible(repo, authenticated=self.authenticated)
        if found is None:
            return self._not_found()
        name = found.name  # GitHub's spelling, whatever case was asked
        return 200, {}, {"id": 1, "name": name.split("/")[1], "full_name": name,
                         "private": found.private, "url": f"{self.base}/repos/{name}",
                         "html_url": f"https://github.com/{name}"}

    def pull(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        return 200, {}, self._pull_object(repo, found[1])

    def pulls(self, repo: str) -> tuple[int, dict[str, str], Any]:
        """The PR list (`state`, `sort=updated`, `direction=desc`), paged, with an ETag
        that changes with the page and `304 Not Modified` to a matching
        `If-None-Match`, as the merge poller asks it."""
        found = self.fake.visible(repo, authenticated=self.authenticated)
        if found is None:
            return self._not_found()
        state = (self.request.query.get("state") or ["open"])[0]
        with self.fake._lock:
            pulls = list(found.pulls.values())
        wanted = [p for p in pulls if state == "all"
                  or (p.state == "open") == (state == "open")]
        wanted.sort(key=lambda p: (iso(p.updated_at) or "", p.number), reverse=True)
        status, headers, chunk = self._page([self._pull_object(repo, p) for p in wanted])
        etag = 'W/"' + object_sha(json.dumps(chunk, sort_keys=True))[:16] + '"'
        if self.request.headers.get("if-none-match") == etag:
            return 304, {"ETag": etag}, None
        return status, {**headers, "ETag": etag}, chunk

    def _pull_object(self, repo: str, p: PullRequest) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo}"
        sha = object_sha(repo, p.number)
        return {
            "url": f"{api}/pulls/{p.number}", "id": p.number, "html_url": p.url,
            "issue_url": f"{api}/issues/{p.number}", "number": p.number,
            "state": "open" if p.state == "open" else "closed", "title": p.title,
            "user": self._user(p.author), "body": p.body,
            "author_association": association(p),
            "labels": [{"name": name, "url": f"{api}/labels/{name}"} for name in p.labels],
            "created_at": iso(p.created_at), "updated_at": iso(p.updated_at),
            "closed_at": iso(p.closed_at), "merged_at": iso(p.merged_at),
            "merged": p.state == "merged", "draft": bool(p.draft),
            "merge_commit_sha": object_sha(repo, p.number, "merge") if p.merged_at else None,
            "head": {"ref": f"topic-{p.number}", "sha": sha, "label": f"fork:topic-{p.number}"},
            "base": {"ref": p.base or "main", "sha": object_sha("base", repo), "label": "main"},
            "additions": p.additions or 0, "deletions": p.deletions or 0,
            "changed_files": p.changed_files or 0,
            "comments": len(p.comments or ()),
            "review_comments": sum(len(t.comments) for t in p.review_threads or ()),
        }

    def files(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        return self._page([
            {"sha": object_sha(f.path), "filename": f.path, "status": f.status or "modified",
             "additions": f.additions, "deletions": f.deletions,
             "changes": f.additions + f.deletions}
            for f in found[1].files])

    def reviews(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        p = found[1]
        return self._page([
            {"id": p.number * 1000 + k, "user": self._user(r.author), "body": r.body or "",
             "state": r.state, "submitted_at": iso(r.submitted_at),
             "html_url": f"{p.url}#pullrequestreview-{p.number * 1000 + k}",
             "pull_request_url": f"{self.base}/repos/{repo}/pulls/{p.number}"}
            for k, r in enumerate(p.reviews or ())])

    def review_comments(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        p = found[1]
        items = []
        serial = 0
        for thread in p.review_threads or ():
            root = None
            for comment in thread.comments:
                serial += 1
                ident = p.number * 100_000 + serial
                item = {
                    "id": ident, "url": f"{self.base}/repos/{repo}/pulls/comments/{ident}",
                    "path": thread.path, "line": thread.line, "original_line": thread.line,
                    "position": None if thread.outdated else 1, "original_position": 1,
                    "user": self._user(comment.author), "body": comment.body or "",
                    "created_at": iso(comment.created_at), "updated_at": iso(comment.created_at),
                    "html_url": comment.url,
                    "pull_request_url": f"{self.base}/repos/{repo}/pulls/{p.number}",
                }
                if root is None:
                    root = ident
                else:
                    item["in_reply_to_id"] = root
                items.append(item)
        return self._page(items)

    def issue_comments(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        p = found[1]
        return self._page([
            {"id": p.number * 1000 + k, "user": self._user(c.author), "body": c.body or "",
             "created_at": iso(c.created_at), "updated_at": iso(c.created_at),
             "html_url": f"{p.url}#issuecomment-{p.number * 1000 + k}",
             "url": f"{self.base}/repos/{repo}/issues/comments/{p.number * 1000 + k}"}
            for k, c in enumerate(p.comments or ())])

    def _by_sha(self, repo: str, sha: str) -> PullRequest | None:
        found = self.fake.visible(repo, authenticated=self.authenticated)
        if found is None:
            return None
        return next((p for p in found.pulls.values() if object_sha(repo, p.number) == sha), None)

    def status(self, repo: str, sha: str) -> tuple[int, dict[str, str], Any]:
        """Combined status: the fake keeps check state in check runs, like Actions."""
        if self._by_sha(repo, sha) is None:
            return self._not_found()
        return 200, {}, {"state": "pending", "statuses": [], "sha": sha, "total_count": 0,
                         "url": f"{self.base}/repos/{repo}/commits/{sha}/status"}

    def check_runs(self, repo: str, sha: str) -> tuple[int, dict[str, str], Any]:
        pull = self._by_sha(repo, sha)
        if pull is None:
            return self._not_found()
        runs = []
        if pull.checks in RUN:
            status, conclusion = RUN[pull.checks]
            runs.append({"id": pull.number, "name": "tests", "head_sha": sha, "status": status,
                         "conclusion": conclusion,
                         "url": f"{self.base}/repos/{repo}/check-runs/{pull.number}"})
        status_code, headers, chunk = self._page(runs)
        return status_code, headers, {"total_count": len(runs), "check_runs": chunk}
