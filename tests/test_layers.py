"""The package layers import one way only.

    schemas            -> schemas
    pipelines.ingest   -> schemas, pipelines.ingest, leaves
    pipelines.warehouse-> schemas, pipelines.warehouse, leaves
    pipelines.model    -> schemas, pipelines.warehouse, pipelines.model, leaves
    pipelines.defs     -> anything of ours but tools
    pipelines.cli      -> ingest, warehouse, model, leaves; pipelines.defs and dashboards only
                          inside a function
    dashboards         -> dashboards
    tools              -> tools, schemas, pipelines but pipelines.defs

Leaves (importable by every layer but schemas and dashboards): ``pipelines.paths``,
``pipelines.errors``, ``pipelines.identifiers`` and ``pipelines.locks``. ``dagster`` is imported only in ``pipelines.defs`` (and inside functions
of ``pipelines.cli``). Nothing under ``pipelines`` imports ``tools``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipelines.paths import PROJECT_ROOT

PACKAGES = ("pipelines", "schemas", "dashboards", "tools")
OURS = (*PACKAGES, "bench", "tests")
LEAVES = ("pipelines.paths", "pipelines.errors", "pipelines.identifiers", "pipelines.locks")

#: layer -> the layers its modules may import (by module-name prefix). Longest prefix wins.
RULES: dict[str, tuple[str, ...]] = {
    "schemas": ("schemas",),
    "pipelines.ingest": ("schemas", "pipelines.ingest", *LEAVES),
    "pipelines.warehouse": ("schemas", "pipelines.warehouse", *LEAVES),
    "pipelines.model": ("schemas", "pipelines.warehouse", "pipelines.model", *LEAVES),
    "pipelines.defs": ("schemas", "pipelines", "dashboards"),  # everything but tools
    "pipelines.cli": ("pipelines.ingest", "pipelines.warehouse", "pipelines.model", *LEAVES),
    "pipelines.paths": (),
    "pipelines.errors": (),
    "pipelines.identifiers": (),
    "pipelines.locks": (),
    "pipelines": (),
    "dashboards": ("dashboards",),
    "tools": ("tools", "schemas", "pipelines"),
}
#: layer -> what it must not import although an allowed prefix covers it.
DENIED: dict[str, tuple[str, ...]] = {"tools": ("pipelines.defs",)}
#: Layers that may import these only inside a function body (imported when called).
LAZY: dict[str, tuple[str, ...]] = {"pipelines.cli": ("pipelines.defs", "dashboards", "dagster")}
#: Third-party packages that are allowed only in some layers.
RESTRICTED = {"dagster": ("pipelines.defs",)}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the imported module (absolute)
    line: int
    in_function: bool


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(module: str, rules: Iterable[str]) -> str | None:
    matches = [layer for layer in rules if _within(module, layer)]
    return max(matches, key=len) if matches else None


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(module: str, source: str, *, is_package: bool = False) -> list[Import]:
    """Every import in ``source`` (absolute names; relative ones resolved), with its place."""
    tree = ast.parse(source)
    out: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                out.extend(Import(module, a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                out.append(Import(module, target, child.lineno, in_function))
                # ``from pkg import submodule`` imports pkg.submodule
                out.extend(Import(module, f"{target}.{a.name}", child.lineno, in_function) for a in child.names)
            visit(child, nested)

    visit(tree, False)
    return out


def violations(sources: Mapping[str, str], packages: Iterable[str] = ()) -> list[str]:
    """Broken rules in ``sources`` (module name -> source text)."""
    packages = set(packages)
    problems = []
    for module, source in sorted(sources.items()):
        layer = layer_of(module, RULES)
        if layer is None:
            continue
        for imp in imports_of(module, source, is_package=module in packages):
            top = imp.target.split(".")[0]
            where = f"{module}:{imp.line} imports {imp.target}"
            lazy = imp.in_function and any(_within(imp.target, p) for p in LAZY.get(layer, ()))
            if top in RESTRICTED:
                if not lazy and not any(_within(module, p) for p in RESTRICTED[top]):
                    problems.append(f"{where}: {top} is allowed only in {', '.join(RESTRICTED[top])}")
                continue
            # ``from pipelines import paths`` names the (empty) top package first
            if top not in OURS or lazy or imp.target == "pipelines":
                continue
            allowed = any(_within(imp.target, a) for a in RULES[layer])
            if not allowed or any(_within(imp.target, d) for d in DENIED.get(layer, ())):
                problems.append(f"{where}: layer {layer} may import only {', '.join(RULES[layer]) or 'nothing of ours'}")
    # ``from a.b import c`` is checked as a.b and as a.b.c: report each statement once
    seen: set[str] = set()
    return [p for p in problems if not (p.split(" imports ")[0] in seen or seen.add(p.split(" imports ")[0]))]


def project_sources() -> tuple[dict[str, str], set[str]]:
    sources, packages = {}, set()
    for package in PACKAGES:
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            if "site" in path.relative_to(PROJECT_ROOT).parts:
                continue
            name = module_name(path, PROJECT_ROOT)
            sources[name] = path.read_text(encoding="utf-8")
            if path.name == "__init__.py":
                packages.add(name)
    return sources, packages


def test_the_project_keeps_its_layers() -> None:
    sources, packages = project_sources()
    assert "pipelines.defs.definitions" in sources and "schemas.vocabulary" in sources
    assert violations(sources, packages) == []


def test_every_module_belongs_to_a_layer() -> None:
    sources, _ = project_sources()
    assert [m for m in sources if layer_of(m, RULES) is None] == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("schemas.x", "from pipelines.defs import metadata\n", "layer schemas may import only schemas"),
        ("schemas.x", "import pipelines.model.formula\n", "layer schemas may import only schemas"),
        ("schemas.x", "from pipelines.errors import ManifestError\n", "layer schemas"),
        ("pipelines.ingest.x", "from pipelines.warehouse.queries import query_pl\n", "layer pipelines.ingest"),
        ("pipelines.ingest.x", "import dagster as dg\n", "dagster is allowed only in pipelines.defs"),
        ("pipelines.warehouse.x", "from pipelines.model.formula import evaluate\n", "layer pipelines.warehouse"),
        ("pipelines.model.x", "from pipelines.defs.resources import Warehouse\n", "layer pipelines.model"),
        ("pipelines.model.x", "from pipelines.ingest.manifest import SourceEntry\n", "layer pipelines.model"),
        ("dashboards.x", "from pipelines.warehouse.queries import query_pl\n", "layer dashboards"),
        ("tools.x", "from pipelines.defs.definitions import defs\n", "layer tools"),
        ("pipelines.defs.x", "from tools.capture import cli\n", "layer pipelines.defs"),
        ("pipelines.cli", "from pipelines.defs.definitions import defs\n", "layer pipelines.cli"),
        ("pipelines.cli", "import dagster\n", "dagster is allowed only"),
        ("pipelines.ingest.parsers.x", "from ...defs import staging\n", "layer pipelines.ingest"),
    ],
)
def test_the_checker_catches_a_reversed_import(module: str, source: str, expected: str) -> None:
    found = violations({module: source})
    assert found and expected in found[0], found


def test_the_checker_allows_the_rules() -> None:
    allowed = {
        "schemas.x": "from schemas.base import Provenance\nimport polars as pl\n",
        "pipelines.ingest.x": "from pipelines.errors import ManifestError\nfrom schemas.meta import conform\nfrom pipelines import paths\n",
        "pipelines.model.x": "from pipelines.warehouse.queries import query_pl\n",
        "pipelines.defs.x": "import dagster as dg\nfrom dashboards import shell\nfrom pipelines.model import formula\n",
        "pipelines.cli": "def run():\n    import dagster as dg\n    from pipelines.defs.definitions import defs\n",
        "tools.x": "from pipelines.ingest.parsers import rapl\nfrom schemas.vocabulary import PATTERNS\n",
        "dashboards.x": "from .shell import Page\nimport duckdb\n",
    }
    assert violations(allowed) == []


def test_a_parser_and_a_contract_load_no_dagster() -> None:
    code = textwrap.dedent(
        """
        import sys
        import pipelines.ingest.parsers.nvidia_smi, pipelines.ingest.parsers.ember
        import pipelines.ingest.staging, pipelines.warehouse.tables, pipelines.model.formula
        import schemas.grid_intensity, schemas.marts
        import dashboards
        loaded = sorted(m for m in sys.modules if m.split(".")[0] == "dagster")
        assert not loaded, loaded[:5]
        """
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
