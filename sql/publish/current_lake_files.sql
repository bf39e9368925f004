-- Every current file of the lake's catalog (of one table, or of all when $table is null),
-- with what the catalog records about it.
select table_name, partition_key, file, size_bytes, row_count, run_id, written_at
from meta.lake_files
where superseded_at is null and ($table is null or table_name = $table)
order by table_name, partition_key, file;
