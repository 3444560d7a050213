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
