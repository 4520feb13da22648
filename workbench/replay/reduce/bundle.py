"""A bug report an XLA developer can run, made from an HLO reduction: the folder
`bug-report/` inside the reduced folder (and, asked for, a `.tar.gz` of it beside).

It holds the reduced module before and after the culprit pass as HLO text (`before.hlo`,
`after.hlo`: XLA's own parser reads them), their inputs as the literals file
`run_hlo_module --input_literals_file` reads (`inputs.pb`, an `xla.RunHloModuleLiterals`)
and as numpy arrays (`inputs.npz`, with the expected value), a script that runs both with
XLA CPU through JAX (`run_with_jax.py`), the XLA flags of the original compilation when the
dump has them (`debug_options.txt`), and a README: what was observed against what was
expected, the exact `run_hlo_module` and `hlo-opt` command lines (the interpreter as the
reference platform), and what the dump says of its producer and versions.
"""

from __future__ import annotations

import re
import shlex
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from workbench.destinations import OutputFolder, check_file, write_file_atomically
from workbench.model import Module, Source
from workbench.replay.localize.result import Localization, LocalizeError
from workbench.replay.reduce.reduction import Reduction

BUNDLE = "bug-report"
FILES = ("README.md", "before.hlo", "after.hlo", "inputs.pb", "inputs.npz", "run_with_jax.py")


@dataclass
class Bundle:
    folder: Path
    files: list[str]
    archive: Path | None = None


@dataclass(frozen=True)
class Provenance:
    """What the dump says of where the module came from (None: it does not say)."""

    producer: str
    platform: str | None
    versions: list[str]  # lines of the dump's files that name a version
    debug_options: str | None  # the XLA flags of the compilation, as the dump wrote them


_VERSION = re.compile(r"version", re.IGNORECASE)


def provenance(root: Path, module: Module, snapshot_platform: str = "") -> Provenance:
    """The producer, platform, version lines and XLA flags the dump records for `module`."""
    from workbench.sources import ReadError, read_text

    texts: dict[str, str] = {}
    for step in module.steps:
        if step.kind == "input" and step.text is not None:
            texts[step.text.file] = ""
    for artifact in module.artifacts:
        if artifact.kind in ("debug-options", "compile-options") and \
                not artifact.file.endswith(".pb"):
            texts[artifact.file] = ""
    for file in list(texts):
        try:
            texts[file] = read_text(root, Source(file))
        except ReadError:
            del texts[file]
    mlir = next((text for file, text in texts.items() if file.endswith(".mlir")), "")
    producer = ("JAX (its StableHLO, module.mlir, carries jax.* attributes)" if "jax." in mlir
                else "not recorded in the dump")
    platform = snapshot_platform or next(
        (step.pass_name.removesuffix("_after_optimizations") for step in module.steps
         if step.pass_name.endswith("_after_optimizations")), None)
    versions = [f"{file}: {line.strip()}" for file, text in texts.items()
                for line in text.splitlines() if _VERSION.search(line)][:10]
    debug = next((text for file, text in texts.items() if file.endswith("debug_options")), None)
    return Provenance(producer, platform, versions, debug)


def run_hlo_module_commands(pass_name: str) -> list[tuple[str, str]]:
    """(what it shows, command) for the bundle's files, run from inside the bundle."""
    literals = ["--input_format=hlo", "--input_literals_file=inputs.pb", "--print_literals"]
    on_interpreter = ["run_hlo_module", "--platform=interpreter", "--reference_platform=",
                      *literals]
    return [
        ("the module before the pass, on the interpreter (the expected value)",
         shlex.join([*on_interpreter, "before.hlo"])),
        ("the module after the pass, on the interpreter (the observed value)",
         shlex.join([*on_interpreter, "after.hlo"])),
        ("each module on XLA CPU against the interpreter as reference platform",
         shlex.join(["run_hlo_module", "--platform=CPU", "--reference_platform=interpreter",
                     *literals, "before.hlo", "after.hlo"])),
        ("the culprit pass alone on the module before it (hlo-opt's --passes)",
         shlex.join(["hlo-opt", "--platform=cpu", f"--passes={pass_name}", "before.hlo"])),
        ("the whole CPU pipeline on the module before the pass",
         shlex.join(["hlo-opt", "--platform=cpu", "--stage=hlo", "before.hlo"])),
    ]


def _elements_table(localization: Localization) -> list[str]:
    rows = ["| index | expected (before the pass) | observed (after) | higher-precision value "
            "| bound |", "|---|---|---|---|---|"]
    for element in localization.elements[:8]:
        bound = "" if element.bound is None else f"{element.bound:.3g}"
        truth = "" if element.truth is None else repr(element.truth)
        rows.append(f"| {list(element.index)} | {element.before!r} | {element.after!r} | "
                    f"{truth} | {bound} |")
    return rows


