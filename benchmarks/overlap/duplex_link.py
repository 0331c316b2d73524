#!/usr/bin/python3
"""What the link between two ranks carries: a plain TCP socket moving
--bytes in each direction at the same time (duplex) and in one
direction alone (simplex), medians of --runs, and the CPU time a duplex
transfer costs rank 0 (duplex_cpu_s; its fraction of the transfer's time,
duplex_cpu_fraction). The overlap benchmark runs it
in the same namespaces as the programs it measures, so the bound it prints
("link time of the block's bytes") is this link's, not a nominal rate.

  benchmarks/overlap/duplex_link.py [--bytes 16000000] [--runs 5] [--json PATH]

As the baselines, it starts its own 2 ranks on 127.0.0.1 when RANK is not
in the environment; under run.sh each rank is one namespace's process and
rank 1 connects to rank 0 at MASTER_ADDR:MASTER_PORT."""

import argparse
import json
import os
import resource
import socket
import statistics
import sys
import threading
import time

from torch_harness import launch_local, print_result

CHUNK = 1 << 20


def connect(rank, address, port, timeout):
    """The socket to the other rank: rank 0 listens, rank 1 connects
    (retrying until rank 0 listens or `timeout` seconds pass)."""
    if rank == 0:
        with socket.create_server((address, port), reuse_port=False) as server:
            server.settimeout(timeout)
            peer, _ = server.accept()
    else:
        deadline = time.monotonic() + timeout
        while True:
            try:
                peer = socket.create_connection((address, port), timeout=timeout)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    peer.settimeout(timeout)
    peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return peer


def send_bytes(peer, count, payload):
    view = memoryview(payload)
    while count > 0:
        n = min(count, len(payload))
        peer.sendall(view[:n])
        count -= n


def receive_bytes(peer, count, buffer):
    view = memoryview(buffer)
    while count > 0:
        got = peer.recv_into(view[:min(count, len(buffer))])
        if got == 0:
            raise ConnectionError("duplex_link: the other rank closed the connection")
        count -= got


def barrier(peer):
    """Both ranks past this point: one byte each way."""
    peer.sendall(b"b")
    receive_bytes(peer, 1, bytearray(1))


def cpu_seconds():
    """This process's CPU time so far, user and system (every thread; in
    microseconds, where os.times() counts 10 ms ticks)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def duplex_seconds(peer, count, payload, buffer, cpu=None):
    """Both directions at once: this rank sends `count` bytes while it
    receives as many; the slower rank's time (the two exchange theirs).
    Appends this rank's CPU seconds during the transfer to `cpu`."""
    barrier(peer)
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    failure = []

    def sender():
        try:
            send_bytes(peer, count, payload)
        except OSError as e:  # reported by the receiving thread's caller
            failure.append(e)

    thread = threading.Thread(target=sender)
    thread.start()
    receive_bytes(peer, count, buffer)
    thread.join()
    if failure:
        raise failure[0]
    mine = time.perf_counter() - start
    if cpu is not None:
        cpu.append(cpu_seconds() - cpu_start)
    peer.sendall(json.dumps(mine).encode().ljust(32))
    theirs = bytearray(32)
    receive_bytes(peer, 32, theirs)
    return max(mine, float(theirs.decode()))


def simplex_seconds(peer, rank, sender_rank, count, payload, buffer):
    """One direction alone: `sender_rank` sends `count` bytes, the other
    acknowledges once it has them all; the sender's time."""
    barrier(peer)
    start = time.perf_counter()
    if rank == sender_rank:
        send_bytes(peer, count, payload)
        receive_bytes(peer, 1, bytearray(1))
    else:
        receive_bytes(peer, count, buffer)
        peer.sendall(b"a")
    if rank == sender_rank:
        seconds = time.perf_counter() - start
        peer.sendall(json.dumps(seconds).encode().ljust(32))
        return seconds
    elapsed = bytearray(32)
    receive_bytes(peer, 32, elapsed)
    return float(elapsed.decode())


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bytes", type=int, default=16_000_000,
                   help="bytes each way per run (default 16000000)")
    p.add_argument("--runs", type=int, default=5, help="timed runs, median reported")
    p.add_argument("--json", default=None, help="rank 0 also writes its JSON line here")
    p.add_argument("--port", type=int, default=29650,
                   help="MASTER_PORT when this script starts its own ranks")
    p.add_argument("--timeout", type=float, default=120, help="seconds before giving up")
    args = p.parse_args(argv)
    if args.bytes < 1 or args.runs < 1:
        p.error("--bytes and --runs must be >= 1")
    if "RANK" not in os.environ:
        args.ranks = 2
        raise SystemExit(launch_local(__file__, args, argv))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if world != 2:
        print("duplex_link: needs exactly 2 ranks", file=sys.stderr)
        return 2
    count = args.bytes
    payload = bytes(min(CHUNK, count))
    buffer = bytearray(min(CHUNK, count))
    with connect(rank, os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                 args.timeout) as peer:
        duplex_seconds(peer, count, payload, buffer)  # warm-up: TCP windows open
        duplex, forward, backward, cpu = [], [], [], []
        for _ in range(args.runs):
            duplex.append(duplex_seconds(peer, count, payload, buffer, cpu))
            forward.append(simplex_seconds(peer, rank, 0, count, payload, buffer))
            backward.append(simplex_seconds(peer, rank, 1, count, payload, buffer))

    def mbit(seconds):
        return count * 8 / seconds / 1e6

    result = {
        "bytes_each_way": count,
        "runs": args.runs,
        "duplex_s": statistics.median(duplex),
        "duplex_runs_s": duplex,
        "duplex_mbit_each_way": mbit(statistics.median(duplex)),
        "simplex_s": statistics.median(forward + backward),
        "simplex_mbit": mbit(statistics.median(forward + backward)),
        # What moving the bytes costs this rank's cores (kernel time, mostly):
        # a transfer's CPU is taken from the compute it should hide behind.
        "duplex_cpu_s": statistics.median(cpu),
        "duplex_cpu_fraction": statistics.median(cpu) / statistics.median(duplex),
    }
    if rank == 0:
        print_result(args, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
