"""The corpus crash reproducer, and the older configuration-comment style."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.formats.crash_reproducer import read_crash_reproducer
from workbench.index import scan
from workbench.loader import ReadError, read_text


@pytest.fixture(scope="module")
def folder(corpus: Path) -> Path:
    return corpus / "mlir" / "crash-reproducer"


def test_external_resources_block(folder: Path) -> None:
    reproducer = read_crash_reproducer((folder / "reproducer.mlir").read_bytes(), "reproducer.mlir")
    assert reproducer.style == "external-resources"
    assert reproducer.pipeline is not None
    assert reproducer.pipeline.startswith("builtin.module(func.func(canonicalize{")
    assert "one-shot-bufferize{" in reproducer.pipeline
    assert reproducer.flags == {"disable_threading": False, "verify_each": True}
    ir = read_text(folder, reproducer.ir)
    assert ir.startswith("module {") and ir.endswith("}")
    assert "{-#" not in ir and '"foo.opaque"' in ir


def test_configuration_comment_style_derived_from_the_real_one(folder: Path,
                                                               tmp_path: Path) -> None:
    """Older MLIR's form (no corpus sample): the real reproducer rewritten as
    PassCrashRecovery.cpp of that time wrote it."""
    new = read_crash_reproducer((folder / "reproducer.mlir").read_bytes(), "reproducer.mlir")
    ir = read_text(folder, new.ir)
    old = f"// configuration: -pass-pipeline='{new.pipeline}' -verify-each\n{ir}\n"
    (tmp_path / "old.mlir").write_text(old)
    reproducer = read_crash_reproducer(old.encode(), "old.mlir")
    assert reproducer.style == "configuration-comment"
    assert reproducer.pipeline == new.pipeline
    assert reproducer.flags == {"verify-each": True}
    assert read_text(tmp_path, reproducer.ir).strip() == ir
    dump = scan(tmp_path)
    (module,) = dump.modules
    assert module.format == "mlir-reproducer"
    assert module.steps[0].pipeline == new.pipeline


def test_indexed_as_a_reproducer_module(folder: Path) -> None:
    dump = scan(folder / "reproducer.mlir")
    (module,) = dump.modules
    assert module.format == "mlir-reproducer"
    (step,) = module.steps
    assert step.kind == "input" and step.scope == "builtin.module"
    assert step.pipeline is not None and step.pipeline.endswith("top-down=true})")


def test_cut_reproducer_is_a_read_error(folder: Path, tmp_path: Path) -> None:
    data = (folder / "reproducer.mlir").read_bytes()
    cut = data[: data.index(b"disable_threading")]
    with pytest.raises(ReadError, match="cut short"):
        read_crash_reproducer(cut, "cut.mlir")
    (tmp_path / "cut.mlir").write_bytes(cut)
    dump = scan(tmp_path)
    assert [p.file for p in dump.problems] == ["cut.mlir"]
