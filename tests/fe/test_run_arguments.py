"""`fe train` records the arguments it calls `get_estimator` with, for experiment trackers (MLflowLogger's params)."""
from __future__ import annotations

from fe.cli.train import build_estimator
from fe_core.summary.run_arguments import run_arguments, set_run_arguments


class FakeEstimator:
    def fit(self):
        pass

    def test(self):
        pass


def test_fe_train_records_the_parsed_get_estimator_arguments():
    def get_estimator(epochs: int = 2, lr: float = 0.1, name: str = "x"):
        return FakeEstimator()

    try:
        build_estimator(get_estimator, {"epochs": 3, "lr": 0.01}, "get_estimator() in script.py")
        assert run_arguments() == {"epochs": 3, "lr": 0.01}
    finally:
        set_run_arguments(None)
    assert run_arguments() == {}
