#!/usr/bin/env python3
"""The Pipeline's worker processes (num_process) against a torch DataLoader, and their overlap with a training step.

Run from the repository root with an interpreter that has torch, albumentations and OpenCV (`.venvs/fe` or
`.venvs/torch`):

    python tools/bench/bench_pipeline_workers.py [--samples 8192] [--images 2048] [--repeats 3] [--quick]
        [--processes 0 1 2] [--loader_workers 0 2] [--fit_processes 2]

On a many-core machine, e.g. `--processes 0 1 2 4 8 15 --loader_workers 0 2 8 15 --fit_processes 8` shows the scaling.

Workloads (OMP_NUM_THREADS=1, OpenCV on one thread, every epoch shuffled):

  cifar:  FastEstimator's CIFAR-10 recipe on synthetic 32x32x3 uint8 images, batch 128: Normalize, PadIfNeeded 40,
          RandomCrop 32, Sometimes(HorizontalFlip), CoarseDropout(max_holes=1), ChannelTranspose, Onehot with label
          smoothing 0.2. fe `Pipeline` with num_process 0, 1, 2 against a torch DataLoader (persistent workers) with
          0 and 2 workers whose Dataset makes the same albumentations / numpy calls per sample.
  decode: ReadImage on a directory of 64x64 PNG and JPEG files written at start (half each), batch 64; the
          DataLoader's Dataset calls cv2.imread + cvtColor as ReadImage does.
  fit:    `Estimator.fit` (torch backend, CPU) with the cifar Pipeline (num_process=2) and a Network whose step is a
          tiny linear model plus an op that sleeps 5 ms (the GIL released, as while an accelerator computes), against
          the slower of the two alone: the Pipeline's epochs without a step, and the same fit fed pre-made batches.

Configurations are timed round-robin, `--repeats` epochs each after a warm-up epoch (which starts the workers); the
table gives the median and best rates and their ratios to the workload's reference. Targets on a 2-core machine:
fe with 2 processes >= 1.6x fe with 0 and >= 0.95x the 2-worker DataLoader; fit >= 0.9x the slower of its parts.
A second table gives the CPU time per sample of the trainer and of its workers, the wall time and the fe workers' idle
share of the epochs (`WorkerPool.stats()`), each configuration run alone; the round-robin epochs' idle time per fe
worker is printed too. The last line is the command a 16-core machine needs (2, 8 and 15 workers against the
DataLoader with as many): on a machine shared with other jobs, where Linux gives each session (autogroup) its share of
the cores whatever its number of processes, wall-clock speed-ups cannot show, but the CPU cost of the workers'
bookkeeping can.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ["FE_PIPELINE_MIN_WORKER_SAMPLES"] = "0"  # the workers take every epoch measured here, however small

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
for package in ("fe-core", "fe-torch"):
    sys.path.insert(0, str(ROOT / "packages" / package / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.op.numpyop.meta import Sometimes  # noqa: E402
from fe_core.op.numpyop.multivariate import HorizontalFlip, PadIfNeeded, RandomCrop  # noqa: E402
from fe_core.op.numpyop.univariate import ChannelTranspose, CoarseDropout, Normalize, Onehot, ReadImage  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402

from bench_table import machine_line, print_table, summarize  # noqa: E402

MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2471, 0.2435, 0.2616)
CIFAR_BATCH, DECODE_BATCH, SLEEP = 128, 64, 0.005


def cifar_pipeline(x: np.ndarray, y: np.ndarray, num_process: int, batch_size: int = CIFAR_BATCH) -> Pipeline:
    return Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=batch_size, num_process=num_process,
                    ops=[Normalize(inputs="x", outputs="x", mean=MEAN, std=STD),
                         PadIfNeeded(min_height=40, min_width=40, image_in="x", image_out="x", mode="train"),
                         RandomCrop(32, 32, image_in="x", image_out="x", mode="train"),
                         Sometimes(HorizontalFlip(image_in="x", image_out="x", mode="train")),
                         CoarseDropout(inputs="x", outputs="x", mode="train", max_holes=1),
                         ChannelTranspose(inputs="x", outputs="x"),
                         Onehot(inputs="y", outputs="y", mode="train", num_classes=10, label_smoothing=0.2)])


def decode_pipeline(paths: np.ndarray, num_process: int) -> Pipeline:
    return Pipeline(train_data=NumpyDataset({"x": paths}), batch_size=DECODE_BATCH, num_process=num_process,
                    ops=[ReadImage(inputs="x", outputs="x")])


def torch_datasets(x: np.ndarray, y: np.ndarray, paths: np.ndarray) -> Dict[str, Any]:
    """torch Datasets making the same calls per sample as the fe ops."""
    import albumentations as A  # pylint: disable=import-outside-toplevel
    import cv2  # pylint: disable=import-outside-toplevel
    import torch.utils.data  # pylint: disable=import-outside-toplevel

    class Cifar(torch.utils.data.Dataset):
        def __init__(self) -> None:
            self.pad = A.PadIfNeeded(min_height=40, min_width=40, border_mode=cv2.BORDER_REFLECT_101, p=1.0)
            self.crop = A.RandomCrop(32, 32, p=1.0)
            self.flip = A.HorizontalFlip(p=1.0)
            self.dropout = A.CoarseDropout(num_holes_range=(1, 1), hole_height_range=(8, 8),
                                           hole_width_range=(8, 8), fill=0, p=1.0)
            self.mean = np.array(MEAN, np.float32) * np.float32(255)
            self.scale = np.float32(1) / (np.array(STD, np.float32) * np.float32(255))

        def __len__(self) -> int:
            return len(x)

        def __getitem__(self, index: int) -> Dict[str, Any]:
            image = (x[index].astype(np.float32) - self.mean) * self.scale
            image = self.crop(image=self.pad(image=image)["image"])["image"]
            if np.random.uniform() < 0.5:
                image = self.flip(image=image)["image"]
            image = np.ascontiguousarray(self.dropout(image=image)["image"].transpose(2, 0, 1))
            label = np.full(10, 0.2 / 10, np.float32)
            label[y[index]] += 0.8
            return {"x": image, "y": label}

    class Decode(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(paths)

        def __getitem__(self, index: int) -> Dict[str, Any]:
            return {"x": cv2.cvtColor(cv2.imread(str(paths[index]), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)}

    return {"cifar": Cifar(), "decode": Decode()}


@contextlib.contextmanager
def _closing(loader: Any) -> Any:
    """Shut a DataLoader's persistent workers down (and reap them) when the block ends."""
    try:
        yield
    finally:
        iterator = getattr(loader, "_iterator", None)
        if iterator is not None:
            iterator._shutdown_workers()  # pylint: disable=protected-access
        loader._iterator = None  # pylint: disable=protected-access