def readme_text(source: Path, module: Module, localization: Localization,
                reduction: Reduction, facts: Provenance) -> str:
    """The bundle's README: what was observed against what was expected, how to run it."""
    ref = localization.instruction
    assert ref is not None
    pass_name = localization.after.pass_name
    xla = (f" (XLA step {localization.after.xla_step:04d})"
           if localization.after.xla_step is not None else "")
    source_line = f", from {ref.source}" if ref.source else ""
    op_name = f" (`{ref.op_name}`)" if ref.op_name else ""
    comparison = localization.comparison
    lines = [
        f"# Miscompile in pass `{pass_name}`: `{ref.name}` ({ref.opcode}) departs",
        "",
        f"Found by workbench in `{source}`, module `{module.key}` (`{module.name}`): pass "
        f"`{pass_name}`{xla} changes the value of `{ref.name}` ({ref.opcode}){op_name} in "
        f"`{ref.computation}`{source_line}, while its operands agree.",
        "",
        "## Observed against expected",
        "",
        "`before.hlo` is the instruction alone as it was before the pass, `after.hlo` as the "
        "pass left it; both take the same operands (`inputs.pb`, `inputs.npz`).",
        "",
        f"- expected: the value of `before.hlo` (it equals the original program's reference "
        f"value: {reduction.reference_check.summary})",
        f"- observed: {comparison.summary if comparison is not None else reduction.detail}",
        "",
        *_elements_table(localization),
        "",
        f"Bisecting the reduced folder names pass `{reduction.culprit_pass or '-'}`: "
        f"{reduction.detail}",
        "",
        "## Run it",
        "",
        "From this folder (`run_hlo_module` and `hlo-opt` are XLA's tools, "
        "`bazel run //xla/tools:run_hlo_module`, `//xla/tools:hlo-opt`):",
        "",
    ]
    for what, command in run_hlo_module_commands(pass_name):
        lines += [f"{what}:", "", f"    {command}", ""]
    lines += ["With JAX installed, both modules compiled and run by XLA CPU:", "",
              "    python run_with_jax.py", ""]
    lines += ["## Where it came from", "",
              f"- producer: {facts.producer}",
              f"- platform: {facts.platform or 'not recorded in the dump'}"]
    if facts.versions:
        lines += ["- versions, as the dump's files state them:",
                  *[f"  - `{line}`" for line in facts.versions]]
    else:
        lines.append("- versions: the dump records no JAX or XLA version number; add "
                     "`python -c 'import jax, jaxlib; print(jax.__version__, "
                     "jaxlib.__version__)'` from the machine that made it")
    if facts.debug_options is not None:
        lines.append("- the XLA flags of the compilation: `debug_options.txt`")
    return "\n".join(lines) + "\n"


def _numpy_inputs(arguments: list[np.ndarray], expected: np.ndarray) -> dict[str, Any]:
    """The arrays for `inputs.npz`: types numpy lacks stored as their bits, named in
    `dtypes` (expected first)."""
    names = [np.asarray(expected).dtype.name] + [np.asarray(a).dtype.name for a in arguments]

    def stored(value: np.ndarray) -> np.ndarray:
        array = np.asarray(value)
        return array.view(f"u{array.dtype.itemsize}") if array.dtype.kind == "V" else array

    arrays = {f"arg{i}": stored(a) for i, a in enumerate(arguments)}
    arrays["expected"] = stored(expected)
    arrays["dtypes"] = np.array(names)
    return arrays


def write_bundle(source: Path, module: Module, localization: Localization,
                 reduction: Reduction, archive: bool = False) -> Bundle:
    """Write `reduction.out/bug-report/` (and `bug-report.tar.gz` beside it when `archive`).
    Raises LocalizeError for a reduction with no HLO (an MLIR culprit), and OutputError
    when a file cannot be written."""
    import io

    from workbench.formats.snapshot import read_snapshot
    from workbench.protos import hlo_pb2, run_hlo_module_pb2

    if reduction.ir != "hlo" or localization.instruction is None:
        raise LocalizeError("a bug-report bundle holds HLO for XLA's tools; this reduction "
                            "is of MLIR ops (run it with `workbench bisect` on its folder)")
    out = reduction.out
    before_text = (out / reduction.files[0]).read_text()
    after_text = (out / reduction.files[1]).read_text()
    snapshot_bytes = (out / reduction.files[2]).read_bytes()
    proto = hlo_pb2.HloSnapshot.FromString(snapshot_bytes)
    literals = run_hlo_module_pb2.RunHloModuleLiterals()
    iteration = literals.iterations.add()
    iteration.arguments.extend(proto.arguments)
    snapshot = read_snapshot(snapshot_bytes, reduction.files[2])
    assert snapshot.result is not None
    arrays = _numpy_inputs([np.asarray(a) for a in snapshot.arguments],
                           np.asarray(snapshot.result))
    facts = provenance(source, module, snapshot.platform)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    folder = out / BUNDLE
    files = list(FILES)
    with OutputFolder(folder) as written:
        written.write("before.hlo", before_text)
        written.write("after.hlo", after_text)
        written.write("inputs.pb", literals.SerializeToString())
        written.write("inputs.npz", buffer.getvalue())
        written.write("run_with_jax.py", Path(__file__).with_name("xla_check.py").read_text())
        if facts.debug_options is not None:
            written.write("debug_options.txt", facts.debug_options)
            files.append("debug_options.txt")
        written.write("README.md", readme_text(source, module, localization, reduction, facts))
    bundle = Bundle(folder, files)
    if archive:
        bundle.archive = out / f"{BUNDLE}.tar.gz"
        check_file(bundle.archive, "--archive", force=True)

        def pack(stream: BinaryIO) -> None:
            with tarfile.open(fileobj=stream, mode="w:gz") as tar:
                for name in files:
                    tar.add(folder / name, arcname=f"{BUNDLE}/{name}")

        write_file_atomically(bundle.archive, pack)
    return bundle
