"""The native module of gpucvt (internal: use the functions of ``gpucvt``)."""

import os
from typing import Any, List, Optional, Tuple, Union

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

class Instruction:
    @property
    def spelling(self) -> str: ...
    def operands(self) -> List[Tuple[str, int, Optional[str], int]]: ...
    def result_shape(self) -> Tuple[int, int]: ...
    def tile_shape(self) -> Optional[List[int]]: ...
    def eval(
        self,
        columns: List[npt.NDArray[Any]],
        n: int,
        threads: Optional[int] = None,
        mark_undefined: bool = False,
    ) -> Any: ...

def instruction(
    dialect: str,
    text: str,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    cr0: Optional[str] = None,
    semantics: Optional[str] = None,
    tile_version: Optional[str] = None,
) -> Instruction: ...
def cvt_forms(target: str = "sm_100a", ptx_version: Optional[str] = None) -> List[str]: ...

def tile_ops(tile_version: Optional[str] = None, shape: List[int] = ...) -> List[str]: ...

_Diag = Tuple[int, int, str, str, str]

def check_text(
    text: str,
    dialect: str,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    tile_version: Optional[str] = None,
) -> List[_Diag]: ...
def check_file(
    path: Union[str, "os.PathLike[str]"],
    dialect: Optional[str] = None,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    tile_version: Optional[str] = None,
) -> List[_Diag]: ...
