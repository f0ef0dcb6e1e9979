"""Change areas: one name for a topic, module or folder however its PRs spell it, and
what the area is called in the reader's language.

An area is a configured topic, a title module (`[ckpt]`, `fix(rollout):`) or a folder.
Spelling variants are one area (`kv-offload`, `kv-offloading`, `kv_offload`,
`kvoffload`), common aliases are folded (`ckpt` is `checkpoint`, `doc` is `docs`), and
common areas have a name of their own in each language (CI, 文档, 检查点 …); a topic's
configured `label` comes first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import get_args

from bot.config import RepoConfig
from bot.i18n import Translator, translator
from bot.models import Lang


def _(message: str) -> str:
    """Marks a name for the catalog extractor; translated where it is shown."""
    return message


# Folders that hold other areas rather than being one: an area is looked for below them
# (`vllm/v1/attention` is attention, `verl/workers/rollout` is rollout). `init` leaves
# them out of its topics for the same reason.
GENERIC_FOLDERS = frozenset({
    "src", "lib", "libs", "utils", "util", "common", "workers", "experimental", "v1",
    "v2", "model_executor", "layers", "libtorch_stable", "csrc", "python", "include",
    "internal", "pkg", "modules", "components", "impl", "contrib", "misc", "app", "apps",
    "packages", "crates",
})
# Folders and root files whose changes are one of the common areas.
_FOLDER_AREAS = {
    ".github": "ci", ".buildkite": "ci", ".ci": "ci", "ci": "ci", ".circleci": "ci",
    "docs": "docs", "doc": "docs", "tests": "tests", "test": "tests",
    "docker": "build", "requirements": "build", "cmake": "build",
    # A documentation site's own source, hidden at the top (dumi, VitePress, VuePress,
    # Docusaurus): the docs, not the team's tools.
    ".dumi": "docs", ".vitepress": "docs", ".vuepress": "docs", ".docusaurus": "docs",
}
# The common area a kind of change is work in, whatever folder it touched: a question
# about docs finds the `docs:` PRs as well as those in `docs/`.
AREA_OF_TYPE = {"docs": "docs", "test": "tests", "ci": "ci", "build": "build"}
# Files at the top that configure the team's tools or run them: no code of the project.
_TOOLING_FILE = re.compile(
    r"^\.|[.-]config\.\w+$|rc\.\w+$|\.sh$|^(?:noxfile|fabfile|tasks|dodo|manage|"
    r"conftest)\.py$|^(?:gulpfile|gruntfile|webpack|rollup|vite|vitest|jest|babel|"
    r"eslint|prettier|tailwind|postcss|karma|playwright)\b", re.I)
_BUILD_FILE = re.compile(
    r"^(Dockerfile.*|requirements.*\.(txt|in)|setup\.(py|cfg)|pyproject\.toml|"
    r"CMakeLists\.txt|Makefile)$", re.I)
# Lock files: tools rewrite them with every dependency change, so many PRs touch them
# and none is where the week's changes met; a PR of them alone is a dependency update,
# however many lines it rewrites (pydantic's 776-line Pyodide lockfile).
_LOCK_FILE = re.compile(
    r"(^|/)([^/]+\.lock|[^/]*-lock\.(json|ya?ml)|bun\.lockb|npm-shrinkwrap\.json|go\.sum|"
    r"pylock(\.[^/]+)?\.toml|packages\.lock\.json|gradle\.lockfile|Package\.resolved|"
    r"\.terraform\.lock\.hcl)$")
# What pip-compile locks from: it changes with the lock file it makes.
_LOCK_INPUT = re.compile(r"(^|/)requirements[^/]*\.in$")
_DOC_FILE = re.compile(r"\.(md|rst)$", re.I)
_DOC_PATH = re.compile(r"(^|/)(docs?/|README|CHANGELOG)|\.(md|rst)$", re.I)
# Release-note fragments: a PR adds one to say it has a release note, not to say where
# it changed (changesets' `.changeset/`, towncrier's `newsfragments/` and `changelog.d/`,
# reno's `releasenotes/notes/`, changie's `.changes/`, NumPy's
# `doc/release/upcoming_changes/`). When every PR adds one, its folder read as an area
# was "most of the work" (svelte: `.changeset` 67%). They still count in a PR's files
# and lines; they name no area, topic or theme, nor the week's most-changed file. A
# changelog every PR writes its line in is the same (Seata's `changes/en-us/2.x.md`, a
# root `CHANGELOG.md`): "the most-changed file was the changelog" tells a team nothing.
_RELEASE_NOTE = re.compile(
    r"(^|/)(\.changeset|\.changelog|newsfragments|changelog\.d|\.changes|releasenotes/notes|"
    r"doc/release/upcoming_changes)/|^changes/|"
    r"^(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE[-_]NOTES)(?:\.(?:md|rst|txt|adoc))?$",
    re.I)


def is_release_note(path: str) -> bool:
    """Whether a changed file is a release-note fragment (see `_RELEASE_NOTE`)."""
    return bool(_RELEASE_NOTE.search(path))


def where_changed(paths: Iterable[str]) -> list[str]:
    """The paths that say where a PR changed things: all but its release-note fragments."""
    return [path for path in paths if not is_release_note(path)]


@dataclass(frozen=True, slots=True)
class Builtin:
    """A common area: its name (an English message id, or a `proper` name the same in
    every language) and the spellings that mean it."""

    name: str
    aliases: tuple[str, ...] = ()
    proper: bool = False


# The common areas, by key. Aliases are matched folded (see `fold`).
BUILTIN: dict[str, Builtin] = {
    "security": Builtin(_("Security")),
    "ci": Builtin("CI", ("cicd", "github", "workflow", "buildkite", "cibug"), proper=True),
    "docs": Builtin(_("Docs"), ("doc", "documentation", "readme", "changelog")),
    "tests": Builtin(_("Tests"), ("test", "ut", "unittest", "testing", "e2e")),
    "build": Builtin(_("Build & environment"),
                     ("docker", "dockerfile", "env", "deps", "dependency", "dependencies",
                      "requirement", "packaging", "installation", "install", "cmake")),
    "npu": Builtin("NPU", ("ascend", "hccl"), proper=True),
    "checkpoint": Builtin(_("Checkpoint"), ("ckpt", "checkpointing", "checkpointengine")),
    "trainer": Builtin(_("Trainer"), ("training", "train")),
    "rollout": Builtin(_("Rollout")),
    "model": Builtin(_("Models"), ("models", "newmodel")),
    "kernel": Builtin(_("Kernels"), ("kernels", "op", "operator")),
    "quantization": Builtin(_("Quantization"), ("quant", "quantize")),
    "attention": Builtin(_("Attention"), ("attn",)),
    "moe": Builtin("MoE", ("fusedmoe",), proper=True),
    "distributed": Builtin(_("Distributed"), ("parallel", "parallelism")),
    "frontend": Builtin(_("Frontend & API"), ("entrypoint", "entrypoints", "api")),
    "backend": Builtin(_("Backend"), ("server",)),
    "spec-decode": Builtin(_("Speculative decoding"),
                           ("specdecode", "specdecoding", "speculative",
                            "speculativedecoding", "specdec")),
    "kv-offload": Builtin(_("KV cache offloading"), ("kvoffload", "kvcacheoffload")),
    "multimodal": Builtin(_("Multimodal"), ("mm", "vlm", "multimodality")),
    "lora": Builtin("LoRA", proper=True),
    "rocm": Builtin("ROCm", ("amd", "aiter"), proper=True),
    "xpu": Builtin("XPU", proper=True),
    "cpu": Builtin("CPU", proper=True),
    "tpu": Builtin("TPU", proper=True),
    # Not `tools`: a `tools/` folder holds the team's developer tools.
    "tool": Builtin(_("Tool calling"), ("toolcall", "toolcalling", "toolparser", "tooluse")),
    "megatron": Builtin("Megatron", proper=True),
    "fsdp": Builtin("FSDP", proper=True),
    "vllm": Builtin("vLLM", proper=True),
    "sglang": Builtin("SGLang", proper=True),
    "benchmarks": Builtin(_("Benchmarks"), ("benchmark", "bench")),
    # Not `type`/`types`: a database's or a language's data types are another area.
    "typing": Builtin(_("Type annotations"), ("typ", "typehint", "stub", "annotation")),
    "i18n": Builtin(_("Translations"), ("lang", "locale", "locales", "translation",
                                         "translations", "l10n", "localization",
                                         "internationalization")),
    "examples": Builtin(_("Examples"), ("example",)),
    "config": Builtin(_("Configuration"), ("configuration", "configs")),
    "hardware": Builtin(_("Hardware")),
    "compilation": Builtin(_("Compilation"), ("compile", "torchcompile")),
    "worker": Builtin(_("Workers"), ("workers",)),
    "engine": Builtin(_("Engines"), ("engines",)),
    "core": Builtin(_("Core")),
}


@lru_cache(maxsize=8192)
def fold(name: str) -> str:
    """A spelling-free key: lower case, letters (of every script: `仪表板`) and digits
    only, a plural or -ing ending dropped (`KV_Offloading` and `kv-offload` are both
    `kvoffload`)."""
    words = [w for w in re.split(r"[^\w.]|_", name.lower()) if w.strip(".")]
    return "".join(_singular(w.strip(".")) for w in words)


def _singular(word: str) -> str:
    """A word without its plural or -ing ending (`connectors`, `offloading`)."""
    for ending in ("ing", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 4 and not word.endswith("ss"):
            return word[: -len(ending)]
    return word


_BUILTIN_OF_FOLD = {fold(alias): key for key, rule in BUILTIN.items()
                    for alias in (key, *rule.aliases)}


@lru_cache(maxsize=1)
def _builtin_of_name() -> dict[str, str]:
    """A common area by its name in any language the digest speaks (文档 is docs):
    a reader asks about an area by the name the digest showed them."""
    names: dict[str, str] = {}
    for lang in get_args(Lang):
        t = translator(lang)
        for key, rule in BUILTIN.items():
            names.setdefault(fold(rule.name if rule.proper else t(rule.name)), key)
    return names


@dataclass
class Areas:
    """The areas of one repository's week: raw names (topics, modules, folders) to area
    keys, and each area's name. A configured topic is its own area (its aliases fold into
    it); a common area's key is its `BUILTIN` key; any other area is its folded spelling,
    named by the spelling its PRs use most."""

    repo_config: RepoConfig
    t: Translator
    spellings: dict[str, Counter[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._keys: dict[str, str] = {}
        self._spelled: dict[str, frozenset[str]] = {}
        self._configured: dict[str, str] = {}
        for name, rule in self.repo_config.topics.items():
            for spelling in (name, *rule.aliases):
                self._configured.setdefault(fold(spelling), name)

    def key(self, name: str) -> str:
        """The area a topic, module or folder name belongs to."""
        found = self._keys.get(name)
        if found is None:
            folded = fold(name)
            if name in self.repo_config.topics:
                found = name
            else:
                found = (self._configured.get(folded) or _BUILTIN_OF_FOLD.get(folded)
                         or _builtin_of_name().get(folded, folded))
            self._keys[name] = found
        return found

    def keys(self, names: Iterable[str]) -> tuple[str, ...]:
        """The areas of `names`, in order, each once."""
        return tuple(dict.fromkeys(area for area in map(self.key, names) if area))

    def observe(self, names: Iterable[str]) -> None:
        """Count the spellings the week uses: an area outside the configured and common
        ones is named by its most used spelling."""
        for name in names:
            if name:
                self.spellings.setdefault(self.key(name), Counter())[name] += 1

    def named_in(self, area: str, title: str) -> bool:
        """Whether a title names the area in one of its words, identifiers split
        (`build_npu_attn_mask` names npu): by its key, a configured topic's aliases,
        keywords and title words, or a common area's aliases."""
        words = {fold(w) for w in re.split(r"[^A-Za-z0-9.]+", title) if w}
        spellings = self._spellings(area)
        # Chinese is written without spaces: a name of it is found inside the title.
        return not words.isdisjoint(spellings) or any(
            not s.isascii() and s in title for s in spellings)

    def _spellings(self, area: str) -> frozenset[str]:
        found = self._spelled.get(area)
        if found is None:
            rule = self.repo_config.topics.get(area)
            names = [area, *(BUILTIN[area].aliases if area in BUILTIN else ())]
            if rule is not None:
                names += [*rule.aliases, *rule.keywords, *rule.title]
            found = self._spelled[area] = frozenset(fold(n) for n in names)
        return found

    def configured(self, area: str) -> bool:
        return area in self.repo_config.topics

    def name(self, area: str) -> str:
        """What the reader sees: the topic's label, the common area's name in the
        reader's language, else the spelling used most (ties: the shortest, then
        alphabetical)."""
        rule = self.repo_config.topics.get(area)
        if rule is not None and rule.label:
            return rule.label
        builtin = BUILTIN.get(area)
        if builtin is not None:
            return builtin.name if builtin.proper else self.t(builtin.name)
        seen = self.spellings.get(area)
        if not seen:
            return area
        return min(seen, key=lambda s: (-seen[s], len(s), s))

    def canonical(self, area: str) -> str:
        """The name an area is counted under in the digest's topics: the configured or
        common area's key, else its most used spelling."""
        if self.configured(area) or area in BUILTIN:
            return area
        seen = self.spellings.get(area)
        return min(seen, key=lambda s: (-seen[s], len(s), s)) if seen else area


