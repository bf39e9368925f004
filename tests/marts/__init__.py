"""The marts, each against rows and arithmetic done by hand."""
