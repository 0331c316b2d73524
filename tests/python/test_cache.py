"""FusionCache: hits, misses, schedule-only differences, the trie, eviction,
the per-signature executors, serialization and bad files."""

import json
import os
import subprocess
import sys

import pytest
import torch

import hostir


def define(cache, scale=2.0, split=None, relu=True):
    with hostir.FusionDefinition(cache) as fd:
        x = fd.define_tensor(2)
        y = fd.ops.relu(x) if relu else fd.ops.neg(x)
        z = y * scale
        fd.add_output(z)
        if split is not None:
            fd.sched.split(z, 0, split, inner_split=False)
            fd.sched.parallelize(z, 0, hostir.ParallelType.Stream)
    return fd


def test_hit_reuses_fusion_and_id(cache):
    a = define(cache)
    b = define(cache)
    assert not a.cache_hit and b.cache_hit
    assert a.id() == b.id()
    assert cache.stats()["hits"] == 1 and cache.stats()["misses"] == 1
    assert cache.num_fusions() == 1
    # Same C++ fusion: lowered once for both.
    x = torch.randn(4, 4)
    a.execute([x])
    b.execute([x])
    assert b._cdef is a._cdef and a._cdef.num_lowerings() == 1


def test_different_records_miss(cache):
    a = define(cache, scale=2.0)
    b = define(cache, scale=3.0)
    c = define(cache, relu=False)
    d = define(cache, scale=2)  # an int constant is another record than 2.0
    assert len({a.id(), b.id(), c.id(), d.id()}) == 4
    assert cache.stats()["misses"] == 4 and cache.stats()["hits"] == 0


def test_schedule_only_difference_is_a_different_fusion(cache):
    plain = define(cache)
    split2 = define(cache, split=2)
    split4 = define(cache, split=4)
    again = define(cache, split=2)
    assert len({plain.id(), split2.id(), split4.id()}) == 3
    assert again.id() == split2.id() and again.cache_hit
    x = torch.randn(8, 3)
    assert "FOR StreamIdx" not in plain.host_ir([x])
    assert "FOR StreamIdx" in split4.host_ir([x])
    for fd in (plain, split2, split4):
        torch.testing.assert_close(fd.execute([x])[0], torch.relu(x) * 2.0)


def test_trie_stores_shared_prefixes_once(cache):
    a = define(cache, scale=2.0)
    records_a = len(a.records)
    assert cache.stats()["records"] == records_a
    define(cache, scale=3.0)
    # define_tensor and relu are shared; the scalar, mul and add_output are not.
    assert cache.stats()["records"] == records_a + 3


def test_lru_eviction(cache):
    small = hostir.FusionCache(max_fusions=2)
    a = define(small, scale=1.0)
    b = define(small, scale=2.0)
    define(small, scale=1.0)  # touches a: b is now least recently used
    c = define(small, scale=3.0)
    assert small.num_fusions() == 2 and small.stats()["evictions"] == 1
    assert set(small.fusion_ids()) == {a.id(), c.id()}
    again_b = define(small, scale=2.0)
    assert not again_b.cache_hit and again_b.id() not in (a.id(), b.id(), c.id())
    # a was least recently used now; evicted nodes are pruned: what remains
    # is the shared define_tensor + relu and 3 records each of c and b.
    assert set(small.fusion_ids()) == {c.id(), again_b.id()}
    assert small.stats()["records"] == 2 + 3 + 3
    # An evicted definition still runs (it holds its fusion).
    torch.testing.assert_close(b.execute([torch.ones(2, 2)])[0], torch.full((2, 2), 2.0))


def test_reset(cache):
    define(cache)
    cache.reset()
    assert cache.stats() == {"hits": 0, "misses": 0, "fusions": 0, "records": 0,
                             "evictions": 0}


def test_reset_on_the_class_resets_the_default_cache(cache):
    # nvFuser's static FusionCache.reset() (its test_issue1277): a TypeError before.
    define(hostir.FusionCache.get())
    define(cache)
    hostir.FusionCache.reset()
    assert hostir.FusionCache.get().stats()["fusions"] == 0
    assert cache.stats()["fusions"] == 1


def test_one_lowering_per_definition_whatever_the_signature(cache):
    # The one run path (issue 21): a definition is copied and lowered once;
    # other sizes, strides, broadcast patterns and numbers of streams run the
    # same program.
    fd = define(cache)
    cdef = fd._cdef
    assert cdef.num_lowerings() == 0
    for x, streams in [(torch.randn(4, 5), None), (torch.randn(6, 7), None),
                       (torch.randn(4, 5).t(), None),  # non-contiguous
                       (torch.randn(1, 5), None),  # broadcast pattern differs
                       (torch.randn(4, 5), 2), (torch.randn(3, 3), 7)]:
        torch.testing.assert_close(fd.execute([x], number_of_streams=streams)[0],
                                   torch.relu(x) * 2.0)
    assert cdef.num_lowerings() == 1


def live_threads():
    return len(os.listdir("/proc/self/task"))


