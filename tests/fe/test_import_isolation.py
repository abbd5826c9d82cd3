"""`import fe` imports no framework and is quick; a torch model never brings in TensorFlow, and the reverse.

Each test runs in a fresh interpreter, so what this test process has already imported cannot hide an import.
"""
from __future__ import annotations

import textwrap

from fe_helpers import run_python

FRAMEWORKS = ("torch", "tensorflow", "keras")


def check(code: str) -> None:
    result = run_python(textwrap.dedent(code))
    assert result.returncode == 0, result.stdout + result.stderr


# Each function below is one fresh interpreter running several checks in an order where none can hide another: a
# check that a framework is absent runs before anything that may legitimately import it, and a check of what a step
# brings in runs right after that step (CI time: each interpreter that imports a framework costs seconds).


def test_fe_its_framework_free_namespace_and_a_model_free_network_then_a_torch_script_never_import_tensorflow():
    check("""
        import sys, time
        start = time.perf_counter()
        import fe
        elapsed = time.perf_counter() - start
        loaded = [m for m in ("torch", "tensorflow", "keras", "fe_torch", "fe_tf") if m in sys.modules]
        assert not loaded, f"import fe loaded {loaded}"
        assert elapsed < 1.0, f"import fe took {elapsed:.2f} s"

        # the whole framework-free namespace loads no framework
        for name in ("Estimator", "Pipeline", "Network", "build", "enable_deterministic"):
            getattr(fe, name)
        import fe.dataset, fe.op, fe.op.numpyop.univariate, fe.op.numpyop.meta, fe.op.tensorop.model
        import fe.op.tensorop.loss, fe.trace.metric, fe.trace.io, fe.trace.adapt, fe.schedule, fe.slicer
        import fe.summary.logs, fe.summary.plot, fe.cli, fe.examples, fe.examples.digits, fe.architecture
        loaded = [m for m in ("torch", "tensorflow", "keras", "matplotlib", "sklearn") if m in sys.modules]
        assert not loaded, f"the namespace loaded {loaded}"

        # a network without models, no framework in use yet: torch, without importing TensorFlow
        from fe.op.tensorop import LambdaOp
        network = fe.Network(ops=[LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y")])
        assert type(network).__name__ == "TorchNetwork", type(network)
        assert "tensorflow" not in sys.modules, "a network without models imported tensorflow"

        # a torch script never imports TensorFlow
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


def test_the_pytorch_architectures_import_torch_lazily_and_never_tensorflow():
    check("""
        import sys
        import fe.architecture.pytorch
        assert "torch" not in sys.modules, "importing the namespace module alone is lazy"
        from fe.architecture.pytorch import LeNet
        assert "torch" in sys.modules
        assert "tensorflow" not in sys.modules, "fe.architecture.pytorch imported tensorflow"
    """)


def test_a_tensorflow_script_and_a_model_free_network_beside_it_never_import_torch():
    check("""
        import sys
        import fe.architecture.tensorflow
        assert "tensorflow" not in sys.modules, "importing the namespace module alone is lazy"
        from fe.architecture.tensorflow import LeNet
        assert "tensorflow" in sys.modules
        assert "torch" not in sys.modules, "fe.architecture.tensorflow imported torch"

        # a tensorflow script never imports torch
        import fe
        from fe.op.tensorop.loss import CrossEntropy
        from fe.op.tensorop.model import ModelOp, UpdateOp
        model = fe.build(model_fn=LeNet, optimizer_fn="adam")
        network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                  UpdateOp(model=model, loss_name="ce")])
        assert type(network).__name__ == "TFNetwork", type(network)
        loaded = [m for m in ("torch", "fe_torch") if m in sys.modules]
        assert not loaded, f"a tensorflow script loaded {loaded}"

        # a network without models uses the framework already in use
        import tensorflow
        from fe.op.tensorop import LambdaOp
        network = fe.Network(ops=[LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y")])
        assert type(network).__name__ == "TFNetwork", type(network)
        assert "torch" not in sys.modules
    """)
