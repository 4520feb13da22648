"""`workbench ls` output: the streamed `--json` text, the plain table, what it imports, and
steps made on demand being the steps made at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.index import scan
from workbench.model import Dump, Execution, Module, Problem, Step
from workbench.output.json_shapes import dump_json, write_dump_json

CORPUS = Path(__file__).parent.parent / "data" / "corpus"
CORPUS_FOLDERS = sorted({p.parent for p in CORPUS.rglob("*") if p.is_file()} | {CORPUS})


def streamed(dump: Dump) -> str:
    parts: list[str] = []
    write_dump_json(dump, parts.append)
    return "".join(parts)


@pytest.mark.parametrize("folder", CORPUS_FOLDERS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_streamed_json_is_json_dumps_of_the_shape(folder: Path) -> None:
    assert streamed(scan(folder)) == json.dumps(dump_json(scan(folder)))


def test_streamed_json_writes_every_scalar_as_json_dumps() -> None:
    # What the corpus folders do not hold: floats, flags, odd names, problems, other files.
    steps = [
        Step(0, "in\u00e9", "mlir", "input", changed=True, timing_s=0.1, pair=1,
             scope="func.func @\"q\\\"\"", options="{a=1}", argument="cse", target="t"),
        Step(1, "p\udcff", "hlo", "pass", changed=False, timing_s=float("nan"), xla_step=12,
             pipeline="\n"),
        Step(2, "x", "hlo", "after", timing_s=1e300 * 10),
    ]
    module = Module("m\u2603", "n", "xla", steps=steps,
                    executions=[Execution("e", "f.pb")], key="k")
    dump = Dump(root=Path("/r\u00fc"), modules=[module, Module("b", "", "mlir")],
                problems=[Problem("a\tb", "why \"not\"")], others=["o", "p\udcfe"])
    assert streamed(dump) == json.dumps(dump_json(dump))
    assert streamed(Dump(root=Path("."))) == json.dumps(dump_json(Dump(root=Path("."))))


def test_deferred_steps_equal_steps_made_at_once(corpus: Path) -> None:
    dump = scan(corpus / "xla")
    for module in dump.modules:
        count, per_pass, key = module.step_count, module.pass_step_count, module.steps_key()
        steps = module.steps  # made now, from the records
        assert (count, per_pass) == (len(steps), sum(1 for s in steps if s.kind == "pass"))
        assert steps is module.steps
        made_at_once = Module(module.id, module.name, module.format, list(steps),
                              module.executions, module.artifacts, module.key)
        assert made_at_once.step_count == count and module == made_at_once
        assert key != made_at_once.steps_key() or not steps  # deferred: the files, not steps


def test_setting_steps_drops_the_deferred_ones(corpus: Path) -> None:
    module = scan(corpus / "xla" / "layernorm").modules[0]
    module.steps = []
    assert module.steps == [] and module.step_count == 0 and module.steps_key() == ()


def test_plain_table_when_not_a_terminal(corpus: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    assert main(["ls", str(corpus / "xla" / "layernorm")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["module", "name", "format", "steps", "per-pass", "executions",
                                "artifacts"]
    dump = scan(corpus / "xla" / "layernorm")
    for line, module in zip(lines[2:], dump.modules, strict=False):
        per_pass = sum(1 for s in module.steps if s.kind == "pass")
        assert line.split() == [module.key, module.name, "xla", str(len(module.steps)),
                                str(per_pass), str(len(module.executions)),
                                str(len(module.artifacts))]
    assert lines[2 + len(dump.modules)].startswith(f"{len(dump.modules)} modules, ")


HEAVY = ("numpy", "google.protobuf", "xdsl", "textual")


def heavy_imports(argv: list[str]) -> list[str]:
    """Which of HEAVY `workbench ARGV` imports, run in a fresh interpreter."""
    code = (
        "import io, sys, contextlib\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main({argv!r})\n"
        f"print(status, *(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    status, *imported = done.stdout.split()
    assert status == "0", done.stderr
    return imported


@pytest.mark.parametrize("flags", [[], ["--json"]])
def test_ls_imports_no_numpy_protobuf_xdsl_or_textual(corpus: Path, flags: list[str]) -> None:
    assert heavy_imports(["ls", str(corpus / "xla"), *flags]) == []
    # The probe can fail: a folder of mlir-trace protos needs protobuf to count its steps.
    traces = str(corpus / "mlir" / "mlir-trace-clean")
    assert heavy_imports(["ls", traces, *flags]) == ["google.protobuf"]
