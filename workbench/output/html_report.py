"""A triage or a bisection as one self-contained HTML file a colleague opens in a browser.

Jinja2 renders `templates/report.html.j2` with autoescaping on: every string from a dump
(module, pass and file names, IR, values) is escaped, never markup. The plots are drawn by
matplotlib as SVG and embedded as `data:` images: an image cannot run script, the text in it
is drawn as paths (no font, nothing fetched), and the file needs no network to be viewed.
Both libraries are the `report` extra; `require_report_libraries` says what is missing.
"""

from __future__ import annotations

import base64
import io
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from workbench.replay.judge.outcome import KIND_ORDER

if TYPE_CHECKING:
    from workbench.output.triage_report import ReportEntry

EXTRA_HINT = "pip install 'dump-triage-workbench[report]'"
DETAILS = 50  # entries shown in full (plots, values, diff); the table lists every one
COLOURS = {"ok": "#2e7d32", "mismatch": "#c62828", "bound": "#1565c0", "culprit": "#ef6c00"}


class ReportUnavailable(RuntimeError):
    """The report's libraries are not installed; the message says which and how."""


def require_report_libraries() -> None:
    """Raise `ReportUnavailable` unless Jinja2 and matplotlib import."""
    missing = []
    for module, package in (("jinja2", "Jinja2"), ("matplotlib", "matplotlib")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise ReportUnavailable(f"--html needs {' and '.join(missing)} (the report extra): "
                                f"{EXTRA_HINT}")


def _svg_image(figure: Any) -> str:
    """`figure` as a `data:` URI of its SVG (the figure is closed)."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display: draw into files only
    # Text as paths: the image needs no font where it is viewed, and a label is never text
    # a browser could interpret. Dump strings stay out of the plots anyway (tables hold
    # them), because matplotlib would read `$...$` in a pass name as math.
    matplotlib.rcParams["svg.fonttype"] = "path"
    matplotlib.rcParams["svg.hashsalt"] = "workbench"  # the same report for the same results
    import matplotlib.pyplot as plt

    return plt


def timeline_plot(entry: ReportEntry) -> str | None:
    """Each evaluated step's worst error (and the bound it was judged against) along the
    pass timeline, the culprit marked; None when no step has a number."""
    points = [p for p in entry.points if p.error is not None]
    if not points:
        return None
    plt = _pyplot()
    positive = [v for p in points for v in (p.error, p.bound)
                if v is not None and 0 < v < math.inf]
    floor = min(positive) / 10 if positive else 1e-12
    top = max(positive) * 10 if positive else 1.0
    figure, axes = plt.subplots(figsize=(8, 3.2))
    for status, colour in (("ok", COLOURS["ok"]), ("mismatch", COLOURS["mismatch"])):
        chosen = [p for p in points if p.status.startswith(status) and p.error != math.inf]
        axes.scatter([p.index for p in chosen], [max(p.error or 0.0, floor) for p in chosen],
                     color=colour, label=f"worst error, {status}", zorder=3)
    unmeasurable = [p for p in points if p.error == math.inf]
    if unmeasurable:
        axes.scatter([p.index for p in unmeasurable], [top] * len(unmeasurable), marker="^",
                     s=80, color=COLOURS["mismatch"], zorder=3,
                     label="NaN or infinity where a number was expected (drawn at the top)")
    bounded = [p for p in points if p.bound is not None]
    if bounded:
        axes.scatter([p.index for p in bounded], [max(p.bound or 0.0, floor) for p in bounded],
                     marker="_", s=300, color=COLOURS["bound"],
                     label="rounding error bound", zorder=2)
    if entry.culprit is not None:
        axes.axvline(entry.culprit.index, color=COLOURS["culprit"], linestyle="--",
                     label=f"culprit: step {entry.culprit.index}")
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_yscale("log")
    axes.set_ylim(floor / 2, top * 3)
    axes.set_xlabel("step (position in the pass timeline)")
    axes.set_ylabel("absolute error")
    axes.set_title("Worst error of each evaluated step (0 drawn at the bottom)")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize="small", loc="upper left")
    return _svg_image(figure)


def histogram_plot(entry: ReportEntry) -> str | None:
    """How far off the culprit step's elements are, by power of ten; None without numbers."""
    histogram = entry.errors
    if histogram is None:
        return None
    plt = _pyplot()
    labels = (["0"] if histogram.exact else []) + [f"1e{k}" for k, _ in histogram.decades]
    counts = ([histogram.exact] if histogram.exact else []) + [n for _, n in histogram.decades]
    if histogram.not_finite:
        labels.append("NaN/inf")
        counts.append(histogram.not_finite)
    figure, axes = plt.subplots(figsize=(8, 3.2))
    axes.bar(range(len(counts)), counts, color=COLOURS["mismatch"])
    axes.set_xticks(range(len(counts)), labels)
    axes.set_xlabel("|actual - expected|, from this power of ten up to the next")
    axes.set_ylabel("elements")
    axes.set_title("Errors at the culprit step (outputs that mismatch)")
    check = None if entry.culprit_comparison is None else entry.culprit_comparison.bound
    if check is not None and check.bound > 0:
        decade = math.floor(math.log10(check.bound))
        if f"1e{decade}" in labels:
            axes.axvline(labels.index(f"1e{decade}"), color=COLOURS["bound"], linestyle="--",
                         label=f"bound at the worst element: {check.bound:.3g}")
            axes.legend(fontsize="small")
    return _svg_image(figure)


def render_html(title: str, root: str, command: str, entries: list[ReportEntry]) -> str:
    """The report: a summary table of every entry, then each entry that did not pass (and
    every entry when all passed), up to `DETAILS` of them, with its plots, values and diff."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("workbench.output", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True)
    ordered = sorted(entries, key=lambda e: (KIND_ORDER[e.status], e.module,
                                             e.execution or ""))
    counts = {str(kind): sum(1 for e in entries if e.status == kind) for kind in KIND_ORDER}
    shown = [e for e in ordered if str(e.status) != "ok"] or ordered
    details = [{"entry": e, "timeline": timeline_plot(e), "histogram": histogram_plot(e)}
               for e in shown[:DETAILS]]
    return environment.get_template("report.html.j2").render(
        title=title, root=root, command=command, entries=ordered, counts=counts,
        details=details, left_out=len(shown) - len(details),
        made=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
