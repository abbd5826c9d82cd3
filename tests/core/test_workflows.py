"""The repository's CI wiring holds together: every workflow runs a hatch environment that the root pyproject.toml
really defines, each release workflow ships only its own package from its own tag, and the top level of the
repository is exactly the designed set."""
from __future__ import annotations

import fnmatch
import itertools
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
PACKAGES = {"fe-core": "fe_core", "fe-torch": "fe_torch", "fe-tf": "fe_tf", "fe": "fe"}
# test workflow -> the packages its path filter must cover
SUITES = {
    "core": ["fe-core"],
    "torch": ["fe-core", "fe-torch"],
    "tf": ["fe-core", "fe-tf"],
    "fe": ["fe-core", "fe-torch", "fe-tf", "fe"],
}
TOP_LEVEL = {"packages", "tests", "tools", "pyproject.toml", ".github", "README.md", ".ci", ".gitignore", "docs",
             "LICENSE", "mkdocs.yml"}

_HATCH_RUN = re.compile(r"\bhatch\s+run\s+([^\s:]+):(\S+)")
_MATRIX_REF = re.compile(r"\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}")


def _pyproject_of(package: str) -> Dict[str, Any]:
    return tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())


def _root_pyproject() -> Dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def hatch_env_names(pyproject: Dict[str, Any]) -> Dict[str, str]:
    """Every environment name hatch generates from `tool.hatch.envs`, mapped to the env table it comes from.

    Mirrors hatch's naming of matrix environments: a `python`/`py` variable goes first as `py<version>`, the other
    variables follow in order as `matrix-name-format` (default `{value}`), joined with `-`, prefixed `<env>.`.
    """
    names: Dict[str, str] = {}
    for env, config in pyproject["tool"]["hatch"]["envs"].items():
        matrices = config.get("matrix")
        if not matrices:
            names[env] = env
            continue
        name_format = config.get("matrix-name-format", "{value}")
        for matrix in matrices:
            variables = dict(matrix)
            ordered = [(var, variables.pop(var)) for var in ("py", "python") if var in variables]
            python_first = bool(ordered)
            ordered += list(variables.items())
            for values in itertools.product(*(vals for _, vals in ordered)):
                parts = []
                for i, ((variable, _), value) in enumerate(zip(ordered, values)):
                    if i == 0 and python_first:
                        parts.append(value if value.startswith("py") else f"py{value}")
                    else:
                        parts.append(name_format.format(variable=variable, value=value))
                name = "-".join(parts)
                names[name if env == "default" else f"{env}.{name}"] = env
    return names


def expand_matrix(matrix: Dict[str, Any] | None) -> List[Dict[str, str]]:
    """The job combinations of a GitHub Actions `strategy.matrix` (lists, `include`, `exclude`)."""
    if not matrix:
        return [{}]
    base = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    combos = [dict(zip(base, (str(v) for v in values))) for values in itertools.product(*base.values())]
    combos = combos or [{}]
    for rule in matrix.get("exclude", []) or []:
        combos = [c for c in combos if any(c.get(k) != str(v) for k, v in rule.items())]
    for extra in matrix.get("include", []) or []:
        extra = {k: str(v) for k, v in extra.items()}
        matched = False
        for combo in combos:
            if all(combo.get(k, v) == v for k, v in extra.items() if k in base):
                combo.update(extra)
                matched = True
        if not matched:
            combos.append(extra)
    return combos


def _load_workflow(path: Path) -> Dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if True in data and "on" not in data:  # YAML 1.1 reads the key `on` as boolean true
        data["on"] = data.pop(True)
    return data


def _run_steps(job: Dict[str, Any]) -> List[str]:
    return [step["run"] for step in job.get("steps", []) if "run" in step]


def _workflow_files() -> List[Path]:
    return sorted(WORKFLOWS.glob("*.yml")) + sorted(WORKFLOWS.glob("*.yaml"))


def test_workflow_directory_holds_one_test_workflow_per_suite_and_one_release_per_package():
    names = {p.stem for p in _workflow_files()}
    assert names == set(SUITES) | {f"release-{pkg}" for pkg in PACKAGES}


def test_hatch_matrix_naming_matches_the_names_ci_uses():
    names = hatch_env_names(_root_pyproject())
    assert "test-core.py3.11" in names
    assert "test-torch.py3.11-2.13.0" in names
    assert "test-fe.py3.12-2.13.0-2.21.0" in names


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_test_workflow_runs_hatch_environments_that_exist(suite: str):
    pyproject = _root_pyproject()
    envs = pyproject["tool"]["hatch"]["envs"]
    names = hatch_env_names(pyproject)
    workflow = _load_workflow(WORKFLOWS / f"{suite}.yml")
    used: Set[str] = set()
    for job_name, job in workflow["jobs"].items():
        combos = expand_matrix((job.get("strategy") or {}).get("matrix"))
        for run in _run_steps(job):
            for combo in combos:
                def substitute(match: "re.Match[str]") -> str:
                    assert match.group(1) in combo, f"{suite}.yml job {job_name}: matrix.{match.group(1)} undefined"
                    return combo[match.group(1)]

                for env, script in _HATCH_RUN.findall(_MATRIX_REF.sub(substitute, run)):
                    assert "${{" not in env, f"{suite}.yml: unresolved expression in hatch env name {env!r}"
                    assert env in names, f"{suite}.yml runs `hatch run {env}:` but pyproject defines {sorted(names)}"
                    assert script in envs[names[env]].get("scripts", {}), f"env {env} has no script {script!r}"
                    used.add(env)
    assert used, f"{suite}.yml runs no `hatch run <env>:...`"
    assert all(names[env] == f"test-{suite}" for env in used), f"{suite}.yml should run test-{suite} envs: {used}"


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_test_workflow_path_filters_cover_its_packages_tests_and_tools(suite: str):
    triggers = _load_workflow(WORKFLOWS / f"{suite}.yml")["on"]
    expected = {f"packages/{pkg}/**" for pkg in SUITES[suite]} | {f"tests/{suite}/**", "tools/**"}
    for event in ("push", "pull_request"):
        paths = set(triggers[event]["paths"])
        assert expected <= paths, f"{suite}.yml {event} paths miss {sorted(expected - paths)}"


