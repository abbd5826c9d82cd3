"""The backend registry: registering, finding by name or entry point, classifying models, kernels."""
from __future__ import annotations

import importlib.machinery
import sys
import types
from importlib import metadata

import pytest

from fe_core import determinism
from fe_core.framework import (Backend, BackendNotInstalledError, available_backends, backend_for_model, get_backend,
                             loaded_backends, register_backend, unregister_backend)

pytestmark = pytest.mark.usefixtures("clean_backend_registry")


class FakeModel:
    pass


class FakeBackend(Backend):
    name = "fake"
    framework_module = "fakefw"

    def __init__(self) -> None:
        self.seeds = []

    def owns_model(self, obj) -> bool:
        return isinstance(obj, FakeModel)

    def seed(self, seed: int) -> None:
        self.seeds.append(seed)

    def kernel_argmax(self, op, data, state):
        return "argmax result"


@pytest.fixture
def no_framework_packages(monkeypatch):
    """Make fe_torch and fe_tf unimportable, whatever is installed (a None entry in sys.modules blocks an import)."""
    for package in ("fe_torch", "fe_tf"):
        monkeypatch.setitem(sys.modules, package, None)


def fake_entry_points(monkeypatch, *installed: metadata.EntryPoint) -> list:
    """Make `importlib.metadata.entry_points` report `installed`; return the groups it was asked for."""
    asked = []

    def entry_points(**kwargs):
        asked.append(kwargs.get("group"))
        return [entry_point for entry_point in installed if entry_point.group == kwargs.get("group")]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    return asked


def install_module(monkeypatch, name: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    for key, value in attributes.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)
    return module


# ----- register / unregister / get -----
def test_registered_instance_is_returned_by_name():
    backend = FakeBackend()
    register_backend("fake", backend)
    assert get_backend("fake") is backend
    assert backend in loaded_backends()
    assert "fake" in available_backends()


def test_registered_factory_is_called_once_on_first_use():
    calls = []

    def make() -> Backend:
        calls.append(1)
        return FakeBackend()

    register_backend("fake", make)
    assert calls == [] and loaded_backends() == []
    first = get_backend("fake")
    assert get_backend("fake") is first and len(calls) == 1
    assert isinstance(first, FakeBackend) and loaded_backends() == [first]


def test_a_backend_class_can_be_registered_as_its_own_factory():
    register_backend("fake", FakeBackend)
    assert isinstance(get_backend("fake"), FakeBackend)


def test_unregistered_backend_is_unknown_again():
    register_backend("fake", FakeBackend())
    unregister_backend("fake")
    with pytest.raises(KeyError):
        get_backend("fake")
    assert loaded_backends() == []
    unregister_backend("fake")  # removing twice is harmless


def test_unknown_backend_error_lists_known_backends():
    register_backend("fake", FakeBackend())
    with pytest.raises(KeyError) as info:
        get_backend("jaxx")
    message = str(info.value)
    assert "'jaxx'" in message
    for known in ("fake", "tf", "torch"):
        assert f"'{known}'" in message


@pytest.mark.usefixtures("no_framework_packages")
@pytest.mark.parametrize("name, extra, package", [("torch", "torch", "fe_torch"), ("tf", "tf", "fe_tf")])
def test_missing_backend_package_says_which_extra_to_install(name, extra, package):
    with pytest.raises(BackendNotInstalledError) as info:
        get_backend(name)
    message = str(info.value)
    assert f"pip install ./packages/fe-{extra} from a clone of fe (pip install fe-{extra} once released)" in message
    assert repr(name) in message and package in message
    assert isinstance(info.value, ImportError)
    assert name not in available_backends()


@pytest.mark.usefixtures("no_framework_packages")
def test_registering_over_a_builtin_and_unregistering_brings_the_builtin_back():
    backend = FakeBackend()
    register_backend("torch", backend)
    assert get_backend("torch") is backend
    unregister_backend("torch")
    with pytest.raises(BackendNotInstalledError, match=r"fe-torch"):
        get_backend("torch")


def test_backend_registered_after_enable_deterministic_is_seeded(monkeypatch):
    monkeypatch.setattr(determinism, "_seed", 7)
    instance = FakeBackend()
    register_backend("fake", instance)
    register_backend("lazy", FakeBackend)
    assert instance.seeds == [7]
    assert get_backend("lazy").seeds == [7]


def test_backends_are_not_seeded_without_enable_deterministic(monkeypatch):
    monkeypatch.setattr(determinism, "_seed", None)
    register_backend("lazy", FakeBackend)
    assert get_backend("lazy").seeds == []


