-- The source ids of $ids (registered files) that staging.sources lacks: files registered since the
-- build that wrote it. A what-if adds the scenario files among them to staging.sources.
select ids.source_id
from unnest($ids::varchar[]) as ids (source_id)
where ids.source_id not in (select sources.source_id from staging.sources as sources)
order by ids.source_id
