"""The package layers import one way only.

    schemas            -> schemas
    pipelines.ingest   -> schemas, pipelines.ingest, leaves
    pipelines.warehouse-> schemas, pipelines.ingest (the rows it loads), pipelines.warehouse, leaves
    pipelines.model    -> schemas, pipelines.warehouse, pipelines.model, leaves
    pipelines.lib      -> schemas, ingest, warehouse, model, itself, leaves (Dagster machinery
                          that defines nothing: writers, checks factory, keys, resource, progress)
    pipelines.defs     -> schemas, dashboards, ingest, warehouse, model, pipelines.lib, leaves
                          (never the CLI, nor pipelines.run; no asset module imports another)
    pipelines.definitions -> pipelines.defs, pipelines.lib, leaves (the code location beside defs/)
    pipelines.run      -> schemas, dashboards, pipelines.definitions, pipelines.defs, pipelines.lib,
                          ingest, warehouse, model, itself, leaves
    pipelines.cli      -> ingest, warehouse, model, leaves; pipelines.run, pipelines.defs and
                          dashboards only inside a function
    dashboards         -> dashboards
    tools              -> tools, schemas, pipelines but pipelines.defs, pipelines.run and pipelines.cli
    bench              -> bench, schemas, dashboards, pipelines (it drives builds as a user does)
    bench.baseline     -> bench.baseline, schemas, pipelines.model.uncertainty (the draws it reads):
                          a baseline written beside the model, never calling it

Leaves (importable by every layer but schemas and dashboards): ``pipelines.paths``,
``pipelines.errors``, ``pipelines.identifiers`` and ``pipelines.locks``. ``dagster`` is imported
only in ``pipelines.lib``, ``pipelines.defs``, ``pipelines.definitions``, ``pipelines.run`` and ``bench`` (and inside functions of
``pipelines.cli``). Nothing under ``pipelines`` imports ``tools`` or ``bench``. No module of
``pipelines`` imports itself back through others (no cycle, counting imports inside functions),
and ``pipelines/defs/`` stays thin: no function longer than :data:`THIN_LINES` lines that does
not use Dagster (domain logic lives in ingest, warehouse and model).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipelines.paths import PROJECT_ROOT

PACKAGES = ("pipelines", "schemas", "dashboards", "tools", "bench")
OURS = (*PACKAGES, "bench", "tests")
LEAVES = ("pipelines.paths", "pipelines.errors", "pipelines.identifiers", "pipelines.locks")

#: layer -> the layers its modules may import (by module-name prefix). Longest prefix wins.
RULES: dict[str, tuple[str, ...]] = {
    "schemas": ("schemas",),
    "pipelines.ingest": ("schemas", "pipelines.ingest", *LEAVES),
    "pipelines.warehouse": ("schemas", "pipelines.ingest", "pipelines.warehouse", *LEAVES),
    "pipelines.model": ("schemas", "pipelines.warehouse", "pipelines.model", *LEAVES),
    "pipelines.lib": ("schemas", "pipelines.ingest", "pipelines.warehouse", "pipelines.model", "pipelines.lib", *LEAVES),
    "pipelines.defs": ("schemas", "dashboards", "pipelines.defs", "pipelines.lib", "pipelines.ingest", "pipelines.warehouse",
                       "pipelines.model", *LEAVES),
    "pipelines.defs.assets": ("schemas", "dashboards", "pipelines.defs", "pipelines.lib", "pipelines.ingest", "pipelines.warehouse",
                              "pipelines.model", *LEAVES),
    "pipelines.definitions": ("pipelines.defs", "pipelines.lib", *LEAVES),
    "pipelines.run": ("schemas", "dashboards", "pipelines.definitions", "pipelines.defs", "pipelines.lib", "pipelines.ingest",
                      "pipelines.warehouse", "pipelines.model", "pipelines.run", *LEAVES),
    "pipelines.cli": ("pipelines.ingest", "pipelines.warehouse", "pipelines.model", *LEAVES),
    "pipelines.paths": (),
    "pipelines.errors": (),
    "pipelines.identifiers": (),
    "pipelines.locks": (),
    "pipelines": (),
    "dashboards": ("dashboards",),
    "tools": ("tools", "schemas", "pipelines"),
    "bench": ("bench", "schemas", "dashboards", "pipelines"),
    "bench.baseline": ("bench.baseline", "schemas", "pipelines.model.uncertainty"),
}
#: layer -> what it must not import although an allowed prefix covers it.
DENIED: dict[str, tuple[str, ...]] = {
    "tools": ("pipelines.lib", "pipelines.defs", "pipelines.definitions", "pipelines.run", "pipelines.cli"),
    # an asset module imports no other asset module: what two share lives in pipelines.lib
    "pipelines.defs.assets": ("pipelines.defs.assets",),
}
#: Layers that may import these only inside a function body (imported when called).
LAZY: dict[str, tuple[str, ...]] = {"pipelines.cli": ("pipelines.run", "pipelines.defs", "pipelines.definitions", "pipelines.lib",
                                                     "dashboards", "dagster")}
#: Third-party packages that are allowed only in some layers.
RESTRICTED = {"dagster": ("pipelines.lib", "pipelines.defs", "pipelines.definitions", "pipelines.run", "bench"), "dagster_k8s": ("pipelines.run.k8s",)}
#: A function of pipelines/defs/ longer than this that does not use Dagster is domain logic.
THIN_LINES = 40


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


#: Generated folders below the packages (git-ignored): the rendered site, and the bench's logs and the
#: reference commits' trees it builds (bench/out/reference-*/), which are other versions of the project.
GENERATED = ("dashboards/site/", "bench/out/")


def project_sources() -> tuple[dict[str, str], set[str]]:
    sources, packages = {}, set()
    for package in PACKAGES:
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            if path.relative_to(PROJECT_ROOT).as_posix().startswith(GENERATED):
                continue
            name = module_name(path, PROJECT_ROOT)
            sources[name] = path.read_text(encoding="utf-8")
            if path.name == "__init__.py":
                packages.add(name)
    return sources, packages


def test_the_project_keeps_its_layers() -> None:
    sources, packages = project_sources()
    assert "pipelines.definitions" in sources and "schemas.vocabulary" in sources
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
        ("pipelines.ingest.x", "import dagster as dg\n", "dagster is allowed only in pipelines.lib"),
        ("pipelines.warehouse.x", "from pipelines.model.formula import evaluate\n", "layer pipelines.warehouse"),
        ("pipelines.model.x", "from pipelines.lib.resources import Warehouse\n", "layer pipelines.model"),
        ("pipelines.model.x", "from pipelines.ingest.manifest import SourceEntry\n", "layer pipelines.model"),
        ("dashboards.x", "from pipelines.warehouse.queries import query_pl\n", "layer dashboards"),
        ("tools.x", "from pipelines.definitions import defs\n", "layer tools"),
        ("pipelines.defs.x", "from tools.capture import cli\n", "layer pipelines.defs"),
        ("pipelines.cli", "from pipelines.definitions import defs\n", "layer pipelines.cli"),
        ("pipelines.cli", "import dagster\n", "dagster is allowed only"),
        ("pipelines.ingest.parsers.x", "from ...defs import staging\n", "layer pipelines.ingest"),
        ("pipelines.defs.x", "def f():\n    from pipelines.cli import main\n", "layer pipelines.defs"),
        ("pipelines.defs.assets.x", "from pipelines.run.launch import materialise\n", "layer pipelines.defs"),
        ("pipelines.defs.assets.x", "from pipelines.defs.assets.marts import SCENARIOS\n", "layer pipelines.defs.assets"),
        ("pipelines.defs.x", "from pipelines.lib.progress import BatchedLog\nfrom pipelines.run.progress import x\n", "layer pipelines.defs"),
        ("pipelines.lib.x", "from pipelines.defs.partitions import POWER_LOGS\n", "layer pipelines.lib"),
        ("pipelines.lib.x", "from pipelines.run.launch import materialise\n", "layer pipelines.lib"),
        ("tools.x", "from pipelines.lib.tables import write_table\n", "layer tools"),
        ("tools.capture.x", "def f():\n    from pipelines import cli\n", "layer tools"),
        ("tools.x", "from pipelines.run.launch import materialise\n", "layer tools"),
        ("pipelines.run.x", "from pipelines.cli import main\n", "layer pipelines.run"),
        ("pipelines.ingest.x", "from pipelines.warehouse.lake import commit\n", "layer pipelines.ingest"),
        ("pipelines.x", "import bench.fleet\n", "layer pipelines"),
        ("bench.x", "from tests.helpers import build\n", "layer bench"),
        ("bench.x", "from tools.synthetic import write\n", "layer bench"),
        ("bench.baseline.x", "from pipelines.model.formula import evaluate\n", "layer bench.baseline"),
        ("pipelines.defs.x", "from dagster_k8s import k8s_job_executor\n", "dagster_k8s is allowed only"),
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
        "pipelines.cli": "def run():\n    import dagster as dg\n    from pipelines.definitions import defs\n",
        "tools.x": "from pipelines.ingest.parsers import rapl\nfrom schemas.vocabulary import PATTERNS\n"
                   "from pipelines.ingest.registration import Request\n",
        "pipelines.warehouse.x": "from pipelines.ingest.staging import Staged\n",
        "pipelines.defs.x2": "from pipelines.lib.progress import BatchedLog\nfrom pipelines.warehouse.power_logs import stage_runs\n",
        "pipelines.run.x": "import dagster as dg\nfrom pipelines.definitions import defs\n",
        "pipelines.lib.x": "import dagster as dg\nfrom pipelines.warehouse import tables\nfrom pipelines.lib.keys import key_of\n",
        "pipelines.defs.assets.x": "from pipelines.defs.partitions import POWER_LOGS\nfrom pipelines.lib.tables import sql_table\n",
        "pipelines.definitions": "from pipelines.defs.assets.dashboards import site_asset\nfrom pipelines.lib.keys import LIVE_KEY\n",
        "pipelines.cli.x": "def run():\n    from pipelines.run.launch import materialise\n",
        "bench.x": "import dagster as dg\nfrom pipelines.run.launch import materialise\nfrom dashboards import render_all\n",
        "bench.baseline.x": "import numpy as np\nfrom pipelines.model.uncertainty import Draws\nfrom schemas.vocabulary import PATTERNS\n",
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


def import_graph(sources: Mapping[str, str], packages: Iterable[str] = ()) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` it imports, at the top or inside a function."""
    packages = set(packages)
    return {module: {imp.target for imp in imports_of(module, source, is_package=module in packages)
                     if imp.target in sources and imp.target != module}
            for module, source in sources.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (an import circle), sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_module_of_pipelines_imports_itself_back() -> None:
    sources, packages = project_sources()
    ours = {m: s for m, s in sources.items() if _within(m, "pipelines")}
    graph = import_graph(ours, packages)
    assert graph["pipelines.run.launch"] >= {"pipelines.definitions"}  # the graph sees the imports
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle_through_a_function_import() -> None:
    sources = {
        "pipelines.cli": "def run():\n    from pipelines.run.launch import materialise\n",
        "pipelines.run.launch": "def fail():\n    from pipelines.cli import root_cause\n",
        "pipelines.lib.checks": "from pipelines.lib.staging import key_of\n",
        "pipelines.lib.staging": "def table():\n    from pipelines.lib.checks import staging_checks\n",
        "pipelines.lib.keys": "import dagster\n",
    }
    assert cycles(import_graph(sources)) == [["pipelines.cli", "pipelines.run.launch"],
                                             ["pipelines.lib.checks", "pipelines.lib.staging"]]


def long_functions_without_dagster(source: str, limit: int = THIN_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function in ``source`` longer than ``limit`` lines that references no
    name imported from dagster (``dg.``, or a name from ``from dagster import ...``)."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name.split(".")[0] == "dagster"}
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "dagster":
            names |= {alias.asname or alias.name for alias in node.names}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit and not any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)):
                out.append((node.name, length))
    return out


