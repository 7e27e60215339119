# C types for the compiled engine (setup.py), read by Cython only: modifiers.py runs as written
# without them. `apply_modifiers` takes the context as the C type it is (dsl/runtime.pxd), so it
# reads and sets the context's fields as C fields: a modifier with layers runs at every value
# it gives, and sets the variables of the context once for each of its layers. (`nonecheck`,
# on the first line of modifiers.py: a context of None is an AttributeError, as from the source.)
from dsl.runtime cimport Ctx

cpdef apply_modifiers(Ctx c, name, base, args)
