-- What the published warehouse holds: one row per table or view (a lake table is a view over its
-- Parquet files), with its estimated row count (null for a view).
select
    schema_name || '.' || table_name as table_name,
    estimated_size as n_rows
from duckdb_tables()
where schema_name in ('staging', 'quarantine', 'core', 'marts')
union all
select schema_name || '.' || view_name, null
from duckdb_views()
where not internal and schema_name in ('staging', 'quarantine', 'core', 'marts')
order by table_name
