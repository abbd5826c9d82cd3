"""`import fe` imports no framework and is quick; a torch model never brings in TensorFlow, and the reverse.

Each check runs in a fresh interpreter, so what this test process has already imported cannot hide an import.
"""
from __future__ import annotations

import textwrap

import pytest

from fe_helpers import run_python

FRAMEWORKS = ("torch", "tensorflow", "keras")


def check(code: str) -> None:
    result = run_python(textwrap.dedent(code))
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_fe_loads_no_framework_and_is_fast():
    check("""
        import sys, time
        start = time.perf_counter()
        import fe
        elapsed = time.perf_counter() - start
        loaded = [m for m in ("torch", "tensorflow", "keras", "fe_torch", "fe_tf") if m in sys.modules]
        assert not loaded, f"import fe loaded {loaded}"
        assert elapsed < 1.0, f"import fe took {elapsed:.2f} s"
    """)


def test_the_whole_framework_free_namespace_loads_no_framework():
    check("""
        import sys
        import fe
        for name in ("Estimator", "Pipeline", "Network", "build", "enable_deterministic"):
            getattr(fe, name)
        import fe.dataset, fe.op, fe.op.numpyop.univariate, fe.op.numpyop.meta, fe.op.tensorop.model
        import fe.op.tensorop.loss, fe.trace.metric, fe.trace.io, fe.trace.adapt, fe.schedule, fe.slicer
        import fe.summary.logs, fe.summary.plot, fe.cli, fe.examples, fe.examples.digits, fe.architecture
        loaded = [m for m in ("torch", "tensorflow", "keras", "matplotlib", "sklearn") if m in sys.modules]
        assert not loaded, f"the namespace loaded {loaded}"
    """)


def test_a_torch_script_never_imports_tensorflow():
    check("""
        import sys
        import fe
        from fe.architecture.pytorch import LeNet
        from fe.op.tensorop.loss import CrossEntropy
        from fe.op.tensorop.model import ModelOp, UpdateOp
        model = fe.build(model_fn=LeNet, optimizer_fn="adam")
        network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                  UpdateOp(model=model, loss_name="ce")])
        assert type(network).__name__ == "TorchNetwork", type(network)
        assert "torch" in sys.modules
        loaded = [m for m in ("tensorflow", "keras", "fe_tf") if m in sys.modules]
        assert not loaded, f"a torch script loaded {loaded}"
    """)


def test_a_tensorflow_script_never_imports_torch():
    check("""
        import sys
        import fe
        from fe.architecture.tensorflow import LeNet
        from fe.op.tensorop.loss import CrossEntropy
        from fe.op.tensorop.model import ModelOp, UpdateOp
        model = fe.build(model_fn=LeNet, optimizer_fn="adam")
        network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                  UpdateOp(model=model, loss_name="ce")])
        assert type(network).__name__ == "TFNetwork", type(network)
        loaded = [m for m in ("torch", "fe_torch") if m in sys.modules]
        assert not loaded, f"a tensorflow script loaded {loaded}"
    """)


@pytest.mark.parametrize("subpackage, wanted, unwanted", [
    ("pytorch", "torch", "tensorflow"),
    ("tensorflow", "tensorflow", "torch"),
])
def test_an_architecture_subpackage_imports_only_its_framework(subpackage, wanted, unwanted):
    check(f"""
        import sys
        import fe.architecture.{subpackage}
        assert "{wanted}" not in sys.modules, "importing the namespace module alone is lazy"
        from fe.architecture.{subpackage} import LeNet
        assert "{wanted}" in sys.modules
        assert "{unwanted}" not in sys.modules, "fe.architecture.{subpackage} imported {unwanted}"
    """)


def test_a_network_without_models_uses_the_framework_already_in_use():
    check("""
        import sys
        import tensorflow
        import fe
        from fe.op.tensorop import LambdaOp
        network = fe.Network(ops=[LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y")])
        assert type(network).__name__ == "TFNetwork", type(network)
        assert "torch" not in sys.modules
    """)


def test_a_network_without_models_defaults_to_torch_without_importing_tensorflow():
    check("""
        import sys
        import fe
        from fe.op.tensorop import LambdaOp
        network = fe.Network(ops=[LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y")])
        assert type(network).__name__ == "TorchNetwork", type(network)
        assert "tensorflow" not in sys.modules
    """)
