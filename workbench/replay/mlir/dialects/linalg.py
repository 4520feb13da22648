"""xDSL's linalg dialect, plus the contraction named ops lowerings emit that xDSL lacks.

StableHLO-to-linalg conversions turn a batched `dot_general` into `linalg.batch_matmul`, a
matrix-vector product into `linalg.matvec`/`linalg.vecmat`, a vector dot into `linalg.dot`.
They are defined here like xDSL's `linalg.matmul`: `ins(...) outs(...)` syntax, a hidden
multiply-accumulate body, and the indexing maps MLIR's OpDSL gives them. `linalg.matmul`
also takes the form current MLIR prints for transposed or broadcast operands,
`linalg.matmul indexing_maps = [...] ins(...) outs(...)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, ArrayAttr
from xdsl.dialects.linalg import Linalg as XdslLinalg
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import MatmulOp as XdslMatmulOp
from xdsl.dialects.linalg.ops import YieldOp
from xdsl.ir import Attribute, BlockArgument, Dialect, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import irdl_op_definition
from xdsl.parser import Parser


def _parse_indexing_maps(parser: Parser) -> Attribute | None:
    """`indexing_maps = [...]`, which MLIR prints in front of a contraction's operands."""
    if parser.parse_optional_keyword("indexing_maps") is None:
        return None
    parser.parse_punctuation("=")
    return parser.parse_attribute()


class MatmulOp(XdslMatmulOp):
    """`linalg.matmul`, also with `indexing_maps = [...]` in front."""

    @classmethod
    def parse(cls, parser: Parser) -> NamedOperation:
        maps = _parse_indexing_maps(parser)
        op = super().parse(parser)
        if maps is not None:
            op.properties["indexing_maps"] = maps
        return op


class _ContractionOp(NamedOperation):
    """`out += lhs * rhs` over the iteration space of `MAPS` (`ITERATORS`: `p`/`r`)."""

    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True
    MAPS: ClassVar[tuple[Callable[..., tuple[AffineExpr, ...]], ...]] = ()
    ITERATORS: ClassVar[str] = ""

    @classmethod
    def parse(cls, parser: Parser) -> NamedOperation:
        maps = _parse_indexing_maps(parser)
        op = super().parse(parser)
        if maps is not None:
            op.properties["indexing_maps"] = maps
        return op

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = cls.body_arg_types((*inputs, *outputs))
        add, mul = (
            (arith.AddfOp, arith.MulfOp)
            if isinstance(arg_types[-1], AnyFloat)
            else (arith.AddiOp, arith.MuliOp)
        )

        @Builder.implicit_region(arg_types)
        def hidden_region(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(add(args[2], mul(args[0], args[1])))

        return hidden_region

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        maps = self.properties.get("indexing_maps")
        if isinstance(maps, ArrayAttr):
            return tuple(attr.data for attr in maps.data)
        return tuple(AffineMap.from_callable(function) for function in self.MAPS)

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        kinds = {"p": IteratorTypeAttr.parallel(), "r": IteratorTypeAttr.reduction()}
        return ArrayAttr([kinds[kind] for kind in self.ITERATORS])


@irdl_op_definition
class BatchMatmulOp(_ContractionOp):
    name = "linalg.batch_matmul"
    MAPS: ClassVar = (
        lambda b, i, j, k: (b, i, k),
        lambda b, i, j, k: (b, k, j),
        lambda b, i, j, k: (b, i, j),
    )
    ITERATORS: ClassVar = "pppr"


@irdl_op_definition
class MatvecOp(_ContractionOp):
    name = "linalg.matvec"
    MAPS: ClassVar = (lambda i, k: (i, k), lambda i, k: (k,), lambda i, k: (i,))
    ITERATORS: ClassVar = "pr"


@irdl_op_definition
class VecmatOp(_ContractionOp):
    name = "linalg.vecmat"
    MAPS: ClassVar = (lambda j, k: (k,), lambda j, k: (k, j), lambda j, k: (j,))
    ITERATORS: ClassVar = "pr"


@irdl_op_definition
class BatchMatvecOp(_ContractionOp):
    name = "linalg.batch_matvec"
    MAPS: ClassVar = (lambda b, i, k: (b, i, k), lambda b, i, k: (b, k), lambda b, i, k: (b, i))
    ITERATORS: ClassVar = "ppr"


@irdl_op_definition
class DotOp(_ContractionOp):
    name = "linalg.dot"
    MAPS: ClassVar = (lambda k: (k,), lambda k: (k,), lambda k: ())
    ITERATORS: ClassVar = "r"


CONTRACTIONS = (BatchMatmulOp, MatvecOp, VecmatOp, BatchMatvecOp, DotOp)
# Every contraction the replay runs as `out += lhs * rhs`, matmul included.
CONTRACTION_OPS = (MatmulOp, *CONTRACTIONS)

Linalg = Dialect(
    "linalg",
    [MatmulOp if op is XdslMatmulOp else op for op in XdslLinalg.operations] + list(CONTRACTIONS),
    list(XdslLinalg.attributes),
)
