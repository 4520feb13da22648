"""The earlier step's kept values, in memory while they fit and on disk beyond that.

Localizing a training step keeps many of the earlier step's values (every one some later
instruction is matched to) until the later step has been judged up to the culprit: gigabytes
at model size. Within the memory limit they stay in memory; beyond it each array is written
raw to a temporary folder of its own (never the dump folder) and read back as a fresh copy
when asked for, so what a read holds is freed with it rather than staying mapped.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, MutableMapping
from pathlib import Path

import numpy as np

from workbench.hlo_ir import LiteralValue
from workbench.replay.localize.result import DynKey, LocalizeError


class _Spilled:
    """Where a spilled array is, and what it was."""

    __slots__ = ("dtype", "path", "shape")

    def __init__(self, path: Path, dtype: np.dtype, shape: tuple[int, ...]) -> None:
        self.path, self.dtype, self.shape = path, dtype, shape

    def read(self) -> np.ndarray:
        return np.fromfile(self.path, dtype=self.dtype).reshape(self.shape)


class KeptValues(MutableMapping[DynKey, LiteralValue]):
    """Values by key, some of them spilled to disk (`spill`); `spilled_bytes` in all."""

    def __init__(self) -> None:
        self._values: dict[DynKey, LiteralValue | _Spilled] = {}
        self._folder: Path | None = None
        self._files = 0  # spill files written: each value a file of its own
        self.spilled_bytes = 0

    def spill(self, key: DynKey, value: LiteralValue) -> bool:
        """Keep `value` on disk; False (kept nowhere) when it is not a plain array."""
        if not isinstance(value, np.ndarray) or value.dtype.hasobject:
            return False
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="workbench-localize-"))
        self._files += 1
        path = self._folder / f"{self._files}.raw"
        try:
            value.tofile(path)  # C order, whatever the layout
        except OSError as error:
            raise LocalizeError(f"cannot spill the values localization keeps beyond the "
                                f"memory limit to {self._folder}: {error.strerror or error}; "
                                "raise --memory-limit") from None
        self._values[key] = _Spilled(path, value.dtype, value.shape)
        self.spilled_bytes += value.nbytes
        return True

    def __getitem__(self, key: DynKey) -> LiteralValue:
        value = self._values[key]
        return value.read() if isinstance(value, _Spilled) else value

    def __setitem__(self, key: DynKey, value: LiteralValue) -> None:
        self._values[key] = value

    def __delitem__(self, key: DynKey) -> None:
        del self._values[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[DynKey]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def close(self) -> None:
        """Forget every value and remove the spill folder (ready for another run)."""
        self._values.clear()
        self.spilled_bytes = 0
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