def test_defs_holds_no_domain_logic() -> None:
    found = {str(path.relative_to(PROJECT_ROOT)): long
             for path in sorted((PROJECT_ROOT / "pipelines" / "defs").rglob("*.py"))
             if (long := long_functions_without_dagster(path.read_text(encoding="utf-8")))}
    assert found == {}, "move these into pipelines/ingest, pipelines/warehouse or pipelines/model"


#: Machinery that defines nothing; it lives in pipelines/lib/, and the code location beside defs/.
NOT_DEFINITIONS = ("checks.py", "tables.py", "metadata.py", "keys.py", "staging.py", "resources.py", "progress.py",
                   "definitions.py")


def test_defs_holds_definitions_only() -> None:
    defs = PROJECT_ROOT / "pipelines" / "defs"
    assert sorted(p.name for p in defs.rglob("*.py") if p.name in NOT_DEFINITIONS) == []
    assert (PROJECT_ROOT / "pipelines" / "definitions.py").is_file()
    assert (PROJECT_ROOT / "pipelines" / "lib" / "tables.py").is_file()


def test_the_thin_check_tells_a_shell_from_domain_logic() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(THIN_LINES))
    domain = f"import dagster as dg\n\ndef stage(rows):\n{body}    return rows\n"
    shell = f"import dagster as dg\n\n@dg.asset\ndef table(rows):\n{body}    return rows\n"
    named = f"from dagster import asset\n\n@asset\ndef table(rows):\n{body}    return rows\n"
    short = "import dagster as dg\n\ndef stage(rows):\n" + "".join(f"    x{i} = {i}\n" for i in range(THIN_LINES - 2)) + "    return rows\n"
    assert long_functions_without_dagster(domain) == [("stage", THIN_LINES + 2)]  # def, body, return
    assert long_functions_without_dagster(shell) == long_functions_without_dagster(named) == []
    assert long_functions_without_dagster(short) == []


