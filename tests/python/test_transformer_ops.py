"""The ops a transformer needs from Python (fd.ops and the Tensor operators),
against torch: rsqrt, erf, pow, comparisons, where, iota/arange, mean/var/
var_mean, softmax/log_softmax, layer_norm, rms_norm, a causal mask and masked
attention over heads; their bad-input errors and their records."""

import math

import pytest
import torch

import hostir

F = hostir.DataType.Float


def run(cache, build, inputs):
    with hostir.FusionDefinition(cache) as fd:
        build(fd)
    return fd, fd.execute(inputs)


def test_rsqrt_erf_and_pow(cache):
    x = torch.rand(4, 6) + 0.5

    def build(fd):
        t = fd.define_tensor(2)
        fd.add_output(fd.ops.rsqrt(t))
        fd.add_output(fd.ops.erf(t))
        fd.add_output(fd.ops.pow(t, 3.0))
        fd.add_output(t ** 2)
        fd.add_output(2.0 ** t)

    _, outs = run(cache, build, [x])
    for out, expected in zip(outs, [torch.rsqrt(x), torch.erf(x), torch.pow(x, 3.0), x ** 2,
                                    2.0 ** x]):
        torch.testing.assert_close(out, expected)


def test_integer_pow_stays_integer(cache):
    x = torch.arange(6)

    def build(fd):
        fd.add_output(fd.from_pytorch(x) ** 2)

    _, (out,) = run(cache, build, [x])
    assert out.dtype == torch.int64
    assert torch.equal(out, x ** 2)


