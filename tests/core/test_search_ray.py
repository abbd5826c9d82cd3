"""Searches on a local Ray (num_cpus=2, started once for this module): parallel trials give the serial results, a
failing trial is recorded, a kill -9 of the driving process resumes without re-running finished trials, and
OptunaSearch prunes real Estimator fits on Ray workers."""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import optuna  # fe-core[search]: the core suite has it through fe-core[all]
import pytest
import ray

import search_trials  # tests/core: Ray workers import the trial functions from it
from fe_core.search import Choice, GoldenSection, GridSearch, OptunaSearch, Ray, TrialError

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ray_address():
    """One local Ray for the module; its workers find fe_core and the trial functions on PYTHONPATH."""
    paths = [str(HERE), *[path for path in sys.path if path]]
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def test_parallel_grid_and_golden_section_equal_the_serial_searches(ray_address, tmp_path):
    grid = dict(params={"a": [1, 2, 3], "b": [1, 2]}, seed=5, best_mode="max", optimize_field="score")
    serial = GridSearch(search_trials.noisy_sum, **grid)
    serial.fit(str(tmp_path / "serial"))
    parallel = GridSearch(search_trials.noisy_sum, **grid)
    parallel.fit(str(tmp_path / "parallel"), executor=Ray(resources_per_trial={"cpu": 1}))

    def without_pid(summary):
        return [{"param": entry["param"], "result": {"score": entry["result"]["score"]}} for entry in summary]

    assert without_pid(parallel.get_search_summary()) == without_pid(serial.get_search_summary())
    assert parallel.get_best_results()["param"] == {"a": 3, "b": 2, "search_idx": 6}
    assert {entry["result"]["pid"] for entry in parallel.get_search_summary()} - {os.getpid()}  # ran on workers
    logs = sorted(os.listdir(tmp_path / "parallel" / "grid_search_trials"))
    assert logs == [f"trial_{idx}.log" for idx in range(1, 7)]
    assert json.loads((tmp_path / "parallel" / "grid_search.json").read_text())["search_summary"] == \
        parallel.get_search_summary()

    golden = dict(x_min=0, x_max=20, max_iter=10, best_mode="min")
    golden_serial = GoldenSection(lambda search_idx, n: (n - 7)**2, **golden)
    golden_serial.fit()
    golden_parallel = GoldenSection(lambda search_idx, n: (n - 7)**2, **golden)
    golden_parallel.fit(executor=Ray())
    assert golden_parallel.get_search_summary() == golden_serial.get_search_summary()
    assert golden_parallel.get_best_results()["param"]["n"] == 7


def test_a_failing_trial_is_recorded_with_its_error_and_the_others_finish(ray_address, tmp_path):
    search = GridSearch(search_trials.fails_on_b2, params={"a": [1, 2], "b": [1, 2]})
    search.fit(str(tmp_path), executor=Ray())
    assert [entry["param"] for entry in search.get_search_summary()] == [
        {"a": 1, "b": 1, "search_idx": 1}, {"a": 2, "b": 1, "search_idx": 3}]
    failed = search.get_failed_trials()
    assert [entry["param"] for entry in failed] == [{"a": 1, "b": 2, "search_idx": 2},
                                                    {"a": 2, "b": 2, "search_idx": 4}]
    assert all(entry["error"].startswith("ValueError: b=2 is not allowed") for entry in failed)
    log = Path(failed[0]["log"]).read_text()
    assert "trial 2 starts with a=1, b=2" in log and "Traceback" in log and "ValueError" in log
    assert json.loads((tmp_path / "grid_search.json").read_text())["failed_trials"] == failed

    stopping = GridSearch(search_trials.fails_on_b2, params={"a": [1], "b": [2, 1]}, name="stops")
    with pytest.raises(TrialError, match=r"Trial 1 \(\{'a': 1, 'b': 2\}\) failed: ValueError: b=2"):
        stopping.fit(str(tmp_path), executor=Ray(stop_on_error=True, max_concurrent_trials=1))
    assert stopping.get_search_summary() == []


_DRIVER = textwrap.dedent("""
    import functools, json, sys
    import search_trials
    from fe_core.search import GridSearch, Ray
    work, address = sys.argv[1], sys.argv[2]
    search = GridSearch(functools.partial(search_trials.blocking_sum, work=work), params={"a": [1, 2], "b": [1, 2]},
                        seed=11, best_mode="max", optimize_field="score")
    search.fit(work + "/save", executor=Ray(address=address))
    print("SUMMARY " + json.dumps(search.get_search_summary()))
""")


def test_kill_9_of_the_driver_then_the_same_command_resumes_without_rerunning_finished_trials(ray_address, tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    command = [sys.executable, str(script), str(tmp_path), ray_address]
    env = {**os.environ, "FE_HISTORY_DB": "off"}
    driver = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        saved = tmp_path / "save" / "grid_search.json"
        while time.monotonic() < deadline:  # trials 1 and 2 finished and saved; 3 and 4 running (blocked)
            calls = (tmp_path / "calls.txt").read_text().split() if (tmp_path / "calls.txt").exists() else []
            if saved.exists() and len(json.loads(saved.read_text())["search_summary"]) == 2 and len(calls) == 4:
                break
            assert driver.poll() is None, driver.stdout.read().decode()
            time.sleep(0.1)
        else:
            pytest.fail("the search did not reach 2 finished and 2 running trials in 60 s")
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    (tmp_path / "release").write_text("")
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    calls = sorted(int(idx) for idx in (tmp_path / "calls.txt").read_text().split())
    assert calls == [1, 2, 3, 3, 4, 4]  # finished trials not run again, the running ones run again
    resumed = json.loads(rerun.stdout.split("SUMMARY ", 1)[1])

    uninterrupted = GridSearch(functools.partial(search_trials.blocking_sum, work=str(tmp_path)),
                               params={"a": [1, 2], "b": [1, 2]}, seed=11)
    uninterrupted.fit()
    assert resumed == uninterrupted.get_search_summary()


def test_optuna_on_ray_prunes_real_estimator_fits(ray_address, tmp_path):
    def search(name):
        return OptunaSearch(search_trials.regression_fit, params={"lr": Choice([0.0, 0.1])}, n_trials=2,
                            best_mode="min", optimize_field="mse", seed=0, name=name,
                            sampler=lambda seed: optuna.samplers.GridSampler({"lr": [0.0, 0.1]}, seed=0),
                            pruner=optuna.pruners.ThresholdPruner(upper=0.5, n_warmup_steps=2))

    on_ray = search("on_ray")
    on_ray.fit(str(tmp_path), executor=Ray())
    assert (tmp_path / "on_ray.db").exists()
    (completed,), (pruned,) = on_ray.get_search_summary(), on_ray.get_pruned_trials()
    assert completed["param"]["lr"] == 0.1 and completed["result"]["epochs"] == 6  # the whole fit
    assert pruned["param"]["lr"] == 0.0 and pruned["epochs"] == 2 and pruned["result"]["epochs"] == 2  # stopped
    assert on_ray.get_failed_trials() == []
    log = (tmp_path / "on_ray_trials" / f"trial_{pruned['param']['search_idx']}.log").read_text()
    assert "FastEstimator-OptunaPruning: trial pruned at epoch 2" in log
    states = {trial.number: trial.state for trial in on_ray.study.get_trials()}
    assert states[pruned["param"]["search_idx"] - 1] == optuna.trial.TrialState.PRUNED
