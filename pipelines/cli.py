"""``edge-carbon``: build the warehouse, and register your own source files.

    edge-carbon run                     materialise every asset on the shipped data, publish
    edge-carbon sql "select ..."        query the published warehouse (read-only)
    edge-carbon register FILE ...       add a file to the source manifest (computes sha256)
    edge-carbon register --refresh ID   re-hash a file you changed on purpose
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from pipelines.manifest import load_manifest, sha256_file
from pipelines.paths import sources_dir, sql_text, warehouse_path


def run(args: argparse.Namespace) -> int:
    """Materialise the build_warehouse job in-process and print what it built."""
    import warnings

    import dagster as dg

    # Dagster flags beta parameters (e.g. backfill_policy) at import; not useful to a user here.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    from pipelines.assets.grid_feeds import LIVE_KEY
    from pipelines.definitions import defs
    from pipelines.warehouse import open_readonly

    started = time.perf_counter()
    job = defs.resolve_job_def("build_warehouse")
    if args.skip_dashboards:
        job = job.get_subset(asset_selection=set(dg.AssetSelection.all().resolve(defs.resolve_asset_graph()))
                             - set(dg.AssetSelection.groups("dashboards").resolve(defs.resolve_asset_graph()))
                             - set(dg.AssetSelection.assets(LIVE_KEY).resolve(defs.resolve_asset_graph())))
    # An in-memory instance: `make run` keeps no run history (use `make dev` for that), and
    # in-memory event storage costs far less per step than a temporary SQLite one.
    instance = dg.DagsterInstance.ephemeral()
    run_config: dict = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
    if args.sobol_base_samples:
        run_config["ops"] = {"monte_carlo": {"config": {"sobol_base_samples": args.sobol_base_samples}}}
    result = job.execute_in_process(instance=instance, raise_on_error=False, run_config=run_config)
    elapsed = time.perf_counter() - started
    if not result.success:
        failures = [e for e in result.all_events if e.is_step_failure]
        for event in failures:
            print(f"FAILED {event.step_key}: {root_cause(event.step_failure_data.error)}", file=sys.stderr)
        print(f"build failed after {elapsed:.1f}s; the previous warehouse (if any) is unchanged", file=sys.stderr)
        return 1
    path = warehouse_path()
    with open_readonly(path) as con:
        tables = con.execute(sql_text("publish/summary.sql")).fetchall()
        rejected = dict((t, (r, c)) for t, r, c in con.execute(sql_text("publish/rejected_by_table.sql")).fetchall())
        counts = {t: con.execute("select count(*) from query_table($t)", {"t": t}).fetchone()[0] for t, _ in tables}
    print(f"built {path} in {elapsed:.1f}s")
    print(f"{'table':40} {'rows':>10} {'rejected':>9}")
    for table, _ in tables:
        rows_rejected = rejected.get(table, (0, 0))[0]
        print(f"{table:40} {counts[table]:>10,} {rows_rejected:>9,}")
    from dashboards import site_dir

    index = site_dir() / "index.html"
    if index.exists() and not args.skip_dashboards:
        print(f"dashboards: {index}  (open in a browser; works offline)")
    print('query it: edge-carbon sql "select * from marts.paper_reproduction"  (or any DuckDB client, read-only)')
    return 0


def render_docs(args: argparse.Namespace) -> int:
    """Write the verdict tables of README.md and docs/findings.md from the published warehouse."""
    from pipelines.docs import write_docs
    from pipelines.warehouse import open_readonly

    with open_readonly(warehouse_path()) as con:
        for path in write_docs(con, Path.cwd()):
            print(f"rendered {path}")
    return 0


def sql(args: argparse.Namespace) -> int:
    """Run one read-only query against the published warehouse and print the result."""
    import duckdb
    import polars as pl

    from pipelines.warehouse import open_readonly, query_pl

    try:
        with open_readonly() as con:
            frame = query_pl(con, args.query)
    except duckdb.Error as exc:
        print(f"query failed: {exc}", file=sys.stderr)
        return 1
    with pl.Config(tbl_rows=args.limit, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200):
        print(frame)
    return 0


def root_cause(info: object) -> str:
    """The innermost error message of a Dagster SerializableErrorInfo chain."""
    while getattr(info, "cause", None) is not None:
        info = info.cause  # type: ignore[attr-defined]
    return (getattr(info, "message", "") or "").strip()


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def register(args: argparse.Namespace) -> int:
    """Append a manifest entry for a file under sources/, or refresh one entry's sha256."""
    if args.refresh:
        entry = next((e for e in load_manifest_unverified() if e[0] == args.refresh), None)
        if entry is None:
            print(f"no source with id {args.refresh!r}", file=sys.stderr)
            return 2
        source_id, manifest_file, rel = entry
        digest = sha256_file(sources_dir() / rel)
        text = manifest_file.read_text(encoding="utf-8")
        block = re.compile(r'(id\s*=\s*"' + re.escape(source_id) + r'".*?sha256\s*=\s*")[^"]*(")', re.S)
        new, n = block.subn(lambda m: m.group(1) + digest + m.group(2), text, count=1)
        if n != 1:
            print(f"could not find sha256 of {source_id!r} in {manifest_file}", file=sys.stderr)
            return 2
        manifest_file.write_text(new, encoding="utf-8")
        print(f"{source_id}: sha256 {digest}")
        return 0
    file = Path(args.file).resolve()
    try:
        rel = file.relative_to(sources_dir())
    except ValueError:
        print(f"{file} is not below {sources_dir()}; copy it there first", file=sys.stderr)
        return 2
    manifest_file = sources_dir() / "manifest" / args.manifest
    lines = [
        "",
        "[[source]]",
        f"id = {_toml_str(args.id)}",
        f"path = {_toml_str(rel.as_posix())}",
        f"title = {_toml_str(args.title)}",
        f"url = {_toml_str(args.url)}",
        f"license = {_toml_str(args.license)}",
        f"retrieved_on = {time.strftime('%Y-%m-%d')}",
        f"sha256 = {_toml_str(sha256_file(file))}",
        f"kind = {_toml_str(args.kind)}",
        f"table = {_toml_str(args.table)}",
        f"status = {_toml_str(args.status)}",
    ]
    if args.option:
        lines.append("")
        lines.append("[source.options]")
        for item in args.option:
            key, _, value = item.partition("=")
            if key == "is_synthetic" and value in ("true", "false"):
                lines.append(f"{key} = {value}")
            elif key == "idle_baseline_w":
                lines.append(f"{key} = {float(value)!r}")
            else:
                lines.append(f"{key} = {_toml_str(value)}")
    with manifest_file.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    load_manifest()  # fail now, not at the next run, if the entry is malformed
    print(f"registered {args.id} in {manifest_file}")
    return 0


