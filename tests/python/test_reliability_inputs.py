"""Issue 22, the input side: run-time slice bounds clamp as torch does,
scalar inputs must fit their dtype, an output may not alias an input,
number_of_streams must be positive, bad launch variables name themselves,
and a hostile fusion-cache file never raises."""

import hashlib
import json
import random
import subprocess
import sys
import warnings

import pytest
import torch

import hostir


# --- item 1: run-time slice bounds --------------------------------------------------

def _runtime_slice(cache, compute):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        start = fd.define_scalar(dtype=hostir.DataType.Int64)
        stop = fd.define_scalar(dtype=hostir.DataType.Int64)
        sliced = fd.ops.slice(x, 0, start, stop)
        fd.add_output(fd.ops.relu(sliced) * 2.0 if compute else sliced)
        fd.add_output(fd.ops.full([fd.ops.size(sliced, 0)], 1.0, hostir.DataType.Float))
    return fd


def _rows(x, start, stop):
    """x[start:stop] with Python's own slice rules (torch's; torch 1.13
    refuses an index below -2**62 itself)."""
    first, last, _ = slice(start, stop).indices(len(x))
    return x[first:max(first, last)]


BOUNDS = [(2, 6), (2, 20), (0, 8), (-3, 8), (-3, -1), (-20, 3), (5, 2), (9, 12),
          (-100, 100), (3, -100), (0, 2**63 - 1), (-(2**63), 2**63 - 1), (8, 8)]


@pytest.mark.parametrize("compute", [False, True])
def test_runtime_slice_clamps_like_torch(cache, compute):
    fd = _runtime_slice(cache, compute)
    x = torch.randn(8, 4)
    for start, stop in BOUNDS:
        expected = _rows(x, start, stop)
        if compute:
            expected = torch.relu(expected) * 2.0
        out, ones = fd.execute([x, start, stop])
        assert out.shape == expected.shape, (start, stop)
        torch.testing.assert_close(out, expected)
        assert ones.shape == (len(expected),), (start, stop)


def test_runtime_slice_preallocated_output_has_torch_extent(cache):
    fd = _runtime_slice(cache, compute=True)
    x = torch.randn(8, 4)
    # A buffer of the unclamped extent (18 rows) is refused; the torch one fits.
    with pytest.raises(hostir.Error, match="expected \\[6, 4\\]"):
        fd.execute([x, 2, 20], output=[torch.empty(18, 4), torch.empty(6)])
    out, _ = fd.execute([x, 2, 20], output=[torch.empty(6, 4), torch.empty(6)])
    torch.testing.assert_close(out, torch.relu(x[2:20]) * 2.0)


def test_runtime_slice_split_over_streams(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        start = fd.define_scalar(dtype=hostir.DataType.Int64)
        stop = fd.define_scalar(dtype=hostir.DataType.Int64)
        y = fd.ops.relu(fd.ops.slice(x, 0, start, stop))
        z = y * 3.0
        fd.add_output(z)
        fd.sched.split(z, 0, 2, inner_split=False)
        fd.sched.parallelize(z, 0, hostir.ParallelType.Stream)
    x = torch.randn(8, 4)
    for start, stop in [(2, 20), (-5, 100), (1, 4), (6, 3)]:
        (out,) = fd.execute([x, start, stop], number_of_streams=2)
        torch.testing.assert_close(out, torch.relu(_rows(x, start, stop)) * 3.0)


# --- items 2 and 8: scalar inputs must fit their dtype --------------------------------

def _scalar_times(cache, dtype):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True])
        s = fd.define_scalar(dtype=dtype)
        fd.add_output(fd.ops.mul(x, s))
    return fd


@pytest.mark.parametrize("dtype, bad, expected", [
    (hostir.DataType.Bool, 7, "True, False, 0 or 1"),
    (hostir.DataType.Bool, 2.5, "True, False, 0 or 1"),
    (hostir.DataType.Int64, 2.5, "an integer"),
    (hostir.DataType.Int32, 2**31, "from -2147483648 to 2147483647"),
])
def test_scalar_that_does_not_fit_its_dtype_is_an_error(cache, dtype, bad, expected):
    fd = _scalar_times(cache, dtype)
    with pytest.raises(hostir.Error) as info:
        fd.execute([torch.ones(3), bad])
    message = str(info.value)
    assert message.startswith("scalar value out of its dtype"), message
    assert "input 1" in message and expected in message, message


