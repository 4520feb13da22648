"""The "shadow" of a printed MLIR module: the same IR with bf16, f16 and f32 computed in f64.

The MLIR counterpart of `replay/hlo/shadow.py` (why a shadow: `replay/error_bound.py`). The
rewrite is textual: every `bf16`/`f16`/`f32` type becomes `f64` (`complex<f32>` becomes
`complex<f64>`), and hexadecimal float constants (`dense<0xFF80> : tensor<bf16>`,
`0x7F800000 : f32`) are re-encoded as f64 bits. What depends on the bits of a type (bitcasts)
or holds raw bytes (`dense_resource` blobs, multi-element hex data) cannot be widened this way:
`Unsupported` says so, and the verdict falls back to the fixed tolerance.
"""

from __future__ import annotations

import re
import struct

import numpy as np

from workbench.replay.errors import Unsupported

_NARROW = r"(bf16|f16|f32)"
# A type follows `x` (in a shape), `<`, `(`, `,`, `:` or a space: `tensor<4x8xbf16>`, `: f32`.
_TYPE = re.compile(rf"(?<=[x<\s(,:]){_NARROW}\b")
# A hexadecimal float constant and its type: `0x7F800000 : f32`, `dense<0xFF80> : tensor<bf16>`.
_HEX = re.compile(r"0x([0-9A-Fa-f]+)(>?\s*:\s*(?:(?:tensor|vector|memref)<(?:[0-9?]+x)*)?)"
                  rf"{_NARROW}\b")
_BIT_EXACT = re.compile(r"\b(arith\.bitcast|stablehlo\.bitcast_convert|mhlo\.bitcast_convert|"
                        r"dense_resource|stablehlo\.reduce_precision)\b")
_WIDTH = {"bf16": 4, "f16": 4, "f32": 8}


def _as_f64_hex(digits: str, type_name: str) -> str:
    if len(digits) != _WIDTH[type_name]:
        raise Unsupported(f"a higher-precision {type_name} constant given as raw data")
    bits = int(digits, 16)
    if type_name == "f32":
        value = float(np.uint32(bits).view(np.float32))
    elif type_name == "f16":
        value = float(np.uint16(bits).view(np.float16))
    else:
        value = float(np.uint32(bits << 16).view(np.float32))  # bf16: the top half of an f32
    return "0x" + struct.pack(">d", value).hex().upper()


def shadow_text(text: str) -> str:
    """`text` with every narrow float type widened to f64 (raises `Unsupported`)."""
    found = _BIT_EXACT.search(text)
    if found is not None:
        raise Unsupported(f"a higher-precision {found.group(1)}")
    text = _HEX.sub(lambda m: _as_f64_hex(m.group(1), m.group(3)) + m.group(2) + "f64", text)
    return _TYPE.sub("f64", text)
