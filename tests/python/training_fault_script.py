"""A rank that dies or hangs in the middle of a backward (test_training_faults.py).

Every rank trains examples/train_gpt.py's sharded model (2 hostir layers) as
a user's loop does: zero_grad, forward, loss.backward(), the replicated
grads summed over the ranks, optimizer.step(). The first step runs whole;
in the second, rank 1 meets HOSTIR_TEST_FAULT in the grad hook between the
two layers, i.e. after layer 1's backward program ran (with its collectives)
and before layer 0's:

    exit    leaves silently (os._exit(0): no error status, so the launcher
            does not end the others: they must end by themselves)
    kill    SIGKILL
    stop    SIGSTOP (a hung process)
    sleep   sleeps for ever (a hung rank that still runs)
    nan     no fault: before step 2, rank 1 writes 3e38 into one element of
            its shard of layer 0's wq, and step 2 runs under
            hostir.autograd.detect_anomaly(): a GEMM overflows to Inf

--at says where in that backward:

    between     in the hook, between the two layers' backward programs
    collective  at the second collective of layer 0's backward program, in
                the middle of it (hostir._C._testing.fault_at_collective,
                armed in the hook)

A surviving rank prints "rank R: hostir.Error after S s: <message>", then
whether its weights still equal those before the failed step, and exits 3.
Each rank writes its pid to $HOSTIR_TEST_PID_DIR/rank<R>.pid.
"""

import argparse
import os
import signal
import sys
import time
import types

import torch

import hostir
import hostir.distributed as dist

from hostir import _C

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import train_gpt  # noqa: E402


def fault(kind):
    sys.stdout.flush()
    if kind == "exit":
        os._exit(0)
    if kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    if kind == "sleep":
        while True:
            time.sleep(3600)
    raise SystemExit(f"HOSTIR_TEST_FAULT={kind!r}: give exit, kill, stop, sleep or nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--at", choices=["between", "collective"], default="between")
    at = parser.parse_args().at
    kind = os.environ["HOSTIR_TEST_FAULT"]
    rank, ranks = dist.rank(), dist.world_size()
    with open(os.path.join(os.environ["HOSTIR_TEST_PID_DIR"], f"rank{rank}.pid"), "w") as file:
        file.write(str(os.getpid()))
    dist.init()
    torch.set_num_threads(1)
    args = types.SimpleNamespace(layers=2, hidden=32, heads=4, ffn=64, context=32, chunks=1,
                                 seed=0)
    data = torch.randint(76, (4096,), generator=torch.Generator().manual_seed(0))
    sharded = train_gpt.ShardedGPT(train_gpt.draw_model(args, 76), args, rank, ranks)
    optimizer = torch.optim.AdamW(sharded.parameters(), lr=1e-2)
    stream = train_gpt.Batches(data, args.context, 1, args.seed)
    armed = [False]

    def between_the_layers(grad):
        if armed[0] and rank == 1:
            if at == "between":
                fault(kind)
            _C._testing.fault_at_collective(2, kind)
        return grad

    def hook_the_output(module, inputs, output):
        output.register_hook(between_the_layers)  # returns None: the output stays

    sharded.layers[0].register_forward_hook(hook_the_output)

    for step in (1, 2):
        armed[0] = step == 2 and kind != "nan"
        if step == 2 and kind == "nan" and rank == 1:
            with torch.no_grad():
                sharded.layers[0].wq.view(-1)[0] = 3e38
        before = {name: p.detach().clone() for name, p in sharded.named_parameters()}
        begin = time.monotonic()
        try:
            optimizer.zero_grad()
            with hostir.autograd.detect_anomaly(enabled=kind == "nan" and step == 2):
                loss = sharded(next(stream))
                loss.backward()
            replicated = sharded.replicated()
            for p, total in zip(replicated, train_gpt.sum_over_ranks(
                    ranks, [p.grad for p in replicated])):
                p.grad.copy_(total)
            optimizer.step()
        except hostir.Error as error:
            seconds = time.monotonic() - begin
            message = str(error).replace("\n", " ")
            print(f"rank {rank}: hostir.Error after {seconds:.1f} s: {message}", flush=True)
            unchanged = all(torch.equal(p.detach(), before[name])
                            for name, p in sharded.named_parameters())
            print(f"rank {rank}: weights equal those before step {step}: {unchanged}",
                  flush=True)
            sys.exit(3)
        print(f"rank {rank}: step {step} done, loss {loss.item():.4f}", flush=True)
    print(f"rank {rank}: no fault met", flush=True)


if __name__ == "__main__":
    main()
