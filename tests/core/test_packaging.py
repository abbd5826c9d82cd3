"""Each of the four distributions is packaged as DESIGN.md says: own version file, py.typed, sibling pins as
ranges, backend entry points, and fe-core depending on numpy and natsort only."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"fe-core": "fe_core", "fe-torch": "fe_torch", "fe-tf": "fe_tf", "fe": "fe"}
SIBLINGS = set(PACKAGES)


def _pyproject(package: str) -> Dict[str, Any]:
    return tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_package_has_its_own_version_file_readme_and_py_typed(package: str):
    module = PACKAGES[package]
    data = _pyproject(package)
    project = data["project"]
    assert project["name"] == package
    assert "version" in project["dynamic"]
    assert project["requires-python"] == ">=3.10"
    assert project["readme"] == "README.md"
    assert (ROOT / "packages" / package / "README.md").is_file()
    version_path = data["tool"]["hatch"]["version"]["path"]
    assert version_path == f"src/{module}/__about__.py"
    about = (ROOT / "packages" / package / version_path).read_text()
    assert re.search(r'^__version__ = "\d+\.\d+\.\d+"$', about, re.M)
    assert data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [f"src/{module}"]
    assert (ROOT / "packages" / package / "src" / module / "py.typed").is_file()
    assert data["tool"]["fe"]["tag-prefix"] == f"{package}-v"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_package_metadata_names_license_authors_urls_and_classifiers(package: str):
    project = _pyproject(package)["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "packages" / package / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    assert "Apache License" in (ROOT / "LICENSE").read_text() and "Version 2.0" in (ROOT / "LICENSE").read_text()
    assert project["authors"] and all("name" in author for author in project["authors"])
    assert set(project["urls"]) == {"Homepage", "Documentation", "Source", "Issues"}
    assert all(url.startswith("https://") for url in project["urls"].values())
    classifiers = project["classifiers"]
    assert "Typing :: Typed" in classifiers and any(c.startswith("Development Status ::") for c in classifiers)
    assert not any(c.startswith("License ::") for c in classifiers)  # the SPDX `license` field says it (PEP 639)


def test_fe_core_depends_on_numpy_and_natsort_only():
    project = _pyproject("fe-core")["project"]
    assert {_name(r) for r in project["dependencies"]} == {"numpy", "natsort"}
    # Everything else is an optional extra, forwarded by `fe` under the same name.
    extras = project["optional-dependencies"]
    assert {"image", "table", "plot", "report", "data", "all"} <= set(extras)
    forwarded = _pyproject("fe")["project"]["optional-dependencies"]
    for extra in extras:
        if extra != "all":
            assert forwarded[extra] == [f"fe-core[{extra}]>=0.1,<0.2"]
    assert "fe-core[all]>=0.1,<0.2" in forwarded["all"]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_sibling_pins_are_minor_ranges(package: str):
    project = _pyproject(package)["project"]
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    for requirement in requirements:
        if _name(requirement) in SIBLINGS and _name(requirement) != package:  # an `all` extra may name its own
            assert re.search(r">=0\.1\b", requirement) and re.search(r"<0\.2\b", requirement), requirement


def test_backends_declare_their_entry_points_and_frameworks():
    torch = _pyproject("fe-torch")["project"]
    tf = _pyproject("fe-tf")["project"]
    assert torch["entry-points"]["fe.backends"] == {"torch": "fe_torch.framework:TorchBackend"}
    assert tf["entry-points"]["fe.backends"] == {"tf": "fe_tf.framework:TFBackend"}
    assert {_name(r) for r in torch["dependencies"]} == {"fe-core", "torch"}
    assert {_name(r) for r in tf["dependencies"]} == {"fe-core", "tensorflow"}


def test_fe_offers_one_extra_per_backend_and_a_cli():
    project = _pyproject("fe")["project"]
    assert {_name(r) for r in project["dependencies"]} == {"fe-core", "tqdm"}
    extras = {k: {_name(r) for r in v} for k, v in project["optional-dependencies"].items()}
    core_extras = {name: {"fe-core"} for name in ("image", "table", "plot", "report", "data", "mlflow", "export",
                                                           "search")}
    assert extras == {"torch": {"fe-torch"}, "tf": {"fe-tf"}, "tf-keras2": {"fe-tf"},
                      "all": {"fe-torch", "fe-tf", "fe-core"},
                      "examples": {"scikit-learn", "matplotlib"}, **core_extras}
    assert project["scripts"] == {"fe": "fe.cli.main:main"}
