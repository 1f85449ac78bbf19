"""One call at a time per model: a re-entrant lock that is not part of the model's state.

river's models are not thread-safe; these are, cheaply: every public call of a model that
reads or writes its state holds the model's lock (`threading.RLock`, about 0.1 us), so two
threads sharing a model never lose an update nor see a half-learnt state. The lock is
re-entrant: a call made from inside another (a feature name whose ``__eq__`` calls the model)
does not deadlock; the estimators check instead that such a call left the outer call's
encoding valid (see `NRRLS`). A copy or a pickle gets a fresh lock, and is a state that
existed: the snapshot is taken under the lock, so no call of another thread runs in the middle
of it; so is a ``clone`` (its parameters, a wrapped model among them, are read under the lock),
also with ``include_attributes=True``. A model pickled before it had a lock gets one when loaded.

"""

from __future__ import annotations

import copy
import threading
import typing

__all__ = ["OneCallAtATime"]


class OneCallAtATime:
    """Mixin: ``self._lock``, a per-model re-entrant lock, left out of pickles and copies."""

    _lock: threading.RLock

    def _new_lock(self) -> None:
        self._lock = threading.RLock()

    def __getstate__(self) -> dict:
        """The state for a pickle or a copy: taken whole under the lock (deep-copied there: a
        pickle reads the arrays after this returns, while another thread may be learning)."""
        lock = self.__dict__.get("_lock")
        if lock is None:
            return self.__dict__.copy()
        with lock:
            state = self.__dict__.copy()
            del state["_lock"]  # a lock is not state: every copy gets its own
            return copy.deepcopy(state)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._new_lock()  # (a pickle of a version without a lock too)

    def _state_copy(self) -> dict:
        """A deep copy of the state, the lock left out: a point to roll back to (`_restore`),
        taken by a call that holds the lock."""
        return copy.deepcopy({key: held for key, held in self.__dict__.items() if key != "_lock"})

    def _restore(self, state: dict) -> None:
        """Back to a `_state_copy` (whatever was added since dropped), the lock kept: other
        threads may be waiting on it."""
        lock = self._lock
        self.__dict__.clear()
        self.__dict__.update(state)
        self._lock = lock

    def clone(self, new_params: dict | None = None, include_attributes: bool = False) -> typing.Any:
        """river's ``clone``, taken under the lock; ``include_attributes`` copies the state as a
        snapshot does (the lock left out: the clone has its own)."""
        with self._lock:
            clone = super().clone(new_params)  # type: ignore[misc]
            if include_attributes:
                parameters = self._get_params()  # type: ignore[attr-defined]
                for name, value in self.__getstate__().items():
                    if name not in parameters:
                        setattr(clone, name, value)  # (already a deep copy)
            return clone
