"""Type stubs of gpucvt's dialect functions (see their docstrings for the behaviour)."""

import os
from typing import Any, List, NamedTuple, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__all__ = [
    "cvt",
    "mov",
    "tile",
    "check",
    "cvt_forms",
    "tile_ops",
    "Diagnostic",
    "IllegalInstruction",
]

class Diagnostic(NamedTuple):
    """One diagnostic, as ``gpucvt check --json`` reports it."""

    line: int
    column: int
    severity: str
    rule: str
    message: str
    def to_dict(self) -> dict[str, Any]: ...

class IllegalInstruction(ValueError):
    """An instruction its dialect's rules reject; ``diagnostics`` says why and where."""

    message: str
    diagnostics: List[Diagnostic]
    def __init__(self, message: str, diagnostics: Sequence[Any] = ()) -> None: ...

def cvt(
    form: str,
    *operands: npt.ArrayLike,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    threads: Optional[int] = None,
) -> npt.NDArray[np.unsignedinteger[Any]]:
    """A PTX ``cvt``/``cvt.pack`` form applied elementwise (``gpucvt eval --batch``)."""

def amd(
    instruction: str,
    *operands: npt.ArrayLike,
    target: str,
    mode: int = 0,
    fp16_ovfl: bool = False,
    old: int = 0,
    threads: Optional[int] = None,
) -> npt.NDArray[np.unsignedinteger[Any]]:
    """An AMD conversion instruction applied elementwise (``gpucvt eval --batch --target gfxN``)."""

def mov(
    instruction: str,
    src: npt.ArrayLike,
    *,
    cr0: Union[int, str] = 0,
    threads: Optional[int] = None,
) -> npt.NDArray[np.unsignedinteger[Any]]:
    """A vISA ``mov`` applied elementwise (``gpucvt eval --batch --cr0``)."""

def tile(
    op: str,
    x: npt.ArrayLike,
    *,
    semantics: str = "tileiras",
    target: Optional[str] = "sm_100a",
    tile_version: Optional[str] = None,
    undefined: str = "raise",
    threads: Optional[int] = None,
) -> npt.NDArray[np.unsignedinteger[Any]]:
    """A CUDA Tile IR conversion op applied to a tile (or a batch of tiles)."""

def cvt_forms(target: str = "sm_100a", ptx_version: Optional[str] = None) -> List[str]:
    """Every PTX ``cvt``/``cvt.pack`` form legal on ``target``."""

def check(
    path_or_text: Union[str, os.PathLike[str]],
    *,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    tile_version: Optional[str] = None,
    dialect: Optional[str] = None,
) -> List[Diagnostic]:
    """The diagnostics ``gpucvt check --json`` reports for a file or text."""

def tile_ops(tile_version: Optional[str] = None, shape: Sequence[int] = (2,)) -> List[str]:
    """Every legal Tile IR conversion op on tiles of ``shape``."""
