-- asset: group=scenarios
-- core.model_evaluation: the model's one formula (the table macro model_rows, sql/model/model_rows.sql) over
-- every parameter set of core.variants (core.variant_inputs, core.variant_devices). Grain: scenario x variant x edge
-- device class x basis x communication pattern x method row, and one 'fleet' row per mixed fleet; `family` names the
-- variant's kind ('base': each scenario as it stands, the rows the verdict reads; a what-if mart reads its family's). After sql/model/macros.sql and sql/model/model_rows.sql this file runs on the
-- published warehouse and returns this table. The steps in words: docs/model.md.
select * from model_rows()
