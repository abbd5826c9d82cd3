"""Trace and PerDSTrace construction, `implemented_hooks`, and frequency parsing (`parse_freq`)."""
import numpy as np
import pytest

from fe_core.data import Data
from fe_core.trace import (PER_DS_HOOKS, TRACE_HOOKS, EvalEssential, Freq, Logger, PerDSTrace, TestEssential, Trace,
                           TrainEssential, implemented_hooks, parse_freq)


# ---------------------------------------------------------------- Trace construction
def test_trace_normalises_inputs_outputs_mode_and_ds_id():
    trace = Trace(inputs="y_pred", outputs=("acc", "f1"), mode="!train", ds_id=["ds1", "ds2"])
    assert trace.inputs == ["y_pred"]
    assert trace.outputs == ["acc", "f1"]
    assert trace.mode == {"eval", "test", "infer"}
    assert trace.ds_id == {"ds1", "ds2"}
    assert trace.fe_monitor_names == set()


def test_trace_defaults_run_everywhere_with_no_keys():
    trace = Trace()
    assert (trace.inputs, trace.outputs, trace.mode, trace.ds_id) == ([], [], set(), set())


def test_each_trace_has_its_own_monitor_names():
    first, second = Trace(), Trace()
    first.fe_monitor_names.add("acc")
    assert second.fe_monitor_names == set()


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "training"}, "Unknown mode 'training'"),
    ({"ds_id": "a|b"}, "forbidden character"),
    ({"inputs": "acc;ds1"}, "acc;ds1"),
    ({"outputs": ""}, "non-empty strings"),
])
def test_trace_rejects_bad_arguments_with_a_specific_message(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("|", r"\|")):
        Trace(**kwargs)


def test_get_outputs_returns_a_copy_of_the_outputs():
    trace = Trace(outputs=["acc"])
    outs = trace.get_outputs(ds_ids=["ds1"])
    outs.append("other")
    assert outs == ["acc", "other"]
    assert trace.outputs == ["acc"]


def test_base_hooks_are_callable_no_ops():
    trace, per_ds = Trace(), PerDSTrace()
    data = Data({"x": 1})
    for hook in TRACE_HOOKS:
        assert getattr(trace, hook)(data) is None
    for hook in TRACE_HOOKS + PER_DS_HOOKS:
        assert getattr(per_ds, hook)(data) is None
    assert dict(data) == {"x": 1}


def test_per_ds_trace_is_a_trace_with_the_same_constructor():
    trace = PerDSTrace(inputs="x", mode="eval", ds_id="!ds1")
    assert isinstance(trace, Trace)
    assert (trace.inputs, trace.mode, trace.ds_id) == (["x"], {"eval"}, {"!ds1"})


# ---------------------------------------------------------------- implemented_hooks
def test_base_classes_implement_no_hooks():
    assert implemented_hooks(Trace()) == frozenset()
    assert implemented_hooks(PerDSTrace()) == frozenset()


def test_implemented_hooks_reports_exactly_the_overridden_hooks():
    class EpochCounter(Trace):
        def on_epoch_begin(self, data):
            pass

        def on_batch_end(self, data):
            pass

    assert implemented_hooks(EpochCounter()) == frozenset({"on_epoch_begin", "on_batch_end"})


def test_implemented_hooks_sees_hooks_inherited_from_an_intermediate_class():
    class Base(Trace):
        def on_end(self, data):
            pass

    class Child(Base):
        def on_begin(self, data):
            pass

    assert implemented_hooks(Base()) == frozenset({"on_end"})
    assert implemented_hooks(Child()) == frozenset({"on_begin", "on_end"})


def test_implemented_hooks_of_a_per_ds_trace_include_its_ds_hooks():
    class PerDS(PerDSTrace):
        def on_ds_end(self, data):
            pass

        def on_batch_begin(self, data):
            pass

    assert implemented_hooks(PerDS()) == frozenset({"on_ds_end", "on_batch_begin"})


def test_a_plain_trace_never_reports_ds_hooks_even_if_it_defines_them():
    class NotPerDS(Trace):
        def on_ds_begin(self, data):  # not a hook of a plain Trace: the Estimator never calls it
            pass

    assert implemented_hooks(NotPerDS()) == frozenset()


def test_implemented_hooks_is_cached_per_class():
    class Once(Trace):
        def on_end(self, data):
            pass

    first = implemented_hooks(Once())
    assert implemented_hooks(Once(mode="eval")) is first


def test_builtin_traces_implement_only_the_hooks_they_need():
    assert implemented_hooks(TrainEssential({"ce"})) == frozenset(
        {"on_begin", "on_epoch_begin", "on_batch_end", "on_epoch_end", "on_end"})
    assert implemented_hooks(EvalEssential({"ce"})) == frozenset({"on_epoch_begin", "on_batch_end", "on_epoch_end"})
    assert implemented_hooks(TestEssential({"ce"})) == frozenset({"on_epoch_begin", "on_batch_end", "on_epoch_end"})
    assert implemented_hooks(Logger()) == frozenset(
        {"on_begin", "on_epoch_begin", "on_batch_end", "on_epoch_end", "on_end"})


# ---------------------------------------------------------------- parse_freq
@pytest.mark.parametrize("freq, expected", [
    (None, Freq(False, 0)),
    (1, Freq(True, 1)),
    (250, Freq(True, 250)),
    (np.int64(7), Freq(True, 7)),
    ("step", Freq(True, 1)),
    ("s", Freq(True, 1)),
    ("epoch", Freq(False, 1)),
    ("e", Freq(False, 1)),
    ("5s", Freq(True, 5)),
    ("12e", Freq(False, 12)),
    ("007s", Freq(True, 7)),
])
def test_parse_freq_accepts_every_documented_form(freq, expected):
    parsed = parse_freq(freq)
    assert parsed == expected
    assert (parsed.is_step, parsed.freq) == (expected.is_step, expected.freq)
    assert type(parsed.freq) is int


@pytest.mark.parametrize("freq, message", [
    (0, "must be a positive integer but got 0"),
    (-3, "must be a positive integer but got -3"),
    ("0s", "must be a positive integer but got '0s'"),
    ("0e", "must be a positive integer but got '0e'"),
    ("10", "must be formatted like <int><s|e>"),
    ("5 s", "must be formatted like <int><s|e>"),
    ("steps", "must be formatted like <int><s|e>"),
    ("-2e", "must be formatted like <int><s|e>"),
    ("", "must be formatted like <int><s|e>"),
    (2.5, "Unrecognized type passed as frequency: <class 'float'>"),
    (True, "Unrecognized type passed as frequency: <class 'bool'>"),
    ([1], "Unrecognized type passed as frequency: <class 'list'>"),
])
def test_parse_freq_rejects_bad_values_and_types(freq, message):
    with pytest.raises(ValueError, match=message.replace("|", r"\|").replace("(", r"\(").replace(")", r"\)")):
        parse_freq(freq)
