-- What the published warehouse holds: one row per table, with its estimated row count.
select
    schema_name || '.' || table_name as table_name,
    estimated_size as n_rows
from duckdb_tables()
where schema_name in ('staging', 'quarantine', 'core', 'marts')
order by schema_name, table_name
