-- asset: group=marts
-- marts.sources: every shipped source file with its licence, link and the table it feeds
-- (staging.sources, published for the Sources page). Grain: one shipped source file.
select *
from staging.sources
order by table_name, source_id
