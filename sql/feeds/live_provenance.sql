-- Rows of staging.grid_intensity_live whose provenance does not resolve: a source_id that is
-- neither in staging.sources nor a live feed, or a feed row whose source_file names no payload
-- of raw.carbon_intensity_payloads.
select l.source_id, count(*) as n
from staging.grid_intensity_live as l
left join staging.sources as s on s.source_id = l.source_id
left join raw.carbon_intensity_payloads as r
    on l.source_file = 'raw.carbon_intensity_payloads/' || r.payload_id
where not (
    s.source_id is not null
    or (l.source_id in ('feed_uk_carbon_intensity', 'feed_electricitymaps') and r.payload_id is not null)
)
group by l.source_id
order by l.source_id
