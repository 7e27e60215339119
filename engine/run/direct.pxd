# C types for the compiled engine (setup.py), read by Cython only: direct.py runs as written
# without them. The fields of a Runner become C fields: the flow's items, which take the
# machine as `m: Runner`, read them without a lookup by name. `__dict__` keeps what else a
# machine or a game holds (the class attribute `reference` set on one game, the tests' own).
cdef class Runner:
    cdef public object model, state, recorder, counts, meter, silent, _sched, _ended, _c
    cdef dict __dict__
