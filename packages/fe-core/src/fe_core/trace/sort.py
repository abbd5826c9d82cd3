"""`sort_traces`: order traces so that each runs after the traces whose outputs it reads."""
from __future__ import annotations

import heapq
from typing import Dict, Iterable, List, Set, Union

from fe_core.config_error import ConfigurationError
from fe_core.containers import to_set
from fe_core.export import fe_export
from fe_core.trace.essential import EvalEssential, TestEssential, TrainEssential
from fe_core.trace.trace import Trace

__all__ = ["sort_traces"]

_ESSENTIALS = (TrainEssential, EvalEssential, TestEssential)


@fe_export("fe.trace.trace.sort_traces", "fe.trace.sort_traces")
def sort_traces(traces: List[Trace],
                ds_ids: Union[None, str, List[str]],
                available_outputs: Union[None, str, Iterable[str]] = None) -> List[Trace]:
    """Order `traces` so that every trace runs after the traces producing the keys it reads.

    The result has three parts:

    1. Traces without inputs, and the Essential traces, in their original order.
    2. The other traces, in dependency order (a topological sort). Among traces whose inputs are all available, the one
       given first goes first, so independent traces keep their relative order and a chain given in reverse order
       comes out in dependency order.
    3. Traces reading '*' (everything), such as the Logger: first those that write outputs, then those that do not,
       each group in its original order. Their outputs are not available to the traces of part 2.

    A key is available when it is in `available_outputs` or written by a trace already placed. With
    `available_outputs` None the sort is weak: every key that no trace writes is assumed to come from the pipeline or
    network, and a trace may read a key it writes itself. With `available_outputs` given the sort is strict: every
    input must be in `available_outputs` or written by another trace.

    Args:
        traces: The traces to sort (not inside Schedulers).
        ds_ids: The dataset ids the traces run on (passed to `Trace.get_outputs`).
        available_outputs: The keys available before any trace runs, or None for a weak sort.

    Returns:
        A new list with the same traces, sorted.

    Raises:
        AssertionError: If a trace reads a key that nothing available or earlier provides (the message names the trace
            and the keys), or if traces depend on each other in a cycle (the message names every trace in the cycle and
            the keys involved).

    Example:
        >>> first = Trace(inputs="y_pred", outputs="acc")
        >>> second = Trace(inputs="acc", outputs="best_acc")
        >>> sort_traces([second, first], ds_ids=[]) == [first, second]
        True
    """
    outputs = [set(trace.get_outputs(ds_ids=ds_ids)) for trace in traces]
    all_outputs: Set[str] = set().union(*outputs)
    weak = available_outputs is None
    if weak:
        available = {key for trace in traces for key in trace.inputs} - all_outputs
    else:
        available = set(to_set(available_outputs))

    head: List[int] = []
    middle: List[int] = []
    star_writers: List[int] = []
    star_readers: List[int] = []
    for index, trace in enumerate(traces):
        if not trace.inputs or isinstance(trace, _ESSENTIALS):
            head.append(index)
            available |= outputs[index]
        elif "*" in trace.inputs:
            (star_writers if outputs[index] else star_readers).append(index)
        else:
            middle.append(index)

    order = head + _sort_middle(traces, middle, outputs, available, weak, star_writers + star_readers)
    order += star_writers + star_readers
    return [traces[index] for index in order]


def _sort_middle(traces: List[Trace], middle: List[int], outputs: List[Set[str]], available: Set[str], weak: bool,
                 star: List[int]) -> List[int]:
    """Kahn's topological sort of the `middle` traces, taking the earliest ready trace (by original index) each time."""
    producers: Dict[str, List[int]] = {}
    for index in middle:
        for key in outputs[index]:
            producers.setdefault(key, []).append(index)

    missing: Dict[int, Set[str]] = {}
    for index in middle:
        needed = set(traces[index].inputs) - available
        if weak:
            needed -= outputs[index]  # reading what it writes itself is allowed in a weak sort
        unsatisfiable = sorted(key for key in needed if not [p for p in producers.get(key, ()) if p != index])
        if unsatisfiable:
            raise ConfigurationError(_unsatisfiable_message(traces, index, unsatisfiable, outputs, star, available))
        missing[index] = needed

    waiting: Dict[str, List[int]] = {}
    ready: List[int] = []
    for index in middle:
        if missing[index]:
            for key in missing[index]:
                waiting.setdefault(key, []).append(index)
        else:
            ready.append(index)
    heapq.heapify(ready)

    order: List[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for key in outputs[index]:
            if key in available:
                continue
            available.add(key)
            for waiter in waiting.pop(key, ()):
                missing[waiter].discard(key)
                if not missing[waiter]:
                    heapq.heappush(ready, waiter)

    if len(order) < len(middle):
        placed = set(order)
        raise ConfigurationError(_cycle_message(traces, [i for i in middle if i not in placed], missing, outputs))
    return order


def _unsatisfiable_message(traces: List[Trace], index: int, keys: List[str], outputs: List[Set[str]],
                           star: List[int], available: Set[str]) -> str:
    name = type(traces[index]).__name__
    notes = []
    unknown = []
    for key in keys:
        late = [type(traces[s]).__name__ for s in star if key in outputs[s]]
        if late:
            notes.append(f"{key!r} is written only by {', '.join(late)}, which read(s) '*' and so run(s) after every "
                         f"other trace")
        else:
            unknown.append(key)
    if unknown:
        notes.append(f"no other trace writes {', '.join(repr(k) for k in unknown)} and the available keys are "
                     f"{sorted(available)}")
    return f"The {name} trace has unsatisfiable inputs: {', '.join(keys)} ({'; '.join(notes)})"


def _cycle_message(traces: List[Trace], stuck: List[int], missing: Dict[int, Set[str]],
                   outputs: List[Set[str]]) -> str:
    """Describe the dependency cycle(s) among the traces that could not be placed."""
    # edges[a] = {b: keys}: trace a waits for keys that trace b writes
    edges: Dict[int, Dict[int, List[str]]] = {
        a: {b: sorted(missing[a] & outputs[b]) for b in stuck if b != a and missing[a] & outputs[b]} for a in stuck}
    cycles = [component for component in _strongly_connected(stuck, edges) if len(component) > 1]
    lines = []
    for component in cycles:
        members = sorted(component)
        links = [f"{type(traces[a]).__name__} reads {', '.join(repr(k) for k in keys)} written by "
                 f"{type(traces[b]).__name__}" for a in members for b, keys in edges[a].items() if b in component]
        lines.append(f"{', '.join(type(traces[i]).__name__ for i in members)} ({'; '.join(links)})")
    in_cycle = {i for component in cycles for i in component}
    blocked = [type(traces[i]).__name__ for i in stuck if i not in in_cycle]
    message = "Dependency cycle detected amongst traces: " + " | ".join(lines)
    if blocked:
        message += f". Also blocked by the cycle: {', '.join(blocked)}"
    return message


def _strongly_connected(nodes: List[int], edges: Dict[int, Dict[int, List[str]]]) -> List[Set[int]]:
    """Tarjan's algorithm (iterative): the strongly connected components of the graph."""
    index_of: Dict[int, int] = {}
    low: Dict[int, int] = {}
    on_stack: Set[int] = set()
    stack: List[int] = []
    components: List[Set[int]] = []
    counter = 0
    for root in nodes:
        if root in index_of:
            continue
        work = [(root, iter(edges[root]))]
        index_of[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index_of:
                    index_of[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(edges[successor])))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index_of[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index_of[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components
