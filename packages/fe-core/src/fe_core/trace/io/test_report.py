"""`TestReport` and `TestCase`: automated tests of a model, checked during `Estimator.test()`, written as JSON and a
LaTeX/PDF report."""
from __future__ import annotations

import inspect
import json
import os
import time
from datetime import datetime
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from fe_core.checkpoint.hashed_file import write_hashed_file
from fe_core.distributed.communicator import get_communicator, is_main_process
from fe_core.containers import to_list
from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.optional import import_optional
from fe_core.report.latex_document import MISSING_COMPILER, latex_compiler
from fe_core.trace.trace import Trace

__all__ = ["TestCase", "TestReport"]


def _plain(value: Any) -> Any:
    """A JSON-friendly version of `value` (numpy arrays and scalars become lists and numbers)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


@fe_export("fe.trace.io.test_report.TestCase")
class TestCase:
    """This class defines the test case that the TestReport trace will take to perform auto-testing.

    The names of the `criteria` function's parameters are the keys it reads: `lambda acc: acc > 0.9` receives
    `data["acc"]`.

    Args:
        description: A test description.
        criteria: A function to perform the test. For an aggregate test, `criteria` needs to return True when the test
            passes and False when it fails. For a per-instance test, `criteria` needs to return a boolean np.ndarray,
            where entries show corresponding test results (True if the test of that data instance passes; False if it
            fails).
        aggregate: If True, this test is aggregate type and its `criteria` function will be examined at epoch_end. If
            False, this test is per-instance type and its `criteria` function will be examined at batch_end.
        fail_threshold: Threshold of failure instance number to judge the per-instance test as failed or passed. If
            the failure number is above this value, then the test fails; otherwise it passes. It can only be set when
            `aggregate` is equal to False.

    Raises:
        ValueError: If user set `fail_threshold` for an aggregate test.

    Example:
        >>> case = TestCase("accuracy above 0.9", lambda accuracy: accuracy > 0.9)
        >>> case.input_names
        ['accuracy']
    """

    __test__ = False  # not a pytest test class

    def __init__(self,
                 description: str,
                 criteria: Callable[..., Union[bool, np.ndarray]],
                 aggregate: bool = True,
                 fail_threshold: int = 0) -> None:
        if aggregate and fail_threshold:
            raise ValueError(f"TestCase {description!r}: fail_threshold cannot be set for an aggregate test")
        self.description = description
        self.criteria = criteria
        self.aggregate = aggregate
        self.fail_threshold = fail_threshold
        self.input_names = list(inspect.signature(criteria).parameters)
        self.init_result()

    def init_result(self) -> None:
        """Reset the test result."""
        self.result: Optional[bool] = None
        self.input_val: Dict[str, Any] = {}
        self.fail_id: List[Any] = []
        self.fail_number = 0


@fe_export("fe.trace.io.test_report.TestReport", "fe.trace.io.TestReport")
class TestReport(Trace):
    """Automate testing and report generation.

    This trace will evaluate all its `test_cases` during test mode and generate a PDF report and a JSON test result.
    Per-instance tests are checked on every test batch, aggregate tests at the end of the test epoch (where they can
    read metrics). At the end of testing it writes `<save_path>/<title>_TestReport.json` and the LaTeX report
    `<save_path>/<title>_TestReport.tex`, compiled to `.pdf` when a LaTeX compiler is installed (otherwise a line says
    so and the .tex source is kept). In a data-parallel run the per-instance failure counts and ids cover every
    process's samples, and rank 0 writes the report.

    Args:
        test_cases: The test(s) to be run.
        save_path: Where to save the outputs.
        test_title: The title of the test, or None to use the experiment name.
        data_id: Data instance ID key. If provided, then per-instances test will include failing instance IDs.

    Raises:
        ValueError: If `test_cases` holds something other than TestCase objects.
    """

    __test__ = False

    def __init__(self,
                 test_cases: Union[TestCase, List[TestCase]],
                 save_path: str,
                 test_title: Optional[str] = None,
                 data_id: Optional[str] = None) -> None:
        cases = to_list(test_cases)
        if not cases or not all(isinstance(case, TestCase) for case in cases):
            raise ValueError(f"TestReport test_cases must be TestCase objects, got {cases!r}")
        self.instance_cases = [case for case in cases if not case.aggregate]
        self.aggregate_cases = [case for case in cases if case.aggregate]
        inputs = sorted({name for case in cases for name in case.input_names} | ({data_id} if data_id else set()))
        super().__init__(inputs=inputs, mode="test")
        self.save_path = os.path.abspath(os.path.normpath(save_path))
        self.test_title = test_title
        self.data_id = data_id
        self.json_summary: Dict[str, Any] = {}
        self.report_paths: List[str] = []
        self._start = 0.0

    def on_begin(self, data: Data) -> None:
        for case in self.instance_cases + self.aggregate_cases:
            case.init_result()
        self.test_title = self.test_title or getattr(self.system.summary, "name", None) or "test"
        self._start = time.perf_counter()
        self.json_summary = {"title": self.test_title, "timestamp": str(datetime.now()), "execution_time(s)": None,
                             "tests": []}

    def on_batch_end(self, data: Data) -> None:
        for case in self.instance_cases:
            result = np.asarray(case.criteria(*[data[name] for name in case.input_names])).astype(bool).ravel()
            failed = ~result
            case.fail_number += int(failed.sum())
            if self.data_id and failed.any():
                ids = np.asarray(data[self.data_id]).ravel()
                case.fail_id.extend(_plain(ids[failed]))

    def on_epoch_end(self, data: Data) -> None:
        for case in self.aggregate_cases:
            values = [data[name] for name in case.input_names]
            case.input_val = dict(zip(case.input_names, values))
            case.result = bool(np.all(case.criteria(*values)))
        communicator = get_communicator()
        for case in self.instance_cases:
            if communicator.world_size > 1:  # data-parallel: every process tested its own samples
                case.fail_number = int(communicator.all_reduce(np.int64(case.fail_number), "sum"))
                if self.data_id:
                    parts = communicator.all_gather_bytes(json.dumps(_plain(case.fail_id)).encode("utf-8"))
                    case.fail_id = [item for part in parts for item in json.loads(part.decode("utf-8"))]
            case.result = case.fail_number <= case.fail_threshold

    def on_end(self, data: Data) -> None:
        self.json_summary["execution_time(s)"] = time.perf_counter() - self._start
        tests = []
        for case in self.aggregate_cases:
            tests.append({"test_type": "aggregate", "test_description": case.description, "passed": case.result,
                          "inputs": _plain(case.input_val)})
        for case in self.instance_cases:
            entry = {"test_type": "per-instance", "test_description": case.description, "passed": case.result,
                     "fail_threshold": case.fail_threshold, "fail_number": case.fail_number}
            if self.data_id:
                entry["fail_id"] = case.fail_id
            tests.append(entry)
        self.json_summary["tests"] = tests
        if not is_main_process():  # a data-parallel run: rank 0 writes the report
            return
        os.makedirs(self.save_path, exist_ok=True)
        stem = os.path.join(self.save_path, f"{self.test_title}_TestReport")
        text = json.dumps(self.json_summary, indent=4).encode("utf-8")
        write_hashed_file(f"{stem}.json", lambda file: file.write(text))
        print(f"FastEstimator-TestReport: Test results written to {stem}.json")
        self.report_paths = [f"{stem}.json", self._write_latex(stem)]

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: each test case's results so far (the cases themselves come from the script)."""
        return {"cases": [{"result": case.result, "fail_number": case.fail_number, "fail_id": _plain(case.fail_id)}
                          for case in self.aggregate_cases + self.instance_cases]}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`.

        Raises:
            ValueError: If the checkpoint holds a different number of test cases.
        """
        cases = self.aggregate_cases + self.instance_cases
        saved = state.get("cases", [])
        if len(saved) != len(cases):
            raise ValueError(f"TestReport: the checkpoint holds {len(saved)} test cases, the script {len(cases)}")
        for case, values in zip(cases, saved):
            case.result, case.fail_number, case.fail_id = values["result"], int(values["fail_number"]), \
                list(values["fail_id"])

    # ------------------------------------------------------------------ the LaTeX report
    def _write_latex(self, stem: str) -> str:
        pylatex = import_optional("pylatex", extra="report", feature="TestReport")
        from pylatex.utils import bold, escape_latex  # pylint: disable=import-outside-toplevel
        from fe_core.report.latex_document import write_document  # pylint: disable=import-outside-toplevel

        doc = pylatex.Document(geometry_options=["lmargin=2cm", "rmargin=2cm", "bmargin=2cm"])
        doc.packages.append(pylatex.Package("hyperref", options="hidelinks"))
        doc.preamble.append(pylatex.Command("title", self.test_title))
        doc.preamble.append(pylatex.Command("author", "FastEstimator (fe) TestReport"))
        doc.preamble.append(pylatex.Command("date", pylatex.NoEscape(r"\today")))
        doc.append(pylatex.NoEscape(r"\maketitle"))
        tests = self.json_summary["tests"]
        passed = sum(1 for test in tests if test["passed"])
        with doc.create(pylatex.Section("Summary")):
            with doc.create(pylatex.Tabularx("|l|X|", booktabs=False)) as table:
                table.add_hline()
                for name, value in (("Execution time", f"{self.json_summary['execution_time(s)']:.2f} seconds"),
                                    ("Tests performed", str(len(tests))), ("Tests passed", str(passed)),
                                    ("Tests failed", str(len(tests) - passed))):
                    table.add_row((bold(name), value))
                    table.add_hline()
        if self.aggregate_cases:
            with doc.create(pylatex.Section("Aggregate Tests")):
                with doc.create(pylatex.Tabularx("|c|X|l|c|")) as table:
                    table.add_hline()
                    table.add_row([bold(h) for h in ("No.", "Description", "Input value", "Pass")])
                    table.add_hline()
                    for idx, case in enumerate(self.aggregate_cases, start=1):
                        inputs = "; ".join(f"{key}={self._describe(value)}" for key, value in case.input_val.items())
                        table.add_row((idx, escape_latex(case.description), escape_latex(inputs),
                                       "yes" if case.result else "NO"))
                        table.add_hline()
        if self.instance_cases:
            with doc.create(pylatex.Section("Per-Instance Tests")):
                with doc.create(pylatex.Tabularx("|c|X|c|c|c|")) as table:
                    table.add_hline()
                    table.add_row([bold(h) for h in ("No.", "Description", "Threshold", "Failures", "Pass")])
                    table.add_hline()
                    for idx, case in enumerate(self.instance_cases, start=1):
                        table.add_row((idx, escape_latex(case.description), case.fail_threshold, case.fail_number,
                                       "yes" if case.result else "NO"))
                        table.add_hline()
                if self.data_id:
                    for idx, case in enumerate(self.instance_cases, start=1):
                        if case.fail_id:
                            shown = ", ".join(str(i) for i in case.fail_id[:100])
                            more = f" (and {len(case.fail_id) - 100} more)" if len(case.fail_id) > 100 else ""
                            doc.append(pylatex.NoEscape(
                                rf"\noindent Test {idx} failing {escape_latex(self.data_id)}: "
                                f"{escape_latex(shown + more)}\n\n"))
        return write_document(doc, stem, "TestReport")

    def _describe(self, value: Any) -> str:
        value = _plain(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.sanitize_value(value)
        return str(value)

    @staticmethod
    def check_pdf_dependency() -> None:
        """Check dependency of PDF-generating packages.

        Raises:
            OSError: Some required package has not been installed.
        """
        if latex_compiler() is None:
            raise OSError(f"TestReport: {MISSING_COMPILER}")

    @staticmethod
    def sanitize_value(value: Union[int, float]) -> str:
        """Sanitize input value for a better report display.

        Args:
            value: Value to be sanitized.

        Returns:
            Sanitized string of `value`: 3 decimals for magnitudes in [0.001, 1000), else scientific notation.

        Example:
            >>> TestReport.sanitize_value(0.98765), TestReport.sanitize_value(12345.0)
            ('0.988', '1.235e+04')
        """
        if 1000 > abs(value) >= 0.001 or value == 0:
            return f"{value:.3f}"
        return f"{value:.3e}"