# --- device classes are rows, pages read marts ----------------------------------------------------
#
# A device class (laptop, phone, ...) is a row of core.scenario_devices, so the model, the marts,
# their contracts and the pages name none: they iterate over the rows. What counts as naming one is
# a *literal* in code: a Python string constant (found with ``ast``, so comments are not seen and
# docstrings, which are prose about the code, are skipped) or, in SQL, a quoted string or an
# identifier outside comments (``'phone'``, ``s.laptop_memory_gb``). A literal names a class when
# the class word stands in it as a word or a snake_case part (``phone``, ``phone_train_power_w``,
# ``T1_phone_energy``), in any case; a plural in prose (the claim's "idle phones and laptops") is
# not a class name. The paper's own claims (sql/marts/paper_reproduction.sql) name the paper's
# classes and are left out.

#: The device class words no file of :data:`CLASS_FREE` may spell in a literal.
CLASS_WORDS = ("laptop", "phone", "smartphone")
_CLASS_WORD = re.compile(r"(?<![a-z])(?:" + "|".join(CLASS_WORDS) + r")(?![a-z])", re.IGNORECASE)
#: Files and folders (below the project root) whose code names no device class.
CLASS_FREE = ("sql", "pipelines/model", "schemas/marts.py", "dashboards")
#: The paper's own claims: they compare the paper's laptop and phone numbers.
CLASS_EXEMPT = ("sql/marts/paper_reproduction.sql",)
#: SQL comments and string literals, in one pass so that a quote in a comment starts no string.
_SQL_COMMENT_OR_STRING = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.DOTALL)
#: What a dashboard query may not read: any schema of the warehouse but marts.
NOT_MARTS = re.compile(r"\b(?:staging|core|meta|raw|quarantine)\s*\.", re.IGNORECASE)


