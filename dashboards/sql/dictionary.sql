-- Data dictionary page: every table and view of the warehouse, each column with its type and comment.
-- The comments are written from the pandera models (pipelines/warehouse/dictionary.py) and read back from
-- DuckDB's catalog, as any client can: duckdb_tables(), duckdb_views() and duckdb_columns().
with relations as (
    select database_name, schema_name, table_name, comment, 'table' as kind from duckdb_tables()
    union all
    select database_name, schema_name, view_name, comment, 'view' as kind from duckdb_views() where not internal
)
select
    t.schema_name,
    t.table_name,
    t.schema_name || '.' || t.table_name as table_id,
    t.kind,
    t.comment as table_comment,
    c.column_index,
    c.column_name,
    c.data_type,
    c.is_nullable,
    c.comment as column_comment
from relations as t
join duckdb_columns() as c using (database_name, schema_name, table_name)
where t.database_name = current_database()
  and list_contains($schemas, t.schema_name)
order by list_position($schemas, t.schema_name), t.table_name, c.column_index