# Areas that support code rather than being it: a PR's code outweighs its tests, docs
# and translations.
_SUPPORTING = frozenset({"tests", "docs", "i18n"})


def folder_area(paths: Sequence[str], package: str, trunk: frozenset[str] = frozenset()
                ) -> str:
    """The folder most of the files are in, as an area name: below the package's own
    folder, below generic folders (`vllm/v1/attention/...` is attention) and below the
    week's `trunk` (`week_trunk`), with CI, docs, tests and build files as those areas.
    Code outweighs tests, docs and translations; lock files count only where they are
    all there is; release-note fragments name none, and a PR of them alone is a docs
    change."""
    code: Counter[str] = Counter()
    other: Counter[str] = Counter()
    kept = where_changed(paths)
    if paths and not kept:
        return "docs"
    for path in [p for p in kept if not is_lock_file(p)] or kept:
        area = _path_area(path, package, trunk)
        if not area:
            continue
        (other if _BUILTIN_OF_FOLD.get(fold(area)) in _SUPPORTING else code)[area] += 1
    areas = code or other
    return min(areas, key=lambda a: (-areas[a], a)) if areas else ""


@lru_cache(maxsize=16384)
def _folders(path: str, package: str) -> tuple[tuple[str, ...], str]:
    """A path's folders below the package's and generic ones, and its file name."""
    parts = tuple(part for part in path.split("/") if part)
    folders, file = parts[:-1], parts[-1] if parts else ""
    while folders and (folders[0] == package or folders[0].lower() in GENERIC_FOLDERS):
        folders = folders[1:]  # `crates/uv/src/…` of astral-sh/uv: below `crates` and `uv`
    return folders, file


