"""`triage --html` and `bisect --html`: one self-contained file a browser shows with the
verdicts, the culprit, the plots and the culprit pass's diff; nothing from a dump as markup.

The reports of the shipped example and of a planted bf16 bug are opened in headless Chromium:
the screenshot must show the plot and the culprit, and the page log no console message (a
blocked script or fetch logs one: `test_the_console_check_sees_a_blocked_script`).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.chromium import CHROMIUM, colour_pixels, view
from tests.helpers.cli import run_cli
from tests.helpers.planting import plant
from workbench.cli import main
from workbench.output.html_report import COLOURS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "layernorm-broken-fusion"
GPT = ROOT / "tests" / "data" / "noise" / "gpt_adamw_mini"
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run "
                                    "installs it)")


def _triage_report(dump: Path, out: Path) -> Path:
    html = out / "report.html"
    status = main(["triage", str(dump), "--no-cache", "--jobs", "0", "--localize",
                   "--html", str(html)])
    assert status == 1  # a mismatch
    return html


@pytest.fixture(scope="module")
def example_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _triage_report(EXAMPLE, tmp_path_factory.mktemp("example"))


@pytest.fixture(scope="module")
def bf16_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bf16 training step (a GPT-like decoder's AdamW step, tests/data/noise) with exp ->
    expm1 planted from XLA step 0008 (float-normalization-bf16) on."""
    top = tmp_path_factory.mktemp("bf16")
    planted = top / "gpt"
    assert plant(GPT, planted, "module_0022", 8, "exponential", "exponential-minus-one")
    return _triage_report(planted, top)


def test_the_example_report_names_the_culprit_with_plots_and_diff(example_report: Path) -> None:
    html = example_report.read_text()
    # The verdict of every module x execution: 8 ok, the layernorm's mismatch.
    assert html.count('<td class="status-ok">ok</td>') == 8
    assert html.count('<td class="status-mismatch">mismatch</td>') == 1
    assert "step 30, pass <code>fusion</code> (XLA step 0028)" in html
    assert "<code>rsqrt.2</code> (sqrt, <code>jit(ln)/rsqrt</code>)" in html
    assert "at <code>program.py:4</code>" in html
    # The two plots, inline; nothing to fetch at view time.
    assert len(re.findall(r'<img class="plot" [^>]*src="data:image/svg\+xml;base64,', html)) == 2
    assert not re.search(r'(src|href)="(https?:|//)', html)
    # The culprit pass's diff, normalized as `diff` does: the fused sqrt among its lines.
    assert re.search(r'class="diff-plus">\+\s+ROOT %rsqrt\.2 = f32\[6\]\{0\} sqrt', html)
    # The values that differ, as the comparison found them.
    assert re.search(r'<td class="mono">-1\.527\d*</td><td class="mono">-0\.163\d*</td>', html)
    assert "48 of 48 elements differ" in html


@needs_chromium
def test_the_example_report_in_chromium(example_report: Path, tmp_path: Path) -> None:
    page = view(example_report, tmp_path)
    assert page.console == []
    assert "rsqrt.2" in page.dom and "Worst error along the pass timeline" in page.dom
    # The screenshot shows the culprit (its box and the plot's line are orange) and the plot
    # (the rounding error bound's marks are blue, drawn only in the plot).
    assert colour_pixels(page.screenshot, COLOURS["culprit"]) > 500
    assert colour_pixels(page.screenshot, COLOURS["bound"]) > 30
    assert colour_pixels(page.screenshot, COLOURS["mismatch"]) > 100


def test_the_bf16_report_names_the_planted_pass(bf16_report: Path) -> None:
    html = bf16_report.read_text()
    assert "pass <code>float-normalization-bf16</code> (XLA step 0008)" in html
    assert html.count('<td class="status-mismatch">mismatch</td>') == 1
    # Its timeline and the histogram of its 44930 output elements' errors.
    assert len(re.findall(r'<img class="plot" [^>]*src="data:image/svg\+xml;base64,', html)) == 2
    assert re.search(r"\d+ of 44930 elements differ", html)


@needs_chromium
def test_the_bf16_report_in_chromium(bf16_report: Path, tmp_path: Path) -> None:
    page = view(bf16_report, tmp_path)
    assert page.console == []
    assert colour_pixels(page.screenshot, COLOURS["culprit"]) > 500
    assert colour_pixels(page.screenshot, COLOURS["bound"]) > 30


@needs_chromium
def test_the_console_check_sees_a_blocked_script(tmp_path: Path) -> None:
    """What the console check rests on: a script the policy blocks is logged."""
    page = tmp_path / "blocked.html"
    page.write_text('<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
                    'content="default-src \'none\'"></head><body><script>1</script></body>'
                    '</html>')
    assert any("Content Security Policy" in line for line in view(page, tmp_path).console)


MARKUP = "jit_ln<script>alert(1)<img src=x onerror=alert(2)>&amp;"


def _markup_dump(top: Path) -> Path:
    """The example's layernorm module under a name holding a script and an image tag."""
    root = top / "dump"
    root.mkdir()
    for source in EXAMPLE.iterdir():
        if source.name.startswith("module_0010.") and source.is_file():
            shutil.copyfile(source, root / source.name.replace("jit_ln", MARKUP, 1))
    return root


def test_a_module_named_with_markup_is_shown_as_text(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    dump = _markup_dump(tmp_path)
    html_file = tmp_path / "report.html"
    status, _, err = run_cli(capsys, "bisect", dump, "module_0010", "--html", html_file)
    assert status == 1, err
    html = html_file.read_text()
    escaped = "jit_ln&lt;script&gt;alert(1)&lt;img src=x onerror=alert(2)&gt;&amp;amp;"
    assert escaped in html
    assert "<script" not in html and "<img src=x" not in html
    if CHROMIUM is not None:
        page = view(html_file, tmp_path / "view")
        assert page.console == []
        # No element was made of the name (the browser would write it `<img src="x" ...`).
        assert "<script" not in page.dom and '<img src="x"' not in page.dom
        assert escaped in page.dom  # the browser's DOM holds the name as text


def test_the_report_refuses_a_path_inside_the_dump(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "dump"
    shutil.copytree(EXAMPLE, dump)
    status, _, err = run_cli(capsys, "triage", dump, "--no-cache", "--html", dump / "r.html")
    assert status == 2 and "never writes into a dump" in err
    assert not (dump / "r.html").exists()


def test_without_the_report_extra_the_error_says_what_to_install(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    status, _, err = run_cli(capsys, "bisect", EXAMPLE, "module_0010", "--html",
                             tmp_path / "r.html")
    assert status == 2
    assert "--html needs matplotlib" in err and "[report]" in err
    assert not (tmp_path / "r.html").exists()


def test_a_large_triage_shows_the_first_entries_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry is in the table; past `DETAILS` the sections (plots, diff) are left out,
    and the report says how many."""
    from workbench.output import html_report
    from workbench.output.triage_report import ReportEntry
    from workbench.replay.judge.outcome import Kind

    monkeypatch.setattr(html_report, "DETAILS", 2)
    entries = [ReportEntry(f"module_{i:04d}", "jit_f", "snapshot.1", Kind.MISMATCH, "differs")
               for i in range(3)]
    html = html_report.render_html("t", "dump", "workbench triage dump", entries)
    assert html.count('<td class="status-mismatch">mismatch</td>') == 3
    assert html.count('<section class="entry">') == 2
    assert "1 more module x execution(s) are listed in the table but not shown in full" in html