def python_literals(source: str) -> list[tuple[int, str]]:
    """(line, value) of every string constant in ``source`` but docstrings (f-string parts included)."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def sql_literals(sql: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal of ``sql``, and of every line of its code (comments and strings removed)."""
    found: list[tuple[int, str]] = []

    def blank(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("'"):
            found.append((sql.count("\n", 0, match.start()) + 1, text))
            return "''" + "\n" * text.count("\n")
        return "\n" * text.count("\n")

    code = _SQL_COMMENT_OR_STRING.sub(blank, sql)
    return found + [(i, line) for i, line in enumerate(code.splitlines(), start=1) if line.strip()]


def class_literals(path: str, text: str) -> list[str]:
    """``path:line: literal`` for every literal of ``text`` that names a device class."""
    literals = python_literals(text) if path.endswith(".py") else sql_literals(text)
    return [f"{path}:{line}: {value.strip()[:80]!r}" for line, value in literals if _CLASS_WORD.search(value)]


def class_free_files() -> dict[str, str]:
    """Every .py and .sql file of :data:`CLASS_FREE` (the rendered site aside) -> its text."""
    files: dict[str, str] = {}
    for entry in CLASS_FREE:
        root = PROJECT_ROOT / entry
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in (".py", ".sql"))
        for path in paths:
            relative = path.relative_to(PROJECT_ROOT).as_posix()
            if "site" not in path.relative_to(PROJECT_ROOT).parts and relative not in CLASS_EXEMPT:
                files[relative] = path.read_text(encoding="utf-8")
    return files


