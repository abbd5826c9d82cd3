"""`TFNetwork`: runs a step's TensorOps on TensorFlow tensors, eagerly or as one traced `tf.function`.

The whole op chain of a step (model calls, losses, gradients, optimizer updates) runs inside one `tf.function`, under a
`tf.GradientTape` when some op needs gradients (`state['tape']` holds it for the update kernel). Each distinct op graph
is traced once and reused for every later epoch with the same configuration; nothing is cleared between epochs.

A configuration is identified by: mode, ds_id, warmup, eager, the ops (by identity), the output keys, every layer's
`trainable` flag, the models' current optimizers, the active MirroredStrategy, and for gradient accumulation the
phase of each `UpdateOp(merge_grad=n)` (accumulate or apply). The epoch goes in as a tensor argument; mode, warmup and
the other plain state live in the traced function's closure. The first batch fixes the input signature with an
unknown batch dimension, so a smaller last batch does not trigger a new trace. Where the ops need a concrete batch size
(user code such as `tf.random.normal(shape=x.shape)`, which cannot take an unknown dimension), that trace fails and the
configuration is traced with the batches' own shapes instead, once per distinct shape, as FastEstimator's
`tf.function` traces every step (a smaller last batch then costs one more trace).

`trace_count` counts how many times a step body has been traced (once per replica under a MirroredStrategy), so
tests and benchmarks can check that later epochs add none.

AutoGraph: fe's own step code (the body, the op runner, the kernels) has no tensor-dependent Python control flow, so
the step is traced with `autograph=False`; converting it cost seconds per trace. Only user code is converted
(`tf.autograph.to_graph`, recursively through what it calls): a TensorOp whose `forward` is written outside fe, and an
fe op that holds user code (a LambdaOp's `fn`, a meta op wrapping a user op). So a user's `forward` with an `if` or
`for` on tensors still becomes `tf.cond` / `tf.while_loop`, as under FastEstimator's `tf.function`.

Warmup: the first step of a warmup configuration (the Estimator's warmup runs one per configuration) runs eagerly
instead of tracing a graph that training never uses (a warmup step must not update, so its graph differs from the
training step's). Each real configuration is traced once, at its first step: `fit` with train and eval data makes two
traces. A second warmup step of the same configuration traces its graph. `Network.transform` runs real steps, as
in FastEstimator (eagerly for one dict, else one graph per configuration).
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from fe_core.misuse import is_described
from fe_core.network import BaseNetwork, _plan_op
from fe_core.op.tensorop.tensorop import TensorOp
from fe_tf.distribute import (active_data_parallel_strategy, batch_size_of, distribute_batch, fill_batch,
                              local_replicas, merge_replica_results, replica_samples, trim_results)
from fe_tf.kernels import expected_input_hint, prepare_accumulators
from fe_tf.model_building import build_optimizers_of, model_is_built, needs_building
from fe_core.export import fe_export

__all__ = ["TFNetwork"]

_PLAIN_STATE_EXCLUDED = ("deferred", "epoch", "tape")


def _trainable_flags(models: Sequence[Any]) -> Tuple[bool, ...]:
    """Every (nested) layer's `trainable` flag, in a fixed order."""
    flags: List[bool] = []

    def walk(layer: Any) -> None:
        flags.append(bool(getattr(layer, "trainable", True)))
        for child in getattr(layer, "layers", ()) or ():
            walk(child)

    for model in models:
        walk(model)
    return tuple(flags)


def _input_signature(batch: Dict[str, Any], relaxed: bool = True) -> Optional[Dict[str, tf.TensorSpec]]:
    """TensorSpecs for a batch, with an unknown batch dimension when `relaxed` (else the batch's own shapes), or None
    when some value has no plain spec."""
    specs = {}
    for key, value in batch.items():
        try:
            spec = tf.type_spec_from_value(value)
        except (TypeError, ValueError):
            return None
        if not isinstance(spec, tf.TensorSpec):
            return None
        if relaxed and spec.shape.rank:
            spec = tf.TensorSpec([None] + spec.shape.as_list()[1:], spec.dtype)
        specs[key] = spec
    return specs


