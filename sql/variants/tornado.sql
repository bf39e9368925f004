-- Family 'tornado': every ranged parameter of every scenario (a low and a high in core.scenario_parameters, low <
-- high) at its low end and at its high end, all others at the scenario's values (variant_id '<parameter>:low' and
-- '<parameter>:high'), and the scenario as it stands beside them (variant_id 'baseline'), each evaluated on the
-- scenario's headline basis and the patterns every scenario is evaluated on, under every network method the frame
-- admits (at its headline allocation policy and resize power): the rows marts.sensitivity reads.
with ranged as (
    select scenario_id, parameter, low, high
    from core.scenario_parameters
    where low is not null and high is not null and low < high
),

ends as (
    select ranged.scenario_id, ranged.parameter || ':' || side.side as variant_id,
        [{'parameter': ranged.parameter, 'value': case side.side when 'low' then ranged.low else ranged.high end,
          'value_text': null::varchar}] as overrides
    from ranged
    cross join (values ('low'), ('high')) as side(side)
    union all
    select scenario_id, 'baseline' as variant_id, [] as overrides
    from core.scenarios
)

select
    ends.scenario_id,
    ends.variant_id,
    'tornado' as family,
    (select list(pattern) from core.patterns where every_scenario) as patterns,
    'headline' as basis_filter,
    'network' as method_filter,
    ends.overrides
from ends
semi join core.scenarios using (scenario_id)
order by ends.scenario_id, ends.variant_id