def torch_loader(dataset: Any, batch_size: int, workers: int) -> Any:
    import torch.utils.data  # pylint: disable=import-outside-toplevel
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=workers,
                                       persistent_workers=workers > 0, prefetch_factor=2 if workers else None)


def write_images(directory: str, count: int) -> np.ndarray:
    import cv2  # pylint: disable=import-outside-toplevel
    rng = np.random.default_rng(0)
    ramp = np.add.outer(np.arange(64), np.arange(64)).astype(np.float32)
    paths = []
    for index in range(count):
        image = np.clip(ramp[..., None] * rng.uniform(0.5, 2, 3) + rng.normal(0, 8, (64, 64, 3)), 0, 255)
        path = os.path.join(directory, f"{index:05d}.{'png' if index % 2 else 'jpg'}")
        cv2.imwrite(path, image.astype(np.uint8))
        paths.append(path)
    return np.array(paths)


def fe_epoch_rate(pipeline: Pipeline) -> Callable[[], float]:
    epochs = iter(range(1, 10 ** 6))

    def run() -> float:
        produced, start = 0, time.perf_counter()
        with pipeline(mode="train", epoch=next(epochs)) as loader:
            for batch in loader:
                produced += len(batch["x"])
        return produced / (time.perf_counter() - start)
    return run


