"""One call at a time per model: a re-entrant lock that is not part of the model's state.

river's models are not thread-safe; these are, cheaply: every public call of a model that
reads or writes its state holds the model's lock (`threading.RLock`, about 0.1 us), so two
threads sharing a model never lose an update nor see a half-learnt state. The lock is
re-entrant: a call made from inside another (a feature name whose ``__eq__`` calls the model)
does not deadlock; the estimators check instead that such a call left the outer call's
encoding valid (see `NRRLS`). A copy or a pickle gets a fresh lock, and is a state that
existed: the snapshot is taken under the lock, so no call of another thread runs in the middle
of it.

"""

from __future__ import annotations

import copy
import threading

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
        self._new_lock()