def _own_name(folder: str, package: str) -> str:
    """A module folder by its own name, without the project's it opens with
    (`hertzbeat-alerter` is `alerter`, as its PRs' `feat(alerter):` say)."""
    for joint in ("-", "_"):
        prefix = f"{package.lower()}{joint}"
        if package and folder.lower().startswith(prefix) and len(folder) > len(prefix):
            return folder[len(prefix):]
    return folder


@lru_cache(maxsize=16384)
def _path_area(path: str, package: str, trunk: frozenset[str] = frozenset()) -> str:
    return _path_place(path, package, trunk)[0]


def area_folder(path: str, package: str, trunk: frozenset[str] = frozenset()) -> str:
    """The folder of `path` its area is named by (`frontend/src/views/container`), ""
    where its area is a common one (CI at the top, a build file) or none."""
    return _path_place(path, package, trunk)[1]


def _path_place(path: str, package: str, trunk: frozenset[str]) -> tuple[str, str]:
    """A path's area and the folder that names it (see `folder_area`)."""
    if is_release_note(path):
        return "", ""
    parts = tuple(part for part in path.split("/") if part)
    if len(parts) > 1 and parts[0] in _FOLDER_AREAS:
        return _FOLDER_AREAS[parts[0]], ""
    if len(parts) > 1 and parts[0].startswith("."):
        # A hidden folder at the top holds the team's tools (`.vscode`, `.devcontainer`,
        # `.spin`, an editor's or a helper's skills): their environment, not a part of the
        # project.
        return "build", ""
    folders, file = _folders(path, package)
    while folders and folders[0] in trunk:
        if len(folders) == 1:
            return "", ""  # a file of the trunk itself: no area of its own
        # A trunk folder holds the week's areas: the area is below it.
        trunk = frozenset(t.split("/", 1)[1] for t in trunk if "/" in t and
                          t.startswith(folders[0] + "/"))
        folders = _skip_generic(folders[1:], package)
    if folders:
        at = len(parts) - 1 - len(folders)
        return _own_name(folders[0], package), "/".join(parts[: at + 1])
    if _BUILD_FILE.match(file) or is_lock_file(file):
        return "build", ""
    if _DOC_FILE.search(file):
        return "docs", ""
    if is_code(path) and not _TOOLING_FILE.search(file):
        # Code at the top of the package (`src/click/core.py`, `flask/app.py`, gin's
        # `context.go`) is the project's core, never outweighed by the tests beside it;
        # a tool's config or a script beside it (`vite.config.ts`, `install.sh`) is not.
        return "core", ""
    return "", ""


