-- asset: group=marts
-- marts.validation_headlines: the published training footprints that give no inputs to
-- recompute (staging.validation_cases of kind 'headline'); marts.validation recomputes the
-- others. Grain: one published headline.
select *
from staging.validation_cases
where kind = 'headline'
order by case_id
