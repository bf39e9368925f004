-- Validation page: published headlines that give no inputs to recompute (kind = headline).
select case_id, model, headline, published_citation, published_url, notes
from staging.validation_cases
where kind = 'headline'
order by case_id
