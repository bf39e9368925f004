"""The wheel: it lists every package, carries the SQL, and builds the warehouse once installed.

The slow test builds the wheel from a copy of the repository without ``sources/``, checks that the
pinned set satisfies every dependency it declares, installs it into a fresh virtual environment
outside the repository, and runs ``edge-carbon run --skip-dashboards`` from an empty folder, reading
the repository's sources through ``$EDGE_CARBON_SOURCES``. The new environment borrows the
dependencies already installed for the tests (their folder is named by a ``.pth`` line, so the
checkout's editable hook is not read) rather than installing them a second time: a second copy of
Dagster, DuckDB and the rest is several hundred MB of disk on a CI machine that may have little.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import duckdb
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pipelines.paths import PROJECT_ROOT, SOURCES_ENV, WAREHOUSE_ENV, sql_text
from tests.helpers import pinned_versions

PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: The top-level packages the wheel ships (bench/ and tests/ stay in the repository).
SHIPPED = ("schemas", "pipelines", "dashboards", "tools")
#: Top-level folders left out of the copy the wheel is built from: inputs, generated files, environments.
NOT_COPIED = {".git", ".venv", "sources", "tests", "bench", "warehouse", "test-artifacts", "build", "dist",
              ".dagster_home", ".pytest_cache", ".ruff_cache", ".hypothesis"}


def tree_packages() -> set[str]:
    """Every folder with an ``__init__.py`` below the shipped top-level packages, as a dotted name."""
    found = set()
    for top in SHIPPED:
        for init in (PROJECT_ROOT / top).rglob("__init__.py"):
            relative = init.parent.relative_to(PROJECT_ROOT)
            if "site" not in relative.parts:  # dashboards/site/ is generated output
                found.add(".".join(relative.parts))
    return found


def test_the_wheel_lists_every_package() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert listed - {"pipelines.sql"} == tree_packages(), "update [tool.setuptools] packages in pyproject.toml"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"pipelines.sql": "sql"}


def test_the_docs_name_the_supported_pythons() -> None:
    low, high = (int(v.split(".")[1]) for v in re.findall(r"3\.\d+", PYPROJECT["project"]["requires-python"]))
    assert PYPROJECT["project"]["requires-python"] == f">=3.{low},<3.{high}"
    versions = [f"3.{minor}" for minor in range(low, high)]
    named = ", ".join(versions[:-1]) + f" or {versions[-1]}"
    for page in ("README.md", "docs/install.md"):
        assert f"Python {named}" in (PROJECT_ROOT / page).read_text(encoding="utf-8"), page


def test_sql_is_read_from_the_checkout() -> None:
    assert sql_text("model/macros.sql") == (PROJECT_ROOT / "sql" / "model" / "macros.sql").read_text(encoding="utf-8")


def declared_requirements(wheel: Path) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` lines that apply to a plain install (no extra) on this interpreter."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode("utf-8")
    found = [Requirement(line.split(":", 1)[1].strip()) for line in text.splitlines() if line.startswith("Requires-Dist:")]
    applies = [r for r in found if r.marker is None or r.marker.evaluate({"extra": ""})]
    assert applies, "the wheel declares no dependencies"
    return applies


def _ignore(folder: str, names: list[str]) -> set[str]:
    here = Path(folder).resolve()
    skip = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    if here == PROJECT_ROOT:
        skip |= NOT_COPIED & set(names)
    if here == PROJECT_ROOT / "dashboards":
        skip.add("site")
    return skip


@pytest.mark.slow
def test_installed_wheel_builds_the_warehouse(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(PROJECT_ROOT, src, ignore=_ignore)
    dist = tmp_path / "dist"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", SOURCES_ENV, WAREHOUSE_ENV, "EDGE_CARBON_SITE")}
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
                           env=env, capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("edge_carbon-*.whl")

    names = set(zipfile.ZipFile(wheel).namelist())
    sql = {f"pipelines/sql/{p.relative_to(PROJECT_ROOT / 'sql').as_posix()}" for p in (PROJECT_ROOT / "sql").rglob("*.sql")}
    dashboard_sql = {f"dashboards/sql/{p.name}" for p in (PROJECT_ROOT / "dashboards" / "sql").glob("*.sql")}
    assert sql and sql <= names, sorted(sql - names)
    assert dashboard_sql and dashboard_sql <= names, sorted(dashboard_sql - names)
    assert not [n for n in names if n.startswith(("sources/", "tests/", "bench/", "dashboards/site/"))]

    pins = pinned_versions()
    for requirement in declared_requirements(wheel):
        key = canonicalize_name(requirement.name)
        assert key in pins, f"{requirement.name} is a dependency of the wheel but constraints.txt does not pin it"
        assert requirement.specifier.contains(pins[key], prereleases=True), f"constraints.txt pins {key}=={pins[key]}, outside {requirement}"

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False, clear=True)
    python = env_dir / "bin" / "python"
    new_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    (new_site / "_borrowed_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
                               env=env, capture_output=True, text=True, timeout=600, check=False)
    assert installed.returncode == 0, installed.stdout[-4000:] + installed.stderr[-4000:]

    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    warehouse = tmp_path / "wh" / "edge_carbon.duckdb"
    run_env = {**env, SOURCES_ENV: str(PROJECT_ROOT / "sources"), WAREHOUSE_ENV: str(warehouse)}
    where = subprocess.run([str(python), "-c", "import pipelines.paths as p; print(p.IN_CHECKOUT, p.__file__)"],
                           cwd=cwd, env=run_env, capture_output=True, text=True, timeout=120, check=False)
    in_checkout, module = where.stdout.split()
    assert in_checkout == "False" and Path(module).resolve().is_relative_to(env_dir.resolve()), where.stdout + where.stderr
    done = subprocess.run([str(env_dir / "bin" / "edge-carbon"), "run", "--skip-dashboards"],
                          cwd=cwd, env=run_env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select count(*) from marts.verdict").fetchone()[0] > 0
    assert not list(cwd.iterdir()), "the installed run wrote into the current directory"
