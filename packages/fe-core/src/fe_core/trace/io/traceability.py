"""`Traceability`: a LaTeX/PDF report of a run (its configuration, objects, graphs and models)."""
from __future__ import annotations

import os
import platform
import sys
import time
from datetime import datetime
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from fe_core.distributed.communicator import is_main_process
from fe_core.containers import to_list
from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.op.op import Op
from fe_core.report.traceability import FeSummaryTable, describe_value, object_path
from fe_core.schedule.scheduler import Scheduler
from fe_core.trace.trace import Trace
from fe_core.util.wrappers import FEID

__all__ = ["Traceability", "DataOp"]


@fe_export("fe.trace.io.traceability.DataOp")
class DataOp(Op):
    """An Op that stands for data keys coming from a dataset, used to draw where keys come from in reports.

    Args:
        inputs: Input keys (usually none).
        outputs: The data keys this op stands for.
        mode: Mode(s) it applies to.
        ds_id: Dataset id(s) it applies to.
    """

    def __init__(self,
                 inputs: Union[None, str, Iterable[str]] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)


def _public_attributes(obj: Any, limit: int = 12) -> Dict[str, Any]:
    attributes = {}
    for key, value in vars(obj).items() if hasattr(obj, "__dict__") else []:
        if key.startswith("_") or key == "system" or callable(value) and not hasattr(value, "__dict__"):
            continue
        attributes[key] = value
        if len(attributes) >= limit:
            break
    return attributes


def _summary_table(obj: Any) -> FeSummaryTable:
    summarize = getattr(obj, "fe_summary", None)
    if callable(summarize):
        try:
            tables = summarize()
            if tables:
                return tables[0]
        except Exception:  # pylint: disable=broad-except  (a user's fe_summary must not break the report)
            pass
    return FeSummaryTable(name=type(obj).__name__, fe_id=FEID(id(obj)), target_type=type(obj),
                          path=object_path(obj), kwargs=_public_attributes(obj))


def _model_text(model: Any) -> str:
    summary = getattr(model, "summary", None)
    if callable(summary) and not hasattr(model, "parameters"):  # Keras
        lines: List[str] = []
        try:
            summary(print_fn=lambda line, *args, **kwargs: lines.append(str(line)))
            return "\n".join(lines)
        except Exception:  # pylint: disable=broad-except
            pass
    return str(model)