def test_scalar_values_that_fit_are_taken_as_torch_takes_them(cache):
    x = torch.arange(3.0)
    fd = _scalar_times(cache, hostir.DataType.Int64)
    torch.testing.assert_close(fd.execute([x, True])[0], x * 1)   # a bool is 0 or 1
    torch.testing.assert_close(fd.execute([x, 5])[0], x * 5)
    fd = _scalar_times(cache, hostir.DataType.Bool)
    torch.testing.assert_close(fd.execute([x, 1])[0], x * True)
    fd = _scalar_times(cache, hostir.DataType.Double)
    torch.testing.assert_close(fd.execute([x, 3])[0], x * 3.0)  # an int for a Double


def test_bool_for_an_int64_extent(cache):
    with hostir.FusionDefinition(cache) as fd:
        n = fd.define_scalar(dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.full([n, 2], 1.0, hostir.DataType.Float))
    (out,) = fd.execute([True])
    assert out.shape == (1, 2)


@pytest.mark.parametrize("huge", [2**64, 2**63, -(2**63) - 1])
def test_int_beyond_64_bits_names_the_input(cache, huge):
    fd = _scalar_times(cache, hostir.DataType.Int64)
    with pytest.raises(hostir.Error) as info:
        fd.execute([torch.ones(3), huge])
    message = str(info.value)
    assert message.startswith("scalar value out of its dtype"), message
    assert f"input 1 i1 (dtype int64) got {huge}" in message, message
    assert "64-bit integer" in message


SCALAR_DTYPES = [hostir.DataType.Bool, hostir.DataType.Int32, hostir.DataType.Int64,
                 hostir.DataType.Float, hostir.DataType.Double]
PYTHON_VALUES = [False, True, 0, 1, 7, -3, 2**31, 2**63 - 1, 2**64, 0.0, 2.5, float("nan"),
                 float("inf")]


def _fits(dtype, value):
    """Whether `value` is one a scalar of `dtype` takes (docs/python.md)."""
    if dtype == hostir.DataType.Bool:
        return isinstance(value, bool) or (isinstance(value, int) and value in (0, 1))
    if dtype in (hostir.DataType.Int32, hostir.DataType.Int64):
        bits = 32 if dtype == hostir.DataType.Int32 else 64
        return isinstance(value, int) and -(2**(bits - 1)) <= value < 2**(bits - 1)
    return not (isinstance(value, int) and not -(2**63) <= value < 2**63)


@pytest.mark.parametrize("dtype", SCALAR_DTYPES, ids=str)
def test_every_scalar_dtype_with_every_python_type(cache, dtype):
    """A value that fits computes what torch computes with the value taken as
    the dtype; any other is a hostir.Error naming the input, never another
    exception."""
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=hostir.DataType.Double)
        s = fd.define_scalar(dtype=dtype)
        fd.add_output(fd.ops.add(x, s))
    x = torch.tensor([1.0, -2.0], dtype=torch.float64)
    for value in PYTHON_VALUES:
        if _fits(dtype, value):
            (out,) = fd.execute([x, value])
            as_dtype = bool(value) if dtype == hostir.DataType.Bool else (
                int(value) if dtype in (hostir.DataType.Int32, hostir.DataType.Int64)
                else float(value))
            torch.testing.assert_close(out, x + as_dtype, equal_nan=True,
                                       msg=f"{dtype} given {value!r}")
        else:
            with pytest.raises(hostir.Error) as info:
                fd.execute([x, value])
            assert str(info.value).startswith("scalar value out of its dtype"), (value, info)
            assert "input 1" in str(info.value)


# --- item 3: an output that aliases an input ---------------------------------------