def torch_epoch_rate(loader: Any) -> Callable[[], float]:
    def run() -> float:
        produced, start = 0, time.perf_counter()
        for batch in loader:
            produced += len(batch["x"])
        return produced / (time.perf_counter() - start)
    return run


def _cpu_seconds() -> Dict[str, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"trainer": own.ru_utime + own.ru_stime, "workers": children.ru_utime + children.ru_stime,
            "wall": time.perf_counter()}


def cpu_cost(open_run: Callable[[], Any], epochs: int, samples: int) -> List[float]:
    """CPU microseconds per sample in the trainer and in its workers, wall microseconds per sample, and the workers'
    idle share of the epochs' wall time (mean and largest over the workers; NaN where the pool does not say).

    `open_run()` returns (a context manager that owns the workers, a function running one epoch, a function giving
    the pool's `stats()` or None): the workers are joined when the context closes, so their CPU time shows in
    RUSAGE_CHILDREN. On a machine shared with other jobs (and Linux's per-session autogroup scheduling) wall time
    cannot show a speed-up that CPU time does.
    """
    before = _cpu_seconds()
    context, run, stats = open_run()
    idle = [float("nan")] * 2
    with context:
        run()  # warm-up: starts the workers (its CPU time is counted: the workers' is known only once they exit)
        begin, first = _cpu_seconds(), stats() if stats is not None else None
        for _ in range(epochs):
            run()
        wall = _cpu_seconds()["wall"] - begin["wall"]
        last = stats() if stats is not None else None
        if first and last and len(first["workers"]) == len(last["workers"]):
            seconds = last["epoch_seconds"] - first["epoch_seconds"]
            shares = [max(0.0, seconds - (after["busy_seconds"] - before["busy_seconds"])) / seconds
                      for before, after in zip(first["workers"], last["workers"])] if seconds else []
            if shares:
                idle = [statistics.mean(shares), max(shares)]
    after = _cpu_seconds()
    per_sample = [1e6 * (after[key] - before[key]) / ((epochs + 1) * samples) for key in ("trainer", "workers")]
    return per_sample + [1e6 * wall / (epochs * samples)] + [100 * share for share in idle]


def idle_shares(stats: Dict[str, Any]) -> List[float]:
    """Each worker's idle time as a share of the pool's epoch wall time (`WorkerPool.stats()`)."""
    seconds = stats.get("epoch_seconds") or 0.0
    return [worker["idle_seconds"] / seconds for worker in stats.get("workers", [])] if seconds else []


def pool_stats(pipeline: Pipeline) -> Callable[[], Any]:
    def read() -> Any:
        pool = getattr(pipeline, "_worker_pool", None)
        return pool.stats() if pool is not None and hasattr(pool, "stats") else None
    return read


def round_robin(configurations: Dict[str, Callable[[], float]], repeats: int) -> Dict[str, List[float]]:
    for run in configurations.values():  # warm-up: starts the workers, fills caches
        run()
    rates: Dict[str, List[float]] = {name: [] for name in configurations}
    for _ in range(repeats):
        for name, run in configurations.items():
            rates[name].append(run())
    return rates


def ratio_rows(rates: Dict[str, List[float]], pairs: List[tuple]) -> List[str]:
    lines = []
    for name, reference, target in pairs:
        median = statistics.median(rates[name]) / statistics.median(rates[reference])
        best = max(rates[name]) / max(rates[reference])
        goal = f" (target >= {target}x)" if target else ""
        lines.append(f"  {name} / {reference}: {median:.2f}x median, {best:.2f}x best{goal}")
    return lines


