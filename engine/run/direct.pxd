# C types for the compiled engine (setup.py), read by Cython only: direct.py runs as written
# without them. The fields of a Runner become C fields: the flow's items, which take the
# machine as `m: Runner`, read them without a lookup by name, and know the types of those that
# are always a dict, a list, a truth value, the meter or the context (dsl/runtime.pxd).
# `__dict__` keeps what else a machine or a game holds (the tests' own attributes), and
# `__weakref__` lets a game be referred to weakly, as a class of Python's can be.
from dsl.rule cimport Rule  # (the items take their rules as `fn: Rule`: see dsl/rule.pxd)
from dsl.runtime cimport Ctx, Meter  # (the context and the meter: dsl/runtime.pxd)

cdef class Runner:
    cdef public object model, recorder
    cdef public Meter meter
    cdef public Ctx _c
    cdef public dict state, counts
    cdef public list _sched
    cdef public bint _ended, silent
    cdef dict __dict__
    cdef object __weakref__

cdef class Direct:
    cdef public Runner m
    cdef public list code, turns, offers, chosen
