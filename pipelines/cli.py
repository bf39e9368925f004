"""``edge-carbon``: build the warehouse, and register your own source files.

    edge-carbon run                     materialise every asset on the shipped data, publish, print the verdict
    edge-carbon run --verbose           the same, with Dagster's log here (else in .logs/ beside the warehouse)
    edge-carbon run --rebuild           the same from an empty warehouse and lake (the old ones kept aside)
    edge-carbon run --scenario ID       a what-if: recompute one scenario's rows, every other one kept as published
    edge-carbon sql "select ..."        query the published warehouse (read-only)
    edge-carbon register FILE ...       add a file to the source manifest (computes sha256)
    edge-carbon register --refresh ID   re-hash a file you changed on purpose
    edge-carbon scenario new NAME ...   a scenario extending another, with --set param=value
    edge-carbon scenario remove NAME    undo scenario new: the entry (the file is kept; --delete-file)
    edge-carbon unregister ID           undo register: the entry (the file is kept; --delete-file)
    edge-carbon claim new ID ...        a published claim, a row of sources/curated/claims.csv (docs/claims.md)
    edge-carbon claim remove ID         undo claim new: the row (--with-parameters: its cases' parameter rows)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from pipelines import locks
from pipelines.paths import WAREHOUSE_ENV, default_root, warehouse_path

#: The Dagster instance's folder (run history, event logs), as Dagster reads it.
DAGSTER_HOME_ENV = "DAGSTER_HOME"
#: The instance settings ``make dev`` and ``edge-carbon run`` put into a new DAGSTER_HOME.
INSTANCE_CONFIG = Path(__file__).with_name("dagster.yaml")
#: What an interrupted build (Ctrl-C) says, and its exit status (128 + SIGINT, as a shell reports it).
INTERRUPTED = "interrupted; the published warehouse is unchanged"
INTERRUPTED_STATUS = 130
#: Set (non-empty), hypothesis loads no plugins when it is imported (``edge-carbon run`` sets it).
HYPOTHESIS_PLUGINS_ENV = "HYPOTHESIS_NO_PLUGINS"


def dagster_home() -> Path:
    """``$DAGSTER_HOME``, else the project's ``.dagster_home/`` (what ``make dev`` shows).

    The folder is created if needed, with the project's ``dagster.yaml`` copied in when it has
    none (as the Makefile does), and ``DAGSTER_HOME`` is set for the rest of the process.
    """
    chosen = os.environ.get(DAGSTER_HOME_ENV)
    home = Path(chosen).expanduser().resolve() if chosen else default_root() / ".dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copyfile(INSTANCE_CONFIG, home / "dagster.yaml")
    os.environ[DAGSTER_HOME_ENV] = str(home)
    return home


def dagster_instance() -> Any:
    """The Dagster instance at :func:`dagster_home`. Its storage is set up when first opened, under
    a lock in the folder, so two commands started together on a new folder do not both create
    its tables (SQLite refuses the second)."""
    import dagster as dg

    home = dagster_home()
    with locks.held(home / ".instance-setup.lock", f"edge-carbon (pid {os.getpid()})", what="the Dagster instance's set-up"):
        return dg.DagsterInstance.get()


def run(args: argparse.Namespace) -> int:
    """Materialise the build_warehouse job (or a part of it) and print what it built.

    One worker runs it in-process; ``--workers N`` on Dagster's multiprocess executor. The run
    is recorded in the Dagster instance at :func:`dagster_home`, the one ``make dev`` shows, so
    its logs and materialisations are in the UI's run history.
    """
    import warnings

    import dagster as dg

    # Dagster flags beta parameters (e.g. backfill_policy) at import; not useful to a user here.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    # pandera imports hypothesis (where installed: the dev extra) at its first validation, and
    # hypothesis then loads every installed plugin (trio's runs a full garbage collection): about
    # half a second of a cold build that draws no examples. An explicit setting is kept.
    os.environ.setdefault(HYPOTHESIS_PLUGINS_ENV, "1")
    from pipelines.errors import EdgeCarbonError
    from pipelines.run import console
    from pipelines.run.launch import materialise
    from pipelines.run.report import failure_lines, next_lines, table_lines, verdict_lines
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.reach import unreached_lines
    from pipelines.warehouse.rebuild import damage, set_aside

    started = time.perf_counter()
    home = dagster_home()
    run_config: dict = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
    ops: dict = {}
    if args.sobol_base_samples:
        ops["monte_carlo"] = {"config": {"sobol_base_samples": args.sobol_base_samples}}
    if not args.skip_dashboards:
        # static images are read in the Dagster UI's asset metadata; a command-line build leaves
        # them out unless asked (a UI materialisation keeps the asset's default, headline)
        ops["dashboards__site"] = {"config": {"static_exports": args.static_exports}}
    if ops:
        run_config["ops"] = ops
    if args.workers < 1:
        print(f"--workers must be 1 or more, not {args.workers}", file=sys.stderr)
        return 2
    path = warehouse_path()
    refused = folder_refusal(path)
    if refused:
        print(f"edge-carbon run: {refused}", file=sys.stderr)
        return 2
    if args.scenario is not None:
        refusal = what_if_refusal(args, path)
        if refusal:
            print("\n".join([f"edge-carbon run: {refusal[0]}", *refusal[1:]]), file=sys.stderr)
            return 2
    if args.rebuild:
        if args.logs or args.only != "all":
            print("edge-carbon run: --rebuild builds everything; leave out --logs and --only", file=sys.stderr)
            return 2
        aside = set_aside(path, "edge-carbon run --rebuild", waiting=lambda line: print(line, file=sys.stderr, flush=True))
        for moved, target in aside:
            print(f"kept aside: {moved} -> {target}", file=sys.stderr)
    else:
        damaged = damage(path)
        if damaged:
            print(f"edge-carbon run: {damaged}", file=sys.stderr)
            return 1
    command = console.command()
    log = None if args.verbose else console.log_file(path)
    if log is not None:
        print(f"building {console.shown(path)} (Dagster's log: {console.shown(log)}; --verbose prints it here) ...", flush=True)
    try:
        with dagster_instance() as instance, console.Quiet(log) as quiet:
            console.CURRENT.append(quiet)
            try:
                outcome = materialise(scope=args.only, logs=args.logs, workers=args.workers, skip_dashboards=args.skip_dashboards,
                                      run_config=run_config, instance=instance, scenario=args.scenario)
            finally:
                console.CURRENT.remove(quiet)
    except (ValueError, EdgeCarbonError) as exc:  # a log that is not registered, too many partitions, a malformed manifest
        print(f"edge-carbon run: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        outcome = None
    elapsed = time.perf_counter() - started
    if outcome is None or outcome.interrupted:
        print(INTERRUPTED, file=sys.stderr)
        return INTERRUPTED_STATUS
    if not outcome.success:
        print("\n".join(failure_lines(outcome.failures, elapsed, log, command, outcome.run_id, home)), file=sys.stderr)
        return 1
    with open_readonly(path) as con:
        lines = (what_if_lines(args.scenario, outcome.added_sources, elapsed) if args.scenario is not None
                 else [f"built {path} in {elapsed:.1f}s: " + "; ".join(table_lines(con))])
        lines += unreached_lines(con)  # registered logs the build kept out of every mart, and why
        from dashboards import site_dir

        index = site_dir() / "index.html"
        if args.scenario is not None:  # a what-if renders no page: say which are left as published
            lines.append(console.what_if_site_line(site_dir(), command))
        elif index.exists() and not args.skip_dashboards:
            lines.append(f"dashboards: {console.shown(index)}  (open in a browser; works offline)")
        lines.append(f"run {', '.join(outcome.run_ids)} in the Dagster instance at {home} (make dev shows it)"
                     + (f"; Dagster's log: {console.shown(log)}" if log else ""))
        lines.append("")
        lines += verdict_lines(con)
    lines += next_lines(command)
    print("\n".join(lines))
    return 0


def what_if_refusal(args: argparse.Namespace, path: Path) -> list[str] | None:
    """Why ``edge-carbon run --scenario`` cannot run with these arguments, in lines (a fix last where
    there is one), or None: other options given, no published warehouse to build on (the full build
    comes first), or an id that is no scenario a what-if runs over (the closest registered ones)."""
    from pipelines.run import console
    from pipelines.run.fixes import scenario_lines

    if args.logs or args.only != "all" or args.rebuild or args.workers != 1:
        return ["--scenario recomputes one scenario in one in-process run; leave out --logs, --only, --rebuild and --workers"]
    command = console.command()
    unknown = scenario_lines(args.scenario, command)
    if unknown:
        return unknown
    if not path.exists():
        return [f"--scenario changes one scenario of a built warehouse, and {path} does not exist yet",
                f"fix: run a full build first: {console.FULL_BUILD} (or {command} run), then {command} run --scenario {args.scenario}"]
    return None


def what_if_lines(scenario: str, added: list[str], elapsed: float) -> list[str]:
    """What a what-if that succeeded says it did: the scenario's rows recomputed, every other one's kept,
    and the scenario files registered since the last full build that it added to staging.sources."""
    from pipelines.run.console import FULL_BUILD

    lines = [f"what-if over {scenario}: its rows of every table downstream of its parameters recomputed and published in "
             f"{elapsed:.1f}s; every other scenario's rows kept as published"]
    if added:
        lines.append(f"registered since the last full build, added to staging.sources by this what-if: {', '.join(added)} "
                     f"(marts.sources lists {'it' if len(added) == 1 else 'them'} after {FULL_BUILD})")
    return lines


def folder_refusal(path: Path) -> str | None:
    """Why ``path`` cannot be the published warehouse (a folder: the build writes beside the file
    it names, and --rebuild would move it aside), in one line; None when it can."""
    if path.is_dir():
        return (f"{WAREHOUSE_ENV}={path} is a folder; name a file, e.g. {WAREHOUSE_ENV}={path / 'edge_carbon.duckdb'} "
                "(the build writes its lake and working copies beside that file)")
    return None


def render_docs(args: argparse.Namespace) -> int:
    """Write the rendered tables of README.md, docs/findings.md and docs/validation.md from the published warehouse."""
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.docs import write_docs

    with open_readonly(warehouse_path()) as con:
        for path in write_docs(con, Path.cwd()):
            print(f"rendered {path}")
    return 0


def sobol(args: argparse.Namespace) -> int:
    """The full Sobol study: indices of log R at ``--base-samples`` over the published warehouse's
    scenarios, written to docs/results/sobol_full.csv for ``edge-carbon docs`` to render."""
    import duckdb
    import polars as pl

    from pipelines.model.formula import scenario_inputs
    from pipelines.model.uncertainty import DEFAULT_SEED, sobol_rows
    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.docs import FULL_STUDY_RESULTS, write_full_study
    from pipelines.warehouse.queries import query_pl

    with open_readonly(warehouse_path()) as con:
        base = scenario_inputs(con)
        parameters = query_pl(con, "select * from core.scenario_parameters")
        patterns = query_pl(con, "select scenario_id, comm_pattern from core.scenarios")
    started = time.perf_counter()
    seed = DEFAULT_SEED if args.seed is None else args.seed
    if args.convergence:
        return sobol_convergence(args.convergence, base, parameters, patterns, seed)
    frame = sobol_rows(duckdb.connect(), base, parameters, args.base_samples, seed, print)
    out = Path.cwd() / FULL_STUDY_RESULTS
    write_full_study(frame.with_columns(pl.lit(seed, dtype=pl.Int64).alias("seed")), out)
    print(f"wrote {out} ({frame.height:,} indices, {args.base_samples} base samples, {time.perf_counter() - started:.0f} s); "
          "now run `edge-carbon docs`")
    return 0


def sobol_convergence(sizes: str, base: Any, parameters: Any, patterns: Any, seed: int) -> int:
    """The Sobol study at each base sample size of ``sizes`` (comma-separated powers of 2), compared with the full
    study's results file on the headline rows, into docs/results/sobol_convergence.csv for ``edge-carbon docs``."""
    import duckdb
    import polars as pl

    from pipelines.model.uncertainty import sobol_rows
    from pipelines.warehouse.docs import FULL_STUDY_RESULTS, read_full_study
    from pipelines.warehouse.sobol_convergence import CONVERGENCE_RESULTS, convergence_rows

    full = Path.cwd() / FULL_STUDY_RESULTS
    if not full.exists():
        print(f"{full} is missing: run `edge-carbon sobol` (the full study) first", file=sys.stderr)
        return 2
    samples = [int(s) for s in sizes.split(",") if s.strip()]
    studies = pl.concat([sobol_rows(duckdb.connect(), base, parameters, n, seed, print) for n in samples])
    frame = convergence_rows(studies, read_full_study(full), patterns)
    out = Path.cwd() / CONVERGENCE_RESULTS
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.write_csv(out)
    print(f"wrote {out} ({frame.height} base sample sizes); now run `edge-carbon docs`")
    return 0