def fit_overlap(x: np.ndarray, y: np.ndarray, repeats: int, num_process: int = 2) -> List[List[str]]:
    """fit with the cifar pipeline (num_process workers) and a 5 ms step, against each alone."""
    import torch  # pylint: disable=import-outside-toplevel
    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import CrossEntropy, ModelOp, TensorOp, UpdateOp  # pylint: disable=C0415
    from fe_core.trace import Trace  # pylint: disable=import-outside-toplevel

    class Wait(TensorOp):
        def forward(self, data: Any, state: Dict[str, Any]) -> Any:
            time.sleep(SLEEP)
            return data

    class EpochRate(Trace):
        def __init__(self) -> None:
            super().__init__(mode="train")
            self.rates: List[float] = []

        def on_epoch_begin(self, data: Any) -> None:
            self.start, self.steps = time.perf_counter(), self.system.global_step or 0

        def on_epoch_end(self, data: Any) -> None:
            self.rates.append((self.system.global_step - self.steps) / (time.perf_counter() - self.start))

    def fit(pipeline: Pipeline) -> List[float]:
        model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 10)),
                      optimizer_fn=lambda params: torch.optim.SGD(params, lr=0.01))
        network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"), Wait(inputs="x", outputs="x"),
                                    CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                    UpdateOp(model=model, loss_name="ce")])
        timer = EpochRate()
        with contextlib.redirect_stdout(io.StringIO()):
            Estimator(pipeline=pipeline, network=network, epochs=repeats + 1, traces=[timer], log_steps=None).fit()
        return timer.rates[1:]  # the first epoch starts the workers

    pipeline = cifar_pipeline(x, y, num_process)
    with pipeline.workers():
        alone = round_robin({"p": fe_epoch_rate(pipeline)}, repeats)["p"]
    pipeline_steps = [rate / CIFAR_BATCH for rate in alone]
    with pipeline.workers():
        first = pipeline.get_results(mode="train", num_steps=1)
    made = NumpyDataset({"x": np.repeat(first["x"], len(x) // CIFAR_BATCH, axis=0),
                         "y": np.repeat(first["y"], len(x) // CIFAR_BATCH, axis=0)})
    step_alone = fit(Pipeline(train_data=made, batch_size=CIFAR_BATCH))
    both = fit(cifar_pipeline(x, y, num_process))
    slower = min(statistics.median(pipeline_steps), statistics.median(step_alone))
    rows = summarize("fit overlap", {f"pipeline alone ({num_process} procs)": pipeline_steps,
                                     "step alone (5 ms)": step_alone, "fit: both": both}, "fit: both", unit="steps/s")
    rows.append(["fit overlap", "fit / slower alone", f"{statistics.median(both) / slower:.3f}x", "", "",
                 "target >= 0.9x"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=8192, help="cifar images")
    parser.add_argument("--images", type=int, default=2048, help="image files to decode")
    parser.add_argument("--repeats", type=int, default=3, help="timed epochs per configuration")
    parser.add_argument("--only", nargs="+", choices=["cifar", "decode", "fit"], default=["cifar", "decode", "fit"])
    parser.add_argument("--quick", action="store_true", help="a smoke run: tiny sizes, one repeat")
    parser.add_argument("--processes", type=int, nargs="+", default=[0, 1, 2],
                        help="fe num_process values to time (the first is the reference; default 0 1 2)")
    parser.add_argument("--loader_workers", type=int, nargs="+", default=[0, 2],
                        help="torch DataLoader num_workers values to time (default 0 2)")
    parser.add_argument("--fit_processes", type=int, default=2, help="fe num_process in the fit-overlap workload")
    parser.add_argument("--cpu_processes", type=int, nargs="*", default=None,
                        help="fe num_process values for the CPU-per-sample table (default: the first and largest)")
    parser.add_argument("--cpu_loader_workers", type=int, nargs="*", default=None,
                        help="DataLoader num_workers for the CPU-per-sample table (default: the smallest and largest)")
    args = parser.parse_args()
    if args.quick:
        args.samples, args.images, args.repeats = 1024, 128, 1

    import albumentations  # pylint: disable=import-outside-toplevel
    import cv2  # pylint: disable=import-outside-toplevel
    import torch  # pylint: disable=import-outside-toplevel
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(args.samples, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=args.samples).astype(np.int64)
    print(machine_line(albumentations=albumentations.__version__, opencv=cv2.__version__, torch=torch.__version__))
    print(f"load average at start: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    rows: List[List[str]] = []
    cpu_rows: List[List[str]] = []
    notes: List[str] = []
    idle_lines: List[str] = []
    with tempfile.TemporaryDirectory() as directory, contextlib.ExitStack() as stack:
        paths = write_images(directory, args.images)
        datasets = torch_datasets(x, y, paths)
        workloads = {"cifar": (lambda n: cifar_pipeline(x, y, n), CIFAR_BATCH),
                     "decode": (lambda n: decode_pipeline(paths, n), DECODE_BATCH)}
        for workload, (make, batch_size) in workloads.items():
            if workload not in args.only:
                continue
            configurations: Dict[str, Callable[[], float]] = {}
            readers: Dict[str, Callable[[], Any]] = {}
            for num_process in args.processes:
                pipeline = make(num_process)
                stack.enter_context(pipeline.workers())
                configurations[f"fe num_process={num_process}"] = fe_epoch_rate(pipeline)
                readers[f"fe num_process={num_process}"] = pool_stats(pipeline)
            for workers in args.loader_workers:
                loader = torch_loader(datasets[workload], batch_size, workers)
                configurations[f"torch DataLoader workers={workers}"] = torch_epoch_rate(loader)
            rates = round_robin(configurations, args.repeats)
            for name, read in readers.items():
                stats = read()
                if stats and stats.get("workers"):
                    shares = idle_shares(stats)
                    idle_lines.append(f"  {workload} {name}: idle % of the epochs' wall time per worker: "
                                      + " ".join(f"{100 * share:.0f}" for share in shares)
                                      + f" (tasks per worker: {' '.join(str(w['tasks']) for w in stats['workers'])})")
            reference = f"fe num_process={args.processes[0]}"
            rows += summarize(workload, rates, reference, unit="samples/s")
            samples = len(x) if workload == "cifar" else len(paths)
            for num_process in sorted(set(args.cpu_processes or {args.processes[0], max(args.processes)})):
                def open_fe(num_process: int = num_process) -> Any:
                    pipeline = make(num_process)
                    return pipeline.workers(), fe_epoch_rate(pipeline), pool_stats(pipeline)
                cpu_rows.append([workload, f"fe num_process={num_process}"] + [
                    f"{value:,.0f}" for value in cpu_cost(open_fe, args.repeats, samples)])
            for workers in sorted(set(args.cpu_loader_workers or {min(args.loader_workers),
                                                                  max(args.loader_workers)})):
                def open_torch(workers: int = workers) -> Any:
                    loader = torch_loader(datasets[workload], batch_size, workers)
                    return _closing(loader), torch_epoch_rate(loader), None
                cpu_rows.append([workload, f"torch DataLoader workers={workers}"] + [
                    f"{value:,.0f}" for value in cpu_cost(open_torch, args.repeats, samples)])
            notes.append(f"{workload}:")
            pairs = [(f"fe num_process={n}", reference, 1.6 if n == 2 else None) for n in args.processes[1:] if n > 1]
            pairs += [(f"fe num_process={n}", f"torch DataLoader workers={n}", 0.95)
                      for n in args.processes if n in args.loader_workers and n > 0]
            notes += ratio_rows(rates, pairs)
    if "fit" in args.only:
        rows += fit_overlap(x, y, args.repeats, args.fit_processes)
    print_table(rows)
    print("\n".join(notes))
    if idle_lines:
        print("\nfe workers' idle time in the round-robin epochs (warm-up included):")
        print("\n".join(idle_lines))
    if cpu_rows:
        print("\nCPU per sample (us; workers' time counted once they exit, warm-up epoch included), wall time per "
              "sample of the timed epochs, and the fe workers' idle share of those epochs (mean, largest):")
        print_table(cpu_rows, header=("workload", "configuration", "trainer CPU", "workers CPU", "wall",
                                      "idle % mean", "idle % max"))
    print(f"\nOn a 16-core machine (the >= 0.95x DataLoader targets at 2, 8 and 15 workers): {sys.executable} "
          f"tools/bench/bench_pipeline_workers.py --samples 16384 --images 4096 --repeats 5 --processes 0 2 8 15 "
          f"--loader_workers 2 8 15 --cpu_processes 2 8 15 --cpu_loader_workers 2 8 15 --fit_processes 8")
    print(f"load average at end: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
