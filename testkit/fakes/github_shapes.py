"""The fake GitHub's schema (a subset of GitHub's GraphQL, same names) and the
shapes its REST and GraphQL answers share: times, cursors, object ids."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from graphql import GraphQLError, build_schema

from bot.models import PullRequest

SCHEMA = build_schema('''
scalar DateTime
scalar URI
scalar GitObjectID

type Query {
  repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
  search(query: String!, type: SearchType!, first: Int, after: String, last: Int,
         before: String): SearchResultItemConnection!
  node(id: ID!): Node
  nodes(ids: [ID!]!): [Node]!
  rateLimit(dryRun: Boolean = false): RateLimit
}

enum SearchType { DISCUSSION ISSUE ISSUE_ADVANCED REPOSITORY USER }

type RateLimit {
  cost: Int! limit: Int! nodeCount: Int! remaining: Int! resetAt: DateTime! used: Int!
}

interface Node { id: ID! }
interface Actor { login: String! url: URI! }
type User implements Actor & Node { id: ID! login: String! url: URI! }
type Bot implements Actor & Node { id: ID! login: String! url: URI! }

type PageInfo {
  endCursor: String hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String
}

type Repository implements Node {
  id: ID!
  name: String!
  nameWithOwner: String!
  isPrivate: Boolean!
  url: URI!
  pullRequest(number: Int!): PullRequest
}

union SearchResultItem = Issue | PullRequest | Repository | User
type SearchResultItemEdge { cursor: String! node: SearchResultItem }
type SearchResultItemConnection {
  issueCount: Int!
  pageInfo: PageInfo!
  nodes: [SearchResultItem]
  edges: [SearchResultItemEdge]
}
type Issue implements Node { id: ID! number: Int! title: String! url: URI! }

enum PullRequestState { CLOSED MERGED OPEN }
enum PullRequestReviewDecision { APPROVED CHANGES_REQUESTED REVIEW_REQUIRED }
enum CommentAuthorAssociation {
  COLLABORATOR CONTRIBUTOR FIRST_TIMER FIRST_TIME_CONTRIBUTOR MANNEQUIN MEMBER NONE OWNER
}
enum PatchStatus { ADDED CHANGED COPIED DELETED MODIFIED RENAMED }
enum PullRequestReviewState { APPROVED CHANGES_REQUESTED COMMENTED DISMISSED PENDING }
enum StatusState { ERROR EXPECTED FAILURE PENDING SUCCESS }

type PullRequest implements Node {
  id: ID!
  number: Int!
  title: String!
  url: URI!
  author: Actor
  authorAssociation: CommentAuthorAssociation
  state: PullRequestState!
  isDraft: Boolean!
  reviewDecision: PullRequestReviewDecision
  repository: Repository!
  createdAt: DateTime!
  updatedAt: DateTime!
  mergedAt: DateTime
  closedAt: DateTime
  baseRefName: String!
  body: String!
  additions: Int!
  deletions: Int!
  changedFiles: Int!
  labels(first: Int, after: String, last: Int, before: String): LabelConnection
  files(first: Int, after: String, last: Int, before: String): PullRequestChangedFileConnection
  reviews(first: Int, after: String, last: Int, before: String): PullRequestReviewConnection
  reviewThreads(first: Int, after: String, last: Int, before: String):
    PullRequestReviewThreadConnection!
  comments(first: Int, after: String, last: Int, before: String): IssueCommentConnection!
  commits(first: Int, after: String, last: Int, before: String): PullRequestCommitConnection!
}

type Label implements Node { id: ID! name: String! }
type LabelConnection { nodes: [Label] pageInfo: PageInfo! totalCount: Int! }

type PullRequestChangedFile {
  path: String! additions: Int! deletions: Int! changeType: PatchStatus!
}
type PullRequestChangedFileConnection {
  nodes: [PullRequestChangedFile] pageInfo: PageInfo! totalCount: Int!
}

type PullRequestReview implements Node {
  id: ID! author: Actor state: PullRequestReviewState! submittedAt: DateTime body: String!
}
type PullRequestReviewConnection { nodes: [PullRequestReview] pageInfo: PageInfo! totalCount: Int! }

type PullRequestReviewThread implements Node {
  id: ID!
  path: String!
  line: Int
  originalLine: Int
  isResolved: Boolean!
  isOutdated: Boolean!
  comments(first: Int, after: String, last: Int, before: String, skip: Int):
    PullRequestReviewCommentConnection!
}
type PullRequestReviewThreadConnection {
  nodes: [PullRequestReviewThread] pageInfo: PageInfo! totalCount: Int!
}
type PullRequestReviewComment implements Node {
  id: ID! author: Actor body: String! createdAt: DateTime! url: URI!
}
type PullRequestReviewCommentConnection {
  nodes: [PullRequestReviewComment] pageInfo: PageInfo! totalCount: Int!
}

type IssueComment implements Node { id: ID! author: Actor body: String! createdAt: DateTime! }
type IssueCommentConnection { nodes: [IssueComment] pageInfo: PageInfo! totalCount: Int! }

type StatusCheckRollup implements Node { id: ID! state: StatusState! }
type Commit implements Node { id: ID! oid: GitObjectID! statusCheckRollup: StatusCheckRollup }
type PullRequestCommit implements Node { id: ID! commit: Commit! }
type PullRequestCommitConnection { nodes: [PullRequestCommit] pageInfo: PageInfo! totalCount: Int! }
''')

SEARCH_INVALID = (
    "The listed users and repositories cannot be searched either because the resources "
    "do not exist or you do not have permission to view them."
)
CHANGE_TYPE = {"added": "ADDED", "removed": "DELETED", "modified": "MODIFIED",
                "renamed": "RENAMED", "copied": "COPIED", "changed": "CHANGED"}
ROLLUP = {"success": "SUCCESS", "failure": "FAILURE", "pending": "PENDING"}
RUN = {"success": ("completed", "success"), "failure": ("completed", "failure"),
        "pending": ("in_progress", None)}


def iso(moment: datetime | None) -> str | None:
    """GitHub's time format: UTC, whole seconds, `Z`."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def cursor_index(cursor: str) -> int:
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except Exception:
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from None


def object_sha(*parts: object) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode()).hexdigest()


@dataclass
class Recorded:
    """One request as the fake received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int = 0

    @property
    def kind(self) -> str:
        return "graphql" if self.path.endswith("/graphql") else "rest"

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class FakeRepo:
    name: str
    pulls: dict[int, PullRequest]
    private: bool = False
