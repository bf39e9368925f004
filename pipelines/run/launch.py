"""Launching builds on Dagster's own executors: the whole warehouse, some power logs, or what
lies downstream of them; in one process, or in N worker processes.

``materialise`` is what ``edge-carbon run`` (and ``make run``, ``make run WORKERS=2``) calls:

- ``scope="all"``: every asset of the build_warehouse job (every registered log's partition);
  with ``logs``, only those logs' partitions, staging.sources and everything downstream of them.
- ``scope="ingest"``: the power-log partitions (``logs``, else all) and the staging tables
  they feed (staging.benchmark_runs, staging.benchmark_series), with staging.sources (which
  lists every registered file, so that a new log's id joins it).
- ``scope="downstream"``: what lies downstream of those staging tables (the marts), no partition.

``workers=1`` runs on the in-process executor: the Warehouse resource copies the published
file at run start and publishes at run end. ``workers=N`` runs on the multiprocess executor
with N processes: each step opens the run's working copy in turn (the ingest steps write
Parquet and open no connection, so they run side by side; the logs are split into N of them,
as every step costs a process), and the copy is published here once the run has succeeded
(:func:`pipelines.warehouse.database.publish_run`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.definitions import BUILD_SELECTION, defs
from pipelines.defs.partitions import sync_power_logs
from pipelines.errors import EdgeCarbonError
from pipelines.lib.checks import SUMMARY_KEY
from pipelines.paths import sql_text, warehouse_path
from pipelines.run import console
from pipelines.warehouse.database import publish_lock, publish_run

SCOPES = ("all", "ingest", "downstream")
SAMPLES_KEY = dg.AssetKey(["staging", "power_samples"])
SOURCES_KEY = dg.AssetKey(["staging", "sources"])
RUNS_KEYS = (dg.AssetKey(["staging", "benchmark_runs"]), dg.AssetKey(["staging", "benchmark_series"]))
PARAMETERS_KEY = dg.AssetKey(["core", "scenario_parameters"])
#: staging.sources' op: a what-if that stages a scenario file registered since the last full build adds its row there.
SOURCES_OP = "staging__sources"
#: core.scenario_parameters' op, and a reference of a scenario row to a staged row (its failure names it).
PARAMETERS_OP = "core__scenario_parameters"
REFERENCE = re.compile(r"\b(?:factor|range)_ref\b")
REPRODUCTION_KEY = dg.AssetKey(["marts", "paper_reproduction"])
#: marts.claims recomputes Xue et al.'s claim from the paper's scenario's rows of marts.verdict, so a what-if over
#: another scenario (whose run holds that scenario's rows alone) leaves it as published, as marts.paper_reproduction.
CLAIMS_KEY = dg.AssetKey(["marts", "claims"])
#: Modules each worker process imports once, before it runs steps (the multiprocess executor's
#: forkserver), so a step does not pay for importing Dagster and the definitions again.
PRELOAD = ["pipelines.run.parallel"]
#: Events whose error the CLI reports when no step failed: a resource that could not start, or
#: one that failed as it tore down (a refused publish).
ENGINE_ERRORS = (dg.DagsterEventType.ENGINE_EVENT, dg.DagsterEventType.RESOURCE_INIT_FAILURE)
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
#: The error of a step that a blocking check failed (its check's metadata says what failed).
CHECK_FAILED = "DagsterAssetCheckFailedError"
#: The error of a step (or run) that an interrupt (Ctrl-C, SIGINT) stopped.
INTERRUPTED = ("DagsterExecutionInterruptedError", "KeyboardInterrupt")


@dataclass
class Outcome:
    """What a launch did: whether every run succeeded, the runs' ids, and each failure's message."""

    success: bool
    run_ids: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False
    #: A what-if's scenario files registered since the last full build, whose rows it added to staging.sources.
    added_sources: list[str] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        """The last run's id."""
        return self.run_ids[-1] if self.run_ids else ""


