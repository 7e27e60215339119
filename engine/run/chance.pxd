# C types for the compiled engine (setup.py), read by Cython only: chance.py runs as written
# without them. Every number here stays within 64 bits in the Python too (its masks), so C's
# wrapping arithmetic gives the same numbers.
cimport cython

cdef unsigned long long _GAMMA, _MIX1, _MIX2, _M64
cdef double _UNIT

cdef class Rng:
    cdef public unsigned long long s
    cdef public object state

    @cython.locals(s="unsigned long long", z="unsigned long long")
    cpdef unsigned long long _next(self)
    cpdef double random(self)

# The chance of a game: `outcome` reads its fields as C fields, at every roll, shuffle and draw.
cdef class Chance:
    cdef public object forced, rng
