"""Parsers: pure functions from a shipped file to typed rows and row-level rejects.

Each parser takes ``(path, options)`` and returns :class:`pipelines.ingest.staging.Parsed`. A row
that cannot be read becomes a :class:`pipelines.quarantine.Reject` (file, line, column,
value, reason); a file that cannot be read at all raises
:class:`pipelines.errors.SourceParseError` naming the file and line.
"""
