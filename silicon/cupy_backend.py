"""The GPU side of the harness: the generated kernels, compiled once with NVRTC through CuPy."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from harness import Backend, HarnessError, Shape, cuda_source, kernel_name

THREADS = 256


class CupyBackend(Backend):
    name = "cupy"

    def __init__(self, arch: str):
        import cupy

        self.cp = cupy
        self.arch = arch
        self.module = None
        self.index = {}
        self._out = {}

    def prepare(self, shapes: Sequence[Shape]) -> None:
        source = cuda_source(shapes)
        self.source = source
        self.module = self.cp.RawModule(
            code=source, options=(f"--gpu-architecture={self.arch}", "-std=c++17"), backend="nvrtc"
        )
        self.index = {s.form: i for i, s in enumerate(shapes)}

    def device(self) -> str:
        props = self.cp.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        driver = self.cp.cuda.runtime.driverGetVersion()
        runtime = self.cp.cuda.runtime.runtimeGetVersion()
        return f"{name} (CUDA driver {driver // 1000}.{driver % 1000 // 10}, runtime {runtime // 1000}.{runtime % 1000 // 10})"

    def _buffer(self, dtype, n):
        key = np.dtype(dtype).itemsize
        buf = self._out.get(key)
        if buf is None or buf.size < n:
            buf = self.cp.empty(n, dtype=dtype)
            self._out[key] = buf
        return buf[:n]

    def run(self, index: int, shape: Shape, first: int, n: int, seed: int,
            units: Optional[np.ndarray]) -> np.ndarray:
        if self.module is None:
            raise HarnessError("the kernels are not compiled (prepare)")
        k = self.module.get_function(kernel_name(self.index[shape.form]))
        out = self._buffer(shape.result_dtype, n)
        cp = self.cp
        d_units = cp.asarray(units, dtype=cp.uint64) if units is not None else None
        ptr = d_units if d_units is not None else np.uint64(0)
        blocks = (n + THREADS - 1) // THREADS
        k((blocks,), (THREADS,), (ptr, np.uint64(first), np.uint64(n), np.uint64(seed), out))
        return cp.asnumpy(out)
