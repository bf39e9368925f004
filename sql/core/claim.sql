-- core.claim: the claims marts.verdict judges, one row per claim of the registry (staging.claims)
-- whose quantity is a cloud/edge ratio R ($ratio_quantity), its published bounds as claim_low and
-- claim_high. A scenario names the claim it tests (its claim_id parameter); marts.verdict,
-- marts.fleet_equivalence and marts.paper_reproduction join its row. A claim in other terms is
-- judged in marts.claims only. $feasible_share_min, with its status and reasoning: the share of
-- a verdict row's Monte Carlo draws that must be feasible for it to get a category. Grain: one claim.
select
    claim_id,
    published_low as claim_low,
    published_high as claim_high,
    $feasible_share_min as feasible_share_min,
    $feasible_share_min_status as feasible_share_min_status,
    $feasible_share_min_reasoning as feasible_share_min_reasoning
from staging.claims
where quantity = $ratio_quantity
order by claim_id
