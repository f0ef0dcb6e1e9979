"""The text of the GraphQL queries: the fragments a PR is read with, and the
documents built from them.

Two ways to read a PR: `Pull`, everything a digest judges (reviews, threads with their
first comments, checks: 16 of GitHub's requests per PR), and `Counted`, only what its
topics and type are told from (title, body, labels, file paths: 2 requests per PR),
for a week read only for the trends (`bot.github.source.GitHubSource.fetch_trend_week`).
"""

from __future__ import annotations

import re

# First-page sizes of the nested lists, as written in the Pull fragment. Only a list
# with lists inside (threads) multiplies the price: each thread's comments are one more
# request, so threads come 10 at a time and the rest only for the PRs that have more.
FIRST = {"labels": 20, "files": 100, "reviews": 50, "reviewThreads": 10, "comments": 50}
THREAD_COMMENTS = 10

NEXT_PAGE = "pageInfo { hasNextPage endCursor }"
_PAGE_INFO = f"totalCount {NEXT_PAGE}"
RATE_LIMIT = "rateLimit { cost limit remaining resetAt }"
_ACTOR = "author { __typename login }"

FRAGMENTS = {
    "Pull": f"""fragment Pull on PullRequest {{
  number title url {_ACTOR} authorAssociation state isDraft createdAt updatedAt mergedAt
  closedAt
  baseRefName body additions deletions changedFiles
  labels(first: {FIRST["labels"]}) {{ ...Labels }}
  files(first: {FIRST["files"]}) {{ ...Files }}
  reviews(first: {FIRST["reviews"]}) {{ ...Reviews }}
  reviewThreads(first: {FIRST["reviewThreads"]}) {{ ...Threads }}
  comments(first: {FIRST["comments"]}) {{ ...Comments }}
  commits(last: 1) {{ nodes {{ commit {{ statusCheckRollup {{ state }} }} }} }}
}}""",
    "Head": "fragment Head on PullRequest { number updatedAt state createdAt closedAt mergedAt }",
    "Labels": f"fragment Labels on LabelConnection {{ {_PAGE_INFO} nodes {{ name }} }}",
    "Files": f"""fragment Files on PullRequestChangedFileConnection {{
  {_PAGE_INFO} nodes {{ path additions deletions changeType }} }}""",
    "Reviews": f"""fragment Reviews on PullRequestReviewConnection {{
  {_PAGE_INFO} nodes {{ {_ACTOR} state submittedAt body }} }}""",
    "Threads": f"""fragment Threads on PullRequestReviewThreadConnection {{
  {_PAGE_INFO}
  nodes {{ id path line originalLine isResolved isOutdated
    comments(first: {THREAD_COMMENTS}) {{ ...ThreadComments }} }} }}""",
    "ThreadComments": f"""fragment ThreadComments on PullRequestReviewCommentConnection {{
  {_PAGE_INFO} nodes {{ {_ACTOR} body createdAt url }} }}""",
    "Comments": f"""fragment Comments on IssueCommentConnection {{
  {_PAGE_INFO} nodes {{ {_ACTOR} body createdAt }} }}""",
}
FRAGMENT_OF = {"labels": "Labels", "files": "Files", "reviews": "Reviews",
                "reviewThreads": "Threads", "comments": "Comments"}
_SPREAD = re.compile(r"\.\.\.(\w+)")

# What a PR's topics and type are told from (`bot.engine.classify`), and what the week
# and the exclude rules need: the light read of a week kept for the trends only.
FRAGMENTS["Counted"] = f"""fragment Counted on PullRequest {{
  number title url {_ACTOR} state isDraft createdAt updatedAt mergedAt closedAt
  baseRefName body
  labels(first: {FIRST["labels"]}) {{ ...Labels }}
  files(first: {FIRST["files"]}) {{ ...Files }}
}}"""


def document(body: str) -> str:
    """`body` followed by every fragment it spreads, directly or through another."""
    needed: list[str] = []
    pending = _SPREAD.findall(body)
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.append(name)
            pending.extend(_SPREAD.findall(FRAGMENTS[name]))
    return "\n".join([body, *(FRAGMENTS[name] for name in sorted(needed))])
