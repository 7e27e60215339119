# C types for the compiled engine (setup.py), read by Cython only: rule.py runs as written
# without them. A rule is a C type: the flow, which takes each of its rules as `fn: Rule`
# (engine/run/direct.py), reads its `fast` as a C field. Rule code reads a rule's `pos` as a
# member, without a call (dsl/cfields.pxd).
from dsl.cfields cimport fields_as_members

cdef class Rule:
    cdef public object counted, fast, fresh, loc, pos, source, var, what
