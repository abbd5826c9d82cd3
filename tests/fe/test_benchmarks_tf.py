"""Smoke tests of tools/bench: TensorFlow: fe next to hand-written loops and Keras fit (bench_tf, bench_tf_fit,
bench_tf_feed_forward), with tiny sizes (no timing is asserted here, the figures come from full runs, see
tools/bench/README.md). The benchmark smoke tests are split into test_benchmarks*.py files of similar cost: pytest-xdist
runs whole files per process (--dist loadfile), so the longest file bounds the suite's wall time."""
from __future__ import annotations

import re

import pytest

from fe_helpers import RATIO, bench, rows

pytestmark = pytest.mark.slow


def test_tf_benchmark_compares_fe_with_the_loop_and_with_keras_fit():
    output = bench("bench_tf.py", "--quick", "--models", "mlp")
    assert [row[1] for row in rows(output, "mlp")] == ["hand-written tf.function loop",
                                                       "hand-written, concrete function", "keras fit",
                                                       "fe log_steps=None", "fe log_steps=100"]
    assert re.search(rf"mlp: fe log_steps=None / keras fit = {RATIO}", output)


def test_tf_fit_benchmark_times_whole_runs_of_the_loop_keras_and_fe():
    output = bench("bench_tf_fit.py", "--quick", "--models", "mlp")
    table = rows(output, "mlp")
    assert [row[1].split(",")[0] for row in table] == ["hand-written tf.function loop", "keras fit", "fe fit",
                                                       "fe fit vs keras fit"]
    assert all(re.fullmatch(RATIO, row[4]) for row in table)


def test_tf_feed_forward_benchmark_compares_fe_with_an_eager_call_and_a_tf_function():
    output = bench("bench_tf_feed_forward.py", "--quick")
    assert len(rows(output, "(")) == 3 and len(re.findall(RATIO, output)) == 2
