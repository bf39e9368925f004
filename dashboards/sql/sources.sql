-- Sources page: every source with its licence, link, retrieval date and the table it feeds (marts.sources).
select
    source_id,
    title,
    url,
    license,
    attribution,
    strftime(retrieved_on, '%Y-%m-%d') as retrieved_on,
    coalesce(table_name, '(none)') as table_name,
    kind,
    status,
    path
from marts.sources
order by table_name, source_id
