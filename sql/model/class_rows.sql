-- The model's rows (sql/model/evaluate.sql) when no parameter set has a mixed fleet.
select * from model_class_rows
