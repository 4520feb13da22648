"""Damaged dump folders through the index, `ls --check` and the headless commands, run in this
process through `workbench.cli.main`.

A small dump is copied from the corpus (an XLA module with its snapshot, an mlir_replay trace,
a print-ir log with its action log, a crash reproducer, a report); hypothesis damages one of
its files (tests/helpers/damage.py) and every command that reads that file runs on it. Each
must exit with a status it documents, print no traceback, name the damaged file when it gives
up on it, keep listing everything else, and leave the folder exactly as it was (its manifest:
names, sizes, times, contents).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.helpers.cli import run_cli
from tests.helpers.damage import damaged, manifest
from workbench.cli import main
from workbench.index import scan
from workbench.model import Module

CORPUS = Path(__file__).parent / "data" / "corpus"
LN = "module_0010.jit_ln"
TRACE = "module_0000.jit_f.mlir-trace.pb"
TRACE_SNAPSHOT = "module_0000.jit_f.snapshot.0.pb"
LOG = "print-ir-after-change.log"

# Exit statuses the commands document (README, `--help`).
# 5: something could not be judged (a damaged step or snapshot among them).
STATUSES = {"ls": {0}, "show": {0, 2}, "diff": {0, 1, 2}, "replay": {0, 1, 2, 5},
            "bisect": {0, 1, 2, 5},
            "triage": {0, 1, 5}, "mlir-replay": {0, 1, 2}, "actions": {0, 2},
            "report": {0, 1, 2}}


SOURCES = {"xla": "xla/layernorm", "trace": "mlir/mlir-trace-broken",
           "loops": "mlir/iree-opt-to-loops", "crash": "mlir/crash-reproducer",
           "reports": "mlir/iree-opt-list-reports"}


def corpus_file(file: str) -> Path:
    """The corpus original of a dump file (`xla/...` is `xla/layernorm/...`)."""
    area, _, rest = file.partition("/")
    return CORPUS / SOURCES[area] / rest


def diff_with_original(root: Path, file: str) -> list[str]:
    return ["diff", str(root / file), str(corpus_file(file))]


def copy_corpus(dest: Path) -> None:
    """The dump the tests damage: five areas, each a folder of real files."""
    layernorm = CORPUS / "xla" / "layernorm"
    (dest / "xla").mkdir(parents=True)
    for path in layernorm.glob(f"{LN}.*"):
        shutil.copy(path, dest / "xla")
    shutil.copytree(layernorm / LN, dest / "xla" / LN)
    shutil.copytree(CORPUS / "mlir" / "mlir-trace-broken", dest / "trace")
    (dest / "loops").mkdir()
    for name in (LOG, "actions.log"):
        shutil.copy(CORPUS / "mlir" / "iree-opt-to-loops" / name, dest / "loops")
    (dest / "crash").mkdir()
    shutil.copy(CORPUS / "mlir" / "crash-reproducer" / "reproducer.mlir", dest / "crash")
    (dest / "reports").mkdir()
    shutil.copy(CORPUS / "mlir" / "iree-opt-list-reports" / "reports-list.log", dest / "reports")


@dataclass(frozen=True)
class Area:
    """Files of one area to damage, and the commands that read them (argv builders taking
    the dump's root and the damaged file, relative to the root)."""

    name: str
    targets: tuple[str, ...]
    commands: tuple[Callable[[Path, str], list[str]], ...]


def _step_of(root: Path, file: str) -> str:
    """The timeline index of the XLA step held in `file` (1 when it is no step's)."""
    module = scan(root / "xla").find_module("module_0010")
    for step in module.steps:
        if any(s is not None and f"xla/{s.file}" == file for s in (step.text, step.proto)):
            return str(max(step.index, 1))
    return "1"


FUSION_STEP = "0028.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper"
XLA_TARGETS = (
    *(f"xla/{LN}.{suffix}" for suffix in (
        "before_optimizations.txt", "before_optimizations.hlo.pb", f"{FUSION_STEP}.txt",
        f"{FUSION_STEP}.hlo.pb", "cpu_after_optimizations.txt", "cpu_after_optimizations.hlo.pb",
        "snapshot.-17687811.pb")),
    f"xla/{LN}/module.mlir",
)
AREAS = [
    Area("xla", XLA_TARGETS, (
        lambda root, file: ["show", str(root / "xla"), "module_0010", "--changed", "--json"],
        lambda root, file: ["diff", str(root / "xla"), "module_0010", _step_of(root, file)],
        diff_with_original,
        lambda root, file: ["replay", str(root / "xla"), "module_0010", "--json"],
        lambda root, file: ["bisect", str(root / "xla"), "module_0010", "--json"],
        lambda root, file: ["triage", str(root / "xla"), "--json", "--jobs", "0"],
    )),
    Area("trace", (f"trace/{TRACE}", f"trace/{TRACE_SNAPSHOT}"), (
        lambda root, file: ["mlir-replay", f"--mlir-compilation-trace={root / 'trace' / TRACE}",
                            f"--hlo-snapshot={root / 'trace' / TRACE_SNAPSHOT}", "--json"],
        lambda root, file: ["triage", str(root / "trace"), "--json", "--jobs", "0"],
        diff_with_original,
    )),
    Area("loops", (f"loops/{LOG}", "loops/actions.log"), (
        lambda root, file: ["show", str(root / "loops"), LOG, "--json"],
        lambda root, file: ["diff", str(root / "loops"), LOG, "3"],
        diff_with_original,
        lambda root, file: ["replay", str(root / "loops"), LOG, "--fake-data", "--json"],
        lambda root, file: ["actions", str(root / "loops" / "actions.log"), "--json"],
        lambda root, file: ["report", str(root / "loops" / LOG), "--json"],
    )),
    Area("crash-and-reports", ("crash/reproducer.mlir", "reports/reports-list.log"), (
        lambda root, file: ["show", str(root / "crash"), "reproducer.mlir", "--json"],
        lambda root, file: ["replay", str(root / "crash"), "reproducer.mlir", "--fake-data",
                            "--json"],
        lambda root, file: ["report", str(root / "reports" / "reports-list.log"), "--json"],
        diff_with_original,
    )),
]
BUDGETS = {"xla": 25, "trace": 20, "loops": 25, "crash-and-reports": 15}


@pytest.fixture(scope="session")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    copy_corpus(root)
    return root


@cache
def listing(root: Path) -> dict[str, Module]:
    """Module key -> module, of the undamaged dump."""
    return {module.key: module for module in scan(root).modules}




def check_command(argv: list[str], damaged_file: str, capsys: pytest.CaptureFixture[str]
                  ) -> tuple[int, str]:
    """Run one command and check what every command promises on bad input."""
    status, out, err = run_cli(capsys, *argv)
    command = argv[0]
    note(f"{' '.join(argv)} -> {status}\n{err[-2000:]}")
    assert status in STATUSES[command], (argv, status, err)
    assert "Traceback" not in err and "Traceback" not in out
    if status == 2:
        assert err.startswith(f"workbench {command}: "), err
    if "--json" in argv and status != 2:
        json.loads(out)
    name = Path(damaged_file).name
    if status == 2 and any(arg.endswith(f"/{name}") for arg in argv):
        assert name in err, err  # a command given the file says it is the one it gave up on
    return status, out


def check_damaged_dump(root: Path, pristine_root: Path, area: Area, file: str,
                       capsys: pytest.CaptureFixture[str]) -> None:
    before = manifest(root)
    _, out = check_command(["ls", str(root), "--check", "--json"], file, capsys)
    listed = json.loads(out)
    # Nothing else is lost: the modules of the other areas are listed as before.
    others = {key: module for key, module in listing(pristine_root).items()
              if not key.startswith(f"{file.split('/')[0]}/")}
    now = {module["key"]: module for module in listed["modules"]}
    for key, module in others.items():
        assert key in now, key
        assert [s["file"] for s in now[key]["steps"]] == [s.file for s in module.steps]
    for problem in listed["problems"]:
        assert problem["file"] == "." or (root / problem["file"]).exists(), problem
        assert problem["reason"]
    if (root / file).stat().st_size == 0 and file.endswith((".pb", ".txt")):
        assert {"file": file, "reason": "empty file (still being written?)"} in \
            listed["problems"]
    for command in area.commands:
        check_command(command(root, file), file, capsys)
    assert manifest(root) == before  # nothing was written into the dump


@pytest.mark.parametrize("extended", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["quick", "extended"])
@pytest.mark.parametrize("area", AREAS, ids=lambda a: a.name)
def test_damaged_dump(area: Area, extended: bool, pristine: Path,
                      tmp_path_factory: pytest.TempPathFactory,
                      capsys: pytest.CaptureFixture[str]) -> None:
    budget = BUDGETS[area.name] * (40 if extended else 1)

    @settings(max_examples=budget, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def example(data: st.DataObject) -> None:
        file = data.draw(st.sampled_from(area.targets), label="file")
        original = (pristine / file).read_bytes()
        damage = data.draw(damaged(original, text=not file.endswith(".pb"),
                                   proto=file.endswith(".pb")))
        note(f"{file}: {damage.what}")
        root = tmp_path_factory.mktemp(area.name)
        shutil.copytree(pristine, root, dirs_exist_ok=True)
        (root / file).write_bytes(damage.data)
        check_damaged_dump(root, pristine, area, file, capsys)
        shutil.rmtree(root)

    example()


@pytest.mark.parametrize(("row", "damaged_row", "reason"), [
    # a timing row that lost its percentage
    ("    0.4078 ( 32.3%)    0.2766 ( 39.2%)  Pipeline Collection : ['hal.executable']",
     "    0.4078    0.2766 ( 39.2%)  Pipeline Collection : ['hal.executable']",
     r"timing report at line \d+: line (\d+) is not a row \(\"0\.4078    0\.2766"),
    # a statistic whose value was garbled
    ("    (S) 0 num-dce'd - Number of operations DCE'd",
     "    (S) x num-dce'd - Number of operations DCE'd",
     r"statistics report at line 2: line (\d+) is not a statistic \(\"\(S\) x num-dce'd"),
])
def test_report_with_a_malformed_row(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     row: str, damaged_row: str, reason: str) -> None:
    """The report command says which line is wrong and keeps the rest (exit status 1 for
    the tables; the JSON carries the problem)."""
    text = (CORPUS / "mlir" / "iree-opt-list-reports" / "reports-list.log").read_text()
    lines = text.splitlines()
    at = lines.index(row)
    lines[at] = damaged_row
    report = tmp_path / "reports-list.log"
    report.write_text("\n".join(lines) + "\n")
    assert main(["report", str(report), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    (problem,) = payload["problems"]
    assert problem["file"] == str(report)
    found = re.match(reason, problem["reason"])
    assert found is not None, problem["reason"]
    assert int(found.group(1)) == at + 1
    assert payload["timing"] and payload["statistics"]
    assert main(["report", str(report)]) == 1
    printed = " ".join(capsys.readouterr().out.split())  # wrapped to the terminal's width
    assert " ".join(f"problem: {problem['reason']}".split()) in printed