def test_output_aliasing_an_input_is_an_error(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.relu(x) + 1.0)
    x = torch.randn(4, 3)
    for alias in [x, x.view(4, 3), x[:, :]]:
        with pytest.raises(hostir.Error) as info:
            fd.execute([x], output=[alias])
        message = str(info.value)
        assert message.startswith("an output buffer aliases an input"), message
        assert "output 0 T" in message and "input 0 T0" in message, message
    # A buffer of its own, and one from another part of a larger storage, are fine.
    storage = torch.empty(8, 3)
    (out,) = fd.execute([storage[:4]], output=[storage[4:]])
    torch.testing.assert_close(out, torch.relu(storage[:4]) + 1.0)
    (out,) = fd.execute([x], output=[torch.empty(4, 3)])
    torch.testing.assert_close(out, torch.relu(x) + 1.0)


# --- item 4: number_of_streams -------------------------------------------------------

@pytest.mark.parametrize("bad", [0, -1, True, 2.0, 2**40])
def test_number_of_streams_must_be_positive(cache, bad):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(1)
        fd.add_output(fd.ops.relu(x))
    with pytest.raises(hostir.Error, match="number_of_streams must be a positive int"):
        fd.execute([torch.ones(2)], number_of_streams=bad)
    with pytest.raises(hostir.Error, match="number_of_streams must be a positive int"):
        fd.host_ir([torch.ones(2)], number_of_streams=bad)


def test_number_of_streams_none_is_the_documented_default_of_four(cache):
    from hostir.fusion_definition import _streams

    assert _streams(None) == 4
    assert _streams(1) == 1


@pytest.mark.parametrize("bad", [0, -1, 2**40, True, 2.0])
def test_number_of_streams_error_is_the_one_cpp_gives(cache, bad):
    # One check (C++'s checkedNumberOfStreams): Python's message for a bad
    # number is the one the C++ executor gives for it, word for word, and
    # Python's default is C++'s. (fd.execute appends a repro after the cause.)
    with hostir.FusionDefinition(cache) as fd:
        fd.add_output(fd.ops.relu(fd.define_tensor(1)))
    with pytest.raises(hostir.Error) as from_python:
        fd.execute([torch.ones(2)], number_of_streams=bad)
    cause = str(from_python.value).split("\n\nrepro:")[0]
    assert cause == hostir._C.number_of_streams_error(repr(bad))
    if not isinstance(bad, bool) and isinstance(bad, int) and bad < 2**31:
        with pytest.raises(hostir.Error) as from_cpp:
            fd._cdef.execute([torch.ones(2)], [], bad)  # past Python's check
        assert str(from_cpp.value) == cause
    from hostir.fusion_definition import _streams
    assert _streams(None) == hostir._C.default_number_of_streams


# --- item 10: bad launch environment values ------------------------------------------

_CACHE_SCRIPT = (
    "import torch, hostir\n"
    "with hostir.FusionDefinition() as fd:\n"
    "    fd.add_output(fd.ops.relu(fd.define_tensor(1)))\n")


@pytest.mark.parametrize("name, value", [("RANK", "abc"), ("RANK", "-1"), ("RANK", "1.5"),
                                         ("OMPI_COMM_WORLD_RANK", "x"),
                                         ("SLURM_PROCID", "0x1")])
def test_bad_rank_with_a_cache_dir_names_the_variable(tmp_path, name, value):
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")}
    env.update({"HOSTIR_CACHE_DIR": str(tmp_path), name: value})
    run = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("hostir.Error: bad launch environment: "
                           f"{name}='{value}' is not a whole number"), run.stderr
    assert "ValueError" not in run.stderr


@pytest.mark.parametrize("variables, expected", [
    ({"RANK": "0", "WORLD_SIZE": "two"}, "WORLD_SIZE='two' is not a whole number"),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "z"}, "LOCAL_RANK='z' is not a whole number"),
    ({"MASTER_PORT": "http"}, "MASTER_PORT='http' is not a whole number"),
])
def test_bad_launch_variables_name_themselves(monkeypatch, variables, expected):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_PORT",
                 "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    import hostir.distributed as dist

    with pytest.raises(hostir.Error) as info:
        dist.rank()
    assert str(info.value).startswith("bad launch environment"), str(info.value)
    assert expected in str(info.value)