def load_manifest_unverified() -> list[tuple[str, Path, str]]:
    """(id, manifest file, path) of every entry, without checking hashes."""
    import tomllib

    out = []
    for manifest_file in sorted((sources_dir() / "manifest").glob("*.toml")):
        for raw in tomllib.loads(manifest_file.read_text(encoding="utf-8")).get("source", []):
            out.append((raw.get("id"), manifest_file, raw.get("path")))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="edge-carbon", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("run", help="materialise every asset on the shipped data")
    build.add_argument("--skip-dashboards", action="store_true", help="build and publish the warehouse without rendering the dashboards")
    build.add_argument("--sobol-base-samples", type=int, default=0, metavar="N",
                       help="Sobol base samples (a power of 2) for marts.uncertainty_drivers; the full study of "
                            "docs/findings.md uses 8192 (default: the build's 512)")
    build.set_defaults(func=run)
    docs = sub.add_parser("docs", help="render the verdict from the published warehouse into README.md and docs/findings.md")
    docs.set_defaults(func=render_docs)
    query = sub.add_parser("sql", help="run a read-only SQL query on the published warehouse")
    query.add_argument("query")
    query.add_argument("--limit", type=int, default=40, help="rows to print")
    query.set_defaults(func=sql)
    reg = sub.add_parser("register", help="add a file below sources/ to the manifest")
    reg.add_argument("file", nargs="?")
    reg.add_argument("--refresh", metavar="ID", help="recompute the sha256 of an existing entry")
    reg.add_argument("--id")
    reg.add_argument("--kind", help="parser, e.g. nvidia_smi, powermetrics, monsoon, android_sysfs, rapl, codecarbon")
    reg.add_argument("--table", default="staging.benchmark_runs")
    reg.add_argument("--title", default="")
    reg.add_argument("--url", default="https://example.invalid/own-measurement")
    reg.add_argument("--license", default="CC-BY-4.0")
    reg.add_argument("--status", default="primary", choices=["paper", "primary", "derived", "assumed"])
    reg.add_argument("--manifest", default="local.toml", help="manifest file below sources/manifest/")
    reg.add_argument("--option", action="append", metavar="KEY=VALUE", help="parser option, e.g. device_id=pixel-8")
    reg.set_defaults(func=register)
    args = parser.parse_args(argv)
    if args.command == "register" and not args.refresh and not (args.file and args.id and args.kind):
        parser.error("register needs FILE, --id and --kind (or --refresh ID)")
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
