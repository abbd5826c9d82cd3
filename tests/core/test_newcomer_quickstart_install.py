"""Issue 30 item 8: the README Quickstart installs a tested torch (the constraints file) and says how to get the CPU
build, instead of whatever the index resolves (a fresh venv got a newer torch with ~5.8 GB of CUDA wheels); the pinned
version lies in the range fe-torch declares."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _quickstart() -> str:
    return (ROOT / "README.md").read_text().split("## Quickstart", 1)[1].split("\n## ", 1)[0]


def _version(text: str):
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_the_install_command_pins_the_tested_versions():
    section = _quickstart()
    (install,) = [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()
                  if line.startswith("pip install ")]
    assert "-c tools/constraints.txt" in install
    assert (ROOT / "tools" / "constraints.txt").exists()


def test_the_quickstart_says_how_to_get_the_cpu_build():
    section = _quickstart()
    assert "https://download.pytorch.org/whl/cpu" in section
    assert "tools/constraints/" in section


def test_the_pinned_torch_is_within_fe_torch_s_declared_range():
    pinned = re.search(r"^torch==(\S+)", (ROOT / "tools" / "constraints.txt").read_text(), re.M).group(1)
    pyproject = (ROOT / "packages" / "fe-torch" / "pyproject.toml").read_text()
    spec = re.search(r'"torch([^"]*)"', pyproject).group(1)
    for clause in filter(None, (part.strip() for part in spec.split(","))):
        operator, bound = re.match(r"(>=|<=|<|>|==|~=)\s*(\S+)", clause).groups()
        have, limit = _version(pinned), _version(bound)
        assert {">=": have >= limit, "<=": have <= limit, "<": have < limit, ">": have > limit,
                "==": have == limit, "~=": have >= limit}[operator], f"torch {pinned} is outside {spec}"
