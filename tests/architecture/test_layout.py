"""The README's Layout is the tree: every path it lists exists, and it lists every top-level
folder and every Python package of the repository (git-ignored and hidden folders aside).
Every relative link of README.md and docs/*.md points at a file that exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pipelines.paths import PROJECT_ROOT

#: Lines indented this far or more continue the description of the entry above.
CONTINUATION_INDENT = 16


def layout_block(readme: str) -> str:
    """The ```text block of the README's ``## Layout`` section."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```text\n(.*?)```", section, flags=re.S)
    assert match, "README.md's Layout section has no ```text block"
    return match.group(1)


def listed_paths(block: str) -> list[str]:
    """Every path named in the first column, nested by two-space indentation under its folder."""
    parents: list[str] = []
    paths = []
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent >= CONTINUATION_INDENT:
            continue
        assert indent % 2 == 0, f"odd indentation: {line!r}"
        level = indent // 2
        assert level <= len(parents), f"indented deeper than its folder: {line!r}"
        del parents[level:]
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split(", ")
        for name in names:
            path = "".join(parents) + name
            paths.append(path.rstrip("/"))
        if names[-1].endswith("/"):
            parents.append(names[-1])
    return paths


def repository_files() -> list[Path]:
    """Tracked and untracked files that git does not ignore (without git: a walk minus the usual outputs)."""
    try:
        done = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=PROJECT_ROOT,
                              capture_output=True, check=True, timeout=60)
        files = [PROJECT_ROOT / name for name in done.stdout.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        outputs = ("warehouse/", "test-artifacts/", "build/", "dist/", "dashboards/site/", "bench/out/")
        files = [p for p in PROJECT_ROOT.rglob("*")
                 if not p.relative_to(PROJECT_ROOT).as_posix().startswith(outputs)
                 and not any(part.startswith(".") or part == "__pycache__" or part.endswith(".egg-info")
                             for part in p.relative_to(PROJECT_ROOT).parts)]
    return [f for f in files if f.is_file()]


def expected_paths() -> set[str]:
    """Top-level folders (not hidden) and every folder holding an ``__init__.py``."""
    expected = set()
    for file in repository_files():
        parts = file.relative_to(PROJECT_ROOT).parts
        if len(parts) > 1 and not parts[0].startswith("."):
            expected.add(parts[0])
        if file.name == "__init__.py":
            expected.add("/".join(parts[:-1]))
    return expected


LISTED = listed_paths(layout_block((PROJECT_ROOT / "README.md").read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", LISTED)
def test_every_listed_path_exists(path: str) -> None:
    assert (PROJECT_ROOT / path).exists(), f"README.md's Layout lists {path}, which does not exist"


def test_every_folder_and_package_is_listed() -> None:
    missing = sorted(expected_paths() - set(LISTED))
    assert not missing, f"README.md's Layout does not list {missing}"


def test_the_parser_nests_entries_under_their_folder() -> None:
    block = "a/   x\n  b.py, c/   y\n    d/   z\n                    more of z\ne.txt   w\n"
    assert listed_paths(block) == ["a", "a/b.py", "a/c", "a/c/d", "e.txt"]


@pytest.mark.parametrize("page", ["README.md", *sorted(p.name for p in (PROJECT_ROOT / "docs").glob("*.md"))])
def test_relative_links_resolve(page: str) -> None:
    path = PROJECT_ROOT / page if page == "README.md" else PROJECT_ROOT / "docs" / page
    links = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8"))
    broken = [link for link in links if "://" not in link and not (path.parent / link).exists()]
    assert not broken, f"{page} links to missing files: {broken}"


def test_tests_live_in_folders_named_for_the_code() -> None:
    """A contributor finds a module's tests by its area: no test module at the top of tests/, and
    each folder of tests is one the README's Layout lists."""
    tests = PROJECT_ROOT / "tests"
    assert sorted(p.name for p in tests.glob("test_*.py")) == []
    folders = {p.parent.relative_to(PROJECT_ROOT).as_posix() for p in tests.rglob("test_*.py")}
    assert folders and folders <= set(LISTED), sorted(folders - set(LISTED))
