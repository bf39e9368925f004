-- Current partitions of a lake table (meta.lake_files) whose key, the source_id of every row
-- of the partition, does not join staging.sources; read from the catalog, not the files.
-- $table is bound as a parameter (a schema-qualified table name).
select files.partition_key as source_id, sum(files.row_count) as n_rows
from meta.lake_files as files
left join staging.sources as sources on sources.source_id = files.partition_key
where files.table_name = $table
    and files.partition_column = 'source_id'
    and files.superseded_at is null
    and sources.source_id is null
group by files.partition_key
order by files.partition_key