# ----- entry points -----
def test_entry_point_backend_is_discovered(monkeypatch):
    install_module(monkeypatch, "fake_backend_pkg", FakeBackend=FakeBackend)
    asked = fake_entry_points(monkeypatch, metadata.EntryPoint("fake", "fake_backend_pkg:FakeBackend", "fe.backends"),
                              metadata.EntryPoint("other", "fake_backend_pkg:FakeBackend", "other.group"))
    backend = get_backend("fake")
    assert isinstance(backend, FakeBackend)
    assert asked == ["fe.backends"]
    assert "fake" in available_backends() and "other" not in available_backends()


def test_entry_points_are_read_once(monkeypatch):
    asked = fake_entry_points(monkeypatch)
    register_backend("a", FakeBackend())
    with pytest.raises(KeyError):
        get_backend("b")
    available_backends()
    assert asked == ["fe.backends"]


def test_entry_point_backend_that_fails_to_import_is_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "missing_backend_pkg", None)
    fake_entry_points(monkeypatch, metadata.EntryPoint("extra", "missing_backend_pkg:Backend", "fe.backends"))
    with pytest.raises(BackendNotInstalledError, match="missing_backend_pkg") as info:
        get_backend("extra")
    assert "pip install" not in str(info.value)  # no known extra for a third-party backend


def test_entry_point_named_like_a_builtin_keeps_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "moved_torch_backend", None)
    fake_entry_points(monkeypatch, metadata.EntryPoint("torch", "moved_torch_backend:TorchBackend", "fe.backends"))
    with pytest.raises(BackendNotInstalledError, match=r"pip install ./packages/fe-torch"):
        get_backend("torch")


def test_unregistering_an_override_brings_the_entry_point_back(monkeypatch):
    install_module(monkeypatch, "fake_backend_pkg", FakeBackend=FakeBackend)
    fake_entry_points(monkeypatch, metadata.EntryPoint("fake", "fake_backend_pkg:FakeBackend", "fe.backends"))
    override = Backend()
    register_backend("fake", override)
    assert get_backend("fake") is override
    unregister_backend("fake")
    assert isinstance(get_backend("fake"), FakeBackend)


# ----- backend_for_model -----
def test_backend_is_consulted_only_once_its_framework_is_imported(monkeypatch):
    created = []

    def make() -> Backend:
        created.append(FakeBackend())
        return created[-1]

    monkeypatch.delitem(sys.modules, "fakefw", raising=False)
    register_backend("fake", make, framework_module="fakefw")
    model = FakeModel()
    assert backend_for_model(model) is None
    assert created == []  # not even instantiated while its framework is absent
    install_module(monkeypatch, "fakefw")
    assert backend_for_model(model) is created[0]
    assert backend_for_model(object()) is None


def test_backend_without_framework_module_is_always_consulted():
    backend = FakeBackend()
    register_backend("fake", backend)
    assert backend_for_model(FakeModel()) is backend


@pytest.mark.usefixtures("no_framework_packages")
def test_classifying_a_model_imports_no_backend_package(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    assert backend_for_model(FakeModel()) is None
    assert loaded_backends() == []


@pytest.mark.usefixtures("no_framework_packages")
def test_loaded_framework_without_its_backend_package_is_skipped(monkeypatch):
    install_module(monkeypatch, "tensorflow")  # a framework is loaded, but fe_tf is not installed
    register_backend("fake", FakeBackend())
    assert isinstance(backend_for_model(FakeModel()), FakeBackend)
    assert backend_for_model(object()) is None


# ----- Backend interface -----
def test_kernel_returns_the_kernel_method():
    kernel = FakeBackend().kernel("argmax")
    assert kernel(None, None, {}) == "argmax result"


def test_missing_kernel_names_backend_and_kernel():
    with pytest.raises(NotImplementedError) as info:
        FakeBackend().kernel("cross_entropy")
    assert "'fake'" in str(info.value) and "'cross_entropy'" in str(info.value)


def test_unsupported_operations_name_the_backend():
    with pytest.raises(NotImplementedError, match="'fake' backend cannot save models"):
        FakeBackend().save_model(FakeModel(), "/tmp", save_optimizer=False)
    with pytest.raises(NotImplementedError, match="'fake' backend cannot make a Network"):
        FakeBackend().make_network([], None, None)


def test_backend_defaults_pass_data_through():
    backend = FakeBackend()
    batch = {"x": [1, 2]}
    assert backend.to_tensor(batch) is batch and backend.to_numpy(batch) is batch
    assert backend.default_device() is None and backend.num_devices() == 0
    assert backend.state_reducers() == [] and backend.get_rng_state() is None
    assert not Backend().owns_model(FakeModel())
