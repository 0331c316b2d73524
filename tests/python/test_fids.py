"""FusionState: fids in definition order, negative extent fids, maps, and the
state a cache hit restores."""

import torch

import hostir


def define(cache):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)  # fid 0, extents -1, -2
        s = fd.define_scalar(dtype=hostir.DataType.Double)  # fid 1
        w = fd.define_tensor(shape=[4, 1, -1], contiguity=[True, None, True])  # 2; -3 -4 -5
        y = fd.ops.relu(x) * s  # relu 3, mul 4
        n = x.size(1)  # an input extent: no new fid
        z = fd.ops.full([n], 1.0)  # constant 5, full 6
        fd.add_output(y)
        fd.add_output(z)
        fd.add_output(fd.ops.sum(w, [0]))  # 7
    return fd, (x, s, w, y, n, z)


def test_fids_in_definition_order(cache):
    fd, (x, s, w, y, n, z) = define(cache)
    assert [v.fid for v in (x, s, w, y, z)] == [0, 1, 2, 4, 6]
    assert n.fid == -2
    state = fd.state
    assert state.inputs == [0, 1, 2]
    assert state.outputs == [4, 6, 7]
    assert state.extents == [(-1, 0, 0), (-2, 0, 1), (-3, 2, 0), (-4, 2, 1), (-5, 2, 2)]
    assert state.extent_fids()[-4] == (2, 1)
    assert state.kinds == list("TSTTTSTT")
    # Every fid (and extent fid) appears once in the Val -> fid map.
    assert sorted(state.val_to_fid.values()) == [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]
    assert state.val_to_fid["T0"] == 0  # tensor T0 is fid 0
    assert x.ir().startswith("T0_g_float")


def test_hit_restores_state_equal_to_fresh_build(cache):
    fresh, _ = define(cache)
    hit, _ = define(cache)
    assert hit.cache_hit
    assert hit.state == fresh.state
    assert hit.state is not fresh.state  # restored from the cache's copy
    # A build in another cache (fresh C++ fusion) gives the same maps.
    other, _ = define(hostir.FusionCache())
    assert not other.cache_hit
    assert other.state.to_json() == hit.state.to_json()


def test_restored_after_deserialize(cache, tmp_path):
    fresh, _ = define(cache)
    cache.serialize(tmp_path / "c.json")
    loaded = hostir.FusionCache.deserialize(tmp_path / "c.json")
    hit, _ = define(loaded)
    assert hit.cache_hit and hit.state == fresh.state
    # The fusion rebuilt from records has the same maps too.
    rebuilt = hostir.FusionState.of(hit._cdef, hit.state.kinds)
    assert rebuilt == fresh.state
    outs = hit.execute([torch.randn(3, 5), 2.0, torch.randn(4, 1, 6)])
    assert outs[1].shape == (5,)


def test_extent_fid_values_bind_inputs_sizes(cache):
    fd, _ = define(cache)
    x, w = torch.randn(3, 5), torch.randn(4, 1, 6)
    sizes = {e: [x, None, w][t].shape[a] for e, t, a in fd.state.extents}
    assert sizes == {-1: 3, -2: 5, -3: 4, -4: 1, -5: 6}
