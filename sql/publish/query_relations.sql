-- A query as DuckDB parses it, as JSON: its BASE_TABLE nodes are the tables and views it reads,
-- each with the schema as written (empty when none was); on a parse error, the error.
select json_serialize_sql($query) as parsed
