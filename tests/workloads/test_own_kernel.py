"""A kernel of your own as a workload: the --arg grammar, its check against the PTX parameter
list, deterministic buffers, and launches in one, two or three dimensions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ndpsim.errors import ConfigError
from ndpsim.workloads import execute_workload
from ndpsim.workloads.own_kernel import OwnKernel, parse_arg, parse_dims
from tests.workloads.own_kernels import write_ptx

SAXPY = Path(__file__).resolve().parents[2] / "docs" / "examples" / "saxpy.ptx"
SAXPY_ARGS = ["i32:5000", "f32:2.5", "buf:f32:5000:uniform(0,1)", "buf:f32:5000:range"]


def _saxpy(args=SAXPY_ARGS, seed=0, grid="20", block="256"):
    return execute_workload(OwnKernel(SAXPY, None, grid, block, args, seed))


def test_an_own_kernel_computes_what_its_source_says():
    run = _saxpy()
    x, y = run.outputs["saxpy_param_2"], run.outputs["saxpy_param_3"]
    assert x.dtype == np.float32 and len(x) == 5000 and x.min() >= 0 and x.max() <= 1
    expected = (2.5 * x.astype(np.float64) + np.arange(5000)).astype(np.float32)  # one fma
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    assert run.workload.name == "saxpy" and run.workload.size == "custom"
    assert run.workload.params["args"] == SAXPY_ARGS
    assert run.workload.params["grid"] == [20, 1, 1]
    assert [a.name for a in run.memory.allocations] == ["saxpy_param_2", "saxpy_param_3"]
    assert run.module.path == str(SAXPY) and len(run.traces) == 1


def test_buffers_come_from_the_seed_each_from_its_own_stream():
    first, again, other = _saxpy(seed=3), _saxpy(seed=3), _saxpy(seed=4)
    x = "saxpy_param_2"
    assert np.array_equal(first.outputs[x], again.outputs[x])
    assert not np.array_equal(first.outputs[x], other.outputs[x])
    changed = _saxpy([*SAXPY_ARGS[:3], "buf:f32:5000:uniform(5,6)"], seed=3)
    assert np.array_equal(changed.outputs[x], first.outputs[x])  # the other buffer kept its data


def test_a_three_dimensional_launch_gives_every_thread_its_coordinates(tmp_path):
    ptx = write_ptx(tmp_path, "WHERE3D")
    # 24 threads per CTA: each CTA's second warp is partly empty
    run = execute_workload(OwnKernel(ptx, "where3d", "2,3,2", "4,2,3", ["buf:u32:288"]))
    index = np.arange(288)
    x, y, z = index % 8, index // 8 % 6, index // 48
    assert np.array_equal(run.outputs["where3d_param_0"], x | y << 10 | z << 20)
    assert run.traces[0].info.grid == (2, 3, 2) and run.traces[0].info.block == (4, 2, 3)


@pytest.mark.parametrize(("text", "values"), [
    ("buf:i32:6", [0] * 6),
    ("buf:i16:6:fill(-7)", [-7] * 6),
    ("buf:u8:6:range", list(range(6))),
    ("buf:f64:4:range", [0.0, 1.0, 2.0, 3.0]),
])  # fmt: skip
def test_fixed_initializers_fill_buffers_as_written(text, values):
    buffer = parse_arg(text, 1)
    data = buffer.draw(np.random.default_rng(0))
    assert data.dtype == buffer.dtype and data.tolist() == values


def test_random_initializers_draw_what_they_name():
    rng = np.random.default_rng(0)
    permutation = parse_arg("buf:u32:1000:permutation", 1).draw(rng)
    assert sorted(permutation.tolist()) == list(range(1000))
    integers = parse_arg("buf:i8:1000:uniform(-3,2)", 1).draw(rng)
    assert set(integers.tolist()) == {-3, -2, -1, 0, 1}
    floats = parse_arg("buf:f32:1000:uniform(2.5,3)", 1).draw(rng)
    assert floats.dtype == np.float32 and floats.min() >= 2.5 and floats.max() <= 3
    normal = parse_arg("buf:f64:10000:normal(10,2)", 1).draw(rng)
    assert abs(normal.mean() - 10) < 0.1 and abs(normal.std() - 2) < 0.1


def test_scalars_are_passed_as_their_type():
    assert parse_arg("u64:0x10", 2).value == 16 and parse_arg("f32:-0.5", 2).value == -0.5
    assert parse_arg("i8:-128", 2).dtype == np.int8


@pytest.mark.parametrize(("text", "complaint"), [
    ("buf:f33:10", "--arg 1 'buf:f33:10': unknown type 'f33'; expected one of i8, u8"),
    ("buf:f32:ten", "COUNT 'ten' is not an integer"),
    ("buf:f32:0", "COUNT must be at least 1, got 0"),
    ("buf:f32", "expected buf:TYPE:COUNT[:INIT]"),
    ("buf:f32:10:unifrm(0,1)", "unknown initializer 'unifrm(0,1)'; expected zeros, fill(V)"),
    ("buf:f32:10:uniform(1,0)", "uniform(LO,HI) needs LO < HI, got 1.0, 0.0"),
    ("buf:f32:10:uniform(0)", "uniform takes 2 values, written uniform(A,B)"),
    ("buf:f32:10:fill", "fill takes 1 value, written fill(V)"),
    ("buf:f32:10:range(3)", "range takes 0 values, written range"),
    ("buf:i8:300:range", "range needs values up to 299, more than i8 holds (127)"),
    ("buf:i32:10:normal(0,1)", "normal(MEAN,STD) draws floats"),
    ("buf:f32:10:normal(0,-1)", "needs a finite STD >= 0"),
    ("buf:f32:10:permutation", "a permutation is of integers"),
    ("buf:u8:10:fill(256)", "fill value 256 is outside the range of u8 (0 to 255)"),
    ("i32:2147483648", "VALUE 2147483648 is outside the range of i32"),
    ("i32:1.5", "VALUE '1.5' is not an integer"),
    ("f32:1e39", "VALUE 1e39 is beyond the range of f32 (±3.403e+38)"),
    ("f32:x", "VALUE 'x' is not a number"),
    ("i32", "expected a buffer (buf:TYPE:COUNT[:INIT]) or a scalar (TYPE:VALUE)"),
])  # fmt: skip
def test_a_malformed_argument_is_refused_naming_it(text, complaint):
    with pytest.raises(ConfigError) as error:
        parse_arg(text, 1)
    assert complaint in str(error.value)


@pytest.mark.parametrize(("args", "complaint"), [
    (SAXPY_ARGS[:3], "kernel 'saxpy' of "),
    (SAXPY_ARGS[:3], "takes 4 parameters (saxpy_param_0 (.u32), saxpy_param_1 (.f32), "
                     "saxpy_param_2 (.u64), saxpy_param_3 (.u64)); got 3 --arg"),
    (["buf:i32:10", *SAXPY_ARGS[1:]], "--arg 1 'buf:i32:10' does not fit parameter 1 "
     "'saxpy_param_0' (.u32, 4 B) of kernel 'saxpy': expected a 32-bit integer (i32:VALUE or "
     "u32:VALUE)"),
    (["i64:5000", *SAXPY_ARGS[1:]], "expected a 32-bit integer"),
    ([SAXPY_ARGS[0], "i32:2", *SAXPY_ARGS[2:]], "expected a scalar f32:VALUE"),
    ([*SAXPY_ARGS[:2], "f32:1", SAXPY_ARGS[3]],
     "expected a buffer (buf:TYPE:COUNT[:INIT]) or a 64-bit integer (i64:VALUE or u64:VALUE)"),
])  # fmt: skip
def test_arguments_that_do_not_fit_the_kernel_are_refused_before_it_runs(args, complaint):
    with pytest.raises(ConfigError) as error:
        OwnKernel(SAXPY, "saxpy", "20", "256", args)
    assert complaint in str(error.value)


@pytest.mark.parametrize(("kernel", "grid", "block", "complaint"), [
    ("nope", "1", "32", "--kernel 'nope': "),
    ("nope", "1", "32", "saxpy.ptx defines no kernel (.entry) of that name; its kernels: saxpy"),
    (None, "0", "32", "--grid '0': grid must be 1 to 3 positive sizes"),
    (None, "1,2,3,4", "32", "--grid '1,2,3,4': expected 1 to 3 positive integers, X[,Y,Z]"),
    (None, "1", "2048", "--block '2048': block x may be at most 1,024"),
    (None, "1", "32,32,2", "--block '32,32,2': a CTA holds at most 1024 threads"),
    (None, "1", "-4", "--block '-4': expected 1 to 3 positive integers"),
])  # fmt: skip
def test_a_bad_kernel_or_geometry_is_refused_naming_the_option(kernel, grid, block, complaint):
    with pytest.raises(ConfigError) as error:
        OwnKernel(SAXPY, kernel, grid, block, SAXPY_ARGS)
    assert complaint in str(error.value)


def test_a_module_of_several_kernels_needs_the_kernel_named(tmp_path):
    two = tmp_path / "two.ptx"
    text = write_ptx(tmp_path, "NOTHING").read_text()
    two.write_text(text + text.split(".address_size 64", 1)[1].replace("nothing", "again"))
    with pytest.raises(ConfigError, match=r"defines 2 kernels \(again, nothing\); choose one"):
        OwnKernel(two, None, "1", "32", [])
    assert OwnKernel(two, "again", "1", "32", []).name == "again"


def test_dims_are_padded_to_three():
    assert parse_dims("7", "--grid") == (7, 1, 1) and parse_dims("2,3", "--block") == (2, 3, 1)