COMPARISONS = {
    "eq": (torch.eq, lambda a, b: a == b),
    "ne": (torch.ne, lambda a, b: a != b),
    "lt": (torch.lt, lambda a, b: a < b),
    "le": (torch.le, lambda a, b: a <= b),
    "gt": (torch.gt, lambda a, b: a > b),
    "ge": (torch.ge, lambda a, b: a >= b),
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_and_their_operators(cache, name):
    reference, operator = COMPARISONS[name]
    a = torch.randn(3, 5)
    b = torch.randn(1, 5)
    a[1] = b[0]
    a[0, 0] = float("nan")

    def build(fd):
        ta = fd.define_tensor(2)
        tb = fd.define_tensor(shape=[1, -1], dtype=F)
        fd.add_output(getattr(fd.ops, name)(ta, tb))
        fd.add_output(operator(ta, tb))
        fd.add_output(operator(ta, 0.5))

    _, outs = run(cache, build, [a, b])
    assert all(out.dtype == torch.bool for out in outs)
    assert torch.equal(outs[0], reference(a, b))
    assert torch.equal(outs[1], reference(a, b))
    assert torch.equal(outs[2], reference(a, 0.5))


def test_values_stay_hashable_with_eq_overloaded(cache):
    with hostir.FusionDefinition(cache) as fd:
        t = fd.define_tensor(1)
        assert len({t, t}) == 1
        fd.add_output(t)


def test_where_tensors_and_scalars(cache):
    c = torch.tensor([[True], [False], [True]])
    a = torch.randint(-5, 5, (1, 4), dtype=torch.int32)
    b = torch.randn(4, dtype=torch.float64)

    def build(fd):
        tc = fd.from_pytorch(c)
        ta = fd.from_pytorch(a)
        tb = fd.from_pytorch(b)
        fd.add_output(fd.ops.where(tc, ta, tb))
        fd.add_output(fd.ops.where(tc, ta, 7))
        fd.add_output(fd.ops.where(tc, 0.5, tb))

    _, outs = run(cache, build, [c, a, b])
    torch.testing.assert_close(outs[0], torch.where(c, a.double(), b))
    assert outs[1].dtype == torch.int32
    assert torch.equal(outs[1], torch.where(c, a, torch.tensor(7, dtype=torch.int32)))
    torch.testing.assert_close(outs[2], torch.where(c, torch.tensor(0.5, dtype=torch.float64), b))


def test_iota_and_arange(cache):
    x = torch.randn(9)

    def build(fd):
        t = fd.define_tensor(1)
        n = fd.ops.size(t, 0)
        fd.add_output(fd.ops.iota(n, 2, 3, dtype=torch.int32))
        fd.add_output(fd.ops.iota(n, 0.5, 0.25, dtype=F))
        fd.add_output(fd.ops.arange(n))
        fd.add_output(fd.ops.arange(1, n, 2))
        fd.add_output(fd.ops.arange(3, 11, 4))

    _, outs = run(cache, build, [x])
    assert torch.equal(outs[0], torch.arange(2, 29, 3, dtype=torch.int32))
    torch.testing.assert_close(outs[1], torch.arange(9, dtype=torch.float64).mul(0.25).add(0.5)
                               .float())
    assert torch.equal(outs[2], torch.arange(9))
    assert torch.equal(outs[3], torch.arange(1, 9, 2))
    assert torch.equal(outs[4], torch.arange(3, 11, 4))


def test_mean_var_var_mean(cache):
    x = torch.randn(3, 4, 5) * 3 + 1

    def build(fd):
        t = fd.define_tensor(3)
        fd.add_output(fd.ops.mean(t, [0, 2]))
        fd.add_output(fd.ops.var(t, -1))
        fd.add_output(fd.ops.var(t, [1], correction=0, keep_dim=True))
        v, m = fd.ops.var_mean(t, [0, 1], keep_dim=True)
        fd.add_output(v)
        fd.add_output(m)

    _, outs = run(cache, build, [x])
    torch.testing.assert_close(outs[0], x.mean([0, 2]))
    torch.testing.assert_close(outs[1], x.var(-1))
    torch.testing.assert_close(outs[2], x.var(1, unbiased=False, keepdim=True))
    v, m = torch.var_mean(x, [0, 1], keepdim=True)
    torch.testing.assert_close(outs[3], v)
    torch.testing.assert_close(outs[4], m)


def test_softmax_log_softmax_stable(cache):
    x = torch.randn(2, 3, 8) * 50 + 1000

    def build(fd):
        t = fd.define_tensor(3)
        fd.add_output(fd.ops.softmax(t, -1))
        fd.add_output(fd.ops.log_softmax(t, 1))

    fd, outs = run(cache, build, [x])
    torch.testing.assert_close(outs[0], torch.softmax(x, -1))
    torch.testing.assert_close(outs[1], torch.log_softmax(x, 1), rtol=1e-5, atol=1e-4)
    # A composition: recorded as its primitives.
    kinds = [r.kind for r in fd.records]
    assert "ops.max" in kinds and "ops.exp" in kinds and "ops.sum" in kinds
    assert not any("softmax" in k for k in kinds)
    # Its kept axis is an explicit broadcast record, never a keep_dim
    # reduction record (docs/python.md).
    assert "ops.broadcast" in kinds
    assert not any(r.args.get("keep_dim") for r in fd.records if r.kind in ("ops.max", "ops.sum"))


def test_layer_norm_and_rms_norm(cache):
    x = torch.randn(2, 5, 16) * 4 + 2
    w, b, w2 = torch.randn(16), torch.randn(16), torch.randn(5, 16)

    def build(fd):
        t = fd.define_tensor(3)
        tw, tb, tw2 = fd.define_tensor(1), fd.define_tensor(1), fd.define_tensor(2)
        fd.add_output(fd.ops.layer_norm(t, 1, tw, tb))
        fd.add_output(fd.ops.layer_norm(t, 2, tw2, eps=1e-3))
        fd.add_output(fd.ops.rms_norm(t, 1, tw))
        fd.add_output(fd.ops.rms_norm(t, 1, tw, tb, eps=1e-5))

    _, outs = run(cache, build, [x, w, b, w2])
    ln = torch.nn.functional.layer_norm
    torch.testing.assert_close(outs[0], ln(x, [16], w, b), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(outs[1], ln(x, [5, 16], w2, None, 1e-3), rtol=1e-4, atol=1e-5)

    def rms(eps):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    torch.testing.assert_close(outs[2], rms(1e-6))
    torch.testing.assert_close(outs[3], rms(1e-5) + b)


def test_causal_mask_matches_tril(cache):
    x = torch.randn(4, 9)

    def build(fd):
        t = fd.define_tensor(2)
        offset = fd.define_scalar(dtype=hostir.DataType.Int64)
        fd.add_output(fd.ops.causal_mask(fd.ops.size(t, 0), fd.ops.size(t, 1), offset))

    _, (mask,) = run(cache, build, [x, 3])
    assert torch.equal(mask, torch.ones(4, 9, dtype=torch.bool).tril(3))


def attention_reference(q, k, v):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    s = q.shape[1]
    mask = torch.ones(s, s, dtype=torch.bool).tril()
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), -1) @ v


