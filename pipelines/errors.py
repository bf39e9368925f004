"""The project's own errors. Each one names the file (and the line, where one applies)."""

from __future__ import annotations

from pathlib import Path


class EdgeCarbonError(Exception):
    """Base class: every error the project raises on purpose."""


class SourceIntegrityError(EdgeCarbonError):
    """A shipped source file is missing or its sha256 differs from the manifest."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


class ManifestError(EdgeCarbonError):
    """The source manifest itself is malformed."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


class SourceParseError(EdgeCarbonError):
    """A file that cannot be parsed at all (as opposed to bad rows, which are quarantined)."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class UnresolvedRow(SourceParseError):
    """A row of a scenario file the build cannot resolve (a reference that finds no row, a value
    that disagrees with the row it reads, an empty value): the build stops, naming it, rather
    than let the scenario take its parent's value in silence."""


class OptionError(ManifestError, SourceParseError):
    """A manifest option of one file is missing or malformed (a manifest and a parse error)."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = str(path)
        self.line = None
        EdgeCarbonError.__init__(self, f"{self.path}: {message}")


class WarehouseError(EdgeCarbonError):
    """The published warehouse, or what a run would publish over it, is not as it should be; nothing was published."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


class DamagedWarehouse(WarehouseError):
    """The published DuckDB file cannot be opened."""


class LakeFileError(WarehouseError):
    """A file the lake's catalog lists as current is missing, has another size, or cannot be read."""


class StalePublish(WarehouseError):
    """The published warehouse moved on while a run worked on its copy (another publisher)."""


class Refused(EdgeCarbonError):
    """A registration refused before anything was written; the message names the fix."""
