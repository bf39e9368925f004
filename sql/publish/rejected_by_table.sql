-- Quarantined input rows per staging table (distinct file rows, not failed checks).
select
    table_name,
    count(distinct source_file || ':' || coalesce(source_row, -1)) as rejected_rows,
    count(*) as failed_checks
from quarantine.rejected_rows
group by table_name
order by table_name
