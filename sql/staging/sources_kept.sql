-- The published rows of staging.sources that a what-if keeps: every row but those of the source ids
-- $ids names (the files it adds), in the table's order (by source_id, as the manifest is loaded).
select *
from staging.sources
where not list_contains($ids, source_id)
order by source_id