def sql(args: argparse.Namespace) -> int:
    """Run one read-only query against the published warehouse and print the result.

    ``--format table`` (default) and ``markdown`` print the first ``--limit`` rows (40); ``csv``
    and ``json`` are for programs and print every row unless ``--limit`` is given. No format cuts
    text: the table wraps it in its column, or prints one block per row when a grid would not
    fit the terminal (:mod:`pipelines.warehouse.sql_query`). A missing warehouse, or a folder in
    its place, is refused in one line (exit status 2); a failed query says why (exit status 1),
    with the closest existing names for a table or view that does not exist.
    """
    import json

    import duckdb
    import polars as pl

    from pipelines.warehouse.database import open_readonly
    from pipelines.warehouse.queries import query_pl
    from pipelines.warehouse.sql_query import (
        catalog_hint,
        table_text,
        terminal_width,
        warehouse_refusal,
    )

    def flat(frame: pl.DataFrame) -> pl.DataFrame:
        """Nested columns (lists, structs) as JSON text, which CSV can hold."""
        return frame.with_columns(
            pl.Series(name, [None if v is None else json.dumps(v, default=str) for v in frame.get_column(name).to_list()],
                      dtype=pl.String)
            for name, dtype in frame.schema.items() if dtype.is_nested()
        )

    def cell(value: object) -> str:
        """One markdown cell: the text in full, pipes escaped, line breaks as <br>."""
        text = "" if value is None else str(value)
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")

    path = warehouse_path()
    refused = warehouse_refusal(path, overridden=bool(os.environ.get(WAREHOUSE_ENV)))
    if refused:
        print(f"edge-carbon sql: {refused}", file=sys.stderr)
        return 2
    try:
        con = open_readonly(path)
    except duckdb.Error as exc:
        print(f"edge-carbon sql: cannot open the warehouse at {path}: {exc}", file=sys.stderr)
        return 1
    with con:
        try:
            frame = query_pl(con, args.query)
        except duckdb.Error as exc:
            print(f"query failed: {catalog_hint(con, args.query, str(exc))}", file=sys.stderr)
            return 1
    limit = args.limit if args.limit is not None else (None if args.format in ("csv", "json") else 40)
    shown = frame if limit is None else frame.head(limit)
    if args.format == "csv":
        sys.stdout.write(flat(shown).write_csv())
    elif args.format == "json":
        sys.stdout.write(shown.write_json() + "\n")
    elif args.format == "markdown":
        lines = ["| " + " | ".join(cell(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
        lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in shown.iter_rows()]
        print("\n".join(lines))
    else:
        print(table_text(frame, limit, terminal_width()))
    if args.format in ("table", "markdown") and shown.height < frame.height:
        print(f"({shown.height} of {frame.height} rows; --limit N shows more)", file=sys.stderr)
    return 0


def register(args: argparse.Namespace) -> int:
    """Validate, then append a manifest entry for a file under sources/ (or refresh one sha256)."""
    from pipelines.ingest.registration import register_cli

    status = register_cli(args)
    if status == 0 and not args.dry_run:
        sync_partitions()
    return status


def sync_partitions() -> None:
    """Bring the Dagster instance's power-log partitions (one per registered log) in line with
    the manifest, so that ``dagster dev`` offers a newly registered log as a partition."""
    import warnings

    import dagster as dg

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    from pipelines.defs.partitions import sync_power_logs

    with dagster_instance() as instance:
        keys = sync_power_logs(instance)
    print(f"{len(keys)} power log partition(s) in the Dagster instance at {os.environ[DAGSTER_HOME_ENV]}")


def scenario(args: argparse.Namespace) -> int:
    """Write and register a scenario that extends another with a few parameters changed."""
    from pipelines.ingest.scenario_new import scenario_cli

    return scenario_cli(args)


def scenario_remove(args: argparse.Namespace) -> int:
    """Remove one of your own scenarios: its manifest entry and (with --delete-file) its CSV."""
    from pipelines.ingest.unregister import scenario_remove_cli

    status, _ = scenario_remove_cli(args)
    return status


def unregister(args: argparse.Namespace) -> int:
    """Remove one of your own sources from the manifest; a power log also leaves the Dagster
    instance's partitions and the published warehouse's lake."""
    import duckdb

    from pipelines.errors import EdgeCarbonError
    from pipelines.ingest.registration import SAMPLES_TABLE
    from pipelines.ingest.unregister import unregister_cli

    status, entry = unregister_cli(args)
    if entry is None or entry.table != SAMPLES_TABLE:
        return status
    sync_partitions()
    from pipelines.run.unregister import retire_logs

    try:
        retired = retire_logs(warehouse_path())
    except (EdgeCarbonError, duckdb.Error, OSError) as exc:  # the entry is gone; the next build that ingests logs retires them
        print(f"unregister: warning: the lake files of {entry.id} stay until the next build ({exc})", file=sys.stderr)
        return status
    if retired:
        print(f"retired the lake files of {', '.join(retired)} in {warehouse_path()} (deleted after the lake's retention)")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="edge-carbon", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("run", help="materialise every asset on the shipped data")
    build.add_argument("--skip-dashboards", action="store_true", help="build and publish the warehouse without rendering the dashboards")
    build.add_argument("--workers", type=int, default=1, metavar="N",
                       help="1 (default): Dagster's in-process executor; N > 1: its multiprocess executor with N worker processes")
    build.add_argument("--logs", nargs="+", metavar="ID",
                       help="only these power logs' partitions (manifest source ids) and what lies downstream of them")
    build.add_argument("--only", choices=("all", "ingest", "downstream"), default="all",
                       help="all (default); ingest: the power-log partitions and the staging tables they feed; "
                            "downstream: what lies downstream of those tables")
    build.add_argument("--static-exports", choices=("none", "headline", "all"), default="none",
                       help="PNG + SVG exports of the charts into the site's static/ folder: none (default: the site "
                            "is interactive HTML), headline (the charts the Dagster UI shows, as a UI run makes) or all")
    build.add_argument("--rebuild", action="store_true",
                       help="start from an empty warehouse and an empty lake (a published file that cannot be opened); "
                            "the old file and lake are kept aside under a dated name")
    build.add_argument("--scenario", metavar="ID",
                       help="a what-if: recompute only this scenario's rows of every table downstream of its parameters "
                            "(after editing its CSV and `edge-carbon register --refresh`), keeping every other scenario's "
                            "rows and every source, log and grid as published; the dashboards re-render in a full run")
    build.add_argument("--verbose", action="store_true",
                       help="print Dagster's log of the build here (default: into a file under the warehouse's folder, .logs/)")
    build.add_argument("--sobol-base-samples", type=int, default=0, metavar="N",
                       help="Sobol base samples (a power of 2) for marts.uncertainty_drivers (default: the build's 256; "
                            "the full study of docs/findings.md is `edge-carbon sobol`)")
    build.set_defaults(func=run)
    docs = sub.add_parser("docs", help="render the verdict from the published warehouse into README.md, docs/findings.md and docs/validation.md")
    docs.set_defaults(func=render_docs)
    study = sub.add_parser("sobol", help="the full Sobol study over the published warehouse's scenarios, into docs/results/sobol_full.csv")
    study.add_argument("--base-samples", type=int, default=8192, metavar="N", help="Sobol base samples, a power of 2 (default 8192)")
    study.add_argument("--seed", type=int, default=None, help="seed of the Sobol sequence (default: the build's)")
    study.add_argument("--convergence", default="", metavar="N,N,...",
                       help="instead, the study at each of these base sample sizes, compared with the full study's results "
                            "on the headline rows, into docs/results/sobol_convergence.csv")
    study.set_defaults(func=sobol)
    query = sub.add_parser("sql", help="run a read-only SQL query on the published warehouse")
    query.add_argument("query")
    query.add_argument("--format", choices=["table", "csv", "json", "markdown"], default="table",
                       help="table (default), csv, json (one object per row) or markdown")
    query.add_argument("--limit", type=int, default=None,
                       help="rows to print (default: 40 for table and markdown, every row for csv and json)")
    query.set_defaults(func=sql)
    reg = sub.add_parser("register", help="validate a file below sources/ and add it to the manifest")
    reg.add_argument("file", nargs="?")
    reg.add_argument("--refresh", metavar="ID", help="recompute the sha256 of an existing entry")
    reg.add_argument("--id", help="unique source id")
    reg.add_argument("--kind", help="parser, e.g. nvidia_smi, powermetrics, monsoon, android_sysfs, rapl, codecarbon")
    reg.add_argument("--table", help="staging table (default: the one the kind feeds)")
    reg.add_argument("--title", help="human-readable name (required)")
    reg.add_argument("--url", default="https://example.invalid/own-measurement")
    reg.add_argument("--license", default="CC-BY-4.0")
    reg.add_argument("--attribution", help="attribution text, if the licence asks for one")
    reg.add_argument("--notes", help="known quirks of the file")
    reg.add_argument("--status", default="primary", help="paper | primary | derived | assumed")
    reg.add_argument("--manifest", default="local.toml", help="manifest file below sources/manifest/")
    reg.add_argument("--option", action="append", metavar="KEY=VALUE", help="parser option, e.g. device_id=nvidia-v100")
    reg.add_argument("--dry-run", action="store_true", help="validate and print the entry; write nothing")
    reg.set_defaults(func=register)
    scen = sub.add_parser("scenario", help="create a scenario from another with a few parameters changed, or remove one")
    scen_sub = scen.add_subparsers(dest="scenario_command", required=True)
    new = scen_sub.add_parser("new", help="write sources/scenarios/NAME.csv and register it")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--extends", metavar="PARENT", help="scenario to inherit every other parameter from")
    new.add_argument("--set", action="append", metavar="PARAM=VALUE", help="override a parameter of the parent")
    new.add_argument("--range", action="append", metavar="PARAM=LOW:HIGH[:DIST]",
                     help="range of an overridden parameter (DIST: uniform, triangular, split_triangular, normal, lognormal, point)")
    new.add_argument("--from-series", metavar="SERIES",
                     help="a registered power series (staging.benchmark_series.series_id) as the device's or GPU's power, "
                          "and its measured rate row, if it has one, as the rate (needs a build since it was registered)")
    new.add_argument("--reason", help="reasoning written on every row (default: says it was set on the command line)")
    new.add_argument("--status", default="assumed", help="paper | primary | derived | assumed (default assumed)")
    new.add_argument("--title", help="title of the manifest entry")
    new.add_argument("--manifest", default="local.toml", help="manifest file below sources/manifest/")
    new.add_argument("--dry-run", action="store_true", help="validate and print the file and entry; write nothing")
    new.set_defaults(func=scenario)
    drop = scen_sub.add_parser("remove", help="undo scenario new: remove a scenario's entry from sources/manifest/local.toml "
                                              "(its file is kept; --delete-file)")
    drop.add_argument("name", metavar="NAME")
    drop.add_argument("--delete-file", action="store_true", help="also delete the scenario's file, sources/scenarios/NAME.csv (default: kept)")
    drop.add_argument("--dry-run", action="store_true", help="check and say what would be removed; write nothing")
    drop.set_defaults(func=scenario_remove)
    unreg = sub.add_parser("unregister", help="undo register: remove one of your own sources from sources/manifest/local.toml")
    unreg.add_argument("id", metavar="ID", help="the source id given to register")
    unreg.add_argument("--delete-file", action="store_true", help="also delete the registered file (default: kept)")
    unreg.add_argument("--dry-run", action="store_true", help="check and say what would be removed; write nothing")
    unreg.set_defaults(func=unregister)
    from pipelines.ingest.claims import add_parser as add_claim_parser

    add_claim_parser(sub)
    args = parser.parse_args(argv)
    from pipelines.ingest.manifest import PatternFileError

    try:
        return args.func(args)
    except PatternFileError as exc:  # the patterns' file is read when the vocabulary is first imported
        print(str(exc), file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader stopped early (e.g. `edge-carbon sql ... | head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