def test_no_model_mart_or_page_names_a_device_class() -> None:
    files = class_free_files()
    assert {"sql/marts/scaling_energy.sql", "schemas/marts.py", "dashboards/classes.py"} <= set(files)
    found = [hit for path, text in files.items() for hit in class_literals(path, text)]
    assert found == [], "device classes are rows (core.scenario_devices): iterate over them"


@pytest.mark.parametrize("path, text, expected", [
    ("x.py", 'CLASSES = ("laptop", "cloud_gpu")\n', ["x.py:1: 'laptop'"]),
    ("x.py", "order = [c for c in ('phone',)]\n", ["x.py:1: 'phone'"]),
    ("x.py", 'def f(c):\n    return f"{c}_x" if c else "Phone_train_power_w"\n', ["x.py:2: 'Phone_train_power_w'"]),
    ("x.py", '"""A laptop or a phone."""\n# the phone\nclaim = "idle phones and laptops"\n', []),
    ("x.sql", "select 'smartphone' as c -- a phone\n", ["x.sql:1: \"'smartphone'\""]),
    ("x.sql", "-- one laptop's rows\nselect s.laptop_memory_gb\nfrom s\n", ["x.sql:2: 'select s.laptop_memory_gb'"]),
    ("x.sql", "/* 'phone' */ select device_class from core.scenario_devices\n", []),
])
def test_the_class_check_finds_literals_not_prose(path: str, text: str, expected: list[str]) -> None:
    assert class_literals(path, text) == expected


def test_the_vocabulary_names_one_phone_class() -> None:
    """One name per class: the device specs' classes are the vocabulary's (``phone``, never ``smartphone``)."""
    from schemas.device_specs import DEVICE_CLASSES as SPEC_CLASSES
    from schemas.vocabulary import DEVICE_CLASSES

    assert set(DEVICE_CLASSES) <= set(SPEC_CLASSES) and "smartphone" not in SPEC_CLASSES
    import csv

    with (PROJECT_ROOT / "sources" / "curated" / "device_specs.csv").open(encoding="utf-8", newline="") as specs:
        classes = {row["device_class"] for row in csv.DictReader(specs)}
    # (a footprint's subcategory is its report's own word: Boavizta's 'smartphone')
    assert "smartphone" not in classes and "phone" in classes


def dashboard_reads(sql: str) -> list[str]:
    """What a dashboard query reads outside marts: schema-qualified names of the other schemas."""
    from pipelines.warehouse.lineage import strip_comments_and_strings, tables_read

    code = strip_comments_and_strings(sql)
    return sorted({t for t in tables_read(code) if not t.startswith("marts.")}
                  | {m.group(0).rstrip(" .").lower() for m in NOT_MARTS.finditer(code)})


def test_dashboard_queries_read_marts_only() -> None:
    """Pages read marts (``dashboards/sql`` only selects and shapes), and declare only marts.

    The Data dictionary page reads DuckDB's catalog (``duckdb_tables()``, ``duckdb_columns()``),
    not a table of the warehouse: it lists every table with its comments, which
    ``describe_warehouse`` writes just before the pages render, so a mart copying the catalog
    would be one more table to build and describe itself stale. The catalog functions are
    unqualified, so the check below does not see them, and ``CATALOG_TABLES`` stands for them.
    """
    import dashboards

    queries = sorted((PROJECT_ROOT / "dashboards" / "sql").glob("*.sql"))
    assert len(queries) >= 15
    found = {q.name: reads for q in queries if (reads := dashboard_reads(q.read_text(encoding="utf-8")))}
    assert found == {}
    declared = [t for t in dashboards.tables_read() if t not in dashboards.CATALOG_TABLES]
    assert declared and [t for t in declared if not t.startswith("marts.")] == []


def test_the_marts_check_sees_every_other_schema() -> None:
    sql = ("-- from staging.sources\nselect 'core.x' as s, a.zone from marts.grid_daily as a\n"
           "join CORE.scenarios using (scenario_id) where zone in (select zone from meta . lake_files)\n")
    assert dashboard_reads(sql) == ["core", "core.scenarios", "meta"]