def _traced(function: Any, **options: Any) -> Any:
    """`tf.function(function, autograph=False)` without TensorFlow's "frequent retracing" warning.

    fe's step code needs no AutoGraph conversion (user code is converted op by op: `_autograph_plan`). TensorFlow
    counts traces per Python code object, so the first traces of several configurations (different `tf.function`s of
    the same body) would be reported as retracing; `TFNetwork.trace_count` is the real measure.
    """
    traced = tf.function(function, autograph=False, **options)
    if hasattr(traced, "_omit_frequent_tracing_warning"):
        traced._omit_frequent_tracing_warning = True  # pylint: disable=protected-access
    return traced


def _fits(specs: Dict[str, tf.TensorSpec], batch: Dict[str, Any]) -> bool:
    if set(specs) != set(batch):
        return False
    for key, spec in specs.items():
        try:
            if not spec.is_compatible_with(tf.type_spec_from_value(batch[key])):
                return False
        except (TypeError, ValueError):
            return False
    return True


# Packages whose code never needs AutoGraph: fe's own, and the libraries AutoGraph itself leaves unconverted.
_UNCONVERTED_PACKAGES = frozenset({"fe", "fe_core", "fe_tf", "fe_torch", "tensorflow", "keras", "tf_keras", "numpy",
                                   "builtins"})


def _is_fe_code(function: Any) -> bool:
    """Whether `function` (a function, method or partial) is fe's code (or TensorFlow's, Keras', numpy's)."""
    while isinstance(function, functools.partial):
        function = function.func
    function = getattr(function, "__func__", function)
    module = getattr(function, "__module__", None) or ""
    return module.split(".", 1)[0] in _UNCONVERTED_PACKAGES


def _holds_user_code(op: Any, seen: Optional[set] = None) -> bool:
    """Whether running `op` runs code written outside fe that AutoGraph may need to convert: its own `forward`, a
    function it holds (a LambdaOp's `fn`, a Repeat's condition), or an op it wraps (meta ops)."""
    seen = set() if seen is None else seen
    if id(op) in seen:
        return False
    seen.add(id(op))
    attributes = vars(op) if hasattr(op, "__dict__") else {}
    if not _is_fe_code(attributes.get("forward") or type(op).forward):
        return True
    for value in attributes.values():
        for item in value if isinstance(value, (list, tuple)) else (value, ):
            if isinstance(item, TensorOp):
                if _holds_user_code(item, seen):
                    return True
            elif (inspect.isfunction(item) or inspect.ismethod(item) or isinstance(item, functools.partial)) and \
                    not _is_fe_code(item):
                return True
    return False


def _autograph_forward(forward: Callable[[Any, Dict[str, Any]], Any]) -> Callable[[Any, Dict[str, Any]], Any]:
    """`forward` converted by AutoGraph, with everything it calls (converted on the call, as `tf.function` would)."""

    def call_forward(data: Any, state: Dict[str, Any]) -> Any:
        return forward(data, state)

    return tf.autograph.to_graph(call_forward)


def _autograph_plan(plan: List[Any]) -> List[Any]:
    """The op plan of a traced step: the entries of ops holding user code run their forward through AutoGraph."""
    converted = []
    for entry in plan:
        if _holds_user_code(entry[0]):
            entry = (entry[0], _autograph_forward(entry[1])) + tuple(entry[2:])
        converted.append(entry)
    return converted


class _Graph(NamedTuple):
    """One trace of a step: its input specs (None: traced with `reduce_retracing`), the `tf.function`, and for a fixed
    signature its concrete function."""

    specs: Optional[Dict[str, tf.TensorSpec]]
    function: Any
    concrete: Any


def _call_graph(graph: _Graph, batch: Dict[str, Any], epoch: tf.Tensor) -> Dict[str, Any]:
    """Run one step through `graph`.

    With a fixed signature the numpy arrays become tensors of the signature's dtypes here and the concrete function is
    called directly: the same computation as calling the `tf.function` with the numpy batch, without its per-call
    argument dispatch, which on a small model costs more than the step itself. Anything unusual (a key the signature
    lacks, a value that does not convert) goes through the `tf.function`, whose errors the caller handles.
    """
    concrete = graph.concrete
    if concrete is not None:
        specs = graph.specs
        try:
            tensors = {key: tf.constant(value, dtype=specs[key].dtype) if isinstance(value, np.ndarray) else value
                       for key, value in batch.items()}
        except (KeyError, TypeError, ValueError):
            return graph.function(batch, epoch)
        return concrete(tensors, epoch)
    return graph.function(batch, epoch)


