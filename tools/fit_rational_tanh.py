"""Fits the rational approximation of float32 tanh in kernels/vector_math.cpp
and measures its float32 evaluation.

tanh(x) = x P(x^2) / Q(x^2) on |x| <= 7.9 (beyond, +-1: within 4.6 ulp of
tanh, and below 7.9 the float32 form stays below 1), P of degree 6 and Q of
degree 3 in x^2, Q(0) = 1. The coefficients
minimize the largest relative error of P/Q against tanh(x)/x on a dense grid
(the linearized minimax problem, |P - g Q| <= t g Q_prev, solved as a linear
program and iterated on Q_prev). Then the float32 form the kernel evaluates
(coefficients rounded to float32, Horner without FMA, as Halide's StrictFloat
emits it) is compared with float64 tanh in ulps.

    /usr/bin/python3 tools/fit_rational_tanh.py    # needs Debian's python3-numpy and python3-scipy
"""

import numpy as np
from scipy.optimize import linprog

NUMERATOR_DEGREE, DENOMINATOR_DEGREE, LIMIT = 6, 3, 7.9


def fit():
    x = np.concatenate([np.linspace(0, LIMIT, 6000),
                        LIMIT * np.sin(np.linspace(0, np.pi / 2, 4000)) ** 2])
    x = np.unique(x)
    x = x[x > 0]
    s = x * x
    g = np.tanh(x) / x
    ps = np.vstack([s**k for k in range(NUMERATOR_DEGREE + 1)]).T
    qs = np.vstack([s**k for k in range(DENOMINATOR_DEGREE + 1)]).T
    unknowns = NUMERATOR_DEGREE + 1 + DENOMINATOR_DEGREE
    q_prev, best = np.ones_like(s), None
    for _ in range(40):
        w = g * q_prev
        upper = np.hstack([ps, -g[:, None] * qs[:, 1:], -w[:, None]])
        lower = np.hstack([-ps, g[:, None] * qs[:, 1:], -w[:, None]])
        cost = np.zeros(unknowns + 1)
        cost[-1] = 1
        z = linprog(cost, A_ub=np.vstack([upper, lower]), b_ub=np.concatenate([g, -g]),
                    bounds=[(None, None)] * unknowns + [(0, None)], method="highs").x
        p = z[:NUMERATOR_DEGREE + 1]
        q = np.concatenate([[1.0], z[NUMERATOR_DEGREE + 1:unknowns]])
        q_values = qs @ q
        error = np.max(np.abs((ps @ p) / q_values - g) / g)
        if best is None or error < best[0]:
            best = (error, p, q)
        q_prev = q_values
    return best


def horner(coefficients, s):
    value = np.full_like(s, coefficients[-1])
    for c in coefficients[-2::-1]:
        value = (value * s + c).astype(np.float32)
    return value


def float32_tanh(x, p, q):
    s = (x * x).astype(np.float32)
    r = ((x * horner(p, s)).astype(np.float32) / horner(q, s)).astype(np.float32)
    return np.where(np.abs(x) > np.float32(LIMIT), np.copysign(np.float32(1), x), r)


def main():
    error, p, q = fit()
    p32, q32 = p.astype(np.float32), q.astype(np.float32)
    print(f"relative error of P/Q on [0, {LIMIT}]: {error:.3e}")
    print("P:", ", ".join(repr(float(c)) for c in p32))
    print("Q:", ", ".join(repr(float(c)) for c in q32))
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-12, 12, 4_000_000),
                        np.exp(rng.uniform(np.log(1e-38), 0, 1_000_000))]).astype(np.float32)
    exact = np.tanh(x.astype(np.float64))
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    ulps = np.abs(float32_tanh(x, p32, q32) - exact) / ulp
    # Every float32 in [4, LIMIT]: the form must stay within [-1, 1].
    near_one = np.arange(np.float32(4).view(np.int32), np.float32(LIMIT).view(np.int32) + 1,
                         dtype=np.int32).view(np.float32)
    print("largest value on [4, LIMIT]:", float32_tanh(near_one, p32, q32).max())
    print(f"float32 evaluation, {x.size} inputs: max {ulps.max():.2f} ulp "
          f"(at {x[ulps.argmax()]}), mean {ulps.mean():.3f}, over 1 ulp {np.mean(ulps > 1):.1%}")


if __name__ == "__main__":
    main()
