# C types for the compiled engine (setup.py), read by Cython only: runtime.py runs as written
# without them. The meter and the context are C types, so that the flow reads and sets their
# fields as C fields (engine/run/direct.pxd types the machine's meter and context). Rule code
# reads them too, at every turn: their fields are shown to it as members, which it reads
# without a call (dsl/cfields.pxd), as it read the slots of the classes they were before.
# (`nonecheck`, on the first line of runtime.py: a meter of None is an AttributeError.)
cimport cython

from dsl.cfields cimport fields_as_members

cdef class Meter:
    cdef public object deadline, limit, seconds, total, used, where

# Asked of every choice's options and every list the flow or a rule copies: a C function too,
# which the flow (engine/run/direct.pxd) and store_value call without a Python call.
cpdef bint scalars(object items)

# The rows of a list of pairs (a choice's options, `store_value`): a loop in C.
@cython.locals(w=Py_ssize_t, n=Py_ssize_t)
cpdef Py_ssize_t _row_width(list v) except? -2

cdef class Ctx:
    cdef public object depth, ent, g, hooks, meter, model, state, vars

    @cython.locals(m=Meter)
    cpdef tick(self, loc=*)

    @cython.locals(m=Meter)
    cpdef charge(self, n)
