"""Arrays that live on the GPU, for `dynamir.compile(..., backend="cuda")`.

    x = dynamir.cuda.to_device(np.ones((4096, 1024), np.float32))
    f = dynamir.compile(softmax, backend="cuda")
    y = f(x)            # a dynamir.cuda.Array: no copy in, none out
    y.numpy()           # copy to the host when needed

Host arrays passed to a compiled function are copied in and their results copied out; device
arrays are not. `Array` exposes `__cuda_array_interface__`, so CuPy, Numba or torch
(`torch.as_tensor(y, device="cuda")`) can use the memory without a copy.
"""

import numpy as np

import _dynamir

from .compiler import BackendUnavailable

Array = _dynamir.DeviceArray

__all__ = ["Array", "is_available", "device", "to_device"]


def is_available():
    """Whether backend="cuda" can run here (a driver and a device)."""
    return _dynamir.cuda_status()[0]


def device():
    """A description of device 0, or why there is none."""
    return _dynamir.cuda_status()[1]


def to_device(array):
    """A copy of `array` (anything numpy.asarray takes) in GPU memory."""
    available, status = _dynamir.cuda_status()
    if not available:
        raise BackendUnavailable(f"CUDA is not available here: {status}")
    return _dynamir.to_device(np.ascontiguousarray(array))
