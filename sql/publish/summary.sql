-- What the published warehouse holds: one row per table or view of a schema in $schemas (a lake
-- table is a view over its Parquet files), with its schema and its estimated row count (null for a view).
select
    schema_name,
    schema_name || '.' || table_name as table_name,
    estimated_size as n_rows
from duckdb_tables()
where database_name = current_database() and list_contains($schemas, schema_name)
union all
select schema_name, schema_name || '.' || view_name, null
from duckdb_views()
where database_name = current_database() and not internal and list_contains($schemas, schema_name)
order by table_name
