"""`sort_traces`: dependency ordering of traces, its stability, and its errors."""
import re

import pytest

from fe_core.trace import EvalEssential, Logger, Trace, TrainEssential, sort_traces


def make(name, inputs=None, outputs=None):
    """A trace of a fresh class called `name` (error messages name traces by class)."""
    return type(name, (Trace,), {})(inputs=inputs, outputs=outputs)


def names(traces):
    return [type(trace).__name__ for trace in traces]


# ---------------------------------------------------------------- ordering
def test_a_chain_given_in_reverse_comes_out_in_dependency_order():
    third = make("Third", inputs="b", outputs="c")
    second = make("Second", inputs="a", outputs="b")
    first = make("First", inputs="x", outputs="a")
    assert names(sort_traces([third, second, first], ds_ids=[])) == ["First", "Second", "Third"]


def test_a_long_reversed_chain_is_fully_ordered():
    chain = [make(f"T{i}", inputs=f"k{i}", outputs=f"k{i + 1}") for i in range(8)]
    assert sort_traces(list(reversed(chain)), ds_ids=[]) == chain


def test_independent_traces_keep_their_relative_order():
    traces = [make(name, inputs=key, outputs=key + "_out") for name, key in (("P", "x"), ("Q", "y"), ("R", "z"))]
    assert sort_traces(traces, ds_ids=[]) == traces


def test_a_dependent_trace_moves_only_as_late_as_it_must():
    reads_a = make("ReadsA", inputs="a", outputs="d")
    independent = make("Independent", inputs="x", outputs="i")
    writes_a = make("WritesA", inputs="x", outputs="a")
    also_independent = make("AlsoIndependent", inputs="y", outputs="j")
    assert names(sort_traces([reads_a, independent, writes_a, also_independent], ds_ids=[])) == [
        "Independent", "WritesA", "ReadsA", "AlsoIndependent"]


def test_traces_without_inputs_and_essentials_come_first_in_their_original_order():
    middle = make("Middle", inputs="a", outputs="b")
    no_inputs = make("NoInputs", outputs="a")
    logger = Logger()
    train = TrainEssential({"ce"})
    eval_essential = EvalEssential({"ce"})
    result = sort_traces([logger, middle, train, no_inputs, eval_essential], ds_ids=[])
    assert result == [train, no_inputs, eval_essential, middle, logger]


def test_star_traces_go_last_writers_before_readers_each_in_order():
    logger = Logger()
    writer1 = make("StarWriter1", inputs="*", outputs="w1")
    middle = make("Middle", inputs="x", outputs="m")
    reader = make("StarReader", inputs=["*"])
    writer2 = make("StarWriter2", inputs="*", outputs="w2")
    assert names(sort_traces([logger, writer1, middle, reader, writer2], ds_ids=[])) == [
        "Middle", "StarWriter1", "StarWriter2", "Logger", "StarReader"]


def test_any_one_writer_of_a_key_satisfies_its_readers():
    reader = make("Reader", inputs="a", outputs="r")
    writer1 = make("Writer1", inputs="x", outputs="a")
    writer2 = make("Writer2", inputs="y", outputs="a")
    assert names(sort_traces([reader, writer1, writer2], ds_ids=[])) == ["Writer1", "Reader", "Writer2"]


def test_outputs_come_from_get_outputs_with_the_ds_ids():
    class PerDSWriter(Trace):
        def get_outputs(self, ds_ids):
            return [f"acc|{ds_id}" for ds_id in ds_ids]

    reader = make("Reader", inputs="acc|ds2", outputs="best")
    writer = PerDSWriter(inputs="y_pred", outputs="acc")
    assert sort_traces([reader, writer], ds_ids=["ds1", "ds2"]) == [writer, reader]
    with pytest.raises(AssertionError, match=r"Reader trace has unsatisfiable inputs: acc\|ds2"):
        sort_traces([reader, writer], ds_ids=["ds1"], available_outputs={"y_pred"})


def test_sorting_returns_a_new_list_and_leaves_arguments_alone():
    first = make("First", inputs="x", outputs="a")
    second = make("Second", inputs="a", outputs="b")
    traces = [second, first]
    available = {"x"}
    assert sort_traces(traces, ds_ids=[], available_outputs=available) == [first, second]
    assert traces == [second, first]
    assert available == {"x"}


def test_an_empty_list_sorts_to_an_empty_list():
    assert sort_traces([], ds_ids=[]) == []
    assert sort_traces([], ds_ids=[], available_outputs=set()) == []


