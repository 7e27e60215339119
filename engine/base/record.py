"""Plain classes that compare, print and copy like dataclasses, without their cost at start-up.

`@dataclass` writes each class's __init__, __repr__, __eq__ (and, frozen, __setattr__ and
__hash__) as source text and compiles it whenever its module is imported, and importing
`dataclasses` imports `inspect`: for the fifteen classes `daimyo validate` loads, about 6% of a
cold validation. These classes write their own __init__ (compiled once into bytecode like any
code) and get the rest from `Record`: a subclass lists its fields in `FIELDS` (the order of its
__init__'s parameters), and may narrow what equality compares (`COMPARE`) and what repr shows
(`REPR`). `replace(obj, **changes)` is `dataclasses.replace` for them.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar, TypeVar

R = TypeVar("R")  # (a bound naming Record would be compiled as a forward reference at every start)


def _nothing(obj: Any) -> tuple:
    return ()


class Record:
    """A dataclass's equality (same class, same compared fields), repr and `replace`; unhashable,
    like a dataclass that compares and is not frozen."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()
    COMPARE: ClassVar[tuple[str, ...] | None] = None  # None: every field
    REPR: ClassVar[tuple[str, ...] | None] = None  # None: every field
    _compared: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        compare = cls.FIELDS if cls.COMPARE is None else cls.COMPARE
        cls._compared = attrgetter(*compare) if compare else _nothing

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._compared(self) == self._compared(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = self.FIELDS if self.REPR is None else self.REPR
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"


class FrozenRecord(Record):
    """A frozen dataclass's: fields cannot be assigned or deleted, and equal records hash alike.
    __init__ writes the fields with `object.__setattr__` (or into `__dict__`)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(self._compared(self))


def replace(obj: R, **changes: Any) -> R:
    """A new record like `obj` with some fields changed, made by its class's __init__."""
    cls = type(obj)
    unknown = set(changes).difference(cls.FIELDS)
    if unknown:
        raise TypeError(f"{cls.__qualname__} has no field {sorted(unknown)[0]!r}")
    return cls(**{**{name: getattr(obj, name) for name in cls.FIELDS}, **changes})
