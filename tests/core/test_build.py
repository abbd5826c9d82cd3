"""fe_core.build: names, per-model argument lists, and dispatch to the model's backend."""
from __future__ import annotations

import pytest

import numpy_backend as nb
from fe_core.build import build, reset_build_count
from fe_core.schedule import EpochScheduler


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()
    reset_build_count()


def test_default_names_count_across_calls():
    first = build(lambda: nb.LinearModel(2, 1), optimizer_fn=0.1)
    second, third = build(lambda: [nb.LinearModel(2, 1), nb.LinearModel(2, 1)], optimizer_fn=[0.1, 0.2])
    assert [first.model_name, second.model_name, third.model_name] == ["model", "model1", "model2"]
    assert third.optimizer == 0.2 and all(m.fe_compiled for m in (first, second, third))


def test_explicit_names_weights_and_scheduled_optimizers_reach_the_backend(tmp_path):
    source = build(lambda: nb.LinearModel(2, 1, seed=5), optimizer_fn=None, model_name="src")
    nb.NumpyBackend().save_model(source, str(tmp_path), save_optimizer=False)
    schedule = EpochScheduler({1: 0.1, 3: 0.01})
    model = build(lambda: nb.LinearModel(2, 1, seed=9), optimizer_fn=schedule, model_name="dst",
                  weights_path=str(tmp_path / "src.npz"))
    assert model.model_name == "dst" and model.optimizer is schedule
    assert (model.W == source.W).all()


def test_mismatched_list_lengths_are_refused_with_the_counts():
    with pytest.raises(ValueError, match="2 models, 1 optimizers, 2 weights paths, 2 model names"):
        build(lambda: [nb.LinearModel(2, 1), nb.LinearModel(2, 1)], optimizer_fn=[0.1])
    with pytest.raises(ValueError, match="1 models, 1 optimizers, 1 weights paths, 2 model names"):
        build(lambda: nb.LinearModel(2, 1), optimizer_fn=0.1, model_name=["a", "b"])


def test_a_model_no_backend_recognises_is_refused():
    with pytest.raises(ValueError, match="No installed backend recognises the model of type builtins.object"):
        build(lambda: object(), optimizer_fn=None)


def test_build_scopes_of_loaded_backends_wrap_model_fn(numpy_backend):
    import contextlib
    events = []

    @contextlib.contextmanager
    def scope(mixed_precision):
        events.append(("enter", mixed_precision))
        yield
        events.append(("exit", mixed_precision))

    numpy_backend.build_scope = scope
    build(lambda: events.append(("model_fn", None)) or nb.LinearModel(2, 1), optimizer_fn=0.1, mixed_precision=True)
    assert events == [("enter", True), ("model_fn", None), ("exit", True)]