def test_stream_workers_are_shared_across_numbers_of_streams(cache):
    # Issue 22: one lowered executor (with its stream workers) per signature
    # was kept forever; 300 values of number_of_streams held 300 executors
    # and about 900 threads. Now one executor serves them all, and its
    # streams are the ones the program uses (the caller's and one per chunk
    # of the 2-chunk loop), made once.
    fd = define(cache, split=2)
    cdef = fd._cdef
    x = torch.randn(4, 3)
    expected = torch.relu(x) * 2.0
    torch.testing.assert_close(fd.execute([x], number_of_streams=1)[0], expected)
    threads_before = live_threads()
    workers_before = cdef.num_stream_workers()
    assert 1 <= workers_before <= 3
    for streams in range(1, 301):
        torch.testing.assert_close(fd.execute([x], number_of_streams=streams)[0], expected)
    assert cdef.num_lowerings() == 1
    assert cdef.num_stream_workers() <= 3
    assert live_threads() - threads_before <= 3


def test_threads_share_one_definition_safely(cache):
    # One executor per definition: concurrent executes from Python threads
    # (the GIL is released while one runs) are serialized on it and each gets
    # its own, correct, result; another definition runs beside them.
    import threading

    shared = define(cache, split=2)
    other = define(cache, scale=3.0)
    errors = []

    def work(fd, scale, seed):
        generator = torch.Generator().manual_seed(seed)
        try:
            for _ in range(40):
                x = torch.randn(6, 5, generator=generator)
                torch.testing.assert_close(fd.execute([x])[0], torch.relu(x) * scale)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(shared, 2.0, seed)) for seed in range(3)]
    threads.append(threading.Thread(target=work, args=(other, 3.0, 99)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert shared._cdef.num_lowerings() == 1 and other._cdef.num_lowerings() == 1


def test_default_instance_is_shared():
    assert hostir.FusionCache.get() is hostir.FusionCache.get()
    with hostir.FusionDefinition() as fd:
        fd.add_output(fd.ops.exp(fd.define_tensor(1)))
    assert fd._cache is hostir.FusionCache.get()


def test_serialization_round_trip_hits(cache, tmp_path):
    a = define(cache, scale=2.0)
    b = define(cache, split=2)
    path = tmp_path / "cache.json"
    cache.serialize(path)
    loaded = hostir.FusionCache.deserialize(path)
    assert loaded.num_fusions() == 2
    assert loaded.stats()["records"] == cache.stats()["records"]
    a2 = define(loaded, scale=2.0)
    b2 = define(loaded, split=2)
    assert a2.cache_hit and b2.cache_hit
    assert (a2.id(), b2.id()) == (a.id(), b.id())
    assert loaded.stats()["misses"] == 0
    # The restored state equals the live one, and the fusion runs.
    assert a2.state == a.state and b2.state == b.state
    x = torch.randn(4, 3)
    torch.testing.assert_close(b2.execute([x])[0], torch.relu(x) * 2.0)
    # New fusions get fresh ids after the loaded ones.
    c = define(loaded, scale=9.0)
    assert c.id() not in (a.id(), b.id())


def _expect_warning_and_empty(path):
    with pytest.warns(RuntimeWarning, match="starting with an empty cache"):
        loaded = hostir.FusionCache.deserialize(path)
    assert loaded.num_fusions() == 0
    fd = define(loaded)
    assert not fd.cache_hit
    torch.testing.assert_close(fd.execute([torch.ones(2, 2)])[0], torch.full((2, 2), 2.0))
    return loaded


def test_missing_file(tmp_path):
    _expect_warning_and_empty(tmp_path / "nope.json")


def test_truncated_file(cache, tmp_path):
    define(cache)
    path = tmp_path / "cache.json"
    cache.serialize(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    _expect_warning_and_empty(path)


def test_corrupt_file(cache, tmp_path):
    define(cache, scale=2.0)
    path = tmp_path / "cache.json"
    cache.serialize(path)
    # Valid JSON but a changed constant: must not give a wrong fusion.
    text = path.read_text().replace("2.0", "5.0")
    path.write_text(text)
    _expect_warning_and_empty(path)
    path.write_bytes(b"\x00\xffgarbage")
    _expect_warning_and_empty(path)
    path.write_text("")
    _expect_warning_and_empty(path)


def test_other_versions(cache, tmp_path):
    define(cache)
    path = tmp_path / "cache.json"
    cache.serialize(path)
    header, payload = path.read_text().split("\n", 1)
    for field, value in (("format_version", 999), ("hostir_version", "0.0.1-other")):
        changed = json.loads(header)
        changed[field] = value
        path.write_text(json.dumps(changed) + "\n" + payload)
        _expect_warning_and_empty(path)


def test_hostir_cache_dir_saves_at_exit_and_loads_at_start(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "import torch, hostir\n"
        "with hostir.FusionDefinition() as fd:\n"
        "    x = fd.define_tensor(1)\n"
        "    fd.add_output(fd.ops.relu(x) + 1.0)\n"
        "print(fd.cache_hit, fd.id(), fd.execute([torch.tensor([-1.0, 2.0])])[0].tolist())\n")
    env = dict(os.environ, HOSTIR_CACHE_DIR=str(tmp_path / "cache"), RANK="3")
    first = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split()[0] == "False"
    assert (tmp_path / "cache" / "fusion_cache.rank3.json").exists()
    second = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split()[0] == "True"
    assert second.stdout.split()[1] == first.stdout.split()[1]
    assert "[1.0, 3.0]" in second.stdout