# A folder more than this share of a week's PRs are in is its trunk: it names no area.
TRUNK_SHARE = 0.5
_TRUNK_DEPTH = 4


def week_trunk(paths_of: Sequence[Sequence[str]], package: str) -> frozenset[str]:
    """The folders (`core`, `core/core-frontend`) more than `TRUNK_SHARE` of the week's
    PRs change code in, each below the one before: a repository whose every part sits
    under `core/` has its areas below it, and `core` names none of them. A folder of a
    common area (docs, tests, CI) is never a trunk, nor one of release notes."""
    trunk: list[str] = []
    prefix: tuple[str, ...] = ()
    paths_of = [where_changed(paths) for paths in paths_of]
    total = sum(1 for paths in paths_of if paths)
    for _ in range(_TRUNK_DEPTH):
        counts: Counter[str] = Counter()
        for paths in paths_of:
            below = set()
            for path in paths:
                folders, _ = _folders(path, package)
                rest = _below(folders, prefix, package)
                if rest is not None and len(rest) > 1 and not _common_folder(rest[0], prefix):
                    below.add(rest[0])
            counts.update(below)
        if not counts or total == 0:
            break
        folder, held = counts.most_common(1)[0]
        if held <= TRUNK_SHARE * total or held < 3:
            break
        prefix = (*prefix, folder)
        trunk.append("/".join(prefix))
    return frozenset(trunk)


