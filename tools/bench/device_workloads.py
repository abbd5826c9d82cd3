#!/usr/bin/env python3
"""Real-size workloads for the device check (`tools/device_check.sh`): ResNet9 at batch 512 in mixed precision.

    python tools/bench/device_workloads.py fit      [--cpu] [--samples N] [--epochs N]
    python tools/bench/device_workloads.py overlap  [--cpu] [--samples N] [--epochs N] [--processes N]

Each prints a markdown section (a table and a `target:` line saying met / not met) for the report.

fit:     fe's `Estimator.fit` training fe's ResNet9 (fe.architecture.pytorch.ResNet9) on 32x32x3 float32 data at batch
         512 with `build(..., mixed_precision=True)`, against a hand-written loop with the same model and initial
         weights, Adam, and PyTorch's AMP recipe (`torch.autocast` float16 + `GradScaler` on CUDA, bfloat16 autocast on
         the CPU), its data already on the GPU (indexed there by a `torch.randperm` per epoch). fe reads its data
         from a NumpyDataset in host memory, as users' scripts do, and copies each batch over. fe's epochs are paired
         with the loop's, counterbalanced (pairing.py); the first pair is left out. Target: >= 0.97x.
overlap: the same model and AMP step fed by FastEstimator's CIFAR-10 recipe (bench_pipeline_workers.py's Pipeline,
         batch 512) with `--processes` worker processes, against the slower of its two parts alone: the Pipeline's
         epochs with no step, and the same fit fed pre-made batches in host memory. Target: >= 0.9x.

`--cpu` forces the CPU and tiny sizes (16x16 images for fit, batch 4-8, a few steps): it checks that the script works
(CI runs it), not speed.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List, Tuple  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))


def _setup(cpu: bool) -> Any:
    if cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # fe's default device and the loop's: the CPU
    for package in ("fe-core", "fe-torch", "fe"):  # the tree's packages when fe is not installed
        source = ROOT / "packages" / package / "src"
        if source.is_dir() and str(source) not in sys.path:
            sys.path.append(str(source))
    import torch  # pylint: disable=import-outside-toplevel
    if cpu:
        torch.set_num_threads(1)
    return torch


def _device(torch: Any) -> Any:
    from fe_torch.devices import default_device  # pylint: disable=import-outside-toplevel
    return default_device()


def _synchronize(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _amp_dtype(torch: Any, device: Any) -> Any:
    return torch.float16 if device.type == "cuda" else torch.bfloat16


def _median_ratio(pairs: List[Tuple[float, float]]) -> float:
    return statistics.median(fe / loop for fe, loop in pairs)


def _verdict(value: float, target: float, cpu: bool) -> str:
    if cpu:
        return f"target: >= {target}x: not judged (--cpu smoke run, {value:.3f}x)"
    return f"target: >= {target}x: {'met' if value >= target else 'NOT met'} ({value:.3f}x)"


# ------------------------------------------------------------------------------------------------------------- fit
class HandWrittenLoop:
    """One epoch per call (returns steps/s): data resident on the device, autocast + GradScaler (CUDA), Adam."""

    def __init__(self, torch: Any, device: Any, model: Any, x: Any, y: Any, batch: int) -> None:
        self.torch, self.device, self.model, self.batch = torch, device, model, batch
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.features = torch.from_numpy(x).to(device)
        self.labels = torch.from_numpy(y).to(device)
        self.scaler = torch.amp.GradScaler("cuda") if device.type == "cuda" else None
        self.dtype = _amp_dtype(torch, device)

    def __call__(self) -> float:
        torch, model, optimizer, scaler = self.torch, self.model, self.optimizer, self.scaler
        functional = torch.nn.functional
        model.train()
        _synchronize(torch, self.device)
        start = time.perf_counter()
        size = len(self.features)
        order = torch.randperm(size, device=self.device)
        steps = 0
        for begin in range(0, size - self.batch + 1, self.batch):
            index = order[begin:begin + self.batch]
            batch_x, batch_y = self.features[index], self.labels[index]
            with torch.autocast(self.device.type, dtype=self.dtype):
                loss = functional.nll_loss(torch.log(model(batch_x).float().clamp(1e-7, 1.0)), batch_y)
            optimizer.zero_grad(set_to_none=True)
            if scaler is None:
                loss.backward()
                optimizer.step()
            else:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            steps += 1
        _synchronize(torch, self.device)
        return steps / (time.perf_counter() - start)


def fit_workload(args: argparse.Namespace) -> bool:
    torch = _setup(args.cpu)
    import numpy as np  # pylint: disable=import-outside-toplevel
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_torch.architecture import ResNet9  # pylint: disable=import-outside-toplevel
    from pairing import PairedEpochs  # pylint: disable=import-outside-toplevel

    device = _device(torch)
    size = 16 if args.cpu else 32
    batch = args.batch or (4 if args.cpu else 512)
    samples = args.samples or (2 * batch if args.cpu else 40 * batch)
    epochs = args.epochs or (2 if args.cpu else 9)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((samples, 3, size, size)).astype(np.float32)
    y = rng.integers(0, 10, samples).astype(np.int64)
    torch.manual_seed(0)
    state = {key: value.clone() for key, value in ResNet9(input_size=(3, size, size)).state_dict().items()}

    def model_with_weights() -> Any:
        model = ResNet9(input_size=(3, size, size))
        model.load_state_dict(state)
        return model

    loop = HandWrittenLoop(torch, device, model_with_weights().to(device), x, y, batch)
    model = build(model_fn=model_with_weights, optimizer_fn=lambda params: torch.optim.Adam(params, lr=1e-3),
                  mixed_precision=True)
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=batch)
    timer = PairedEpochs(loop, synchronize=lambda: _synchronize(torch, device))
    with contextlib.redirect_stdout(io.StringIO()):
        Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=[timer], log_steps=None).fit()
    pairs = timer.pairs[1:] or timer.pairs
    ratio = _median_ratio(pairs)
    fe_rates, loop_rates = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    print(f"ResNet9 ({3}x{size}x{size}), batch {batch}, {samples // batch} steps per epoch, mixed precision "
          f"({'float16 autocast + GradScaler' if device.type == 'cuda' else 'bfloat16 autocast'}), Adam, on "
          f"{device}; {len(pairs)} counted epoch pairs\n")
    print("| side | median steps/s | best steps/s | samples/s (median) |")
    print("|---|---|---|---|")
    for name, rates in (("hand-written loop (data on the device)", loop_rates), ("fe fit", fe_rates)):
        print(f"| {name} | {statistics.median(rates):,.1f} | {max(rates):,.1f} | "
              f"{statistics.median(rates) * batch:,.0f} |")
    print(f"\nfe / hand-written, median of per-pair ratios: **{ratio:.3f}x** "
          f"(best / best {max(fe_rates) / max(loop_rates):.3f}x)\n")
    print(_verdict(ratio, 0.97, args.cpu))
    return True


# --------------------------------------------------------------------------------------------------------- overlap
def overlap_workload(args: argparse.Namespace) -> bool:
    torch = _setup(args.cpu)
    import numpy as np  # pylint: disable=import-outside-toplevel
    from bench_pipeline_workers import cifar_pipeline  # pylint: disable=import-outside-toplevel
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_core.trace import Trace  # pylint: disable=import-outside-toplevel
    from fe_torch.architecture import ResNet9  # pylint: disable=import-outside-toplevel

    device = _device(torch)
    batch = args.batch or (4 if args.cpu else 512)
    samples = args.samples or (2 * batch if args.cpu else 40 * batch)
    epochs = args.epochs or (2 if args.cpu else 4)  # the first of each run is left out (workers start, cudnn tunes)
    processes = args.processes if args.processes is not None else (2 if args.cpu else 15)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(samples, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=samples).astype(np.int64)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True

    class EpochRate(Trace):
        def __init__(self) -> None:
            super().__init__(mode="train")
            self.rates: List[float] = []

        def on_epoch_begin(self, data: Any) -> None:
            _synchronize(torch, device)
            self.start, self.steps = time.perf_counter(), self.system.global_step or 0

        def on_epoch_end(self, data: Any) -> None:
            _synchronize(torch, device)
            self.rates.append((self.system.global_step - self.steps) / (time.perf_counter() - self.start))

    def fit(pipeline: Any) -> List[float]:
        torch.manual_seed(0)
        model = build(model_fn=ResNet9, optimizer_fn=lambda params: torch.optim.Adam(params, lr=1e-3),
                      mixed_precision=True)
        network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                    CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                    UpdateOp(model=model, loss_name="ce")])
        timer = EpochRate()
        with contextlib.redirect_stdout(io.StringIO()):
            Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=[timer], log_steps=None).fit()
        return timer.rates[1:]

    pipeline = cifar_pipeline(x, y, processes, batch_size=batch)
    alone: List[float] = []
    started_workers = 0
    with pipeline.workers():
        for epoch in range(1, epochs + 1):
            produced, start = 0, time.perf_counter()
            with pipeline(mode="train", epoch=epoch) as loader:
                for made in loader:
                    produced += 1
            if epoch > 1:
                alone.append(produced / (time.perf_counter() - start))
            pool = getattr(pipeline, "_worker_pool", None)
            started_workers = max(started_workers, len(pool.pids()) if pool is not None else 0)
        first = pipeline.get_results(mode="train", num_steps=1)
    steps = samples // batch
    made = NumpyDataset({key: np.repeat(np.asarray(first[key]), steps, axis=0) for key in ("x", "y")})
    step_alone = fit(Pipeline(train_data=made, batch_size=batch))
    both = fit(cifar_pipeline(x, y, processes, batch_size=batch))
    slower = min(statistics.median(alone), statistics.median(step_alone))
    ratio = statistics.median(both) / slower
    print(f"fe's ResNet9, batch {batch}, mixed precision, on {device}, fed by the CIFAR-10 recipe Pipeline with "
          f"num_process={processes} ({started_workers} worker processes seen); {steps} steps per epoch, "
          f"{len(both)} timed epochs per configuration\n")
    print("| configuration | median steps/s | best steps/s |")
    print("|---|---|---|")
    for name, rates in ((f"pipeline alone ({processes} workers, no step)", alone),
                        ("step alone (fit on pre-made batches)", step_alone), ("fit: pipeline and step", both)):
        print(f"| {name} | {statistics.median(rates):,.1f} | {max(rates):,.1f} |")
    print(f"\nfit / slower alone: **{ratio:.3f}x**\n")
    print(_verdict(ratio, 0.9, args.cpu))
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", choices=["fit", "overlap"])
    parser.add_argument("--cpu", action="store_true", help="the CPU and tiny sizes (a smoke run)")
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--processes", type=int, default=None, help="overlap: Pipeline num_process (default 15)")
    args = parser.parse_args()
    workloads: Dict[str, Any] = {"fit": fit_workload, "overlap": overlap_workload}
    workloads[args.workload](args)


if __name__ == "__main__":
    main()