# --- item 9: a hostile fusion-cache file ---------------------------------------------

def _cache_file(tmp_path):
    cache = hostir.FusionCache()
    for unary in ("relu", "neg", "exp"):
        with hostir.FusionDefinition(cache) as fd:
            x = fd.define_tensor(shape=[-1, 4], contiguity=[True, True])
            s = fd.define_scalar(dtype=hostir.DataType.Int64)
            y = getattr(fd.ops, unary)(fd.ops.slice(x, 0, s, fd.ops.size(x, 0)))
            fd.add_output(fd.ops.sum(y * 2.0, [1]))
    path = tmp_path / "fusions.json"
    cache.serialize(str(path))
    return path.read_bytes()


def _load(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = hostir.FusionCache.deserialize(str(path))
    assert isinstance(cache, hostir.FusionCache)
    return cache, caught


def test_cache_loader_survives_truncations_bit_flips_and_hostile_payloads(tmp_path):
    good = _cache_file(tmp_path)
    header_line, _, payload = good.partition(b"\n")
    header = json.loads(header_line)
    rng = random.Random(22)
    path = tmp_path / "mutant.json"
    loaded = 0
    for trial in range(300):
        kind = trial % 3
        if kind == 0:  # truncated anywhere
            data = good[:rng.randrange(len(good))]
        elif kind == 1:  # a few bits flipped, checksum left as it was
            data = bytearray(good)
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            data = bytes(data)
        else:  # payload changed and checksum recomputed: only content checks remain
            mutant = bytearray(payload)
            for _ in range(rng.randint(1, 3)):
                position = rng.randrange(len(mutant))
                mutant[position:position + 1] = rng.choice(
                    [b"[", b"]", b"{", b"}", b"0", b"-1", b"9" * 30, b'"', b",", b"null",
                     b"true", b"1e999", b"", bytes([rng.randrange(256)])])
            text = bytes(mutant).decode("utf-8", errors="replace").rstrip("\n")
            hostile = dict(header, sha256=hashlib.sha256(text.encode()).hexdigest())
            data = (json.dumps(hostile) + "\n" + text + "\n").encode()
        path.write_bytes(data)
        cache, caught = _load(path)
        if cache.num_fusions() == 0:
            assert caught, f"trial {trial}: an empty cache without a warning"
        else:
            loaded += 1
    # Deeply nested JSON (RecursionError inside json) in the payload and the header.
    nested = "[" * 100000 + "]" * 100000
    hostile = dict(header, sha256=hashlib.sha256(nested.encode()).hexdigest())
    for data in [json.dumps(hostile) + "\n" + nested + "\n", nested + "\n" + nested + "\n",
                 json.dumps(dict(header, sha256=hashlib.sha256(
                     json.dumps({"max_fusions": 0, "next_id": 0, "fusions": []}).encode()
                 ).hexdigest())) + "\n" + json.dumps({"max_fusions": 0, "next_id": 0,
                                                      "fusions": []}) + "\n"]:
        path.write_text(data)
        cache, caught = _load(path)
        assert cache.num_fusions() == 0 and caught
        assert "ignoring the fusion cache file" in str(caught[0].message)
    # The good file still loads, and a definition hits its fusion and runs.
    path.write_bytes(good)
    cache, caught = _load(path)
    assert cache.num_fusions() == 3 and not caught
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(shape=[-1, 4], contiguity=[True, True])
        s = fd.define_scalar(dtype=hostir.DataType.Int64)
        y = fd.ops.relu(fd.ops.slice(x, 0, s, fd.ops.size(x, 0)))
        fd.add_output(fd.ops.sum(y * 2.0, [1]))
    assert fd.cache_hit
    x = torch.randn(5, 4)
    torch.testing.assert_close(fd.execute([x, 2])[0], (torch.relu(x[2:]) * 2.0).sum(1))