# --- communication patterns, embodied policies, workload kinds and bases are rows --------------------
#
# A communication pattern is a row of core.patterns (sources/curated/patterns.csv), an embodied
# allocation policy one of core.embodied_policies (POLICY_ROWS), a workload kind one of
# core.workload_kinds (WORKLOAD_ROWS), an equivalence basis one of core.bases (BASIS_RULES): the model,
# its checks and the marts read their coefficients, weights and flags from the joined row, so no SQL
# file of theirs names one in a string literal ('pipeline', 'none', 'battery_wear', 'gpu_hours',
# 'measured_throughput', ...); scenario files name them.

#: Folders (below the project root) whose SQL names no communication pattern, policy or workload kind.
PATTERN_FREE = ("sql/model", "sql/core", "sql/marts", "sql/checks")


def pattern_literals(path: str, sql: str) -> list[str]:
    """``path:line: literal`` for every string literal of ``sql`` that names a communication pattern, an embodied
    allocation policy, a workload kind or an equivalence basis (the paper's own claims, CLASS_EXEMPT, may name the
    paper's basis)."""
    from schemas.vocabulary import BASES, PATTERNS, POLICIES, WORKLOADS

    named = (*PATTERNS, *POLICIES, *WORKLOADS, *(() if path in CLASS_EXEMPT else BASES))
    names = {name.lower() for name in named}
    return [f"{path}:{line}: {text}" for line, text in sql_literals(sql)
            if text.startswith("'") and text.strip("'").lower() in names]


def test_no_model_or_mart_sql_names_a_pattern() -> None:
    files = {p.relative_to(PROJECT_ROOT).as_posix(): p.read_text(encoding="utf-8")
             for folder in PATTERN_FREE for p in sorted((PROJECT_ROOT / folder).glob("*.sql"))}
    assert {"sql/core/model_evaluation.sql", "sql/model/macros.sql", "sql/model/model_rows.sql", "sql/marts/verdict.sql"} <= set(files)
    found = [hit for path, text in files.items() for hit in pattern_literals(path, text)]
    assert found == [], "patterns, policies and workload kinds are rows (core.patterns, ...): read their columns"


@pytest.mark.parametrize("sql, expected", [
    ("select * from evaluated where pattern = 'none'\n", ["x.sql:1: 'none'"]),
    ("select 1\nwhere p = 'Pipeline' or p = 'ring_allreduce'\n", ["x.sql:2: 'Pipeline'", "x.sql:2: 'ring_allreduce'"]),
    ("-- the 'pipeline' pattern\nselect 'pipeline stages' as label, pattern.splits_model from core.patterns as pattern\n", []),
    ("select case policy when 'battery_wear' then 1 end\nwhere workload_kind = 'gpu_hours' or basis = 'binding'\n",
     ["x.sql:1: 'battery_wear'", "x.sql:2: 'gpu_hours'", "x.sql:2: 'binding'"]),
])
def test_the_pattern_check_finds_names_not_prose(sql: str, expected: list[str]) -> None:
    assert pattern_literals("x.sql", sql) == expected


# --- methods are rows: no code list, no vocabulary repeated ----------------------------------------
#
# A method (an accounting frame, an embodied policy, a workload kind, an equivalence basis, a
# network method, a verdict category) is a row of its reference table, written from
# schemas/vocabulary.py; scenario files name it, and the model joins its rules as columns. So no
# SQL reads a frame, workload, policy or basis as a number (``cast(accounting_frame as integer)``),
# and no other file spells a list of its names: a literal list, tuple, set, SQL ``[...]``, ``in
# (...)`` or ``values (...)`` of two or more names of one vocabulary. A communication pattern list
# counts when it repeats a pattern vocabulary whole (PATTERNS, COMM_PATTERNS); a
# selection of patterns (the pages' "none, radio_window, pipeline") is a choice of what to show.

#: SQL that reads a method as a number.
CODE_CAST = re.compile(r"cast\s*\(\s*(?:\w+\.)?(?:frame|accounting_frame|workload_kind|policy|edge_embodied_policy|headline_basis|"
                       r"comm_pattern|code)\s+as\s+integer\s*\)", re.IGNORECASE)
