"""Assembling XLA modules from names: the order of the listing does not matter.

The index hands the claimer its listing unsorted; where two names compete for one place (a
step named by a `.txt` and a `.txt.gz`, one module id under two module names), the outcome
must be the one a sorted listing gives.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from workbench.formats.xla_dump import claim_xla
from workbench.model import Dump


def _competing_names(corpus: Path) -> list[str]:
    """The corpus's XLA names, plus the names a second run would add to one of its folders:
    the same module ids under another module name, and compressed copies of some files."""
    root = corpus / "xla"
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    ln = [name for name in names if name.startswith("layernorm/module_0010.jit_ln.")]
    assert len(ln) > 40
    again = [name.replace(".jit_ln.", ".jit_ln_again.") for name in ln[::3]]
    gz = [name + ".gz" for name in ln[1::4] if name.endswith((".txt", ".hlo.pb"))]
    folder = [name.replace("module_0010.jit_ln/", "module_0010.jit_ln2/") for name in names
              if name.startswith("layernorm/module_0010.jit_ln/")]
    assert again and gz and folder
    return sorted({*names, *again, *gz, *folder})


def _claim(paths: list[str]) -> tuple[Dump, list[str]]:
    dump = Dump(root=Path("."))
    unclaimed = claim_xla(dump, list(paths))
    dump.modules.sort(key=lambda m: m.key)
    return dump, unclaimed


@pytest.mark.parametrize("seed", range(4))
def test_any_order_gives_what_the_sorted_listing_gives(corpus: Path, seed: int) -> None:
    names = _competing_names(corpus)
    expected, expected_unclaimed = _claim(names)
    # One number under three names: three modules, each with its own files.
    ln, again, folder = (next(m for m in expected.modules if m.key == "layernorm/module_0010"
                              and m.name == name) for name in ("jit_ln", "jit_ln_again",
                                                               "jit_ln2"))
    assert any(s.text is not None and s.text.file.endswith(".gz") for s in ln.steps)
    assert not any(s.file is not None and ".jit_ln_again." in s.file for s in ln.steps)
    assert all(s.file is not None and ".jit_ln_again." in s.file for s in again.steps)
    assert [s.file for s in folder.steps] == ["layernorm/module_0010.jit_ln2/module.mlir"]
    shuffled = list(names)
    random.Random(seed).shuffle(shuffled)
    dump, unclaimed = _claim(shuffled)
    assert sorted(dump.modules, key=lambda m: m.name) == \
        sorted(expected.modules, key=lambda m: m.name)
    assert sorted(unclaimed) == expected_unclaimed
