-- The current files a run wrote (its run id), or committed since it copied the published file.
select table_name, partition_key, file, size_bytes, row_count, run_id, written_at
from meta.lake_files
where superseded_at is null and (run_id = $run_id or ($since is not null and written_at >= $since))
order by table_name, partition_key, file;