#: Where no literal may repeat a vocabulary (the rendered site aside).
VOCABULARY_FREE = ("sql", "pipelines", "schemas", "dashboards", "bench", "tools")
#: SQL lists of quoted names: ``['a', 'b']``, ``in ('a', 'b')`` and ``values ('a'), ('b')``.
_SQL_NAME_LIST = re.compile(r"[\[(]\s*('[^']*'(?:\s*,\s*'[^']*')+)\s*[\])]|\(\s*'[^']*'\s*\)(?:\s*,\s*\(\s*'[^']*'\s*\))+")


def vocabularies() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(vocabularies any two of whose names make a list, vocabularies only repeated whole make one)."""
    from schemas import vocabulary as v

    named = {"accounting frames": v.ACCOUNTING_FRAMES, "embodied policies": tuple(v.POLICIES), "workload kinds": tuple(v.WORKLOADS),
             "equivalence bases": v.BASES, "network methods": tuple(v.NETWORK_METHODS), "resize powers": tuple(v.RESIZE_POWERS),
             "verdicts": v.VERDICTS,
             "capacity units": v.CAPACITY_UNITS}
    whole = {"PATTERNS": v.PATTERNS, "COMM_PATTERNS": v.COMM_PATTERNS}
    return ({k: frozenset(names) for k, names in named.items()}, {k: frozenset(names) for k, names in whole.items()})


def repeated_vocabulary(names: list[str]) -> str | None:
    """The vocabulary ``names`` (a literal list) repeats, or None."""
    named, whole = vocabularies()
    if len(names) < 2:
        return None
    found = [k for k, vocabulary in named.items() if set(names) <= vocabulary]
    found += [k for k, vocabulary in whole.items() if set(names) == vocabulary]
    return found[0] if found else None


def vocabulary_literals(path: str, text: str) -> list[str]:
    """``path:line: names (vocabulary)`` for every literal list of ``text`` that repeats a vocabulary,
    and every SQL cast of a method to a number."""
    found: list[tuple[int, list[str]]] = []
    hits: list[str] = []
    if path.endswith(".py"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.List | ast.Tuple | ast.Set) and node.elts and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                found.append((node.lineno, [e.value for e in node.elts]))
    else:
        code = re.sub(r"--[^\n]*|/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
        for match in _SQL_NAME_LIST.finditer(code):
            found.append((code.count("\n", 0, match.start()) + 1, re.findall(r"'([^']*)'", match.group(0))))
        hits += [f"{path}:{code.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in CODE_CAST.finditer(code)]
    return hits + [f"{path}:{line}: {names} ({vocabulary})" for line, names in found if (vocabulary := repeated_vocabulary(names))]


def test_no_file_reads_a_method_as_a_code_or_repeats_a_vocabulary() -> None:
    files = {}
    for entry in VOCABULARY_FREE:
        for path in sorted((PROJECT_ROOT / entry).rglob("*")):
            relative = path.relative_to(PROJECT_ROOT)
            if (path.suffix in (".py", ".sql") and not relative.as_posix().startswith(GENERATED)
                    and relative.as_posix() != "schemas/vocabulary.py"):
                files[relative.as_posix()] = path.read_text(encoding="utf-8")
    assert {"sql/core/model_evaluation.sql", "sql/model/macros.sql", "sql/model/model_rows.sql", "sql/checks/frame_consistency.sql",
            "schemas/marts.py"} <= set(files)
    found = [hit for path, text in files.items() for hit in vocabulary_literals(path, text)]
    assert found == [], "a method is a row of its reference table (schemas/vocabulary.py): join it or read the vocabulary"


@pytest.mark.parametrize("path, text, expected", [
    ("x.sql", "select case when cast(accounting_frame as integer) = 1 then 1 end", ["x.sql:1: cast(accounting_frame as integer)"]),
    ("x.sql", "select cast(s.workload_kind AS INTEGER)", ["x.sql:1: cast(s.workload_kind AS INTEGER)"]),
    ("x.sql", "select cast(cloud_gpu_variant as integer) -- cast(frame as integer)", []),
    ("x.sql", "select ['as_published', 'attributional', 'consequential'][1]",
     ["x.sql:1: ['as_published', 'attributional', 'consequential'] (accounting frames)"]),
    ("x.sql", "where basis in ('binding', 'measured_throughput')", ["x.sql:1: ['binding', 'measured_throughput'] (equivalence bases)"]),
    ("x.sql", "cross join (values ('radio_window'), ('idealized'), ('parameter_server'), ('ring_allreduce'), ('pipeline'), ('federated_round'), ('diloco_allreduce'), ('diloco_server'), ('diloco_ring'), ('diloco_pipeline')) as p (name)",
     ["x.sql:1: ['radio_window', 'idealized', 'parameter_server', 'ring_allreduce', 'pipeline', 'federated_round', 'diloco_allreduce', 'diloco_server', 'diloco_ring', 'diloco_pipeline'] (COMM_PATTERNS)"]),
    ("x.sql", "where pattern in ('none', 'radio_window')", []),
    ("x.py", 'FRAMES = ("as_published", "attributional")\n', ["x.py:1: ['as_published', 'attributional'] (accounting frames)"]),
    ("x.py", 'UNITS = ["TFLOPS", "GB/s", "jobs/h"]\nSHOWN = ["none", "pipeline"]\n', ["x.py:1: ['TFLOPS', 'GB/s', 'jobs/h'] (capacity units)"]),
    ("x.py", 'x = {"as_published": 1}\ny = ("as_published",)\n', []),
])
def test_the_vocabulary_check_finds_code_casts_and_repeated_lists(path: str, text: str, expected: list[str]) -> None:
    assert vocabulary_literals(path, text) == expected


# --- no Python module outside the vocabulary names a communication pattern ------------------------
#
# The pipelines and the pages pick patterns through the vocabulary's names for them (COMPUTE_ONLY,
# PAPER_PATTERN, SEARCH_PATTERNS, COMM_PATTERNS) or, on a page, from marts.scenarios: no string
# literal of theirs is a pattern's name. "none" is also plain English (a metadata "none", the
# static exports' "none"), so it counts only where it is compared with, or passed as, a pattern.

#: Packages whose Python names no communication pattern.
PATTERN_FREE_PYTHON = ("pipelines", "dashboards")
_COMPUTE_ONLY_USE = re.compile(r"""pattern["']?\)?\s*(?:==|!=)\s*["']none["']|patterns\s*=\s*[(\[]\s*["']none["']|pattern\s*=\s*'none'""")


def python_pattern_names(path: str, text: str) -> list[str]:
    """``path:line: name`` for every string literal of ``text`` that names a communication pattern."""
    from schemas.vocabulary import COMPUTE_ONLY, PATTERNS

    names = set(PATTERNS) - {COMPUTE_ONLY}
    found = [(node.lineno, node.value) for node in ast.walk(ast.parse(text))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names]
    found += [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in _COMPUTE_ONLY_USE.finditer(text)]
    return [f"{path}:{line}: {value}" for line, value in sorted(found)]


def test_no_pipeline_or_page_module_names_a_pattern() -> None:
    files = {p.relative_to(PROJECT_ROOT).as_posix(): p.read_text(encoding="utf-8")
             for folder in PATTERN_FREE_PYTHON for p in sorted((PROJECT_ROOT / folder).rglob("*.py"))
             if "site" not in p.relative_to(PROJECT_ROOT).parts}
    assert {"pipelines/defs/assets/uncertainty.py", "dashboards/uncertainty.py", "pipelines/model/sensitivity.py"} <= set(files)
    found = [hit for path, text in files.items() for hit in python_pattern_names(path, text)]
    assert found == [], "patterns are named in schemas/vocabulary.py (COMPUTE_ONLY, PAPER_PATTERN, ...) or read from marts.scenarios"


@pytest.mark.parametrize("text, expected", [
    ('PATTERNS = ["none", "radio_window", "pipeline"]\n', ["x.py:1: pipeline", "x.py:1: radio_window"]),
    ('rows.filter(pl.col("pattern") == "none")\n', ["x.py:1: pattern\") == \"none\""]),
    ('evaluate(con, inputs, patterns=("none",))\n', ["x.py:1: patterns=(\"none\""]),
    ('metadata={"problems": "none"}\nmode = "none"\n', []),
])
def test_the_python_pattern_check_finds_pattern_names(text: str, expected: list[str]) -> None:
    assert python_pattern_names("x.py", text) == expected
