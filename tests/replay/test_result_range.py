"""The samples' range of the result: reduced as each output is made, kept narrow and rounded
outward, so it holds every sample while the stage never holds its whole result in f64."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from tests.helpers.noise_dump import recorded_adamw_step
from workbench.formats.hlo_text import parse_hlo_text
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.interpreter import Interpreter
from workbench.replay.judge.noise.model import SAMPLES
from workbench.replay.judge.noise.noisy_interpreter import NoisyInterpreter
from workbench.replay.judge.noise.recorder import Recorder
from workbench.replay.judge.noise.result_range import outward_pair, result_bytes
from workbench.replay.judge.noise.run import noise_plan, sampled

OUTPUTS = """
HloModule outputs

ENTRY main {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  sum = f32[1000] add(x, y)
  product = f32[1000] multiply(x, y)
  both = f32[1000] add(sum, product)
  half = bf16[1000] convert(sum)
  ROOT out = (f32[1000], f32[1000], bf16[1000], f32[1000]) tuple(product, both, half, x)
}
"""


def test_outward_rounding_never_lands_inside_the_value() -> None:
    wide = np.array([1 + 2.0**-30, -(1 + 2.0**-30), 1.0, 1e39, -1e39, np.nan, 2.0**-140, 0.0])
    low, high = outward_pair(wide, np.dtype(np.float32))
    assert low.dtype == high.dtype == np.float32
    finite = ~np.isnan(wide)
    assert np.all(low[finite].astype(np.float64) <= wide[finite])
    assert np.all(high[finite].astype(np.float64) >= wide[finite])
    assert low[2] == high[2] == 1.0  # exact values stay as they are
    assert high[0] == np.nextafter(np.float32(1), np.float32(2)) and low[0] == 1.0
    assert low[3] == np.finfo(np.float32).max and high[3] == np.inf
    assert np.isnan(low[5]) and np.isnan(high[5])
    assert low[6] >= 0 and high[6] > 0  # a value below f32's subnormals: kept above 0
    # across f32's whole range, subnormals and both zeros: one ulp as libm's nextafter steps
    rng = np.random.default_rng(0)
    many = np.concatenate([rng.standard_normal(10_000) * 10.0 ** rng.integers(-46, 39, 10_000),
                           [-(2.0**-140), -0.0, 2.0**-149, -(2.0**-149), 3.4028235e38 * 1.0000001]])
    with np.errstate(over="ignore"):
        nearest = many.astype(np.float32)
    back = nearest.astype(np.float64)
    for down, off, toward in ((True, back > many, -np.inf), (False, back < many, np.inf)):
        expected = np.where(off, np.nextafter(nearest, np.float32(toward)), nearest)
        assert np.array_equal(outward_pair(many, np.dtype(np.float32))[0 if down else 1],
                              expected)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    down, _ = outward_pair(np.array([1 + 2.0**-10]), bf16)
    assert down.dtype == bf16 and float(down[0]) == 1.0


def test_the_kept_range_takes_nine_bytes_an_element_for_narrow_floats() -> None:
    module = parse_hlo_text(OUTPUTS)
    assert result_bytes(module.entry.root.shape) == 4 * 1000 * (2 * 4 + 1)


def test_outputs_are_handed_over_once_only_the_root_reads_them() -> None:
    module = parse_hlo_text(OUTPUTS)
    rng = np.random.default_rng(0)
    arguments = [rng.standard_normal(1000).astype(np.float32) for _ in range(2)]
    plain = evaluate_module(module, arguments)
    taken: dict[int, np.ndarray] = {}
    interpreter = Interpreter(module, output_sink=lambda index, value: taken.setdefault(
        index, np.array(value)))
    held = evaluate_module(module, arguments, interpreter=interpreter)
    # `product` is handed over once `both` has read it; `x`, a parameter, stays in the root
    assert sorted(taken) == [0, 1, 2]
    assert held[0] is None and held[1] is None and held[2] is None
    assert np.array_equal(held[3], plain[3])
    for index, value in taken.items():
        assert np.array_equal(value, plain[index])
    assert interpreter.holds_at_once(module.entry_name) < Interpreter(module).holds_at_once(
        module.entry_name)


def test_the_range_holds_every_random_sample_within_an_ulp_of_f32() -> None:
    """On a real training step (AdamW, bf16 moments): each random sample evaluated whole in
    f64 lies within the kept range, which is its f64 range rounded outward to f32."""
    backend, arguments = recorded_adamw_step()
    reference = backend.load(backend.steps()[0])
    plan = noise_plan(reference, arguments)
    kept = sampled(plan, arguments, 0, range(SAMPLES)).result
    interpreter = NoisyInterpreter(plan.shadow, plan.declared, Recorder(needed=set()),
                                   spreads_budget=plan.spreads)  # the stage's samples again
    lowest: list[np.ndarray | None] | None = None
    highest: list[np.ndarray | None] | None = None
    any_nan: list[np.ndarray | None] | None = None
    for sample in range(SAMPLES):  # each sample's whole result in f64, as it was kept before
        interpreter.reseed(sample)
        value = evaluate_module(plan.shadow, arguments, interpreter=interpreter)
        arrays = [np.asarray(v) if np.asarray(v).dtype.kind == "f" else None for v in value]
        nans = [None if a is None else np.isnan(a) for a in arrays]
        if lowest is None or highest is None or any_nan is None:
            lowest, highest, any_nan = arrays, arrays, nans
            continue
        lowest = [None if a is None else np.fmin(a, b)
                  for a, b in zip(lowest, arrays, strict=True)]
        highest = [None if a is None else np.fmax(a, b)
                   for a, b in zip(highest, arrays, strict=True)]
        any_nan = [None if a is None else a | b for a, b in zip(any_nan, nans, strict=True)]
    assert lowest is not None and highest is not None and any_nan is not None
    checked = 0
    for low, high, f64_low, f64_high, nan_seen, nan_any in zip(
            kept.low, kept.high, lowest, highest, kept.nan_seen, any_nan, strict=True):
        if f64_low is None:
            assert low is None
            continue
        assert low.dtype in (np.float32, np.float64)
        defined = ~np.isnan(f64_low)
        assert np.all(low[defined] <= f64_low[defined]) and np.all(high[defined] >= f64_high[
            defined])
        tiny = np.finfo(np.float32).tiny
        ulp = np.maximum(np.spacing(np.abs(f64_low[defined]).astype(np.float32)), tiny)
        assert np.all(f64_low[defined] - low[defined] <= ulp)
        assert np.array_equal(nan_seen, nan_any)
        checked += int(np.count_nonzero(defined))
    assert checked > 10_000


def test_a_range_on_disk_is_the_range_in_memory() -> None:
    """Kept on disk (a training step's result beside a stage that fills the memory limit),
    a large output's range lives in files mapped read-write, and every sample reduces into
    it exactly as into memory; small outputs stay in memory."""
    from workbench.hlo_ir import Shape
    from workbench.replay.judge.noise.result_range import ResultRange
    from workbench.replay.spill import _mapped

    shape = Shape("tuple", tuple_shapes=(Shape("f32", (400_000,)), Shape("f32", (10,))))
    rng = np.random.default_rng(3)
    in_memory, on_disk = ResultRange(shape), ResultRange(shape, on_disk=True)
    for sample in range(4):
        big = rng.standard_normal(400_000)
        big[sample::97] = np.nan
        value = (big, rng.standard_normal(10))
        in_memory.add(value, nans_legal=sample != 3)
        on_disk.add(value, nans_legal=sample != 3)
    assert _mapped(on_disk.low[0]) and _mapped(on_disk.high[0])
    assert not _mapped(on_disk.low[1]) and not _mapped(in_memory.low[0])
    for field in ("low", "high", "nan_seen"):
        for kept, held in zip(getattr(on_disk, field), getattr(in_memory, field), strict=True):
            np.testing.assert_array_equal(kept, held)


def test_the_range_goes_to_disk_only_where_that_makes_the_stage_fit() -> None:
    """On the real AdamW dump: with room for all of it, the stage keeps the range in memory;
    with room for all but the range, it keeps the range on disk and counts it out; with less,
    it is refused, saying what all of it needs."""
    from workbench.replay.processes.memory import OverMemoryLimit

    backend, arguments = recorded_adamw_step()
    reference = backend.load(backend.steps()[0])
    roomy = noise_plan(reference, arguments, 2**30)
    kept = result_bytes(reference.entry.root.shape)
    assert not roomy.range_on_disk and kept > 0
    tight = noise_plan(reference, arguments, roomy.holds - kept // 2)
    assert tight.range_on_disk and tight.holds <= roomy.holds - kept // 2
    with pytest.raises(OverMemoryLimit, match="needs .* for the random-rounding stage"):
        noise_plan(reference, arguments, roomy.holds - kept - roomy.spreads - 1)


def test_the_stage_with_its_range_on_disk_finds_the_same_noise() -> None:
    """The whole stage (samples, split sample) with the range of the result on disk gives
    the noise it gives in memory, bit for bit."""
    from dataclasses import replace

    from workbench.replay.judge.error_bound import widen
    from workbench.replay.judge.noise.run import noise_from
    from workbench.replay.spill import _mapped

    module = parse_hlo_text(OUTPUTS.replace("[1000]", "[300000]"))
    rng = np.random.default_rng(8)
    arguments = [widen(rng.standard_normal(300_000).astype(np.float32)) for _ in range(2)]
    plan = noise_plan(module, arguments)
    assert not plan.range_on_disk  # it fits: the test moves it there
    found = {}
    for on_disk in (False, True):
        kept = replace(plan, range_on_disk=on_disk)
        found[on_disk] = noise_from(kept, arguments,
                                    [sampled(kept, arguments, 0, range(SAMPLES))])
    assert _mapped(found[True].low[0]) and not _mapped(found[False].low[0])
    for field in ("low", "high", "nan_seen"):
        for kept, held in zip(getattr(found[True], field), getattr(found[False], field),
                              strict=True):
            np.testing.assert_array_equal(kept, held)


def test_a_shared_disk_array_travels_as_its_file(tmp_path: Path) -> None:
    """Made within `shared_disk_arrays`, a range's array pickles as its file: the other side
    maps the same bytes and unlinks the file; a view of it pickles its bytes."""
    import pickle

    from workbench.replay.processes import memory

    with memory.shared_disk_arrays(str(tmp_path)):
        array = memory.disk_array((50_000,), np.dtype(np.float32))
    assert isinstance(array, memory.SharedDiskArray) and len(list(tmp_path.iterdir())) == 1
    array[:] = np.arange(50_000)
    message = pickle.dumps(array)
    assert len(message) < 1_000  # the file's name, not its 200 kB
    again = pickle.loads(message)
    assert isinstance(again, np.memmap) and np.array_equal(again, np.arange(50_000))
    assert list(tmp_path.iterdir()) == []  # the mappings keep it; nothing is left behind
    view = pickle.loads(pickle.dumps(array[10:20]))
    assert not isinstance(view, np.memmap) and np.array_equal(view, np.arange(10, 20))
    assert memory.disk_array((10,), np.dtype(np.float32)).__class__ is np.memmap  # unnamed


def test_a_disk_arena_carves_arrays_from_few_files(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrays from a `DiskArena` are on disk, each its own bytes (aligned, of any dtype and
    shape), carved from chunks rather than a file each; one above a quarter of a chunk gets a
    file of its own. Within `shared_disk_arrays` they stay unnamed (never sent)."""
    import tempfile

    from workbench.replay.processes import memory

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "made"))
    (tmp_path / "made").mkdir()
    files: list[int] = []
    made = memory.disk_array

    def counted(*args: Any, **kwargs: Any) -> Any:
        files.append(1)
        return made(*args, **kwargs)

    monkeypatch.setattr(memory, "disk_array", counted)
    arena = memory.DiskArena(chunk=4096)
    with memory.shared_disk_arrays(str(tmp_path / "shared")):
        arrays = [arena.array(shape, np.dtype(dtype)) for shape, dtype in (
            ((3,), np.float64), ((), np.float32), ((2, 5), np.int8), ((40, 3), np.float64),
            ((1000,), np.float64), *[((120,), np.float64)] * 4, ((7,), np.float32))]
    assert all(isinstance(a, np.memmap) for a in arrays)
    assert len(files) == 3  # two chunks of 4 kB, and the 8 kB array alone
    for index, array in enumerate(arrays):
        assert array is not None and array.ctypes.data % 64 == 0
        array[...] = index + 1
    for index, array in enumerate(arrays):
        assert array is not None and np.all(array == index + 1)
    assert not (tmp_path / "shared").exists() or list((tmp_path / "shared").iterdir()) == []


