-- Rows of a staging table whose source_id does not join staging.sources.
-- $table is bound as a parameter (a schema-qualified table name).
with rows_checked as (
    select source_id, count(*) as n_rows
    from query_table($table)
    group by source_id
),

orphans as (
    select rows_checked.source_id, rows_checked.n_rows
    from rows_checked
    left join staging.sources as sources using (source_id)
    where sources.source_id is null
)

select * from orphans order by source_id
