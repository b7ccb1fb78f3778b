"""The native module of gpucvt (internal: use the functions of ``gpucvt``)."""

import os
from typing import Any, List, Optional, Tuple, Union, final

import numpy as np
import numpy.typing as npt

def formats() -> List[str]: ...
def canonical_name(name: str) -> str: ...
def format_info(name: str) -> dict[str, Any]: ...
def values(name: str) -> npt.NDArray[np.float64]: ...
@final
class Converter:
    def __new__(
        cls,
        src_fmt: str,
        dst_fmt: str,
        out: np.dtype[Any],
        mode: str = "rn",
        satfinite: bool = False,
        sat: bool = False,
        relu: bool = False,
        ftz: bool = False,
        rbits_width: Optional[int] = None,
        nan: str = "canonical",
        compat: Optional[str] = None,
        pzo: bool = False,
    ) -> "Converter": ...
    def check_out(self, a: npt.NDArray[Any], out: Any) -> npt.NDArray[Any]: ...
    def __call__(
        self,
        x: Any,
        threads: Optional[int] = None,
        seed: int = 0,
        rbits: Optional[npt.NDArray[np.uint32]] = None,
        out: Optional[npt.NDArray[Any]] = None,
    ) -> Optional[npt.NDArray[Any]]: ...

def _bench_kernel(
    x: npt.NDArray[Any], out: npt.NDArray[Any], src_fmt: str, dst_fmt: str, reps: int
) -> float: ...
def round(
    number: Optional[str],
    to: str,
    from_: Optional[str] = None,
    bits: Optional[str] = None,
    mode: str = "rn",
    explain: bool = False,
    satfinite: bool = False,
    sat: bool = False,
    relu: bool = False,
    ftz: bool = False,
    pzo: bool = False,
    wrap: bool = False,
    overflow: Optional[str] = None,
    nan: Optional[str] = None,
    int_nan: Optional[str] = None,
    scale: Optional[int] = None,
    rbits: Optional[str] = None,
    rbits_width: Optional[int] = None,
) -> tuple[str, int, float, Optional[str]]: ...
def convert_file(
    src: str,
    dst: str,
    to: Optional[str] = None,
    mode: str = "rn",
    satfinite: bool = False,
    sat: bool = False,
    relu: bool = False,
    ftz: bool = False,
    pzo: bool = False,
    rbits_width: Optional[int] = None,
    cvt: Optional[str] = None,
    from_: Optional[str] = None,
    tensors: List[str] = ...,
    exclude: List[str] = ...,
    strict: bool = False,
    threads: int = 0,
    seed: int = 0,
    block: Optional[str] = None,
    scale: Optional[str] = None,
    scale_rule: Optional[str] = None,
    dry_run: bool = False,
    recipe: Optional[str] = None,
    axis: Optional[int] = None,
    scale_layout: Optional[str] = None,
    scale_2: bool = False,
    force: bool = False,
    all: bool = False,
    layout: Optional[str] = None,
) -> str: ...
def dequantize_file(
    src: str,
    dst: str,
    to: str = "f32",
    block: Optional[str] = None,
    axis: Optional[int] = None,
    scale: Optional[str] = None,
    scale_rule: Optional[str] = None,
    scale_layout: Optional[str] = None,
    scale_2: bool = False,
    threads: int = 0,
    from_: Optional[str] = None,
    recipe: Optional[str] = None,
    force: bool = False,
) -> str: ...
def mx_quantize(
    x: npt.NDArray[np.uint32],
    shape: List[int],
    elem: Optional[str],
    recipe: Optional[str],
    block: Optional[str],
    axis: Optional[int],
    scale: Optional[str],
    rule: Optional[str],
    layout: Optional[str],
    scale_2: bool,
    mode: str,
    satfinite: bool,
    seed: int,
    threads: Optional[int],
    rbits: Optional[npt.NDArray[np.uint32]] = None,
    rbits_width: Optional[int] = None,
) -> Tuple[npt.NDArray[Any], npt.NDArray[np.uint32], Optional[float], List[int], str, str]: ...
def mx_dequantize(
    q: npt.NDArray[Any],
    scales: npt.NDArray[np.uint32],
    scale_2: Optional[float],
    shape: List[int],
    elem: Optional[str],
    recipe: Optional[str],
    block: Optional[str],
    axis: Optional[int],
    scale: Optional[str],
    rule: Optional[str],
    layout: Optional[str],
    second_level: bool,
    threads: Optional[int],
) -> npt.NDArray[np.float64]: ...
def quant_recipe(name: str) -> Tuple[str, str]: ...

@final
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
    amd_mode: int = 0,
    amd_old: int = 0,
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

@final
class Vectors:
    @property
    def spelling(self) -> str: ...
    @property
    def dialect(self) -> str: ...
    @property
    def cases(self) -> int: ...
    @property
    def result_bits(self) -> int: ...
    @property
    def element_bits(self) -> int: ...
    @property
    def answer_words(self) -> int: ...
    def operands(self) -> List[Tuple[str, int, Optional[str], int]]: ...
    def tile_shape(self) -> Optional[List[int]]: ...
    def inputs(self) -> npt.NDArray[np.uint64]: ...
    def expected(self) -> npt.NDArray[np.uint64]: ...
    def line(self, i: int) -> str: ...
    def manifest(self) -> str: ...
    def check(
        self,
        answers: npt.NDArray[np.uint64],
        show: int = 10,
        allow: List[str] = ...,
        threads: Optional[int] = None,
    ) -> str: ...

def vectors(
    instruction: str,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    cr0: Optional[str] = None,
    semantics: Optional[str] = None,
    tile_version: Optional[str] = None,
    level: int = 1,
    seed: int = 0,
    count: Optional[int] = None,
    threads: Optional[int] = None,
) -> Vectors: ...
def disagreement_classes() -> List[Tuple[str, str]]: ...
