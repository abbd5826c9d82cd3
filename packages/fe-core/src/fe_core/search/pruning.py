"""`OptunaPruning`: report an Estimator's eval metric to the running Optuna trial; stop the fit when it is pruned."""
from __future__ import annotations

from typing import Any, Optional

from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.search.trial import current_trial
from fe_core.trace.trace import Trace

__all__ = ["OptunaPruning"]


@fe_export("fe.search.OptunaPruning")
class OptunaPruning(Trace):
    """Report `metric` to the Optuna trial at the end of every eval epoch; when Optuna prunes the trial, end the fit.

    Put it in the traces of the Estimator that an `OptunaSearch`'s `eval_fn` fits: it finds the trial by itself
    (`current_trial()`). The fit then ends normally after the epoch at which the trial was pruned (savers and loggers
    finish as usual), and the search records the trial as pruned (`get_pruned_trials()`), not as failed, whatever
    `eval_fn` returns.

    ```python
    def eval_fn(search_idx, lr):
        est = fe.Estimator(pipeline=pipeline, network=network(lr), epochs=20,
                           traces=[Accuracy(true_key="y", pred_key="y_pred"), fe.search.OptunaPruning("accuracy")])
        est.fit()
        return {"accuracy": ...}
    ```

    Args:
        metric: The key of the eval metric to report (an eval loss such as 'ce', or a metric trace's output).
        trial: The Optuna trial to report to (None: the running search trial's).
        mode: The mode whose epoch ends report ('eval').
    """

    def __init__(self, metric: str, trial: Any = None, mode: Optional[str] = "eval") -> None:
        if not isinstance(metric, str):
            raise ValueError(f"OptunaPruning reports one metric (a key), got {metric!r}")
        super().__init__(inputs=metric, mode=mode)
        self.metric = metric
        self.trial = trial
        self.pruned_at: Optional[int] = None

    def _trial(self) -> Any:
        if self.trial is not None:
            return self.trial
        context = current_trial()
        if context is None or context.optuna_trial is None:
            raise RuntimeError("OptunaPruning runs only inside a fe.search.OptunaSearch trial (or give it trial=an "
                               "Optuna trial)")
        return context.optuna_trial

    def on_begin(self, data: Data) -> None:
        self._trial()  # fail at the start of the fit, not after its first epoch
        self.pruned_at = None

    def on_epoch_end(self, data: Data) -> None:
        if self.metric not in data or data[self.metric] is None:
            raise KeyError(f"OptunaPruning reports {self.metric!r}, but nothing wrote it by the end of epoch "
                           f"{self.system.epoch_idx} in mode {self.system.mode!r}; available keys: {sorted(data)}")
        value, step = float(data[self.metric]), int(self.system.epoch_idx)
        trial = self._trial()
        trial.report(value, step)
        context = current_trial()
        if context is not None:
            context.reports.append((step, value))
        if trial.should_prune():
            self.pruned_at = step
            if context is not None:
                context.pruned_at = step
            self.system.stop_training = True
            print(f"FastEstimator-OptunaPruning: trial pruned at epoch {step} ({self.metric}: {value})")
