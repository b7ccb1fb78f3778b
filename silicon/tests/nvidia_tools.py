"""NVIDIA's CUDA compilers from the package index (`nvidia-cuda-nvrtc-cu12`: NVRTC,
`nvidia-cuda-nvcc-cu12`: ptxas), which run without a GPU: the generated kernels are compiled
to PTX and assembled for the target exactly as on the GPU machine, short of running them."""

from __future__ import annotations

import ctypes
import importlib.util
import subprocess
from pathlib import Path
from typing import Optional, Tuple


def _package_dir(name: str) -> Optional[Path]:
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def find() -> Optional[Tuple[Path, Path]]:
    """(libnvrtc, ptxas), or None where the packages are not installed."""
    nvrtc, nvcc = _package_dir("nvidia.cuda_nvrtc"), _package_dir("nvidia.cuda_nvcc")
    if nvrtc is None or nvcc is None:
        return None
    libs = sorted((nvrtc / "lib").glob("libnvrtc.so.*"))
    ptxas = nvcc / "bin" / "ptxas"
    if not libs or not ptxas.exists():
        return None
    return libs[0], ptxas


def nvrtc_ptx(lib: Path, source: str, arch: str) -> Tuple[int, str, str]:
    """Compiles CUDA source to PTX: (status, log, ptx)."""
    nv = ctypes.CDLL(str(lib))
    prog = ctypes.c_void_p()
    status = nv.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernels.cu", 0, None, None)
    if status != 0:
        return status, "nvrtcCreateProgram failed", ""
    opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17"]
    status = nv.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    nv.nvrtcGetProgramLog(prog, log)
    ptx = b""
    if status == 0:
        nv.nvrtcGetPTXSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        nv.nvrtcGetPTX(prog, buf)
        ptx = buf.value
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return status, log.value.decode(errors="replace"), ptx.decode()


def ptxas(binary: Path, ptx: str, target: str, scratch: Path) -> subprocess.CompletedProcess:
    src = scratch / "kernels.ptx"
    src.write_text(ptx)
    return subprocess.run(
        [str(binary), f"-arch={target}", str(src), "-o", str(scratch / "kernels.cubin")],
        capture_output=True,
        text=True,
    )
