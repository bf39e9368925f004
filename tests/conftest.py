"""Shared fixtures.

The whole pipeline is built once per session into a temporary folder (``built_warehouse``) with
a small run config (:data:`TEST_DRAWS` Monte Carlo draws, :data:`TEST_SOBOL_BASE_SAMPLES` Sobol
base samples, no static PNG/SVG exports), so every value a test reads from it holds at any
run config. Tests of numbers only the default config gives (the README's verdict table) use
``default_warehouse``, a second build at the defaults of ``edge-carbon run``, and are marked ``slow``.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import dagster as dg
import pytest

from pipelines.paths import WAREHOUSE_ENV

#: Monte Carlo draws per scenario in test builds (the default, 50,000, is for ``edge-carbon run``).
TEST_DRAWS = 4_000
#: Sobol base samples in test builds (a power of 2; the default build uses more).
TEST_SOBOL_BASE_SAMPLES = 64
#: Environment variables a build reads; every test starts with them pointed into its session's temporary folder.
SITE_ENV = "EDGE_CARBON_SITE"
DAGSTER_HOME_ENV = "DAGSTER_HOME"


def run_config_for(path: Path, *, default: bool = False, ops: frozenset[str] | None = None) -> dict:
    """Run config of a test build publishing to ``path``: the site beside it, without static
    exports; the small Monte Carlo unless ``default`` (then the defaults of ``edge-carbon run``).
    ``ops``: the ops the job has (config for others is left out)."""
    config: dict = {"dashboards__site": {"config": {"out_dir": str(path.parent / "site"), "static_exports": "none"}}}
    if not default:
        config["monte_carlo"] = {"config": {"n_draws": TEST_DRAWS, "sobol_base_samples": TEST_SOBOL_BASE_SAMPLES}}
    return {"ops": {op: value for op, value in config.items() if ops is None or op in ops}}


def with_run_config_for(run_config: dict, path: Path, job: dg.JobDefinition) -> dict:
    """``run_config`` (a schedule's request, say) plus the test build's config of the ops ``job`` has."""
    ops = run_config_for(path, ops=frozenset(job.graph.node_dict))["ops"]
    return {**run_config, "ops": {**ops, **run_config.get("ops", {})}}


def build(path: Path, *, default: bool = False, only: Sequence[str] = ()) -> dg.ExecuteInProcessResult:
    """Run the build_warehouse job, publishing to ``path`` (see :func:`run_config_for`).

    ``only``: asset keys (``"marts/training_energy"``); then just they and what they are built
    from are materialised, into a working copy of ``path`` as any run.
    """
    from pipelines.definitions import defs
    from pipelines.lib.resources import Warehouse
    from pipelines.run.launch import every_log

    job = defs.resolve_job_def("build_warehouse")
    if only:
        graph = defs.resolve_asset_graph()
        keys = (dg.AssetKey.from_user_string(key) for key in only)
        wanted = dg.AssetSelection.assets(*keys).upstream().required_multi_asset_neighbors().resolve(graph)
        job = job.get_subset(asset_selection=wanted & set(job.asset_layer.selected_asset_keys))
    instance = dg.DagsterInstance.ephemeral()
    tags = every_log(instance) if dg.AssetKey(["staging", "power_samples"]) in job.asset_layer.selected_asset_keys else {}
    return job.execute_in_process(
        instance=instance,
        tags=tags,
        resources={"warehouse": Warehouse(path=str(path))},
        run_config=run_config_for(path, default=default, ops=frozenset(job.graph.node_dict)),
        raise_on_error=False,
    )


def _built(path: Path, *, default: bool = False) -> Path:
    result = build(path, default=default)
    failures = [e.step_key for e in result.all_events if e.is_step_failure]
    assert result.success, f"pipeline failed in steps {failures}"
    return path


@pytest.fixture(scope="session", autouse=True)
def _isolated_outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test writes into the checkout: the site (``EDGE_CARBON_SITE``) and Dagster's instance
    (``DAGSTER_HOME``, which the Makefile sets to the project's) go to a temporary folder, also
    for the ``edge-carbon`` subprocesses tests start. Tests may override either with ``monkeypatch``."""
    root = tmp_path_factory.mktemp("outputs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SITE_ENV, str(root / "site"))
        patch.setenv(DAGSTER_HOME_ENV, str(root / "dagster_home"))
        yield


#: Working copies are looked for this many folders below the session's temporary root.
RUNS_DEPTH = 3


def working_copies(root: Path) -> set[Path]:
    """Every file or folder left in a ``.runs/`` folder (a run's working copy, its record or
    scratch) up to :data:`RUNS_DEPTH` folders below ``root``."""
    found: set[Path] = set()
    for depth in range(RUNS_DEPTH):
        found.update(root.glob("/".join(["*"] * depth + [".runs", "*"])))
    return found


@pytest.fixture(autouse=True)
def _no_working_copy_left(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After every test, no run left a working copy behind: a run that succeeded moved its copy
    over the published file, one that failed or was refused deleted it. Tests that kill a run
    (``@pytest.mark.kills_runs``) are exempt: the next run's sweep removes such copies."""
    root = tmp_path_factory.getbasetemp()
    before = working_copies(root)
    yield
    if request.node.get_closest_marker("kills_runs") is None:
        left = sorted(str(path.relative_to(root)) for path in working_copies(root) - before)
        assert left == [], f"working copies left behind: {left}"


#: The fixture whose build every worker of a test run shares (tests open it read-only or copy it).
SHARED_BUILD = "built_warehouse"


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A warehouse built once per test run from the shipped sources at the test run config; tests
    open it read-only (or copy it). Under pytest-xdist the workers share one build: the first to
    need it builds it in the run's temporary folder while holding a file lock, the others wait
    for it (:func:`pytest_collection_modifyitems` gives them other tests meanwhile)."""
    if worker_id == "master":
        return _built(tmp_path_factory.mktemp("warehouse") / "edge_carbon.duckdb")
    root = tmp_path_factory.getbasetemp().parent / "shared_warehouse"
    root.mkdir(exist_ok=True)
    path, done = root / "edge_carbon.duckdb", root / "built"
    with (root / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():  # a failed build leaves no mark: the next worker tries again and fails the same way
            _built(path)
            done.touch()
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One test that needs the shared build first, every test that does not next, the others last:
    the worker that takes the first builds the warehouse while the others run tests without it."""
    needs = [item for item in items if SHARED_BUILD in getattr(item, "fixturenames", ())]
    if needs:
        others = [item for item in items if SHARED_BUILD not in getattr(item, "fixturenames", ())]
        items[:] = [needs[0], *others, *needs[1:]]


@pytest.fixture(scope="session")
def default_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse built at the defaults of ``edge-carbon run`` (50,000 draws per scenario);
    only for tests of numbers the docs quote from ``make run``. Mark its tests ``slow``."""
    return _built(tmp_path_factory.mktemp("default_warehouse") / "edge_carbon.duckdb", default=True)


@pytest.fixture(scope="session")
def rendered_site(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict]:
    """``render(warehouse, static="none")``: the dashboards rendered from ``warehouse`` once per
    test session (shared by the dashboard, dictionary and browser tests), without static exports
    unless ``static`` says otherwise, into the session's temporary folder, which pytest owns and
    prunes, so a test run leaves no site behind in the system's temporary folder."""
    from dashboards import render_all

    sites: dict[tuple[Path, str], dict] = {}

    def render(warehouse: Path, static: str = "none") -> dict:
        if (warehouse, static) not in sites:
            sites[(warehouse, static)] = render_all(warehouse, tmp_path_factory.mktemp("site"), static=static)
        return sites[(warehouse, static)]

    return render


@pytest.fixture
def warehouse_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point EDGE_CARBON_WAREHOUSE at a fresh temporary file."""
    path = tmp_path / "wh" / "edge_carbon.duckdb"
    monkeypatch.setenv(WAREHOUSE_ENV, str(path))
    return path
