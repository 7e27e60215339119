# C types for the compiled engine (setup.py), read by Cython only: game.py runs as written
# without them. A game is a C type like the machine it extends (machine.pxd), so its own
# methods read the machine's fields as C fields. A decision is made at every decision of every
# game: as a C type, its fields are set as C fields, and shown to the bots that read them as
# members (dsl/cfields.pxd).
from dsl.cfields cimport fields_as_members
from engine.run.machine cimport FlowMachine

cdef class Decision:
    cdef public object player, options, step, secret, number
    cdef object _game, _pending

cdef class Game(FlowMachine):
    pass
