"""HLO normalization on real XLA dumps."""

from __future__ import annotations

from pathlib import Path

from workbench.diff.hlo_text import hlo_signatures
from workbench.diff.normalize import NormalizeOptions, detect_kind, normalize


def _step(corpus: Path, folder: str, module: str, step: str) -> str:
    (path,) = (corpus / "xla" / folder).glob(f"{module}.{step}.*.txt")
    return path.read_text()


def test_sections_tables_and_origin(corpus: Path) -> None:
    text = _step(corpus, "layernorm", "module_0010.jit_ln", "0028")
    assert detect_kind(text) == "hlo"
    normalized = normalize(text)
    names = [s.name for s in normalized.sections]
    assert names == ["(module)", "%region_0.1", "%fused_computation", "%region_1.2",
                     "%fused_computation.1", "%main.3"]
    assert normalized.sections[-1].kind == "entry"
    assert not any(line.startswith(("FileNames", "StackFrames")) for line in normalized.lines)
    assert not any("metadata=" in line for line in normalized.lines)
    # Every kept line maps back to its original line.
    original = text.splitlines()
    for index, line in enumerate(normalized.lines):
        source = original[normalized.origin[index]]
        assert source.startswith(line.split(",")[0])
    header = normalized.sections[2].header
    assert original[normalized.origin[header]].startswith("%fused_computation (")
    assert all(normalized.line_section[i] == 2 for i in range(header, header + 18))


def test_keys_cut_names_to_stems_but_not_numbers(corpus: Path) -> None:
    normalized = normalize(_step(corpus, "layernorm", "module_0010.jit_ln", "0027"))
    keys = normalized.keys
    assert "  %reduce_sum = f32[6]{0} reduce(%x, %constant), dimensions={1}, " \
           "to_apply=%region_0" in keys
    assert "  %constant = f32[] constant(0.125)" in keys
    assert "  %constant = f32[] constant(1e-05)" in keys
    assert any(k.startswith("ENTRY %main (x: f32[6,8], g: f32[8], b: f32[8])") for k in keys)


def test_raw_options_keep_everything(corpus: Path) -> None:
    text = _step(corpus, "layernorm", "module_0010.jit_ln", "0027")
    normalized = normalize(text, options=NormalizeOptions.raw())
    assert normalized.lines == text.splitlines() == normalized.keys


def test_canonical_lines_rename_by_definition_order(corpus: Path) -> None:
    normalized = normalize(_step(corpus, "layernorm", "module_0010.jit_ln", "0028"))
    canonical = normalized.canonical_lines()
    assert "%fused_computation.1 (param_0.0: f32[6,8], param_1.0: f32[6]) -> f32[6] {" \
        in canonical
    assert "  %sub.0 = f32[6,8]{1,0} broadcast(%multiply.0), dimensions={0}" in canonical
    assert "  %sub.1 = f32[6,8]{1,0} subtract(%param_3.0, %sub.0)" in canonical


def test_names_printed_without_sigils_get_them_back(corpus: Path) -> None:
    """Newer XLA prints names without `%`: the stripped lines of such text (here a real dump
    with its sigils taken out) are the sigiled ones."""
    text = _step(corpus, "layernorm", "module_0010.jit_ln", "0028")
    bare = text.replace("%", "")
    assert "  sub.1 = f32[6,8]{1,0} subtract(" in bare or " subtract(" in bare
    sigiled, stripped = normalize(text), normalize(bare)
    assert [s.name for s in stripped.sections] == [s.name.lstrip("%")
                                                   for s in sigiled.sections]
    assert stripped.sections[-1].kind == "entry"
    assert stripped.lines == sigiled.lines
    assert stripped.keys == sigiled.keys
    assert stripped.canonical_lines() == sigiled.canonical_lines()


def test_text_cut_after_its_last_computation_header(corpus: Path) -> None:
    """The tail of a dump: the entry computation's instructions and its `}`, no header."""
    text = _step(corpus, "layernorm", "module_0010.jit_ln", "0028")
    entry = text.index("\nENTRY ")
    tail = text[text.index("\n", entry + 1) + 1 :]
    normalized = normalize(tail, "hlo")
    assert [s.name for s in normalized.sections] == ["(module)"]
    assert len(normalized.lines) == tail.count("\n")


def test_equal_keys_have_equal_signatures(corpus: Path) -> None:
    """A signature is a necessary condition for equal keys: over every line of every step of
    a module, lines with one key have one signature; yet signatures tell many lines apart."""
    signatures_by_key: dict[str, set[str | None]] = {}
    for path in sorted((corpus / "xla" / "layernorm").glob("module_0010.jit_ln.[0-9]*.txt")):
        normalized = normalize(path.read_text())
        assert normalized.signature_function is hlo_signatures
        for key, signature in zip(normalized.keys, hlo_signatures(normalized.raw),
                                  strict=True):
            signatures_by_key.setdefault(key, set()).add(signature)
    assert len(signatures_by_key) > 50
    assert all(len(signatures) == 1 for signatures in signatures_by_key.values())
    known = set().union(*signatures_by_key.values()) - {None}
    assert len(known) > 25


def test_signature_unknown_where_stripping_reaches_it(corpus: Path) -> None:
    text = _step(corpus, "layernorm", "module_0010.jit_ln", "0027")
    line = next(line for line in text.splitlines() if " rsqrt(" in line)
    head, _, rest = line.partition(" rsqrt(")
    moved = f'{head}, metadata={{op_name="x"}} rsqrt({rest}'  # stripping cuts before `(`
    renamed = line.replace("rsqrt", "rsqrt\u00e9")
    assert hlo_signatures([line, moved, renamed]) == [hlo_signatures([line])[0], None, None]
    assert hlo_signatures([line])[0] is not None
    # Bare names get their sigils back when stripped: no signatures then.
    assert normalize(text.replace("%", "")).signature_function is None
