#!/usr/bin/env python3
"""A hyperparameter search's trials one after another against two at a time on Ray, and what pruning saves.

Run from the repository root (needs torch and fe-core's `search` extra: ray, optuna; no install of fe needed):

    python tools/bench/bench_search.py [--trials 8] [--epochs 30] [--steps 40] [--quick]

Each trial is a small real fit: fe's Estimator trains a 64-h-h-10 MLP (h = 512 or 1024; torch, one thread) on
scikit-learn's digits for `--epochs` epochs of `--steps` steps, and returns the eval accuracy. The same `GridSearch` of `--trials` trials
(4 learning rates x 2 widths), with a seed, runs

  (a) serially, in this process (`search.fit(save_dir)`, what FastEstimator does);
  (b) on a local Ray with 2 CPUs, one CPU per trial (`search.fit(save_dir, executor=fe.search.Ray(...))`): two trials
      at a time. The wall time counts everything the search does, the workers' start (each imports torch and fe)
      included, but not `ray.init`, which is reported on its own (a cluster is started once for many searches);
  (c) the same search again on the same Ray: its workers are warm (what every search after the first one sees).

One untimed trial runs in this process first, so that (a), like (c), does not count the imports (torch, fe,
scikit-learn's data) a fresh process pays once; (b) counts them in its workers.

(b) runs first; then (a) and (c) alternate `--repeats` times, so that both see the same load on a shared machine, and
their means are reported. The ratios are (b) / (a) and (c) / (a) (target <= 0.6 on a 2-core machine); every
search's summary must be the same (per-trial seeds).
Then an `OptunaSearch` of `--trials` trials with MedianPruner and the OptunaPruning trace runs on the same Ray, and
the table lists each pruned trial's epochs: the epochs pruning saved against running every trial to the end.
The machine's load average is printed before and after: on a shared machine the parallel ratio depends on it. Ray
runs its workers at nice 15, which on a shared machine hands most of their CPU to other work; this script starts Ray
with `RAY_worker_niceness=0` so that trials compete on the same terms as the serial search.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("FE_HISTORY_DB", "off")
# Ray starts its workers at nice 15 (they yield the CPU to everything else on the machine); here both sides compete
# for the CPUs on equal terms with whatever else runs, so the trials run at the priority of the serial search.
os.environ.setdefault("RAY_worker_niceness", "0")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
_SOURCES = [str(ROOT / "packages" / name / "src") for name in ("fe-core", "fe-torch", "fe")]
sys.path[:0] = _SOURCES
os.environ["PYTHONPATH"] = os.pathsep.join(_SOURCES + [os.environ.get("PYTHONPATH", "")])  # for Ray's workers

EPOCHS = 30
STEPS = 40


def train(search_idx, lr, hidden, traces=()):
    """One trial: an Estimator fit of a small MLP on the digits; the last eval accuracy and the epochs run."""
    import torch  # pylint: disable=import-outside-toplevel

    import fe  # pylint: disable=import-outside-toplevel
    from fe.examples.digits import load_digits_datasets  # pylint: disable=import-outside-toplevel
    from fe.op.numpyop.univariate import Minmax  # pylint: disable=import-outside-toplevel
    from fe.op.tensorop.loss import CrossEntropy  # pylint: disable=import-outside-toplevel
    from fe.op.tensorop.model import ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe.trace.metric import Accuracy  # pylint: disable=import-outside-toplevel

    torch.set_num_threads(1)
    train_data, eval_data, _ = load_digits_datasets(flatten=True)
    pipeline = fe.Pipeline(train_data=train_data, eval_data=eval_data, batch_size=32,
                           ops=Minmax(inputs="x", outputs="x"))
    model = fe.build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                                          torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                                          torch.nn.Linear(hidden, 10), torch.nn.Softmax(dim=-1)),
                     optimizer_fn=lambda params: torch.optim.SGD(params, lr=lr), model_name=f"mlp{search_idx}")
    network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                              CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                              UpdateOp(model=model, loss_name="ce")])
    estimator = fe.Estimator(pipeline=pipeline, network=network, epochs=EPOCHS, train_steps_per_epoch=STEPS,
                             log_steps=0, traces=[Accuracy(true_key="y", pred_key="y_pred"), *traces])
    accuracy = estimator.fit("trial").history["eval"]["accuracy"]
    return {"accuracy": accuracy[max(accuracy)], "epochs": len(accuracy)}


def pruned_train(search_idx, lr, hidden):
    from fe_core.search import OptunaPruning  # pylint: disable=import-outside-toplevel
    return train(search_idx, lr, hidden, traces=[OptunaPruning("accuracy")])


def load() -> str:
    return "load average " + ", ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    global EPOCHS, STEPS  # pylint: disable=global-statement
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8, help="trials per search (a multiple of 2)")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--steps", type=int, default=40, help="training steps per epoch")
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs of (a) and (c)")
    parser.add_argument("--quick", action="store_true", help="2 trials of 1-epoch fits, once (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.epochs, args.steps, args.repeats = 2, 1, 5, 1
    EPOCHS, STEPS = args.epochs, args.steps

    import optuna  # pylint: disable=import-outside-toplevel
    import ray  # pylint: disable=import-outside-toplevel

    from fe_core.search import GridSearch, LogRange, OptunaSearch, Ray  # pylint: disable=import-outside-toplevel
    print(f"bench_search: {args.trials} trials of {args.epochs} epoch(s) x {args.steps} steps; {os.cpu_count()} CPUs; "
          f"{load()}")
    lrs = [0.02, 0.05, 0.1, 0.2, 0.4, 0.8][:max(1, args.trials // 2)]
    params = {"lr": lrs, "hidden": [512, 1024]}
    save_dir = tempfile.mkdtemp(prefix="bench_search_")
    train(0, lrs[0], 512)  # this process warm (torch, fe, scikit-learn's data imported), as the warm workers of (c)

    def grid(name):
        return GridSearch(train, params=params, best_mode="max", optimize_field="accuracy", seed=0, name=name)

    def timed(search, **fit_kwargs):
        start = time.perf_counter()
        search.fit(save_dir, **fit_kwargs)
        return time.perf_counter() - start

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    init_s = time.perf_counter() - start
    parallel = grid("cold")
    parallel_s = timed(parallel, executor=Ray(resources_per_trial={"cpu": 1}))
    serial_runs, warm_runs, summaries = [], [], [parallel.get_search_summary()]
    for repeat in range(args.repeats):  # (a) and (c) alternate, so that both see the same load on a shared machine
        serial = grid(f"serial{repeat}")
        serial_runs.append(timed(serial))
        warm = grid(f"warm{repeat}")
        warm_runs.append(timed(warm, executor=Ray(resources_per_trial={"cpu": 1})))
        summaries += [serial.get_search_summary(), warm.get_search_summary()]
    same = all(summary == summaries[0] for summary in summaries)
    serial_s, warm_s = sum(serial_runs) / len(serial_runs), sum(warm_runs) / len(warm_runs)

    start = time.perf_counter()
    study = OptunaSearch(pruned_train, params={"lr": LogRange(0.005, 1.0), "hidden": [512, 1024]},
                         n_trials=args.trials, best_mode="max", optimize_field="accuracy", seed=0,
                         pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1), name="optuna")
    study.fit(save_dir, executor=Ray(resources_per_trial={"cpu": 1}))
    optuna_s = time.perf_counter() - start
    ray.shutdown()

    n = len(summaries[0])
    print(f"\n| search ({n} trials) | wall s | per trial s | vs serial |")
    print("|---|---:|---:|---:|")
    print(f"| (a) serial, in this process (mean of {', '.join(f'{run:.1f}' for run in serial_runs)}) | "
          f"{serial_s:.1f} | {serial_s / n:.2f} | 1.00x |")
    print(f"| (b) Ray, 2 at a time, new workers (each imports torch and fe) | {parallel_s:.1f} | "
          f"{parallel_s / n:.2f} | {parallel_s / serial_s:.2f}x |")
    print(f"| (c) Ray, 2 at a time, warm workers (mean of {', '.join(f'{run:.1f}' for run in warm_runs)}) | "
          f"{warm_s:.1f} | {warm_s / n:.2f} | {warm_s / serial_s:.2f}x |")
    print(f"\n`ray.init` (local, 2 CPUs): {init_s:.1f} s, not counted in (b). Same summaries as serial: {same}.")
    pruned = study.get_pruned_trials()
    completed = study.get_search_summary()
    saved = sum(args.epochs - entry["epochs"] for entry in pruned)
    print(f"\nOptunaSearch, {args.trials} trials on Ray, MedianPruner (n_startup_trials=2, n_warmup_steps=1): "
          f"{optuna_s:.1f} s; {len(completed)} completed, {len(pruned)} pruned")
    print("\n| pruned trial | lr | hidden | epochs run (of {}) |".format(args.epochs))
    print("|---:|---:|---:|---:|")
    for entry in pruned:
        param = entry["param"]
        print(f"| {param['search_idx']} | {param['lr']:.3g} | {param['hidden']} | {entry['epochs']} |")
    total = args.trials * args.epochs
    print(f"\nEpochs run: {total - saved} of {total} ({saved} saved by pruning, {saved / total:.0%}); best accuracy "
          f"{study.get_best_results()['result']['accuracy']:.3f}")
    print(f"\n{load()}")


if __name__ == "__main__":
    main()
