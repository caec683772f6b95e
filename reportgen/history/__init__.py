"""History: every run kept, and an index over them for queries across hundreds of runs.

The bundles stay the source of truth; the index (`<results>/.reportgen-history.sqlite`) is a cache of one
`RunRecord` per bundle, brought up to date on every open and rebuilt from the bundles when damaged.
"""

from __future__ import annotations

from reportgen.history.index import (
    SCHEMA,
    HistoryIndex,
    IndexUpdate,
    bundle_home,
    find_bundles,
    kept_runs_of,
    previous_run,
)

__all__ = ["SCHEMA", "HistoryIndex", "IndexUpdate", "bundle_home", "find_bundles", "kept_runs_of", "previous_run"]