def test_masked_attention_over_heads_and_its_segments(cache):
    """q @ k^T over a heads axis, masked with where(mask, scores, -inf), softmax,
    @ v; run whole and segment by segment."""
    h, s, d = 2, 6, 8
    q, k, v = torch.randn(h, s, d), torch.randn(h, s, d), torch.randn(h, s, d)

    def build(fd):
        tq, tk, tv = fd.define_tensor(3), fd.define_tensor(3), fd.define_tensor(3)
        scores = (tq @ fd.ops.permute(tk, [0, 2, 1])) * (1.0 / math.sqrt(d))
        mask = fd.ops.causal_mask(fd.ops.size(tq, 1), fd.ops.size(tk, 1))
        probs = fd.ops.softmax(fd.ops.where(mask, scores, float("-inf")), -1)
        fd.add_output(probs @ tv)

    fd, (out,) = run(cache, build, [q, k, v])
    expected = attention_reference(q, k, v)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    assert len(fd.segment()) > 1
    (by_segments,) = fd.execute_segments([q, k, v])
    torch.testing.assert_close(by_segments, expected, rtol=1e-5, atol=1e-5)
    # The repro script re-creates the definition, where and iota included.
    assert "fd.ops.where(" in fd.repro() and "fd.ops.iota(" in fd.repro()


def test_definition_with_new_ops_is_cached(cache):
    def define():
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor(2)
            fd.add_output(fd.ops.where(t > 0, fd.ops.softmax(t, 1), 0.0))
        return fd

    first, second = define(), define()
    assert not first.cache_hit and second.cache_hit
    x = torch.randn(3, 4)
    torch.testing.assert_close(second.execute([x])[0],
                               torch.where(x > 0, torch.softmax(x, 1), torch.tensor(0.0)))


@pytest.mark.parametrize("build,parts", [
    (lambda fd, t, i: fd.ops.where(t, t, 0.0), ["where(", "must be Bool"]),
    (lambda fd, t, i: fd.ops.softmax(i, 0), ["softmax(", "needs a floating-point tensor",
                                             "Int64"]),
    (lambda fd, t, i: fd.ops.softmax(t, 2), ["softmax: axis 2 is out of range",
                                             "valid axes are [-2, 2)"]),
    (lambda fd, t, i: fd.ops.layer_norm(t, 3), ["layer_norm(", "normalized_ndims 3",
                                                "valid: [1, 2]"]),
    (lambda fd, t, i: fd.ops.layer_norm(t, 1, t), ["layer_norm(", "the weight", "has rank 2"]),
    (lambda fd, t, i: fd.ops.var(t, 0, correction=-1), ["correction -1 is negative"]),
    (lambda fd, t, i: fd.ops.iota(2.5), ["iota: the length must be an integer scalar"]),
    (lambda fd, t, i: fd.ops.iota(4, 0.5, 1), ["needs integer start and step"]),
    (lambda fd, t, i: fd.ops.arange(4, 0), ["arange(4, 0, 1)", "lead from start to end"]),
    (lambda fd, t, i: fd.ops.pow(fd.define_scalar(2), -1), ["negative power"]),
    (lambda fd, t, i: fd.ops.eq(t, fd.define_tensor(shape=[2, 7], contiguity=True)),
     ["eq: cannot broadcast"]),
])
def test_bad_inputs_raise_hostir_errors(cache, build, parts):
    with pytest.raises(hostir.Error) as info:
        with hostir.FusionDefinition(cache) as fd:
            t = fd.define_tensor(shape=[2, 3], contiguity=True)
            i = fd.define_tensor(2, dtype=hostir.DataType.Int64)
            build(fd, t, i)
    for part in parts:
        assert part in str(info.value)


def test_layer_norm_and_masked_softmax_run_as_compiled_kernels(cache):
    """The compositions and where/iota/comparisons compile (a fresh kernel is
    compiled or loaded from disk for the definition), and match torch."""
    # A constant no other test uses: the kernel's cache key is new to this process.
    bias = 0.5 + torch.rand(1).item()
    x = torch.randn(6, 10)

    def build(fd):
        t = fd.define_tensor(2)
        normed = fd.ops.layer_norm(t, 1) + bias
        mask = fd.ops.causal_mask(fd.ops.size(t, 0), fd.ops.size(t, 1))
        fd.add_output(fd.ops.softmax(fd.ops.where(mask, normed, float("-inf")), 1))

    before = hostir._C.kernel_cache_stats()
    _, (out,) = run(cache, build, [x])
    after = hostir._C.kernel_cache_stats()
    kernels = lambda stats: stats["compiled"] + stats["loaded_from_disk"]
    assert kernels(after) > kernels(before)
    normed = torch.nn.functional.layer_norm(x, [10]) + bias
    mask = torch.ones(6, 10, dtype=torch.bool).tril()
    expected = torch.softmax(normed.masked_fill(~mask, float("-inf")), 1)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
