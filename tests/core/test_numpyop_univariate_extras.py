"""Without the `image` extra, the univariate ops still import, and building an image op says which extra to install."""
import subprocess
import sys

import pytest

SCRIPT = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # importing it now raises ImportError, as if it were not installed
import fe_core.op.numpyop.univariate as uv
assert uv.Minmax("x", "x").forward([[1, 3]], {{}})[0].tolist() == [0.0, 1.0]  # numpy-only ops still work
try:
    {build}
except ImportError as error:
    print(type(error).__name__ + ": " + str(error))
else:
    print("NO ERROR")
"""


@pytest.mark.parametrize("blocked, build, feature, library", [
    (["albumentations"], "uv.Blur('x', 'x')", "Blur", "albumentations"),
    (["albumentations"], "uv.HistogramMatching('x', 'x', reference_images=[0])", "HistogramMatching",
     "albumentations"),
    (["PIL", "PIL.Image"], "uv.Brightness('x', 'x')", "Brightness", "Pillow (PIL)"),
    (["PIL", "PIL.Image"], "uv.RUA('x', 'x')", "Rotate", "Pillow (PIL)"),  # the first of RUA's default ops
    (["cv2"], "uv.ReadImage('x', 'x')", "ReadImage", "OpenCV (cv2)"),
    (["cv2"], "uv.RandomShapes('x', 'x')", "RandomShapes", "OpenCV (cv2)"),
])
def test_missing_image_extra_is_one_line_naming_the_extra(blocked, build, feature, library):
    result = subprocess.run([sys.executable, "-c", SCRIPT.format(blocked=blocked, build=build)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert line.startswith("MissingExtraError: ") and "\n" not in line
    assert library in line and 'pip install "./packages/fe-core[image]"' in line and '"fe-core[image]"' in line
    assert line.startswith(f"MissingExtraError: {feature} needs {library}")


def test_importing_the_univariate_ops_loads_no_image_library():
    script = ("import sys, fe_core.op.numpyop.univariate; "
              "print([m for m in ('albumentations', 'cv2', 'PIL') if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"
