"""Issue 30 item 13: the Estimator's docstring example (shown in the API reference) is real code that runs and prints
what it shows, not commented-out lines."""
from __future__ import annotations

import doctest

import pytest

import fe_core.estimator


@pytest.mark.slow
def test_the_estimator_example_runs_as_shown():
    example = fe_core.estimator.Estimator.__doc__.split("Example:", 1)[1]
    code = [line.strip() for line in example.splitlines() if line.strip().startswith(">>>")]
    assert len(code) > 5 and not any(line.startswith(">>> #") for line in code)
    finder = doctest.DocTestFinder()
    (test,) = [test for test in finder.find(fe_core.estimator.Estimator, "Estimator") if test.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
