"""What the parts of a localization see of the `Localizer` that runs them: the earlier step's
run (`earlier_step.py`), the search for the culprit (`search.py`) and the values' truth
(`truth.py`) take a `LocalizeContext`, never the class, so none of them imports
`localizer.py` (which imports them all), not even for its types."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from workbench.hlo_ir import HloModule, Instruction, LiteralValue
from workbench.replay.localize.match import Key, Matching
from workbench.replay.localize.pair import StepPair
from workbench.replay.localize.result import DynKey, Region
from workbench.replay.localize.spill import KeptValues

if TYPE_CHECKING:
    from workbench.replay.judge.noise.model import Noise


class ShadowValues(Protocol):
    """The earlier step's values in f64 (`truth.Shadows`), made as they are asked for."""

    def get(self, key: DynKey, also: set[DynKey] | None = None) -> Any: ...


class LocalizeContext(Protocol):
    """The localization under way: the two steps, the matching, the values kept, and the
    evaluations it runs (`localizer.Localizer` is the one)."""

    before: HloModule
    arguments: list[LiteralValue]
    pair: StepPair
    matching: Matching
    wanted: set[Key]
    before_values: KeptValues
    sub_byte: dict[str, tuple[int, bool]]

    @property
    def shadows(self) -> ShadowValues: ...

    @property
    def perturbed(self) -> ShadowValues: ...

    def keep_before(self, key: DynKey, value: LiteralValue) -> None: ...

    def keep(self, value: Any) -> None: ...

    def before_value(self, key: DynKey) -> LiteralValue | None: ...

    def shadow_module(self) -> HloModule: ...

    def cone(self, module: HloModule, names: frozenset[str]) -> HloModule: ...

    def region(self, key: DynKey, identical: set[DynKey]) -> Region | None: ...

    def region_truth(self, key: DynKey, region: Region, perturbed: bool
                     ) -> LiteralValue | None: ...

    def region_noise(self, key: DynKey, region: Region) -> Noise | None: ...

    def evaluate(self, module: HloModule, arguments: Sequence[LiteralValue],
                 sink: Callable[[DynKey, Instruction, Any], None],
                 known: Callable[[DynKey], Any] | None = None) -> LiteralValue | None: ...
