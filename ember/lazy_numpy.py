"""numpy, imported on first use.

The op definitions carry their semantics as numpy code (the simulator's, and the constant
folder's for floats), so every module that defines or folds ops refers to numpy. Importing
it takes 50-100 ms, a third of a cold `ember compile` - which, folding only integer and bool
constants (each op's `fold`, on Python ints), never needs it. Modules write

    from ..lazy_numpy import np

and use `np` as numpy: the first attribute read imports numpy (under a lock) and copies its
names into this stand-in, so later reads cost what reading the real module does. Anything
added to numpy later (its lazily loaded submodules) is looked up on the real module.
"""

from __future__ import annotations

import threading
import types

_lock = threading.Lock()


class _LazyNumpy(types.ModuleType):
    def __getattr__(self, name: str):
        # Called only for names not (yet) in this module's dict.
        with _lock:
            import numpy
            if "ndarray" not in self.__dict__:
                self.__dict__.update({k: v for k, v in vars(numpy).items() if not k.startswith("__")})
        return getattr(numpy, name)


np = _LazyNumpy("numpy (imported on first use)")

