# C types for the compiled engine (setup.py), read by Cython only: modifiers.py runs as written
# without them. `apply_modifiers` takes the context as the C type it is (dsl/runtime.pxd), so it
# reads and sets the context's fields as C fields: a modifier with layers runs at every value
# it gives, and sets the variables of the context once for each of its layers.
from dsl.runtime cimport Ctx

cpdef apply_modifiers(Ctx c, name, base, args)
