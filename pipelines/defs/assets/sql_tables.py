"""Every table built from its SQL file and its contract alone, as one asset each.

A file ``sql/<schema>/<table>.sql`` that opens with ``-- asset: group=<group>`` declares its table
(:func:`pipelines.lib.tables.declared_tables`): its asset's deps are the tables the SQL reads, its
columns and blocking checks are the table's pandera model, and its description is the file's
leading comment. A table whose build needs Python (run config, the model's evaluation, a live
feed) has a hand-written asset in another module instead.
"""

import dagster as dg

from pipelines.lib.resources import Warehouse
from pipelines.lib.tables import DeclaredTable, declared_tables


def declared_asset(declared: DeclaredTable) -> dg.AssetsDefinition:
    """The asset of one declared table: its SQL run into the table, checked as it is written."""
    table = declared.table

    @table.asset(group=declared.group, description=declared.description)
    def build(warehouse: Warehouse) -> dg.MaterializeResult:
        return table.build(warehouse.connection())

    return build


assets = [declared_asset(declared) for declared in declared_tables()]
