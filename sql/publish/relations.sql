-- Every table and view of the published warehouse, schema-qualified: the names `edge-carbon sql`
-- offers when a query names a table or view that does not exist.
select schema_name || '.' || table_name as relation
from duckdb_tables()
where database_name = current_database() and not internal
union all
select schema_name || '.' || view_name
from duckdb_views()
where database_name = current_database() and not internal
order by relation
