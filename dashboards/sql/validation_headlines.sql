-- Validation page: published headlines that give no inputs to recompute (marts.validation_headlines).
select case_id, model, headline, published_citation, published_url, notes
from marts.validation_headlines
order by case_id