def _common_folder(folder: str, prefix: tuple[str, ...]) -> bool:
    """A folder of a common area: tests, docs and translations anywhere, CI and build at
    the top."""
    area = _FOLDER_AREAS.get(folder.lower())
    return (_BUILTIN_OF_FOLD.get(fold(folder)) in _SUPPORTING
            or (area is not None and not prefix))


def _below(folders: tuple[str, ...], prefix: tuple[str, ...], package: str
           ) -> tuple[str, ...] | None:
    """`folders` below `prefix` (generic folders after it skipped), or None where the
    path is not under it."""
    if folders[: len(prefix)] != prefix:
        return None
    return _skip_generic(folders[len(prefix):], package) if prefix else folders


def _skip_generic(folders: tuple[str, ...], package: str) -> tuple[str, ...]:
    """`folders` without the generic folders and the package's own folder they open
    with (`crates/uv/src/...` below the trunk `crates`: `commands`), its last kept."""
    while len(folders) > 1 and (folders[0].lower() in GENERIC_FOLDERS
                                or folders[0] == package):
        folders = folders[1:]
    return folders


def docs_only(paths: Sequence[str]) -> bool:
    """Whether every file is documentation or a release note: such a PR is a docs change
    whatever its title's type says (`[doc] refactor: edit profiling docs`)."""
    return bool(paths) and all(_DOC_PATH.search(path) or is_release_note(path)
                               for path in paths)


