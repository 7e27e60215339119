# C types for the compiled engine (setup.py), read by Cython only: machine.py runs as written
# without them. The machine is a C type, a Runner (direct.pxd) with three fields more (its
# chance, its direct runner, and whether it runs the reference machine), so its own methods
# read its fields as C fields.
from engine.run.direct cimport Direct, Runner

cdef class FlowMachine(Runner):
    cdef public object dice
    cdef public Direct _direct
    cdef public bint reference
