"""Hyperparameter searches (`GridSearch`, `GoldenSection`, `OptunaSearch`, the `Search` base), where their trials run
(`Serial`, `Ray`), Optuna's parameter spaces and pruning, and the searches' visualisation."""
from fe_core.search.executor import Ray, SearchExecutor, Serial, TrialError
from fe_core.search.golden_section import GoldenSection
from fe_core.search.grid_search import GridSearch
from fe_core.search.optuna_search import OptunaSearch
from fe_core.search.pruning import OptunaPruning
from fe_core.search.search import Search, SearchError
from fe_core.search.space import Choice, LogRange, Range
from fe_core.search.trial import TrialContext, current_trial, trial_seed

__all__ = ["Search", "SearchError", "GridSearch", "GoldenSection", "OptunaSearch", "Serial", "Ray", "SearchExecutor",
           "TrialError", "Range", "LogRange", "Choice", "OptunaPruning", "TrialContext", "current_trial",
           "trial_seed"]
