"""Hyperparameter searches (`GridSearch`, `GoldenSection`, the `Search` base) and their visualisation."""
from fe_core.search.golden_section import GoldenSection
from fe_core.search.grid_search import GridSearch
from fe_core.search.search import Search, SearchError

__all__ = ["Search", "SearchError", "GridSearch", "GoldenSection"]