# ---------------------------------------------------------------- weak vs strict
def test_weak_sort_assumes_keys_no_trace_writes_are_provided():
    accuracy = make("Accuracy", inputs=["y", "y_pred"], outputs="accuracy")
    assert sort_traces([accuracy], ds_ids=[]) == [accuracy]


def test_strict_sort_demands_every_input_be_available_or_written():
    accuracy = make("Accuracy", inputs=["y", "y_pred"], outputs="accuracy")
    assert sort_traces([accuracy], ds_ids=[], available_outputs={"y", "y_pred"}) == [accuracy]
    with pytest.raises(AssertionError, match=r"The Accuracy trace has unsatisfiable inputs: y_pred \(") as info:
        sort_traces([accuracy], ds_ids=[], available_outputs={"y"})
    assert "['y']" in str(info.value)  # says what was available


def test_strict_sort_accepts_a_single_string_of_available_outputs():
    reader = make("Reader", inputs="x", outputs="r")
    assert sort_traces([reader], ds_ids=[], available_outputs="x") == [reader]


def test_reading_a_key_only_the_trace_itself_writes_is_weakly_fine_but_strictly_unsatisfiable():
    best = make("Best", inputs=["loss", "best_loss"], outputs="best_loss")
    assert sort_traces([best], ds_ids=[]) == [best]
    with pytest.raises(AssertionError, match="The Best trace has unsatisfiable inputs: best_loss"):
        sort_traces([best], ds_ids=[], available_outputs={"loss"})


def test_unsatisfiable_input_names_the_trace_and_every_missing_key():
    needy = make("Needy", inputs=["x", "q", "p"], outputs="n")
    with pytest.raises(AssertionError, match="The Needy trace has unsatisfiable inputs: p, q "):
        sort_traces([needy], ds_ids=[], available_outputs={"x"})


def test_a_key_written_only_by_a_star_trace_is_unsatisfiable_and_says_why():
    summariser = make("Summariser", inputs="*", outputs="summary")
    reader = make("Reader", inputs="summary", outputs="r")
    with pytest.raises(AssertionError, match=r"Reader trace has unsatisfiable inputs: summary \(.*Summariser.*'\*'"):
        sort_traces([reader, summariser], ds_ids=[])


# ---------------------------------------------------------------- cycles
def test_a_cycle_raises_naming_every_trace_in_it_and_the_keys():
    alpha = make("Alpha", inputs="c", outputs="a")
    beta = make("Beta", inputs="a", outputs="b")
    gamma = make("Gamma", inputs="b", outputs="c")
    bystander = make("Bystander", inputs="x", outputs="y")
    with pytest.raises(AssertionError, match="Dependency cycle detected amongst traces: Alpha, Beta, Gamma") as info:
        sort_traces([bystander, alpha, beta, gamma], ds_ids=[])
    message = str(info.value)
    assert "Alpha reads 'c' written by Gamma" in message
    assert "Beta reads 'a' written by Alpha" in message
    assert "Gamma reads 'b' written by Beta" in message
    assert "Bystander" not in message


def test_a_two_trace_cycle_in_strict_mode():
    left = make("Left", inputs=["x", "r"], outputs="l")
    right = make("Right", inputs="l", outputs="r")
    with pytest.raises(AssertionError, match=r"Dependency cycle detected amongst traces: Left, Right \("):
        sort_traces([left, right], ds_ids=[], available_outputs={"x"})


def test_traces_waiting_on_a_cycle_are_reported_apart_from_it():
    alpha = make("Alpha", inputs="b", outputs="a")
    beta = make("Beta", inputs="a", outputs="b")
    downstream = make("Downstream", inputs="a", outputs="d")
    with pytest.raises(AssertionError) as info:
        sort_traces([downstream, alpha, beta], ds_ids=[])
    message = str(info.value)
    assert re.match(r"Dependency cycle detected amongst traces: Alpha, Beta \(", message)
    assert message.endswith("Also blocked by the cycle: Downstream")


def test_two_separate_cycles_are_both_reported():
    traces = [make("A1", inputs="a2", outputs="a1"), make("A2", inputs="a1", outputs="a2"),
              make("B1", inputs="b2", outputs="b1"), make("B2", inputs="b1", outputs="b2")]
    with pytest.raises(AssertionError) as info:
        sort_traces(traces, ds_ids=[])
    message = str(info.value)
    assert "A1, A2 (" in message and "B1, B2 (" in message
