-- Every power series of the published warehouse (for a did-you-mean on an unknown one).
select series_id from staging.benchmark_series order by series_id