def selection(scope: str, *, logs: bool, skip_dashboards: bool) -> set[dg.AssetKey]:
    """The asset keys a launch materialises (see the module docstring)."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, not {scope!r}")
    base = BUILD_SELECTION - (dg.AssetSelection.groups("dashboards") if skip_dashboards else dg.AssetSelection.assets())
    ingest = dg.AssetSelection.assets(SAMPLES_KEY, *RUNS_KEYS)
    if scope == "ingest":  # with staging.sources, which lists the logs (their ids join it)
        chosen = ingest | dg.AssetSelection.assets(SOURCES_KEY)
    elif scope == "downstream":
        chosen = base & dg.AssetSelection.assets(*RUNS_KEYS).downstream() - ingest
    elif logs:
        chosen = base & (dg.AssetSelection.assets(SAMPLES_KEY).downstream() | dg.AssetSelection.assets(SOURCES_KEY))
    else:
        chosen = base
    return set(chosen.resolve(defs.resolve_asset_graph()))


def what_if_selection(scenario: str) -> set[dg.AssetKey]:
    """The assets a what-if over ``scenario`` recomputes: everything downstream of its parameter rows
    (core.scenario_parameters) but the dashboards (a full run renders them) and a table bound to
    another named scenario (marts.paper_reproduction and marts.claims check the paper's numbers under its own)."""
    from pipelines.defs.assets.marts import ReproductionConfig

    chosen = (dg.AssetSelection.assets(PARAMETERS_KEY).downstream() & BUILD_SELECTION) - dg.AssetSelection.groups("dashboards")
    if scenario != ReproductionConfig().scenario:
        chosen = chosen - dg.AssetSelection.assets(REPRODUCTION_KEY, CLAIMS_KEY)
    return set(chosen.resolve(defs.resolve_asset_graph()))


def unstaged_sources(published: Path, ids: Sequence[str]) -> list[str]:
    """Those of ``ids`` (registered source ids) that ``published``'s staging.sources lacks: files
    registered since the last full build. A ValueError when ``published`` has no staging.sources,
    naming the full build that writes it."""
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.queries import table_exists

    with open_readonly(published) as con:
        if not table_exists(con, "staging.sources"):
            raise ValueError(f"{published} has no staging.sources for a what-if to build on; build it in full first: "
                             f"{console.FULL_BUILD} (or {console.command()} run)")
        return [source_id for (source_id,) in con.execute(sql_text("checks/unstaged_sources.sql"), {"ids": sorted(ids)}).fetchall()]


def unstaged_scenarios(published: Path) -> list[str]:
    """The registered scenario files that ``published``'s staging.sources lacks (``edge-carbon scenario
    new`` since the last full build). A what-if stages every scenario file's parameters, and each row's
    source_id must join staging.sources, so it adds their rows there
    (:class:`pipelines.defs.assets.sources.SourcesScope`)."""
    from pipelines.ingest.manifest import entries_for
    from pipelines.run.fixes import SCENARIO_TABLE

    return unstaged_sources(published, [entry.id for entry in entries_for(SCENARIO_TABLE)])


def with_unstaged(failures: Sequence[str], published: Path) -> list[str]:
    """A what-if's ``failures``, each scenario reference that found no row (``factor_ref``, ``range_ref``)
    followed by the other files registered since the last full build, which a what-if does not stage
    (the row may be one of theirs): :data:`pipelines.run.fixes.NOT_STAGED`, which the fix reads."""
    from pipelines.ingest.manifest import load_manifest
    from pipelines.run.fixes import NOT_STAGED, SCENARIO_TABLE

    unresolved = [f.startswith(f"{PARAMETERS_OP}: ") and REFERENCE.search(f) is not None for f in failures]
    if not any(unresolved):
        return list(failures)
    others = unstaged_sources(published, [entry.id for entry in load_manifest() if entry.table != SCENARIO_TABLE])
    if not others:
        return list(failures)
    note = f"\n  {NOT_STAGED}: {', '.join(others)}"
    return [failure + note if flagged else failure for failure, flagged in zip(failures, unresolved, strict=True)]


def key_ranges(chosen: Sequence[str], order: Sequence[str]) -> list[tuple[str, str]]:
    """``chosen`` partition keys as ranges of consecutive keys in the instance's ``order``."""
    position = {key: i for i, key in enumerate(order)}
    unknown = [key for key in chosen if key not in position]
    if unknown:
        raise ValueError(f"not a registered power log: {', '.join(unknown)} (edge-carbon register adds one)")
    ranges: list[tuple[str, str]] = []
    for i in sorted({position[key] for key in chosen}):
        if ranges and position[ranges[-1][1]] == i - 1:
            ranges[-1] = (ranges[-1][0], order[i])
        else:
            ranges.append((order[i], order[i]))
    return ranges


def every_log(instance: dg.DagsterInstance) -> dict[str, str]:
    """Sync the power-log partitions; the run tags that select all of them (none when no log is registered)."""
    order = sync_power_logs(instance)
    return {RANGE_START: order[0], RANGE_END: order[-1]} if order else {}


def root_cause(info: object) -> str:
    """The message to show for a failed step, from a Dagster SerializableErrorInfo chain.

    The project's own errors (:class:`pipelines.errors.EdgeCarbonError` and subclasses) name
    the file and line, so the innermost of them is preferred; a library exception under it
    (e.g. polars' ``empty CSV``) is only its detail. Without one, the innermost message.
    """
    ours: set[str] = set()
    pending: list[type] = [EdgeCarbonError]
    while pending:
        cls = pending.pop()
        ours.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    chain = []
    seen: set[int] = set()
    while info is not None and id(info) not in seen:
        seen.add(id(info))
        chain.append(info)
        info = getattr(info, "cause", None) or getattr(info, "context", None)
    own = [item for item in chain if getattr(item, "cls_name", None) in ours]
    chosen = own[-1] if own else (chain[-1] if chain else None)
    return (getattr(chosen, "message", "") or "").strip()


def _chain(info: object) -> list[object]:
    """A Dagster SerializableErrorInfo and its causes and contexts."""
    chain: list[object] = []
    while info is not None and all(info is not seen for seen in chain):
        chain.append(info)
        info = getattr(info, "cause", None) or getattr(info, "context", None)
    return chain


def interrupted(events: Sequence[Any]) -> bool:
    """Whether an interrupt (Ctrl-C) stopped a step or the run of ``events``: an error of an interrupt's class in a
    step's error chain, or one that names it (DuckDB raises its own error when the interrupt lands while it reads a
    Python object, naming the interrupt's class in its message)."""
    for event in events:
        error = getattr(event.event_specific_data, "error", None) if event.event_specific_data is not None else None
        if any(getattr(item, "cls_name", None) in INTERRUPTED
               or any(f"{name}:" in (getattr(item, "message", None) or "") for name in INTERRUPTED) for item in _chain(error)):
            return True
    return False


def check_failures(events: Sequence[Any], failed_steps: set[str]) -> list[str]:
    """Each check that failed in one of ``failed_steps`` (the steps its blocking checks failed):
    the asset and check, then the summary the check left in its metadata
    (:data:`pipelines.lib.checks.SUMMARY_KEY`: table, column, rule, failing rows), else its
    metadata as ``key: value`` lines."""
    out = []
    for event in events:
        evaluation = event.event_specific_data
        if event.event_type != dg.DagsterEventType.ASSET_CHECK_EVALUATION or evaluation.passed or event.step_key not in failed_steps:
            continue
        metadata = {key: getattr(value, "value", value) for key, value in evaluation.metadata.items()}
        summary = metadata.get(SUMMARY_KEY)
        lines = str(summary).splitlines() if summary else [f"{key}: {value}" for key, value in metadata.items()]
        head = f"{evaluation.asset_key.to_user_string()}: {evaluation.check_name}"
        out.append("\n".join([head, *(f"  {line}" for line in lines)]))
    return out


def _failures(events: Sequence[Any]) -> list[str]:
    """What failed in a run, one entry each, with the root cause dug out of each error: the
    failed steps, and after them the blocking checks that failed, each with what its metadata
    says failed (:func:`check_failures`) in place of its step's error; else the engine's errors
    (a resource that could not start, a publish that was refused at the run's end); else the
    run's own failure."""
    failed = [e for e in events if e.is_step_failure]
    checked = {e.step_key for e in failed if getattr(e.step_failure_data.error, "cls_name", None) == CHECK_FAILED}
    checks = check_failures(events, checked)
    steps = [f"{e.step_key}: {root_cause(e.step_failure_data.error)}" for e in failed if e.step_key not in checked]
    if steps or checks:
        return steps + checks
    engine = [f"run: {root_cause(error)}" for e in events if e.event_type in ENGINE_ERRORS
              and (error := getattr(e.event_specific_data, "error", None)) is not None]
    return engine or [f"run: {root_cause(getattr(e.event_specific_data, 'error', None)) or e.message}" for e in events
                      if e.event_type == dg.DagsterEventType.RUN_FAILURE]


def _execute(keys: set[dg.AssetKey], tags: dict[str, str], *, workers: int, instance: dg.DagsterInstance, run_config: dict[str, Any],
             published: Path | None) -> tuple[bool, str, list[str], bool]:
    """One run of ``keys``; with workers > 1 on the multiprocess executor, published here.

    A run whose publish was refused at its end (the in-process Warehouse resource raises as
    it tears down, which Dagster logs without failing the run) counts as failed here."""
    from pipelines.lib.resources import Warehouse

    job = defs.resolve_job_def("build_warehouse").get_subset(asset_selection=keys)
    if "ops" in run_config:  # config only for the ops this run has
        run_config = {**run_config, "ops": {op: cfg for op, cfg in run_config["ops"].items() if op in job.graph.node_dict}}
    if workers <= 1:
        result = job.execute_in_process(
            instance=instance, run_config=run_config, tags=tags, raise_on_error=False,
            resources={"warehouse": Warehouse(path=str(published))} if published else None,
        )
        failures = _failures(result.all_events)
        return result.success and not failures, result.run_id, failures, interrupted(result.all_events)
    config = {
        **run_config,
        "execution": {"config": {"max_concurrent": workers, "start_method": {"forkserver": {"preload_modules": PRELOAD}}}},
        "resources": {"warehouse": {"config": {"publish": "launcher", **({"path": str(published)} if published else {})}}},
    }
    from pipelines.run.parallel import parallel_job

    log = logging.getLogger("edge_carbon.launch")
    target = published or warehouse_path()
    # the run's id is known only once it starts: the lock names the launch until then
    with publish_lock(target, f"edge-carbon run --workers {workers}", waiting=_say):
        with dg.execute_job(dg.reconstructable(parallel_job), instance=instance, run_config=config, tags=tags,
                            asset_selection=sorted(keys, key=lambda k: k.to_user_string()), raise_on_error=False) as result:
            success, run_id, failures, stopped = result.success, result.run_id, _failures(result.all_events), interrupted(result.all_events)
        try:
            publish_run(target, run_id, ok=success, log=log, lock=False)
        except EdgeCarbonError as exc:
            return False, run_id, [f"run: {exc}"], stopped
    return success, run_id, failures, stopped


def _say(message: str) -> None:
    """A line for whoever started the launch (the console's stderr, also while the build's log goes to a file)."""
    console.say(message)


def materialise(
    *,
    scope: str = "all",
    logs: Sequence[str] | None = None,
    workers: int = 1,
    skip_dashboards: bool = False,
    run_config: dict[str, Any] | None = None,
    instance: dg.DagsterInstance | None = None,
    warehouse: Path | None = None,
    scenario: str | None = None,
) -> Outcome:
    """Sync the power-log partitions with the manifest, then run ``scope`` (module docstring).

    ``scenario``: a what-if instead: that scenario's rows of every table downstream of its
    parameters, recomputed in one in-process run (:func:`what_if_selection`); every other
    scenario's rows stay as published (:mod:`pipelines.warehouse.scenario_scope`). Scenario files
    registered since the last full build (:func:`unstaged_scenarios`) join staging.sources in that run.

    ``logs`` are power-log source ids (None: every registered log). The chosen partitions go in
    one run when they are consecutive in the instance's order; otherwise each range is ingested
    by a run of its own and the rest follows in a last run. ``warehouse`` overrides the
    published file (default ``$EDGE_CARBON_WAREHOUSE``).
    """
    instance = instance or dg.DagsterInstance.get()
    if scenario is not None:  # a what-if: no power log, one run
        added = unstaged_scenarios(warehouse or warehouse_path())
        keys = what_if_selection(scenario) | ({SOURCES_KEY} if added else set())
        config = {**(run_config or {})}
        config["ops"] = {**config.get("ops", {}), PARAMETERS_OP: {"config": {"scenarios": [scenario]}},
                         **({SOURCES_OP: {"config": {"add": added}}} if added else {})}
        success, run_id, failures, stopped = _execute(keys, {"edge_carbon/what_if": scenario}, workers=1,
                                                      instance=instance, run_config=config, published=warehouse)
        if failures:
            failures = with_unstaged(failures, warehouse or warehouse_path())
        return Outcome(success=success, run_ids=[run_id], failures=failures, interrupted=stopped, added_sources=added)
    order = sync_power_logs(instance)
    keys = selection(scope, logs=logs is not None, skip_dashboards=skip_dashboards)
    chosen = list(order) if logs is None else list(dict.fromkeys(logs))
    ranges = key_ranges(chosen, order) if SAMPLES_KEY in keys else []
    if SAMPLES_KEY in keys and not ranges:
        keys = keys - {SAMPLES_KEY}
    plan: list[tuple[set[dg.AssetKey], dict[str, str]]] = []
    if len(ranges) <= 1:
        tags = {RANGE_START: ranges[0][0], RANGE_END: ranges[0][1]} if ranges else {}
        plan.append((keys, tags))
    else:
        plan += [({SAMPLES_KEY}, {RANGE_START: start, RANGE_END: end}) for start, end in ranges]
        if keys - {SAMPLES_KEY}:
            plan.append((keys - {SAMPLES_KEY}, {}))
    outcome = Outcome(success=True)
    for run_keys, tags in plan:
        if not run_keys:
            continue
        config = dict(run_config or {})
        if workers > 1 and SAMPLES_KEY in run_keys:  # one ingest step per worker: each step is a process
            logs_in_run = order.index(tags[RANGE_END]) - order.index(tags[RANGE_START]) + 1
            chunk = {"staging__power_samples": {"ops": {"plan_power_logs": {"config": {"chunk_logs": -(-logs_in_run // workers)}}}}}
            config["ops"] = {**config.get("ops", {}), **chunk}
        success, run_id, failures, stopped = _execute(run_keys, tags, workers=workers, instance=instance, run_config=config,
                                                      published=warehouse)
        outcome.run_ids.append(run_id)
        outcome.failures += failures
        if not success:
            outcome.success, outcome.interrupted = False, stopped
            break
    return outcome