def test_every_hatch_environment_installs_with_pip_under_the_constraints():
    for env, config in _root_pyproject()["tool"]["hatch"]["envs"].items():
        assert config.get("installer") == "pip", f"hatch env {env} must set installer = 'pip'"
        constraint = config.get("env-vars", {}).get("PIP_CONSTRAINT", "")
        assert constraint.startswith("{root}/tools/constraints"), f"hatch env {env} must set PIP_CONSTRAINT"
    pins = (ROOT / "tools" / "constraints.txt").read_text().split()
    assert {"torch==2.13.0", "tensorflow==2.21.0", "tensorflow-cpu==2.21.0"} <= set(pins)


@pytest.mark.parametrize("env, variable, package", [("test-torch", "torch", "fe-torch"), ("test-tf", "tf", "fe-tf")])
def test_framework_matrices_test_the_lowest_declared_a_middle_and_the_newest_version(env, variable, package):
    """Each matrix cell installs under its own constraints, which pin that cell's framework version."""
    config = _root_pyproject()["tool"]["hatch"]["envs"][env]
    versions = config["matrix"][0][variable]
    framework = "torch" if variable == "torch" else "tensorflow"
    declared = next(r for r in _pyproject_of(package)["project"]["dependencies"] if r.startswith(framework))
    lowest = re.search(r">=\s*([\d.]+)", declared).group(1)
    assert len(versions) >= 3 and versions[0].startswith(lowest + "."), (versions, declared)
    # the version the dev tools pin is a cell (the newest release may be newer: torch's CUDA builds are not local)
    pinned = (ROOT / "tools" / "constraints.txt").read_text().replace(f"{framework}==", "")
    assert any(version + "\n" in pinned for version in versions), versions
    as_tuple = [tuple(int(part) for part in version.split(".")) for version in versions]
    assert as_tuple == sorted(as_tuple), "cells from the lowest to the newest version"
    for version in versions:
        constraint = config["env-vars"]["PIP_CONSTRAINT"].replace("{root}", str(ROOT)).replace(
            f"{{matrix:{variable}}}", version)
        assert f"{framework}=={version}" in Path(constraint).read_text().split()
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / f"{variable}.yml").read_text())
    assert workflow["jobs"]["test"]["strategy"]["matrix"][variable] == versions


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_release_workflow_triggers_on_its_own_tag_and_ships_only_its_package(package: str):
    workflow = _load_workflow(WORKFLOWS / f"release-{package}.yml")
    prefix = tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())["tool"]["fe"]["tag-prefix"]
    assert prefix == f"{package}-v"
    assert set(workflow["on"]) == {"push"}, "a release runs on its tag push only"
    assert workflow["on"]["push"] == {"tags": [f"{prefix}*"]}

    runs = [run for job in workflow["jobs"].values() for run in _run_steps(job)]
    referenced = set(re.findall(r"packages/([A-Za-z0-9_.-]+)", "\n".join(runs)))
    assert referenced == {package}, f"release-{package}.yml touches packages {sorted(referenced)}"
    builds = [run for run in runs if re.search(r"python -m build\b.*\spackages/" + re.escape(package) + r"\b", run)]
    assert builds, f"release-{package}.yml must build packages/{package}"

    publish_jobs = [job for job in workflow["jobs"].values()
                    if any(str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish")
                           for step in job.get("steps", []))]
    assert len(publish_jobs) == 1, "exactly one job publishes with pypa/gh-action-pypi-publish"
    assert publish_jobs[0].get("permissions", {}).get("id-token") == "write", "trusted publishing needs id-token"


def _gitignore_patterns() -> List[str]:
    lines = (ROOT / ".gitignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith(("#", "!"))]


def _ignored_at_top_level(entry: Path, patterns: List[str]) -> bool:
    for pattern in patterns:
        dir_only = pattern.endswith("/")
        core = pattern.strip("/")
        if "/" in core or (dir_only and not entry.is_dir()):
            continue  # patterns with inner slashes never name a top-level entry in our .gitignore
        if fnmatch.fnmatch(entry.name, core):
            return True
    return False


def test_top_level_layout_is_exactly_the_designed_set():
    patterns = _gitignore_patterns()
    present = {entry.name for entry in ROOT.iterdir()
               if entry.name != ".git" and not _ignored_at_top_level(entry, patterns)}
    assert present == TOP_LEVEL, f"unexpected: {sorted(present - TOP_LEVEL)}, missing: {sorted(TOP_LEVEL - present)}"
    packages = {entry.name for entry in (ROOT / "packages").iterdir() if not _ignored_at_top_level(entry, patterns)}
    assert packages == set(PACKAGES)


def test_ci_checks_the_generated_namespace_and_builds_the_docs_strictly():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "tools/gen_namespace.py --check" in ci and "tools/docs.py" in ci
    assert "strict: true" in (ROOT / "mkdocs.yml").read_text()
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in ("index.md", "migration.md", "architecture.md", "api/index.md"):
        assert page in nav
        assert page.startswith("api/") or (ROOT / "docs" / page).is_file()


def test_ci_script_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci
    assert re.search(r"tools/test\.py\s*$", ci, re.M), ".ci/run must end by running tools/test.py"
    assert "python tools/test.py" in (ROOT / "README.md").read_text()
