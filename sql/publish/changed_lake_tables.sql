-- The lake tables whose current files a run changed: files it wrote, or rows it committed or
-- superseded since it copied the published file.
select distinct table_name
from meta.lake_files
where run_id = $run_id or written_at >= $since or superseded_at >= $since
order by table_name;
