"""Live parameters: a constructor parameter set after construction is validated and applied.

river estimators keep their constructor arguments as public attributes (``model.l2``) and
``clone``/``mutate`` work on them. The estimators of this package also keep validated copies
(``model._l2``); this mixin makes an assignment to a parameter validate the whole parameter set
as the constructor would, then take effect (see `LiveParameters`).

"""

from __future__ import annotations

import contextlib
import functools
import inspect
import pickle
import typing

__all__ = ["LiveParameters", "parameter_names"]


def _parameter_names(cls: type[object]) -> tuple[str, ...]:
    """The names of the parameters of ``cls.__init__`` (river's ``_get_params`` keys)."""
    parameters = inspect.signature(cls.__init__).parameters
    return tuple(
        name
        for name, parameter in parameters.items()
        if name != "self"
        and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    )


#: `_parameter_names`, cached per class. Declared as a function of a class: mypy takes the
#: cache's arguments for ``Hashable`` and a class object for one only when its instances are.
parameter_names: typing.Callable[[type], tuple[str, ...]] = functools.cache(_parameter_names)


def _same(value: typing.Any, other: typing.Any) -> bool:
    """Whether two parameter values are the same (same type, equal); never raises."""
    if value is other:
        return True
    try:
        return type(value) is type(other) and bool(value == other)
    except Exception:
        return False


class _Parameter:
    """A constructor parameter as a data descriptor: read from the instance's ``__dict__``; an
    assignment after construction is validated and takes effect (`LiveParameters`). Private
    attributes are plain attributes: their writes cost nothing extra."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, instance: typing.Any, owner: type | None = None) -> typing.Any:
        if instance is None:
            return self
        try:
            return instance.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None

    def __set__(self, instance: typing.Any, value: typing.Any) -> None:
        if self.name in instance.__dict__:
            instance._change_parameter(self.name, value)
        else:  # the constructor's own assignment
            instance.__dict__[self.name] = value


class LiveParameters:
    """Mixin: setting a constructor parameter after construction is validated and takes effect.

    Estimators cache validated values of their parameters (``self._l2`` for ``self.l2``), so a
    plain attribute assignment would be silently ignored. With this mixin ``model.l2 = 10``
    validates the new set of parameters exactly as the constructor would (raising, with the
    model unchanged, if it is invalid), then:

    - a model that has learnt nothing yet becomes the model constructed with the new parameters;
    - otherwise a parameter that only enters the computations (a rate, a cost, a threshold...)
      takes effect from then on: the private values listed in ``_derived_attributes`` are
      taken from the validated construction (`_adopt`, which a subclass can extend, say to
      rebuild what depends on the parameter);
    - a parameter in ``_state_parameters`` shapes what the model has learnt (the layout of its
      features, an inverse built with the old value...): changing it after learning raises a
      ``ValueError`` that points to ``clone``.

    Every parameter of ``__init__`` becomes a data descriptor of the class (`_Parameter`), so
    only parameter assignments go through this logic. River's ``mutate`` works on the same
    parameters (``_mutable_attributes``).

    """

    _state_parameters: typing.ClassVar[frozenset[str]] = frozenset()
    _derived_attributes: typing.ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: typing.Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in parameter_names(cls):
            # (a base that is a LiveParameters already gave an inherited parameter its own)
            if name[0] != "_" and not hasattr(cls, name):
                setattr(cls, name, _Parameter(name))

    @property
    def _mutable_attributes(self) -> set[str]:
        return set(parameter_names(type(self))) - self._state_parameters

    def _parameters(self) -> dict[str, typing.Any]:
        return {name: self.__dict__[name] for name in parameter_names(type(self))}

    def _change_parameter(self, name: str, value: typing.Any) -> None:
        lock = self.__dict__.get("_lock")  # a model's own lock (`OneCallAtATime`), if it has one
        with lock if lock is not None else contextlib.nullcontext():
            self._change_parameter_now(name, value)

    def _change_parameter_now(self, name: str, value: typing.Any) -> None:
        old = self._parameters()
        trial = type(self)(**{**old, name: value})  # validates, as the constructor does
        if _same(value, old[name]):
            return
        if self._has_learnt(old):
            if name in self._state_parameters:
                raise ValueError(
                    f"{type(self).__name__}.{name} cannot be changed once the model has learnt "
                    f"(it shapes the learnt state): use model.clone({{{name!r}: ...}}) for a "
                    "fresh model with the new value"
                )
            self._adopt(trial, name)
        else:
            # the new construction's state, the lock excepted (other threads may wait on it)
            self.__dict__.update(
                (key, held) for key, held in trial.__dict__.items() if key != "_lock"
            )

    def _has_learnt(self, parameters: dict[str, typing.Any]) -> bool:
        """Whether the state differs from that of a fresh model with these parameters (a
        subclass that knows its state says it more cheaply)."""
        try:
            return pickle.dumps(self) != pickle.dumps(type(self)(**parameters))
        except Exception:  # an unpicklable part: assume it has learnt
            return True

    def _adopt(self, trial: typing.Any, name: str) -> None:
        """Take the new parameter and the private values derived from the parameters."""
        self.__dict__[name] = trial.__dict__[name]
        for attribute in self._derived_attributes:
            self.__dict__[attribute] = trial.__dict__[attribute]
