-- Family 'policies': every scenario under every embodied-allocation policy of core.embodied_policies (variant_id
-- the policy, its edge_embodied_policy), evaluated compute only (the pattern that moves no bytes) on the
-- scenario's headline basis at the frame's headline method row: marts.embodied_allocation's rows.
select
    scenarios.scenario_id,
    policies.policy as variant_id,
    'policies' as family,
    (select list(pattern) from core.patterns where not moves_bytes) as patterns,
    'headline' as basis_filter,
    'headline' as method_filter,
    [{'parameter': 'edge_embodied_policy', 'value': null::double, 'value_text': policies.policy}] as overrides
from core.scenarios as scenarios
cross join core.embodied_policies as policies
order by scenarios.scenario_id, policies.rowid
