"""The gradient fuzzer's steps of the ops nvFuser's frontend brought and the
product reduction (grad_fuzz.py --resize-ops): pad, cat, slice, cumsum, prod
(of relu(x), so slices hold zeros, or of x), index_select, take_along_axis,
scatter_add and index_add. Their indices are computed in the program from
iotas, (sum of coefficient * coordinate) mod extent, so they repeat (grads
add up) and need no integer inputs; torch computes the same ones with arange.
Off by default, so the seeds of the default draw stay the programs they
were."""

import torch

import hostir

STEPS = ("pad", "cat", "slice", "cumsum", "prod", "index_select", "take_along_axis",
         "scatter_add", "index_add")
I64 = hostir.DataType.Int64


def draw(gen):
    """Appends one step to the Generator `gen`'s program."""
    rng, p = gen.rng, gen.p
    v = gen.pick(min_rank=1)
    shape = p.shape(v)
    dim = rng.randrange(len(shape))
    n = shape[dim]
    name = rng.choice(STEPS)
    if name == "pad":
        widths = [rng.randint(0, 2) for _ in range(2 * min(len(shape), rng.choice([1, 2])))]
        new = list(shape)
        for i in range(len(widths) // 2):
            new[len(shape) - 1 - i] += widths[2 * i] + widths[2 * i + 1]
        return gen.add(name, [v], {"widths": widths}, new)
    if name == "cat":
        same = [u for u in gen.values() if p.shape(u) == shape]
        u = rng.choice(same)
        new = shape[:dim] + (2 * n,) + shape[dim + 1:]
        return gen.add(name, [v, u], {"dim": dim}, new)
    if name == "slice":
        start = rng.randrange(n)
        stop = rng.randint(start + 1, n)
        return gen.add(name, [v], {"dim": dim, "start": start, "stop": stop},
                       shape[:dim] + (stop - start,) + shape[dim + 1:])
    if name == "cumsum":
        return gen.add(name, [v], {"dim": dim}, shape)
    if name == "prod":
        keep = rng.random() < 0.4
        new = shape[:dim] + ((1,) if keep else ()) + shape[dim + 1:]
        return gen.add(name, [v], {"dim": dim, "keep": keep, "relu": rng.random() < 0.5}, new)
    k = rng.randint(1, n) if name == "scatter_add" else rng.randint(1, 2 * n)
    if name == "index_select":
        params = {"dim": dim, "k": k, "start": rng.randrange(n), "step": rng.randint(1, 3)}
        return gen.add(name, [v], params, shape[:dim] + (k,) + shape[dim + 1:])
    if name == "index_add":
        k = rng.randint(1, 2 * n)
        src = gen.new_input(shape[:dim] + (k,) + shape[dim + 1:])
        params = {"dim": dim, "k": k, "start": rng.randrange(n), "step": rng.randint(1, 3)}
        return gen.add(name, [v, src], params, shape)
    coefs = [rng.randint(0, 3) for _ in shape]
    params = {"dim": dim, "k": k, "coefs": coefs}
    index_shape = shape[:dim] + (k,) + shape[dim + 1:]
    if name == "take_along_axis":
        return gen.add(name, [v], params, index_shape)
    # scatter_add: src of v's shape (the index, k <= n along dim, fits it).
    src = rng.choice([u for u in gen.values() if p.shape(u) == shape])
    return gen.add(name, [v, src], params, shape)


def _index_shape(shape, params):
    dim = params["dim"]
    return list(shape[:dim]) + [params["k"]] + list(shape[dim + 1:])


def hostir_step(ops, name, args, params):
    """The step on fd.ops; None when `name` is not one of these steps."""
    x = args[0]
    if name == "pad":
        return ops.pad(x, params["widths"], 0.5)
    if name == "cat":
        return ops.cat([x, args[1]], params["dim"])
    if name == "slice":
        return ops.slice(x, params["dim"], params["start"], params["stop"])
    if name == "cumsum":
        return ops.cumsum(x, params["dim"])
    if name == "prod":
        return ops.prod(ops.relu(x) if params["relu"] else x, [params["dim"]], params["keep"])
    if name in ("index_select", "index_add"):
        n = ops.size(x, params["dim"])
        index = ops.fmod(ops.iota(params["k"], params["start"], params["step"]), n)
        if name == "index_select":
            return ops.index_select(x, index, params["dim"])
        return ops.index_add(x, index, args[1], params["dim"])
    if name in ("take_along_axis", "scatter_add"):
        shape = _index_shape([ops.size(x, d) for d in range(x.ndim)], params)
        index = ops.zeros(shape, I64)
        for axis, coef in enumerate(params["coefs"]):
            line = ops.iota(shape[axis], 0, coef)
            flags = [d != axis for d in range(x.ndim)]
            index = ops.add(index, ops.broadcast(line, flags) if x.ndim > 1 else line)
        index = ops.fmod(index, ops.size(x, params["dim"]))
        if name == "take_along_axis":
            return ops.take_along_axis(x, index, params["dim"])
        return ops.scatter_add(x, index, args[1], params["dim"])
    return None


def torch_step(name, args, params):
    """The step in torch; None when `name` is not one of these steps."""
    x = args[0]
    if name == "pad":
        return torch.nn.functional.pad(x, params["widths"], value=0.5)
    if name == "cat":
        return torch.cat([x, args[1]], params["dim"])
    if name == "slice":
        return x.narrow(params["dim"], params["start"], params["stop"] - params["start"])
    if name == "cumsum":
        return torch.cumsum(x, params["dim"])
    if name == "prod":
        return (x.relu() if params["relu"] else x).prod(params["dim"], keepdim=params["keep"])
    dim = params["dim"]
    n = x.shape[dim]
    if name in ("index_select", "index_add"):
        index = (torch.arange(params["k"]) * params["step"] + params["start"]) % n
        if name == "index_select":
            return torch.index_select(x, dim, index)
        return torch.index_add(x, dim, index, args[1])
    if name in ("take_along_axis", "scatter_add"):
        shape = _index_shape(x.shape, params)
        index = torch.zeros(shape, dtype=torch.int64)
        for axis, coef in enumerate(params["coefs"]):
            view = [1] * x.dim()
            view[axis] = shape[axis]
            index = index + (torch.arange(shape[axis]) * coef).view(view)
        index = index % n
        if name == "take_along_axis":
            return torch.gather(x, dim, index)
        # torch's scatter_add backward needs src shaped as the index.
        return torch.scatter_add(x, dim, index, args[1].narrow(dim, 0, params["k"]))
    return None
