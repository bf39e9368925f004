-- The variant rows of marts.siting's parameter sets (the model's argument variant_table, core.variants' columns):
-- family 'siting', one row per pair of the table `siting_pairs`, each evaluated on its scenario's headline basis,
-- compute only (the pattern that moves no bytes, core.patterns) and the edge designs of its scenario's answer rows,
-- under the method rows that set the verdict for its scenario (the table `siting_answers`, sql/siting/answers.sql).
-- A pair's overrides are its two intensities, already in its parameter set (sql/siting/inputs.sql).
with answers as (
    select
        scenario_id,
        list_sort(list_distinct(list(edge_design))) as designs,
        list_sort(list_distinct(list({'network_method': network_method, 'policy': embodied_policy, 'resize_power': resize_power})))
            as method_rows
    from siting_answers
    group by scenario_id
)

select
    pairs.scenario_id,
    pairs.variant_id,
    'siting' as family,
    null::varchar[] as bases,
    'headline' as basis_filter,
    list_concat((select list(pattern order by pattern) from core.patterns where not moves_bytes), answers.designs) as patterns,
    false as own_pattern,
    false as designs,
    'rows' as method_filter,
    answers.method_rows,
    []::struct(parameter varchar, value double, value_text varchar)[] as overrides
from siting_pairs as pairs
inner join answers using (scenario_id)
order by pairs.scenario_id, pairs.variant_id
