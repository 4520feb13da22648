"""A minimal reproducer of an MLIR culprit: a folder with a two-pass trace and a snapshot.

The culprit op departs while its operands agree, so what its value depends on, within the
pass's change, is the op alone. The reduced modules keep it (matched across the pass by its
key, `localize.mlir.op_keys`) and the constants it reads (a rewrite may hinge on them: the
faulty strength reduction fires on `x * 0.5`); every other value flowing into it (an op's
result, an argument of the function) becomes an argument of the function, which returns the
op's result. The folder holds

- an `MlirCompilationTrace` with the reduced module before the pass and after it, named by the
  original steps' passes (so `workbench mlir-replay`, `replay`, `bisect` and `triage` read the
  folder and name the same pass);
- an HloSnapshot with the earlier step's values of those inflowing values, at the run of the
  op that departs (an op in a loop runs once per iteration), as arguments, and the earlier
  step's value of the op there as the result.

The reduction is checked as the HLO one is (`reduce.py`): the reduced "before" must agree with
the original reference's value, and a bisection of the folder must find the departure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import ConstantLike

from workbench.destinations import OutputFolder, check_folder
from workbench.hlo_ir import Shape, numpy_dtype
from workbench.replay.judge.compare import compare
from workbench.replay.localize.mlir import Key, op_keys, operand_key
from workbench.replay.localize.result import Localization, LocalizeError
from workbench.replay.reduce.reduction import README, Reduction, bisect_folder, readme_text

_ELEMENT_TYPES = ("pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16",
                  "f32", "f64", "c64", "c128")


def _element_type(dtype: np.dtype) -> str:
    """The HLO element type of a numpy dtype (a snapshot's literal needs one)."""
    for name in _ELEMENT_TYPES:
        if np.dtype(numpy_dtype(name)) == dtype:
            return name
    raise LocalizeError(f"a value of type {dtype} cannot be written to a snapshot")


def _find(module: ModuleOp, key: str) -> Operation:
    for op, found in op_keys(module).items():
        if found == key:
            return op
    raise LocalizeError(f"the op {key} is not in the step's module")


def _constant(operand: SSAValue) -> Operation | None:
    owner = operand.owner
    if isinstance(owner, Operation) and owner.has_trait(ConstantLike) and not owner.operands:
        return owner
    return None


def _inflows(op: Operation, keys: dict[Operation, str]) -> list[tuple[Key, Attribute, str]]:
    """The op's operands that become arguments (not constants): key, type, printed name."""
    found: list[tuple[Key, Attribute, str]] = []
    for operand in op.operands:
        if _constant(operand) is not None:
            continue
        key = operand_key(operand, keys)
        if key is None:
            raise LocalizeError(f"{op.name} reads a loop's index, whose value is not recorded: "
                                "not reduced")
        if isinstance(operand.type, MemRefType):
            raise LocalizeError(f"{op.name} reads a buffer: not reduced")
        found.append((key, operand.type, operand.name_hint or ""))
    return found


def _names(hints: list[str]) -> list[str]:
    """The arguments' printed names: the values' own (`relu`), unique, else their position."""
    names: list[str] = []
    for number, hint in enumerate(hints):
        names.append(hint if hint and hint not in names else f"in{number}")
    return names


def _reduced(op: Operation, keys: dict[Operation, str], arguments: list[Key],
             types: list[Attribute], names: list[str], result: int,
             function_name: str) -> tuple[str, int]:
    """The module `func.func @function_name(arguments) { constants; op; return }` as text,
    and its op count (the return not counted)."""
    if op.regions:
        raise LocalizeError(f"{op.name} has regions: not reduced")
    block = Block(arg_types=types)
    for argument, name in zip(block.args, names, strict=True):
        argument.name_hint = name
    mapping: dict[SSAValue, SSAValue] = {}
    body: list[Operation] = []
    for operand in op.operands:
        if operand in mapping:
            continue
        constant = _constant(operand)
        if constant is not None:
            copy = constant.clone()
            body.append(copy)
            mapping.update(zip(constant.results, copy.results, strict=True))
        else:
            key = operand_key(operand, keys)
            assert key is not None  # `_inflows` refused the rest
            mapping[operand] = block.args[arguments.index(key)]
    copy = op.clone(value_mapper=mapping)
    body.append(copy)
    block.add_ops([*body, func.ReturnOp(copy.results[result])])
    function = func.FuncOp(function_name, (types, [op.results[result].type]), Region(block))
    return str(ModuleOp([function])) + "\n", len(body)


def _trace_name(result: Localization, module_name: str) -> str:
    """The (binary) trace file: named as the original when the steps came from one, else
    so the scanner claims it for `module_name`."""
    from workbench.formats.mlir_trace import TRACE_SUFFIXES

    source = result.after.text
    name = Path(source.file).name if source is not None else ""
    for suffix in TRACE_SUFFIXES:
        if name.endswith(suffix):
            return name[:-len(suffix)] + ".mlir-trace.pb"
    return f"module_0000.{module_name}.mlir-trace.pb"


def reduce_mlir_to_folder(root: Path, result: Localization, module_name: str, out: Path,
                          force: bool = False) -> Reduction:
    """`reduce.reduce_to_folder` for MLIR steps: write the reduced trace and snapshot of
    `result` to `out` and check them. Raises `LocalizeError` when there is no culprit or it
    cannot be reduced (an op with regions, one reading a buffer or a loop's index), and
    ValueError for a refused `out`."""
    from workbench.formats.literal_write import literal_to_proto
    from workbench.protos import hlo_pb2, mlir_trace_pb2
    from workbench.replay.errors import EvaluationError, Unsupported
    from workbench.replay.mlir.evaluate import evaluate_mlir
    from workbench.replay.mlir.parse import parse_module
    from workbench.sources import ReadError, read_text

    culprit = result.mlir
    if culprit is None or culprit.expected is None or result.before.text is None \
            or result.after.text is None:
        raise LocalizeError("nothing to reduce: " + (result.explanation or "no culprit"))
    check_folder(out, "--out", dumps=[root], force=force)
    try:
        before_module = parse_module(read_text(root, result.before.text))[0]
        after_module = parse_module(read_text(root, result.after.text))[0]
    except (ReadError, EvaluationError, Unsupported) as error:
        raise LocalizeError(f"cannot read the steps' modules again: {error}") from None
    before_keys, after_keys = op_keys(before_module), op_keys(after_module)
    after_op = _find(after_module, culprit.key)
    before_op = _find(before_module, culprit.key)
    inflows: dict[Key, tuple[Attribute, str]] = {}
    for key, type_, hint in [*_inflows(after_op, after_keys), *_inflows(before_op, before_keys)]:
        inflows.setdefault(key, (type_, hint))
    arguments = list(inflows)
    missing = [key[0] for key in arguments if key not in culprit.operands]
    if missing:
        raise LocalizeError(f"the earlier step's values of {', '.join(missing)} were not kept")
    types = [type_ for type_, _ in inflows.values()]
    names = _names([hint for _, hint in inflows.values()])
    function_name = culprit.key.split("/", 1)[0].lstrip("@") or "main"
    before_text, before_count = _reduced(before_op, before_keys, arguments, types, names,
                                         culprit.result, function_name)
    after_text, after_count = _reduced(after_op, after_keys, arguments, types, names,
                                       culprit.result, function_name)
    values = [np.asarray(culprit.operands[key]) for key in arguments]
    expected = np.asarray(culprit.expected)

    trace = mlir_trace_pb2.MlirCompilationTrace()
    for step, text in ((result.before, before_text), (result.after, after_text)):
        entry = trace.passes.add()
        entry.after_pass = step.pass_name
        entry.mlir_module = text
    snapshot = hlo_pb2.HloSnapshot()
    for value in values:
        snapshot.arguments.append(
            literal_to_proto(value, Shape(_element_type(value.dtype), value.shape)))
    snapshot.result.CopyFrom(
        literal_to_proto(expected, Shape(_element_type(expected.dtype), expected.shape)))
    trace_name = _trace_name(result, module_name)
    prefix = trace_name.split(".")[0] + "." + module_name
    files = [trace_name, f"{prefix}.snapshot.0.pb"]
    with OutputFolder(out) as folder:
        folder.write(files[0], trace.SerializeToString())
        folder.write(files[1], snapshot.SerializeToString())
        folder.write(README, readme_text(root, out, module_name, files, f"op {after_op.name}",
                                         result.after.pass_name))
    try:
        reduced_before = evaluate_mlir(before_text, values, function_name)
    except (EvaluationError, Unsupported) as error:
        raise LocalizeError(f"the reduced module before the pass cannot be evaluated: "
                            f"{error}") from None
    reference_check = compare(expected, reduced_before)
    status, culprit_pass, detail = bisect_folder(out)
    return Reduction(out, files, (before_count, after_count), reference_check, status,
                     culprit_pass, detail, ir="mlir")
