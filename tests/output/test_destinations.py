"""No writer replaces an input, writes into a dump, or replaces a file it was not told to."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.destinations import (
    RefusedDestination,
    check_file,
    check_folder,
    write_file_atomically,
)


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "actions.log").write_text("log\n")
    return folder


def test_a_file_equal_to_an_input_is_refused_through_links(dump: Path, tmp_path: Path) -> None:
    log = dump / "actions.log"
    link = tmp_path / "link.log"
    link.symlink_to(log)
    for out in (log, link):
        with pytest.raises(RefusedDestination, match="is an input"):
            check_file(out, "--out", inputs=[log], force=True)


def test_a_file_inside_the_dump_is_refused_through_links(dump: Path, tmp_path: Path) -> None:
    into_dump = tmp_path / "into-dump"
    into_dump.symlink_to(dump)
    for out in (dump / "trace.json", dump / "sub" / "trace.json", into_dump / "trace.json"):
        with pytest.raises(RefusedDestination, match="inside the dump folder"):
            check_file(out, "--out", dumps=[dump / "actions.log"])


def test_an_existing_file_only_with_force(tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    check_file(out, "--out")
    out.write_text("{}")
    with pytest.raises(RefusedDestination, match="exists; add --force"):
        check_file(out, "--out")
    check_file(out, "--out", force=True)
    with pytest.raises(RefusedDestination, match="is a folder"):
        check_file(tmp_path, "--out", force=True)


def test_a_folder_with_files_only_with_force(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "literals"
    check_folder(out, "--out", dumps=[dump])
    out.mkdir()
    check_folder(out, "--out", dumps=[dump])
    (out / "x.npy").write_bytes(b"")
    with pytest.raises(RefusedDestination, match="not empty"):
        check_folder(out, "--out", dumps=[dump])
    check_folder(out, "--out", dumps=[dump], force=True)
    with pytest.raises(RefusedDestination, match="holds an input"):
        check_folder(tmp_path, "--out", inputs=[out / "x.npy"], force=True)
    with pytest.raises(RefusedDestination, match="inside the dump folder"):
        check_folder(dump, "--out", dumps=[dump], force=True)


def test_atomic_write_replaces_whole_or_not_at_all(tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    write_file_atomically(out, "first")
    assert out.read_text() == "first"

    with pytest.raises(TypeError):
        write_file_atomically(out, 42)  # type: ignore[arg-type]  # the wrong type on purpose
    assert out.read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json"]  # no temporary left


@pytest.fixture
def log(dump: Path) -> Path:
    source = Path(__file__).parents[1] / "data" / "corpus" / "mlir" / "iree-opt-to-loops"
    copy = dump / "actions.log"
    shutil.copyfile(source / "actions.log", copy)
    return copy


def test_chrome_trace_never_overwrites_its_log(log: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    before = log.read_bytes()
    assert main(["actions", str(log), "--chrome-trace", str(log), "--force"]) == 2
    assert "is an input" in capsys.readouterr().err
    assert main(["actions", str(log), "--chrome-trace", str(log.parent / "trace.json")]) == 2
    assert "inside the dump folder" in capsys.readouterr().err
    assert log.read_bytes() == before
    assert sorted(p.name for p in log.parent.iterdir()) == ["actions.log"]

    out = tmp_path / "trace.json"
    out.write_text("keep me")
    assert main(["actions", str(log), "--chrome-trace", str(out)]) == 2
    assert "exists; add --force" in capsys.readouterr().err
    assert out.read_text() == "keep me"
    assert main(["actions", str(log), "--chrome-trace", str(out), "--force"]) == 0
    assert out.read_text().startswith("{")