@fe_export("fe.trace.io.traceability.Traceability", "fe.trace.io.Traceability")
class Traceability(Trace):
    """Automatically generate summary reports of the training.

    At the end of the run the folder `save_path` receives `<name>.tex` (and `<name>.pdf` when a LaTeX compiler is
    installed; without one a line says so and the .tex source is kept), where `<name>` is the experiment's summary name
    (`estimator.fit("name")`), with its graphics in `save_path/resources/`: a training summary (start, duration, epochs,
    final logged values), the logged histories as a plot, the custom graphs traces added (InstanceTracker,
    LabelTracker), one parameter table per object (pipeline, its datasets and ops, network ops and models, traces,
    extra objects: classes decorated with `fe.util.traceable()` show the arguments they were built with), the models'
    architectures as text, and the system configuration. Model diagrams (which FastEstimator draws with graphviz) are
    not drawn.

    Args:
        save_path: Where to save the output files. Note that this will generate a new folder with the given name, into
            which the report and corresponding graphics assets will be written.
        extra_objects: Any extra objects which are not part of the Estimator, but which you want to capture in the
            summary report. One example could be an extra pipeline which performs pre-processing.
    """

    def __init__(self, save_path: str, extra_objects: Any = None) -> None:
        super().__init__(inputs="*", mode="!infer")
        self.save_path = os.path.abspath(os.path.normpath(save_path))
        self.resource_dir = os.path.join(self.save_path, "resources")
        self.extra_objects = to_list(extra_objects)
        self.config_tables: List[FeSummaryTable] = []
        self.report_path: Optional[str] = None
        self._start = 0.0
        self._started_at = ""

    def on_begin(self, data: Data) -> None:
        self._start = time.perf_counter()
        self._started_at = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        self.config_tables = self.get_parameter_summary()

    def get_parameter_summary(self) -> List[Tuple[str, FeSummaryTable]]:
        """One (section, table) pair per object of the run: pipeline and its datasets and ops, network ops and models,
        traces and the extra objects.

        Returns:
            The tables, in report order.
        """
        system = self.system
        found: List[Tuple[str, Any]] = []
        pipeline = getattr(system, "pipeline", None)
        if pipeline is not None:
            found.append(("Pipeline", pipeline))
            for dataset in (getattr(pipeline, "data", None) or {}).values():
                found += [("Datasets", value) for value in (dataset.values() if isinstance(dataset, dict)
                                                            else [dataset])]
            found += [("Pipeline Ops", op) for op in getattr(pipeline, "ops", [])]
        network = getattr(system, "network", None)
        if network is not None:
            found += [("Network Ops", op) for op in getattr(network, "ops", [])]
            found += [("Models", model) for model in getattr(network, "models", [])]
        found += [("Traces", trace) for trace in getattr(system, "traces", None) or [] if trace is not self]
        found += [("Extra Objects", obj) for obj in self.extra_objects]
        tables, seen = [], set()
        for section, obj in found:
            for item in obj.get_all_values() if isinstance(obj, Scheduler) else [obj]:
                if item is None or id(item) in seen:
                    continue
                seen.add(id(item))
                tables.append((section, _summary_table(item)))
        return tables

    def on_end(self, data: Data) -> None:
        from fe_core.optional import import_optional  # pylint: disable=import-outside-toplevel
        pylatex = import_optional("pylatex", extra="report", feature="Traceability")
        from pylatex.utils import escape_latex  # pylint: disable=import-outside-toplevel
        from fe_core.report.latex import Verbatim  # pylint: disable=import-outside-toplevel
        from fe_core.report.latex_document import write_document  # pylint: disable=import-outside-toplevel

        system = self.system
        if not is_main_process():  # a data-parallel run: rank 0 writes the report
            return
        name = getattr(system.summary, "name", None) or "experiment"
        os.makedirs(self.resource_dir, exist_ok=True)
        doc = pylatex.Document(geometry_options=["lmargin=2cm", "rmargin=2cm", "tmargin=2cm", "bmargin=2cm"])
        for package in ("hyperref", "graphicx", "longtable"):
            doc.packages.append(pylatex.Package(package))
        doc.preamble.append(pylatex.Command("title", f"{name}: Traceability Report"))
        doc.preamble.append(pylatex.Command("date", pylatex.NoEscape(r"\today")))
        doc.append(pylatex.NoEscape(r"\maketitle"))
        doc.append(pylatex.NoEscape(r"\tableofcontents"))

        with doc.create(pylatex.Section("Training Summary")):
            rows = [("Experiment", name), ("Start time", self._started_at),
                    ("Execution time", f"{time.perf_counter() - self._start:.2f} seconds"),
                    ("Epochs completed", str(getattr(system, "epoch_idx", ""))),
                    ("Global steps", str(getattr(system, "global_step", "")))]
            for mode, keys in getattr(system.summary, "history", {}).items():
                for key, steps in keys.items():
                    if steps:
                        last_step = max(steps)
                        rows.append((f"{mode}: {key}", describe_value(steps[last_step])))
            self._table(doc, pylatex, escape_latex, rows)
            for path, caption in self._plots(name):
                with doc.create(pylatex.Figure(position="h!")) as figure:
                    figure.add_image(os.path.relpath(path, self.save_path), width=pylatex.NoEscape(r"0.9\linewidth"))
                    figure.add_caption(caption)
        with doc.create(pylatex.Section("Parameters")):
            section = None
            for group, table in self.config_tables:
                if group != section:
                    section = group
                    doc.append(pylatex.Subsection(group))
                table.render_table(doc)
        models = list(getattr(getattr(system, "network", None), "models", []) or [])
        if models:
            with doc.create(pylatex.Section("Models")):
                for model in models:
                    with doc.create(pylatex.Subsection(str(getattr(model, "model_name", type(model).__name__)))):
                        doc.append(Verbatim(_model_text(model)))
        with doc.create(pylatex.Section("System Configuration")):
            self._table(doc, pylatex, escape_latex, self._system_rows())
        self.report_path = write_document(doc, os.path.join(self.save_path, name), "Traceability")

    def get_state(self) -> Dict[str, Any]:
        """Nothing to checkpoint: the report is written from the run's System at its end."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Nothing to restore (see `get_state`)."""

    def _plots(self, name: str) -> List[Tuple[str, str]]:
        plots = []
        try:
            from fe_core.summary.plot import plot_summaries  # pylint: disable=import-outside-toplevel
            summary = self.system.summary
            if any(steps for keys in summary.history.values() for steps in keys.values()):
                path = os.path.join(self.resource_dir, f"{name}_logs.png")
                plot_summaries(summary, path)
                plots.append((path, "Training logs"))
            for graph_name, graphs in getattr(self.system, "custom_graphs", {}).items():
                if graphs:
                    path = os.path.join(self.resource_dir, f"{name}_{graph_name}.png")
                    plot_summaries(graphs, path)
                    plots.append((path, graph_name.replace("_", " ")))
        except (ImportError, ValueError) as err:
            print(f"FastEstimator-Traceability: graphs were left out of the report ({err})")
        return plots

    @staticmethod
    def _system_rows() -> List[Tuple[str, str]]:
        rows = [("Python", sys.version.split()[0]), ("Platform", platform.platform()), ("numpy", np.__version__)]
        for module in ("fe_core", "fe_torch", "fe_tf", "torch", "tensorflow", "keras"):
            loaded = sys.modules.get(module)
            if loaded is not None:
                version = getattr(loaded, "__version__", None) or getattr(
                    sys.modules.get(f"{module}.__about__"), "__version__", "")
                rows.append((module, str(version)))
        return rows

    @staticmethod
    def _table(doc: Any, pylatex: Any, escape_latex: Any, rows: List[Tuple[str, str]]) -> None:
        with doc.create(pylatex.LongTable("|p{0.3\\linewidth}|p{0.6\\linewidth}|")) as table:
            table.add_hline()
            for key, value in rows:
                table.add_row((escape_latex(str(key)), escape_latex(str(value))))
                table.add_hline()
