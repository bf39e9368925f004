"""Files -> typed, validated rows: manifest, parsers, options, quarantine, feeds, registration. No Dagster."""
