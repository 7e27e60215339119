# C types for the compiled engine (setup.py), read by Cython only: direct.py runs as written
# without them. The fields of a Runner become C fields: the flow's items, which take the
# machine as `m: Runner`, read them without a lookup by name, and know the types of those that
# are always a dict, a list, a truth value, the meter or the context (dsl/runtime.pxd).
# `__dict__` keeps what else a machine or a game holds (the tests' own attributes), and
# `__weakref__` lets a game be referred to weakly, as a class of Python's can be.
from dsl.cfields cimport fields_as_members
from dsl.rule cimport Rule  # (the items take their rules as `fn: Rule`: see dsl/rule.pxd)
from dsl.runtime cimport Ctx, Meter, scalars  # (the context and the meter, and `scalars` as a C function: dsl/runtime.pxd)

cdef class Runner:
    cdef public object model, recorder
    cdef public Meter meter
    cdef public Ctx _c
    cdef public dict state, counts
    cdef public list _sched
    cdef public bint _ended
    cdef public object pick, pick_error  # (`Game.play_out`)
    cdef public object silent  # (an object, so that rule code reads it as a member: direct.py)
    cdef dict __dict__
    cdef object __weakref__

cdef class Direct:
    cdef public Runner m
    cdef public list code, turns, offers, chosen
    cpdef run(self, Py_ssize_t enter=*, dict v=*)  # (a C call from the game and the machine, at every decision)

# The flow's items (direct.py `Item`): each kind a C type, its fields C fields, and `run` a C
# method, so that one item runs another (and the runner an item) without a Python call.
cdef class Offer:
    cdef object player_fn, var, loc, player_var, label, secret, prompt_fn
    cdef bint optional
    cdef Rule fn
    cpdef list offer(self, Runner m, dict v, bint answered=*)

cdef class Item:
    cdef Py_ssize_t idx
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _Seq(Item):
    cdef tuple children
    cdef bint distinct
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _Effect(Item):
    cdef Rule fn
    cdef list code
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _Call(Item):
    cdef object node
    cdef list code
    cdef Py_ssize_t target
    cdef tuple args
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _Step(Item):
    cdef object node, loc, label, title, title_fn, before, after
    cdef list code
    cdef Item body
    cdef bint has_before, has_after
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _Loop(Item):
    cdef object node, loc, var
    cdef Item body
    cdef Rule fn
    cdef bint var_global, over_list
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _While(Item):
    cdef object node, loc
    cdef Item body
    cdef Rule fn
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _If(Item):
    cdef Rule fn
    cdef Item then, other
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)

cdef class _Choose(Item):
    cdef object var
    cdef Item then, other
    cdef Offer offer
    cpdef object run(self, Runner m, dict v, Py_ssize_t depth, Py_ssize_t start, object x)
    cpdef object taken(self, Runner m, dict v, Py_ssize_t depth, object option)

# Who answers a decision at once (`Game.play_out`): a C call from a choice.
cpdef Py_ssize_t answer(Runner m, Py_ssize_t n) except? -2

# What a loop's items, a step's arguments and a choice's options are copied with: a C call.
cpdef object kept(object v, object c, str what, object loc, bint rows=*)
