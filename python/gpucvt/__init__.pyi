"""Type stubs of gpucvt (see the docstrings of the module for the behaviour)."""

from typing import Any, List, Optional

from ._dialects import (
    Diagnostic as Diagnostic,
    IllegalInstruction as IllegalInstruction,
    amd as amd,
    check as check,
    cvt as cvt,
    cvt_forms as cvt_forms,
    mov as mov,
    tile as tile,
    tile_ops as tile_ops,
)
from ._file import (
    Summary as Summary,
    convert_file as convert_file,
    dequantize_file as dequantize_file,
)
from ._quant import mx_dequantize as mx_dequantize, mx_quantize as mx_quantize
from ._round import Rounded as Rounded, round as round
from . import testing as testing

import numpy as np
import numpy.typing as npt

__all__ = [
    "astype",
    "formats",
    "finfo",
    "values",
    "FInfo",
    "round",
    "Rounded",
    "convert_file",
    "Summary",
    "cvt",
    "mov",
    "tile",
    "amd",
    "check",
    "cvt_forms",
    "tile_ops",
    "Diagnostic",
    "IllegalInstruction",
    "mx_quantize",
    "mx_dequantize",
    "dequantize_file",
]
__version__: str

class FInfo:
    """The properties of a format (like ``ml_dtypes.finfo``)."""

    name: str
    dtype: Optional[np.dtype[Any]]
    bits: int
    signed: bool
    is_float: bool
    exp_bits: int
    man_bits: int
    nmant: int
    bias: int
    frac_bits: int
    has_inf: bool
    has_nan: bool
    has_zero: bool
    has_subnormals: bool
    max: float
    min: float
    min_normal: float
    smallest_normal: float
    tiny: float
    smallest_subnormal: float
    eps: float
    layout: str
    def __init__(self, info: dict[str, Any]) -> None: ...

def formats() -> List[str]:
    """Every format name gpucvt knows, in catalogue order."""

def finfo(fmt: Any) -> FInfo:
    """The properties of a format: bits, max, min, min_normal, smallest_subnormal, eps, ..."""

def values(fmt: Any) -> npt.NDArray[np.float64]:
    """The value of every encoding (index = bit pattern) of a format of at most 16 bits."""

def astype(
    x: npt.ArrayLike,
    dtype: Any,
    *,
    mode: str = "rn",
    satfinite: bool = False,
    sat: bool = False,
    relu: bool = False,
    ftz: bool = False,
    pzo: bool = False,
    seed: int = 0,
    rbits: Optional[npt.ArrayLike] = None,
    rbits_width: Optional[int] = None,
    threads: Optional[int] = None,
    out: Optional[npt.NDArray[Any]] = None,
    nan: str = "canonical",
    compat: Optional[str] = None,
) -> npt.NDArray[Any]:
    """Convert ``x`` to the format ``dtype``, bit for bit as the GPU does (PTX ``cvt``);
    with ``out``, into that array (x's shape, C-contiguous, writeable, the result's dtype or
    the unsigned integer of its width, not overlapping ``x``), which is returned. ``nan``:
    ``"canonical"`` or ``"payload"``; ``compat``: ``"ml_dtypes"``, ``"torch"`` or ``"xla"``
    to reproduce that library's cast."""

# Helpers of the package's own modules (_quant, _file, _round), not part of the API.
def _format_of(dtype: Any) -> str: ...
def _result_dtype(fmt: str) -> Optional[np.dtype[Any]]: ...
def _as_array(x: Any) -> npt.NDArray[Any]: ...
def _rbits_words(rbits: Any, n: int) -> npt.NDArray[np.uint32]: ...
