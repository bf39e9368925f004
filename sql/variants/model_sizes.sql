-- Family 'model_sizes': every scenario trained on every model size of staging.model_configs (the OPT family,
-- 125M-66B; variant_id the model_id), its fleet_model_params, fleet_model_hidden_size and fleet_model_layers the
-- size's, evaluated on every basis and on the patterns every scenario is evaluated on, at the frame's headline
-- method row: marts.fleet_sizing reads each basis's compute-only rows, marts.communication the headline basis's.
select
    scenarios.scenario_id,
    models.model_id as variant_id,
    'model_sizes' as family,
    (select list(pattern) from core.patterns where every_scenario) as patterns,
    'headline' as method_filter,
    [{'parameter': 'fleet_model_params', 'value': models.params::double, 'value_text': null::varchar},
     {'parameter': 'fleet_model_hidden_size', 'value': models.hidden_size::double, 'value_text': null::varchar},
     {'parameter': 'fleet_model_layers', 'value': models.n_layers::double, 'value_text': null::varchar}] as overrides
from core.scenarios as scenarios
cross join staging.model_configs as models
order by scenarios.scenario_id, models.params
