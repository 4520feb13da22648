"""Localize between two per-device steps of an SPMD-partitioned module: the instruction that
departs, and the partitions it departs on.

Both steps are first run over every device, recording what each collective exchanged; then
each device is localized alone (`localizer.localize_modules` on its shards of the inputs), its
collectives answered from the recordings (`spmd.ReplayedDevice`). A bug on one device shows
on the others only through a collective: the culprit is the departing instruction that comes
first in the later step, on the devices where it departs while its operands agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from workbench.hlo_ir import HloModule, LiteralValue
from workbench.model import Step
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.localize.localizer import localize_modules
from workbench.replay.localize.result import Localization, LocalizeError, NotJudged

if TYPE_CHECKING:
    from workbench.replay.backends import HloBackend


def localize_partitioned(backend: HloBackend, before: Step, after: Step,
                         arguments: Sequence[LiteralValue]) -> Localization:
    """Raises `LocalizeError` (a step on the other side of the partitioner, an evaluation
    that fails)."""
    from workbench.loader import ReadError
    from workbench.replay.hlo.partitioned import has_global_shapes, run_devices, shards_of
    from workbench.replay.hlo.spmd import Recording, ReplayedDevice, as_device
    from workbench.replay.localize.text import attach_text

    partitioning = backend.partitioning()
    assert partitioning is not None
    try:
        modules = backend.load(before), backend.load(after)
    except (ReadError, Unsupported) as error:
        raise LocalizeError(str(error)) from None
    if any(has_global_shapes(module, arguments) for module in modules):
        raise LocalizeError(
            f"{before.label} and {after.label} are on either side of the SPMD partitioner (a "
            "global and a per-device program): their instructions do not correspond")
    if partitioning.parameters is None:
        raise LocalizeError("the parameter shardings of this partitioned module are unknown")
    counts = partitioning.num_partitions, partitioning.replica_count
    per_device = [[shards_of(s, a, d) for s, a in zip(partitioning.parameters, arguments,
                                                       strict=True)]
                  for d in range(partitioning.devices)]
    recordings: tuple[Recording, Recording] = ({}, {})
    try:
        for module, recording in zip(modules, recordings, strict=True):
            run_devices(module, per_device, *counts, recording=recording)
    except (EvaluationError, Unsupported) as error:
        raise NotJudged(f"cannot evaluate {after.label} over every device: {error}") from None
    owners = {id(i): k for k, module in enumerate(modules) for c in module.computations
              for i in c.instructions}
    found: list[Localization] = []
    for device in range(partitioning.devices):
        context = ReplayedDevice(device, *counts, recordings=recordings, owners=owners)
        with as_device(context):
            found.append(localize_modules(*modules, per_device[device], before, after))
    departing = [(d, r) for d, r in enumerate(found) if r.instruction is not None]
    if departing:
        result = _first_culprit(departing, modules[1])
    else:
        devices = tuple(d for d, r in enumerate(found) if r.departing)
        result = found[devices[0]] if devices else found[0]
        if devices:
            result = replace(result, partitions=devices, explanation=(
                f"on partition(s) {', '.join(map(str, devices))}: {result.explanation}"))
    attach_text(backend.root, result)
    return result


def _first_culprit(departing: list[tuple[int, Localization]], after: HloModule) -> Localization:
    """The culprit that comes first in the later step, with every device it departs on."""
    order = {(c.name, i.name): n for n, (c, i) in enumerate(
        (c, i) for c in after.computations for i in c.instructions)}

    def place(result: Localization) -> tuple[str, str]:
        assert result.instruction is not None
        return result.instruction.computation, result.instruction.name

    first = min((r for _, r in departing), key=lambda r: order.get(place(r), len(order)))
    devices = tuple(d for d, r in departing if place(r) == place(first))
    return replace(first, partitions=devices)