def test_a_worker_hands_its_range_on_disk_back_as_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the stage fits only with its range of the result on disk, a worker process (the
    app's, `--time-limit`'s) keeps it in a folder the replay owns and sends it back as its
    files: the parent maps them, the truth with the noise is the one found in this process,
    and the folder goes with the replay."""
    from tests.helpers.localize_dumps import write_dump
    from workbench.index import scan
    from workbench.replay.judge.compare import NOISE
    from workbench.replay.processes import memory
    from workbench.replay.steps import ProcessRunner, open_replay
    from workbench.sizes import MEMORY_LIMIT_VARIABLE

    text = OUTPUTS.replace("[1000]", "[300000]")
    rng = np.random.default_rng(5)
    arguments = [rng.standard_normal(300_000).astype(np.float32) for _ in range(2)]
    root = write_dump(tmp_path / "dump", text, text, arguments)
    module = parse_hlo_text(text)
    widened = [a.astype(np.float64) for a in arguments]
    roomy = noise_plan(module, widened, 2**30)
    tight = roomy.holds - result_bytes(module.entry.root.shape) // 2
    assert noise_plan(module, widened, tight).range_on_disk
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, str(tight))
    mapped: list[str] = []
    mapped_again = memory._mapped_again

    def spied(path: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        mapped.append(path)
        return mapped_again(path, dtype, shape)

    monkeypatch.setattr(memory, "_mapped_again", spied)
    dump = scan(root)
    truths = {}
    for runner in (None, ProcessRunner()):
        with open_replay(root, dump.modules[0], dump.modules[0].executions[0],
                         runner=runner) as replay:
            assert replay.reference.kind.value == "ok"
            truth = replay.truth(NOISE)
            assert truth is not None, replay.problem
            truths[runner is None] = truth
            folder = replay._shared
        if runner is not None:
            assert folder is not None and len(mapped) >= 4  # low and high of two outputs
            assert all(p.startswith(folder) for p in mapped) and not Path(folder).exists()
        else:
            assert folder is None and not mapped
    for field in ("value", "bound"):
        for ours, theirs in zip(getattr(truths[True], field), getattr(truths[False], field),
                                strict=True):
            if ours is None:
                assert theirs is None
            else:
                np.testing.assert_array_equal(ours, theirs)
