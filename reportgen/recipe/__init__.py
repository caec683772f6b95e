"""Recipe stage: YAML recipe files → validated, immutable `Recipe` objects.

Every problem in a recipe file is a `RecipeError` located at ``file:line:col``.
"""

from __future__ import annotations

from reportgen.recipe.distributed import Distributed
from reportgen.recipe.env_policy import HOST_KEPT, RUN_OWNED, env_policy_markdown
from reportgen.recipe.loader import MAX_RECIPE_BYTES, load_recipe, load_recipes, recipe_warnings
from reportgen.recipe.local_modules import LocalModule, LocalModules, find_local_modules, read_local_modules
from reportgen.recipe.model import (
    DEFAULT_DEVICE_THRESHOLD,
    DEFAULT_REGRESSION_THRESHOLD,
    MAX_TIMEOUT_S,
    RESERVED_PAGE_NAMES,
    SOURCE_SUFFIXES,
    STORED_CONTEXT,
    CompileOptions,
    Recipe,
    TensorSpec,
    Variant,
)
from reportgen.recipe.reference_docs import recipe_reference_markdown
from reportgen.recipe.variants import MAX_POINTS, SWEEP_PAGE, Sweep, SweepPoint

__all__ = [
    "DEFAULT_DEVICE_THRESHOLD",
    "DEFAULT_REGRESSION_THRESHOLD",
    "HOST_KEPT",
    "MAX_POINTS",
    "MAX_RECIPE_BYTES",
    "MAX_TIMEOUT_S",
    "RESERVED_PAGE_NAMES",
    "RUN_OWNED",
    "SOURCE_SUFFIXES",
    "STORED_CONTEXT",
    "SWEEP_PAGE",
    "CompileOptions",
    "Distributed",
    "LocalModule",
    "LocalModules",
    "Recipe",
    "Sweep",
    "SweepPoint",
    "TensorSpec",
    "Variant",
    "env_policy_markdown",
    "find_local_modules",
    "load_recipe",
    "load_recipes",
    "read_local_modules",
    "recipe_reference_markdown",
    "recipe_warnings",
]
