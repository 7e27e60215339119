# C types for the compiled engine (setup.py), read by Cython only: primitives.py runs as written
# without them. The tower's draws walk a distribution on floats: compiled, the walks run on C
# doubles and whole numbers, which give the same numbers as the Python (every count is under
# the work budget or `_EXACT_TOTAL`, so a double holds it exactly, and C's division of two
# exact doubles rounds as Python's division of the whole numbers does; tests/test_compiled.py
# compares the draws). The samplers are called from the draws without a Python call.
cimport cython

@cython.locals(q=cython.double, pk=cython.double, pd=cython.double, nd=cython.double)
cpdef _binomial(c, rng, n, p)

cpdef _hypergeometric(c, rng, total, good, draws)

@cython.locals(k="long long", cum=cython.double)
cdef long long _binomial_walk(double u, double pk, double n, double ratio) except -1

@cython.locals(cum=cython.double)
cdef long long _hypergeometric_walk(double u, double pk, long long k, long long hi, long long good,
                                    long long draws, long long bad) except -1

# `pool_drop`'s draw as a C type: one object per drop where two closures and their cell were.
cdef class _PoolDraw:
    cdef object c, container, cubes, fresh_p, stuck_p, limit
