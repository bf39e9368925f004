"""The model's rows: methods, patterns, devices, draws, feasibility."""