class _StepProgram:
    """The step of one configuration: a Python body, and the `tf.function`s traced from it."""

    def __init__(self, network: "TFNetwork", state: Dict[str, Any], outputs: Tuple[str, ...], persistent: bool,
                 strategy: Optional[tf.distribute.Strategy]) -> None:
        self.network = network
        self.state = state
        self.outputs = outputs
        self.persistent = persistent
        self.strategy = strategy
        self.graphs: List[_Graph] = []
        # Whether the ops need the batch's concrete shapes (tracing with an unknown batch dimension failed once).
        self.concrete_shapes = False
        # A warmup configuration runs its first step eagerly: the Estimator's warmup runs one step per configuration,
        # and a graph traced for it would never be used again (training and eval steps are other configurations).
        self.eager_first_step = bool(state.get("warmup"))

    # -------------------------------------------------------------- the body (eager, or traced)
    def body(self, batch: Dict[str, Any], epoch: Any) -> Dict[str, Any]:
        if tf.executing_eagerly():
            return self._body(batch, epoch)
        network = self.network
        network.trace_count += 1
        context = network.ctx
        network.ctx = dataclasses.replace(context, op_plan=_autograph_plan(context.op_plan))  # only while tracing:
        try:  # user code goes through AutoGraph
            return self._body(batch, epoch)
        finally:
            network.ctx = context

    def _body(self, batch: Dict[str, Any], epoch: Any) -> Dict[str, Any]:
        state = dict(self.state)
        state["epoch"] = epoch
        state["deferred"] = {}
        store = dict(batch)
        if state["req_grad"]:
            with tf.GradientTape(persistent=self.persistent) as tape:
                state["tape"] = tape
                self.network.run_ops(store, state)
            del tape
        else:
            state["tape"] = None
            self.network.run_ops(store, state)
        return {key: store[key] for key in self.outputs if key in store}

    def _distributed_body(self, batch: Any, epoch: Any, samples: Any) -> Dict[str, Any]:
        results = self.strategy.run(self.body, args=(batch, epoch))
        return merge_replica_results(self.strategy, results, samples)

    # -------------------------------------------------------------- running
    def run(self, batch: Dict[str, Any], epoch: tf.Tensor, eager: bool) -> Dict[str, Any]:
        if self.eager_first_step:
            self.eager_first_step = False
            eager = True
        if self.strategy is not None:
            return self._run_distributed(batch, epoch, eager)
        if eager:
            return self.body({key: tf.convert_to_tensor(value) for key, value in batch.items()}, epoch)
        if self.graphs:
            graph = self.graphs[-1]
            try:
                return _call_graph(graph, batch, epoch)
            except TypeError:
                if graph.specs is None or _fits(graph.specs, batch):
                    raise
            for index, graph in enumerate(self.graphs):  # another structure: use (or make) its trace
                if graph.specs is not None and _fits(graph.specs, batch):
                    self.graphs.append(self.graphs.pop(index))  # most recently used last
                    return _call_graph(graph, batch, epoch)
        specs = _input_signature(batch, relaxed=not self.concrete_shapes)
        if specs is None:
            graph = _Graph(None, _traced(self.body, reduce_retracing=True), None)
        elif self.concrete_shapes:
            graph = self._trace(specs)
        else:
            try:
                graph = self._trace(specs)
            except Exception:  # pylint: disable=broad-except
                # Code that needs a concrete batch size (`tf.random.normal(shape=x.shape)`): trace with the batch's
                # own shapes from now on, one graph per distinct shape, as FastEstimator's tf.function does. Code
                # that fails either way raises its error from this trace.
                graph = self._trace(_input_signature(batch, relaxed=False))
                self.concrete_shapes = True
        self.graphs.append(graph)
        return _call_graph(graph, batch, epoch)

    def _trace(self, specs: Dict[str, tf.TensorSpec]) -> _Graph:
        """A `tf.function` of the body for `specs`, traced now."""
        function = _traced(self.body, input_signature=[specs, tf.TensorSpec([], tf.int64)])
        return _Graph(specs, function, function.get_concrete_function())

    def _run_distributed(self, batch: Dict[str, Any], epoch: tf.Tensor, eager: bool) -> Dict[str, Any]:
        strategy = self.strategy
        replicas = local_replicas(strategy)  # several workers: each splits its own part of the global batch
        size = batch_size_of(batch)
        filled = size
        if size < replicas:
            batch = fill_batch(batch, size, replicas)
            filled = replicas
        distributed = distribute_batch(strategy, batch, filled)
        # losses: the whole batch's mean, as on one device (one replica: its own mean already)
        samples = tf.constant(replica_samples(filled, replicas)) if replicas > 1 else None
        if eager:
            results = self._distributed_body(distributed, epoch, samples)
        else:
            if not self.graphs:
                self.graphs.append(_Graph(None, _traced(self._distributed_body, reduce_retracing=True), None))
            results = self.graphs[0].function(distributed, epoch, samples)
        if filled != size:
            results = trim_results(results, size, filled)
        return results


