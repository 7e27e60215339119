# C types for the compiled engine (setup.py), read by Cython only: game.py runs as written
# without them. A game is a C type like the machine it extends (machine.pxd), so its own
# methods read the machine's fields as C fields.
from engine.run.machine cimport FlowMachine

cdef class Game(FlowMachine):
    pass
