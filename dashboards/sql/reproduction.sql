-- Reproduction page: every published claim with the paper's value, ours and the verdict.
-- ratio_to_paper is only defined where both sides are single numbers.
select
    claim_id,
    claim,
    location,
    paper_value,
    paper_value_text,
    reproduced_value,
    reproduced_value_text,
    unit,
    status,
    explanation,
    scenario_id,
    case when paper_value > 0 and reproduced_value > 0 then reproduced_value / paper_value end as ratio_to_paper
from marts.paper_reproduction
order by claim_id
