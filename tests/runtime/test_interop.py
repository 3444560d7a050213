"""ember.runtime.interop without a GPU: which device a borrowed array names."""

from types import SimpleNamespace

from ember.runtime.interop import _device_of


def test_an_arrays_own_device_overrules_the_pointer_query():
    """The CUDA Array Interface's pointer query said cuda:0 for pool memory of cuda:1; a
    runtime DeviceArray names its device itself (__ember_device__)."""
    view = SimpleNamespace(device_id=0)
    assert _device_of(SimpleNamespace(__ember_device__=1), view) == 1
    assert _device_of(object(), view) == 0
    assert _device_of(object(), SimpleNamespace(device_id=-1)) is None


class _DLPackDevice:
    def __init__(self, kind, ordinal):
        self.device = (kind, ordinal)

    def __dlpack_device__(self):
        return self.device


def test_dlpacks_device_overrules_the_pointer_query():
    """torch and CuPy say their device through DLPack, which holds for their stream-ordered
    pools too (where the pointer query may say cuda:0); a host or failing answer is passed over."""
    view = SimpleNamespace(device_id=0)
    assert _device_of(_DLPackDevice(2, 1), view) == 1
    assert _device_of(_DLPackDevice(1, 0), SimpleNamespace(device_id=3)) == 3
    broken = SimpleNamespace(__dlpack_device__=lambda: (_ for _ in ()).throw(RuntimeError("no")))
    assert _device_of(broken, SimpleNamespace(device_id=2)) == 2
