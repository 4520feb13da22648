"""Bad input through the loader: every failure names the file and the reason."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from workbench import loader, sources
from workbench.facts import LruCache
from workbench.index import scan
from workbench.loader import ReadError, read_bytes, read_text
from workbench.model import Source, Step


def test_reads_whole_file_and_range(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello world")
    assert read_text(tmp_path, Source("a.txt")) == "hello world"
    assert read_text(tmp_path, Source("a.txt", start=6, end=11)) == "world"


def test_gzip(tmp_path: Path) -> None:
    (tmp_path / "a.hlo.pb.gz").write_bytes(gzip.compress(b"\x0a\x01x"))
    assert read_bytes(tmp_path, Source("a.hlo.pb.gz")) == b"\x0a\x01x"
    (tmp_path / "b.txt.gz").write_bytes(b"not gzip")
    with pytest.raises(ReadError, match="b.txt.gz: bad gzip"):
        read_bytes(tmp_path, Source("b.txt.gz"))


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "empty file"), (b"ok \xff\xfe bad", "not UTF-8 text \\(bad byte at offset 3\\)")],
)
def test_bad_text(tmp_path: Path, content: bytes, reason: str) -> None:
    (tmp_path / "f.txt").write_bytes(content)
    with pytest.raises(ReadError, match=f"f.txt: {reason}"):
        read_text(tmp_path, Source("f.txt"))


def test_text_cut_inside_a_character(corpus: Path, tmp_path: Path) -> None:
    """XLA's live-range report draws with box characters (3 bytes each in UTF-8): cut inside
    one, it is a file still being written, not text in another encoding."""
    report = "module_0010.jit_ln.cpu_after_optimizations-live-range.txt"
    data = (corpus / "xla" / "layernorm" / report).read_bytes()
    box = data.index("├".encode())
    (tmp_path / report).write_bytes(data[: box + 1])
    with pytest.raises(ReadError, match=f"{report}: text ends inside a UTF-8 character at "
                                        rf"offset {box} \(cut short, or still being written\?\)"):
        read_text(tmp_path, Source(report))
    (tmp_path / report).write_bytes(data[: box + 1] + data[box + 3 :])
    with pytest.raises(ReadError, match=rf"not UTF-8 text \(bad byte at offset {box}\)"):
        read_text(tmp_path, Source(report))


def test_missing_and_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ReadError, match="gone.txt: file not found"):
        read_text(tmp_path, Source("gone.txt"))
    (tmp_path / "locked.txt").write_text("secret")

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Tests may run as root, for whom chmod 0 changes nothing: make open() refuse instead.
    monkeypatch.setattr(sources, "open", denied, raising=False)
    with pytest.raises(ReadError, match="locked.txt: permission denied"):
        read_text(tmp_path, Source("locked.txt"))


# ---- parsed HLO modules and snapshots ----

LAYERNORM = Path(__file__).parent / "data" / "corpus" / "xla" / "layernorm"
LN_STEP = "module_0010.jit_ln.0028.HLO_passes_after_layout_assignment.after_fusion" \
    ".before_fusion-wrapper"


def copy_ln(tmp_path: Path, suffixes: tuple[str, ...] = (".txt", ".hlo.pb")) -> Path:
    for suffix in suffixes:
        shutil.copy(LAYERNORM / f"{LN_STEP}{suffix}", tmp_path / f"{LN_STEP}{suffix}")
    return tmp_path


def ln_step(tmp_path: Path) -> Step:
    module = scan(tmp_path).modules[0]
    return next(step for step in module.steps if step.xla_step == 28)


def test_load_step_prefers_the_proto(tmp_path: Path) -> None:
    module = loader.load_step_hlo(copy_ln(tmp_path), ln_step(tmp_path))
    assert module.name == "jit_ln"
    assert module.id is not None  # only the proto carries ids
    (tmp_path / f"{LN_STEP}.hlo.pb").unlink()
    from_text = loader.load_step_hlo(tmp_path, ln_step(tmp_path))
    assert from_text.id is None
    assert {c.name for c in from_text.computations} == {c.name for c in module.computations}


def test_gzipped_proto(tmp_path: Path) -> None:
    data = (LAYERNORM / f"{LN_STEP}.hlo.pb").read_bytes()
    (tmp_path / f"{LN_STEP}.hlo.pb.gz").write_bytes(gzip.compress(data))
    step = ln_step(tmp_path)
    assert step.proto is not None and step.proto.file.endswith(".gz")
    assert loader.load_step_hlo(tmp_path, step).name == "jit_ln"


def test_cache_follows_the_file(tmp_path: Path) -> None:
    copy_ln(tmp_path, (".txt",))
    step = ln_step(tmp_path)
    first = loader.load_step_hlo(tmp_path, step)
    assert loader.load_step_hlo(tmp_path, step) is first
    path = tmp_path / f"{LN_STEP}.txt"
    path.write_text(path.read_text().replace("HloModule jit_ln", "HloModule jit_ln2", 1))
    second = loader.load_step_hlo(tmp_path, step)
    assert second is not first and second.name == "jit_ln2"


def test_mlir_step_is_not_hlo() -> None:
    step = Step(index=0, pass_name="input", ir="mlir", kind="input", text=Source("m.mlir"))
    with pytest.raises(ReadError, match="holds MLIR, not HLO"):
        loader.load_step_hlo(LAYERNORM, step)


@pytest.mark.parametrize(("suffix", "content", "reason"), [
    (".hlo.pb", b"\xff\xfe garbage \x00\x01", "not an HloProto"),
    (".hlo.pb", None, "truncated or damaged|truncated proto|not defined"),
    (".hlo.pb", b"", "empty file"),
    (".txt", b"", "empty file"),
    (".txt", b"HloModule jit_ln\n\xff\xfe", "not UTF-8 text"),
    (".txt", None, "line [0-9]+, column [0-9]+: "),
])
def test_bad_step_files(tmp_path: Path, suffix: str, content: bytes | None,
                        reason: str) -> None:
    name = f"{LN_STEP}{suffix}"
    if content is None:  # a file cut in the middle, as a dump still being written
        data = (LAYERNORM / name).read_bytes()
        content = data[: len(data) * 2 // 3]
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ReadError, match=reason) as caught:
        loader.load_step_hlo(tmp_path, ln_step(tmp_path))
    assert caught.value.file == name


def test_deleted_after_listing(tmp_path: Path) -> None:
    step = ln_step(copy_ln(tmp_path))
    (tmp_path / f"{LN_STEP}.hlo.pb").unlink()
    (tmp_path / f"{LN_STEP}.txt").unlink()
    with pytest.raises(ReadError, match="file not found") as caught:
        loader.load_step_hlo(tmp_path, step)
    assert caught.value.file == f"{LN_STEP}.hlo.pb"  # the error of the preferred file


def test_text_stands_in_for_a_damaged_proto(tmp_path: Path) -> None:
    step = ln_step(copy_ln(tmp_path))
    proto = tmp_path / f"{LN_STEP}.hlo.pb"
    proto.write_bytes(proto.read_bytes()[:1000])  # still being written
    module = loader.load_step_hlo(tmp_path, step)
    assert module.name == "jit_ln" and module.id is None  # from the text
    proto.unlink()  # deleted since the folder was listed
    assert loader.load_step_hlo(tmp_path, step) is module


def test_unreadable_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    step = ln_step(copy_ln(tmp_path))

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sources, "open", denied, raising=False)
    with pytest.raises(ReadError, match="permission denied"):
        loader.load_step_hlo(tmp_path, step)


def test_load_snapshot(tmp_path: Path) -> None:
    dump = scan(LAYERNORM)
    execution = dump.find_module("jit_ln").executions[0]
    snapshot = loader.load_snapshot(LAYERNORM, execution)
    assert snapshot.module is not None and len(snapshot.arguments) == 3
    assert loader.load_snapshot(LAYERNORM, execution) is snapshot
    (tmp_path / "module_0010.jit_ln.snapshot.1.pb").write_bytes(b"\x0a\x05trunc")
    bad = scan(tmp_path).modules[0].executions[0]
    with pytest.raises(ReadError, match="module_0010.jit_ln.snapshot.1.pb: "):
        loader.load_snapshot(tmp_path, bad)


def test_reader_bugs_become_read_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    step = ln_step(copy_ln(tmp_path, (".hlo.pb",)))
    from workbench.formats import hlo_proto

    def broken(data: bytes, file: str) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(hlo_proto, "read_hlo_proto", broken)
    with pytest.raises(ReadError, match="cannot read: IndexError: list index out of range"):
        loader.load_step_hlo(tmp_path, step)


def test_cache_bounds() -> None:
    cache: LruCache[tuple[str], str] = LruCache(max_entries=3, max_cost=100)
    for key in "abc":
        cache.put((key,), key, 10)
    assert cache.get(("a",)) == "a"  # now the most recent
    cache.put(("d",), "d", 10)
    assert cache.get(("b",)) is None and cache.get(("a",)) == "a"
    cache.put(("big",), "big", 95)
    assert cache.get(("big",)) == "big"
    assert all(cache.get((key,)) is None for key in "acd")


def test_entry_readers_load_in_a_fresh_process(corpus: Path) -> None:
    """A replay worker reads trace entries without having scanned (imported) the format."""
    import subprocess
    import sys

    folder = corpus / "mlir" / "mlir-trace-clean"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from workbench.loader import read_text\n"
        "from workbench.model import Source\n"
        "assert 'workbench.formats.mlir_trace' not in sys.modules\n"
        f"text = read_text(Path({str(folder)!r}), "
        "Source('module_0000.jit_f.mlir-trace.pb', entry=7))\n"
        "assert 'scf.for' in text, text[:200]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
