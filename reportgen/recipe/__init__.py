"""Recipe stage: YAML recipe files → validated, immutable `Recipe` objects.

Every problem in a recipe file is a `RecipeError` located at ``file:line:col``.
"""

from __future__ import annotations

from reportgen.recipe.loader import load_recipe, load_recipes
from reportgen.recipe.model import Recipe
from reportgen.recipe.reference_docs import recipe_reference_markdown

__all__ = ["Recipe", "load_recipe", "load_recipes", "recipe_reference_markdown"]
