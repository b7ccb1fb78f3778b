"""The native module of gpucvt (internal: use the functions of ``gpucvt``)."""

from typing import Any, List, Optional

import numpy as np
import numpy.typing as npt

def formats() -> List[str]: ...
def canonical_name(name: str) -> str: ...
def format_info(name: str) -> dict[str, Any]: ...
def values(name: str) -> npt.NDArray[np.float64]: ...
def convert(
    src: npt.NDArray[Any],
    src_fmt: str,
    dst_fmt: str,
    mode: str = "rn",
    satfinite: bool = False,
    sat: bool = False,
    relu: bool = False,
    ftz: bool = False,
    seed: int = 0,
    rbits: Optional[npt.NDArray[np.uint32]] = None,
    rbits_width: Optional[int] = None,
    threads: Optional[int] = None,
) -> npt.NDArray[Any]: ...