# Translation files: message catalogs and the folders that hold them.
_TRANSLATION_PATH = re.compile(
    r"(^|/)(?:i18n|l10n|locales?|lang|translations?|LC_MESSAGES)/|\.(?:po|pot|mo|xliff?)$",
    re.I)


def translations_only(paths: Sequence[str]) -> bool:
    """Whether every file is a translation (`apps/i18n/…/django.po`, `locales/en.ts`):
    however large, such a PR updates words, not code. Its release notes do not count."""
    kept = where_changed(paths)
    return bool(kept) and all(_TRANSLATION_PATH.search(path) for path in kept)


def is_lock_file(path: str) -> bool:
    """Whether a changed file is a dependency lock file (see `_LOCK_FILE`)."""
    return bool(_LOCK_FILE.search(path))


# Files a tool writes from the code a person wrote: test snapshots (Jest's and
# Vitest's `__snapshots__/`, insta's `.snap`, syrupy's `.ambr`), generated protobuf
# code, minified bundles. However many lines they hold, they make no change large.
_GENERATED_FILE = re.compile(
    r"(^|/)__snapshots__/|\.snap$|\.ambr$|_pb2(?:_grpc)?\.pyi?$|\.pb(?:\.gw)?\.go$|"
    r"\.min\.(?:js|css)$")


def is_generated(path: str) -> bool:
    """Whether a changed file is written by a tool: a lock file or `_GENERATED_FILE`."""
    return is_lock_file(path) or bool(_GENERATED_FILE.search(path))


def lock_files_only(paths: Sequence[str]) -> bool:
    """Whether a PR only relocks dependencies: its files (release notes aside) are lock
    files, with at most the `requirements*.in` they are compiled from. However large,
    such a PR is a dependency update."""
    kept = where_changed(paths)
    return any(map(is_lock_file, kept)) and all(
        is_lock_file(path) or _LOCK_INPUT.search(path) for path in kept)


# Test files as each ecosystem names them: a tests folder, pytest's `test_x.py` and
# `conftest.py`, Go's `x_test.go` and `testdata/`, Jest's `x.test.ts` and `__tests__/`,
# RSpec's `x_spec.rb`, JUnit's `XTest.java`.
_TEST_FILE = re.compile(
    r"(^|/)([Tt]ests?|__tests__|testdata)/|(^|/)(test_[^/]*|conftest\.py)$|_test\.\w+$|"
    r"\.(test|spec)\.\w+$|_spec\.rb$|[a-z0-9]Tests?\.(java|kt|scala|cs|swift|php)$")


def is_test_file(path: str) -> bool:
    """Whether a changed file is a test or a test's data."""
    return bool(_TEST_FILE.search(path))


_CODE_FILE = re.compile(
    r"\.(?:py|pyx|c|cc|cpp|cu|cuh|h|hpp|rs|go|java|kt|kts|scala|rb|js|jsx|ts|tsx|vue|"
    r"svelte|swift|m|mm|cs|php|lua|dart|ex|exs|erl|hs|ml|zig|sh)$", re.I)
_NO_CODE_FOLDER = re.compile(r"(^|/)(?:docs?|tests?|i18n|l10n|locales?|lang|translations?|"
                             r"demos?|examples?|\.github)/", re.I)


def is_code(path: str) -> bool:
    """Whether a changed file is source code, the kind tests are written around."""
    return (bool(_CODE_FILE.search(path)) and not _NO_CODE_FOLDER.search(path)
            and not is_test_file(path))
