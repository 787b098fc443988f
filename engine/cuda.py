"""`engine.cuda`: is CUDA usable here, how many GPUs, their seeds, waiting for them (torch.cuda's basics).

CUDA here means CuPy with at least one GPU (backend.cuda_module). Asking whether it is available
never raises; seeding without a GPU does nothing, as torch's lazy seeding does; `synchronize` and
`current_device` need a GPU and raise backend.CudaUnavailable, saying what is missing, without one.
"""

from __future__ import annotations

from . import backend


def is_available() -> bool:
    """True when CuPy is installed and sees a GPU."""
    try:
        backend.cuda_module()
    except backend.CudaUnavailable:
        return False
    return True


def device_count() -> int:
    """The number of GPUs CuPy sees (0 without CuPy or a GPU)."""
    if not is_available():
        return 0
    return int(backend.cuda_module().cuda.runtime.getDeviceCount())


def current_device() -> int:
    """The index of the current GPU."""
    return backend.placement("cuda").index


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator (nothing happens without a GPU)."""
    if is_available():
        backend.seed_device(backend.placement("cuda"), seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (nothing happens without a GPU)."""
    for index in range(device_count()):
        backend.seed_device(backend.device("cuda", index), seed)


def synchronize(device=None) -> None:
    """Wait until the work queued on the GPU (`device`, or the current one) has finished."""
    backend.synchronize(backend.placement("cuda" if device is None else device))