@fe_export("fe.network.TFNetwork")
class TFNetwork(BaseNetwork):
    """A Network of TensorFlow (Keras 3) models.

    Args:
        ops: TensorOps (or Schedulers of them) run on every step.
        postprocessing: Postprocessing NumpyOps run on the numpy batch after the ops (FastEstimator's name; `pops` is
            accepted too).
        slicers: Slicers cutting each batch into minibatches.
        pops: The same as `postprocessing` (the name `fe.Network` uses).

    Attributes:
        trace_count: How many times a step body was traced so far (per replica under a MirroredStrategy).

    Example:
        >>> # network = TFNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
        >>> #                          CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
        >>> #                          UpdateOp(model=model, loss_name="ce")])  # doctest: +SKIP
    """

    def __init__(self, ops: Any, postprocessing: Any = None, slicers: Any = None, pops: Any = None) -> None:
        if postprocessing is not None and pops is not None:
            raise ValueError("TFNetwork: give postprocessing ops as `postprocessing` or `pops`, not both")
        super().__init__(target_type="tf", device=None, ops=ops,
                         postprocessing=postprocessing if postprocessing is not None else pops, slicers=slicers)
        self.trace_count = 0
        self._programs: Dict[tuple, _StepProgram] = {}
        self._program: Optional[_StepProgram] = None
        self._epoch_key: tuple = ()
        self._merge_ops: List[Any] = []
        self._epoch_tensor: Optional[tf.Tensor] = None
        self._strategy: Optional[tf.distribute.Strategy] = None
        self._unbuilt: List[Any] = []  # models of this epoch without weights or optimizer state yet

    # ------------------------------------------------------------------ epoch context
    def _begin_epoch(self) -> None:
        state = self.ctx.state
        self._strategy = active_data_parallel_strategy()  # MirroredStrategy, or several workers (TF_CONFIG)
        self._epoch_tensor = tf.constant(self.ctx.epoch, dtype=tf.int64)
        self._merge_ops = [] if state["warmup"] else [
            op for op in self.ctx.ops if getattr(op, "kernel_name", None) == "update" and op.merge_grad > 1]
        for op in self._merge_ops:
            prepare_accumulators(op, self._strategy)
        self._unbuilt = [model for model in self.ctx.models if needs_building(model)]
        self._epoch_key = (
            self.ctx.mode, self.ctx.ds_id, state["warmup"], state["eager"],
            tuple(id(op) for op in self.ctx.ops),
            tuple(sorted(self.ctx.outputs)),
            _trainable_flags(self.ctx.models),
            tuple(id(getattr(model, "current_optimizer", None)) for model in self.ctx.models),
            id(self._strategy),
        )
        self._program = None if self._merge_ops else self._program_for(())

    def _end_epoch(self) -> None:
        self._program = None
        self._merge_ops = []

    def _program_for(self, phase: Tuple[bool, ...]) -> _StepProgram:
        key = self._epoch_key + (phase,)
        program = self._programs.get(key)
        if program is None:
            state = {name: value for name, value in self.ctx.state.items() if name not in _PLAIN_STATE_EXCLUDED}
            state["merge_apply"] = {id(op): apply for op, apply in zip(self._merge_ops, phase)}
            gradient_ops = sum(1 for op in self.ctx.ops if op.fe_retain_graph() is not None)
            program = _StepProgram(self, state, tuple(sorted(self.ctx.outputs)), gradient_ops > 1, self._strategy)
            self._programs[key] = program
        program.state["fe_epoch"] = self.ctx.epoch
        return program

    # ------------------------------------------------------------------ stepping
    def _build_models(self, batch: Dict[str, Any]) -> None:
        """Give models without weights (a Sequential without Input, a subclassed model) their weights, then their
        optimizers their state, before the first step uses them, as Keras' `fit` does: one eager pass of the ops on
        this batch in warmup mode, without the UpdateOps, in the strategy's scope."""
        pending, self._unbuilt = self._unbuilt, []
        if not all(model_is_built(model) for model in pending):
            state = {name: value for name, value in self.ctx.state.items() if name not in _PLAIN_STATE_EXCLUDED}
            state.update(warmup=True, merge_apply={}, fe_epoch=self.ctx.epoch)
            probe = _StepProgram(self, state, (), True, None)
            context = self.ctx
            self.ctx = dataclasses.replace(context, op_plan=[
                entry for entry in context.op_plan if getattr(entry[0], "kernel_name", None) != "update"])
            scope = self._strategy.scope() if self._strategy is not None else contextlib.nullcontext()
            try:
                with scope:
                    probe.body({key: tf.convert_to_tensor(value) for key, value in batch.items()},
                               self._epoch_tensor)
            finally:
                self.ctx = context
        for model in pending:
            build_optimizers_of(model, self._strategy)
        for op in self._merge_ops:  # their gradient accumulators need the model's variables
            prepare_accumulators(op, self._strategy)

    def _run_step(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        if self._unbuilt:
            self._build_models(batch)
        merge_ops = self._merge_ops
        if merge_ops:
            phase = tuple((op.fe_backend_state["count"] + 1) % op.merge_grad == 0 for op in merge_ops)
            program = self._program_for(phase)
        else:
            program = self._program
        try:
            result = program.run(batch, self._epoch_tensor, self.ctx.state["eager"])
        except tf.errors.OpError as error:
            if self.ctx.state["eager"]:
                raise
            if self.ctx.state["warmup"]:
                self._explain_graph_failure(program, batch, error)
            else:
                self._explain_step_failure(program, batch, error)
            raise
        for op in merge_ops:
            op.fe_backend_state["count"] += 1
        return result

    def _explain_graph_failure(self, program: _StepProgram, batch: Dict[str, Any], error: Exception) -> None:
        """A traced warmup step failed while running (a graph error names a graph node, not an op or key): run the
        step again eagerly (warmup changes no weights), where the failing op raises in Python and `run_ops` names
        it, its keys and shapes; raise that, chained to the graph's error. Returns if the eager step passes."""
        try:
            program.run(batch, self._epoch_tensor, True)
        except Exception as eager_error:  # pylint: disable=broad-except
            raise eager_error from error
        return None

    def _explain_step_failure(self, program: _StepProgram, batch: Dict[str, Any], error: Exception) -> None:
        """A traced training/eval step failed on a later batch (the graph's message names a node, e.g. `GatherV2`):
        run that batch again eagerly with the warmup checks (an UpdateOp changes no weights in warmup) and raise the
        named error a check gives (a label out of range names the op, key, mode and the labels), chained to the
        graph's error. Returns when no check explains it."""
        context = self.ctx
        self.ctx = dataclasses.replace(context, op_plan=[_plan_op(entry[0], warmup=True) for entry in context.op_plan])
        probe = _StepProgram(self, dict(program.state, warmup=True), program.outputs, program.persistent,
                             program.strategy)
        try:
            probe.run(batch, self._epoch_tensor, True)
        except Exception as eager_error:  # pylint: disable=broad-except
            if is_described(eager_error):  # it says what the graph's node error meant: that error adds only noise
                raise eager_error from None
        finally:
            self.ctx = context

    def _model_input_hint(self, model: Any, inputs: List[Any]) -> Optional[str]:
        return expected_input_hint(model, inputs)

    @property
    def num_traced_configurations(self) -> int:
        """How many distinct step configurations have been prepared so far."""
        return len(self._programs)
