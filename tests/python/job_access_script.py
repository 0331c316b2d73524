"""Run on every rank by test_job_access.py: joins the job, runs a barrier
and an allgather, and prints the TCP sockets this process listens on
("listening: ADDRESS:PORT", one line each) while the job is up and the mode
of its rendezvous file's folder, if it has one ("store folder mode: 0o700"),
then "rank R of D: OK"."""

import os

import torch

import hostir.distributed as dist


def _socket_inodes():
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def _address(hex_address, family):
    if family == "tcp":
        return ".".join(str(int(hex_address[i:i + 2], 16)) for i in (6, 4, 2, 0))
    # /proc/net/tcp6: four 32-bit words, each in host (little-endian) order.
    words = [hex_address[i:i + 8] for i in range(0, 32, 8)]
    raw = b"".join(bytes.fromhex(word)[::-1] for word in words)
    return "[" + ":".join(raw[i:i + 2].hex() for i in range(0, 16, 2)) + "]"


def listening_sockets():
    """ADDRESS:PORT of every TCP socket in LISTEN state this process owns."""
    mine = _socket_inodes()
    found = []
    for family in ("tcp", "tcp6"):
        with open(f"/proc/net/{family}") as table:
            next(table)
            for line in table:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in mine:  # 0A: LISTEN
                    hex_address, hex_port = local.split(":")
                    found.append(f"{_address(hex_address, family)}:{int(hex_port, 16)}")
    return found


rank = dist.init()
size = dist.world_size()
dist.barrier()
if os.environ.get("HOSTIR_STORE_FILE"):
    folder = os.path.dirname(os.environ["HOSTIR_STORE_FILE"])
    print(f"store folder mode: {oct(os.stat(folder).st_mode & 0o777)}", flush=True)
for socket in listening_sockets():
    print(f"listening: {socket}", flush=True)
gathered = dist.all_gather_tensor(torch.full((2,), float(rank)))
assert gathered.tolist() == [float(r) for r in range(size) for _ in range(2)], gathered
dist.barrier()
print(f"rank {rank} of {size}: OK", flush=True)
