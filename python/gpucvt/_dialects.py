"""The dialect functions of gpucvt: PTX ``cvt``, vISA ``mov``, Tile IR conversion ops, and
``check``. Re-exported by :mod:`gpucvt`; see each function's docstring."""

from __future__ import annotations

import math
import operator
import os
import re
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _gpucvt

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
    """One diagnostic, as ``gpucvt check --json`` reports it: ``line`` and ``column``
    (1-based; in an instruction's own text for :class:`IllegalInstruction`), ``severity``
    (``"error"``, ``"warning"`` or ``"note"``), ``rule`` (``"ptx.rounding-required"``, ...)
    and ``message``."""

    line: int
    column: int
    severity: str
    rule: str
    message: str

    def to_dict(self) -> dict:
        """The object ``gpucvt check --json`` prints for it."""
        return {
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "message": self.message,
            "rule": self.rule,
        }


class IllegalInstruction(ValueError):
    """An instruction its dialect's rules reject (on the target and PTX version asked for):
    ``str(e)`` is the message ``gpucvt eval`` prints, ``e.diagnostics`` the checker's
    :class:`Diagnostic` list (columns in the instruction text)."""

    def __init__(self, message: str, diagnostics: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics: List[Diagnostic] = [
            d if isinstance(d, Diagnostic) else Diagnostic(*d) for d in diagnostics
        ]

    def __reduce__(self):  # keeps the diagnostics through pickling
        return (type(self), (self.message, list(self.diagnostics)))


def _opt_str(name: str, v: Any) -> Optional[str]:
    if v is None or isinstance(v, str):
        return v
    raise TypeError(f"{name} must be a str or None, not {type(v).__name__}")


def _threads(threads: Any) -> Optional[int]:
    if threads is None:
        return None
    t = operator.index(threads)
    if t < 1:
        raise ValueError(f"threads must be at least 1 (None: every core), not {t}")
    return t


def _as_array(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__") and hasattr(np, "from_dlpack"):
        try:
            return np.from_dlpack(x)
        except (TypeError, ValueError, BufferError, RuntimeError, AttributeError):
            pass
    return np.asarray(x)


_FORMAT_INFO: dict = {}


def _is_float_format(fmt: str) -> bool:
    info = _FORMAT_INFO.get(fmt)
    if info is None:
        info = _FORMAT_INFO[fmt] = _gpucvt.format_info(fmt)
    return bool(info["is_float"])


def _native(a: np.ndarray) -> np.ndarray:
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _unsigned_view(a: np.ndarray) -> np.ndarray:
    return _native(a).view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def _integers(a: np.ndarray, spec: Tuple, what: str) -> np.ndarray:
    """Integer values as unsigned words: negative ones in two's complement, for operands
    that hold integers only."""
    name, bits, fmt, lanes = spec
    if a.size == 0:
        return a.astype(np.uint64)
    lo = int(a.min())
    if lo >= 0:
        return a.astype(np.uint64, copy=False) if a.dtype.kind != "u" else a
    if fmt is None or lanes != 1 or _is_float_format(fmt):
        raise ValueError(
            f"{what} takes {bits}-bit patterns: {lo} is negative; give the bits as unsigned words"
        )
    if lo < -(1 << (bits - 1)):
        raise ValueError(f"{what} is {bits} bits: {lo} does not fit")
    w = _native(a.astype(np.int64, copy=False)).view(np.uint64)
    if bits < 64:
        w = w & np.uint64((1 << bits) - 1)
    return w


def _operand(x: Any, spec: Tuple, spelling: str) -> np.ndarray:
    """An operand as an array of unsigned words (any unsigned width; any shape)."""
    name, bits, fmt, lanes = spec
    what = f"operand {name} of {spelling}"
    a = _as_array(x)
    kind = a.dtype.kind
    if kind == "u":
        return _native(a)
    if kind == "i":
        return _integers(_native(a), spec, what)
    src = None
    if kind == "f" or (kind == "V" and a.dtype.names is None and a.dtype.itemsize <= 8):
        try:
            src = _gpucvt.canonical_name(a.dtype.name)
        except ValueError:
            src = None
    if src is None:
        raise TypeError(
            f"{what}: cannot read an array of {a.dtype}; give unsigned integer bit patterns, "
            "integers, or floats"
        )
    if not _is_float_format(src):  # an ml_dtypes integer (int4, ...)
        return _integers(a.astype(np.int64), spec, what)
    if fmt is None or lanes != 1:
        packs = f" ({lanes} {fmt} lanes)" if fmt is not None and lanes > 1 else ""
        raise TypeError(
            f"{what} is a {bits}-bit word{packs}: give it as unsigned integer bit patterns, "
            f"not {a.dtype}"
        )
    if not _is_float_format(fmt):
        raise TypeError(f"{what} is an integer ({fmt}): give integers, not {a.dtype}")
    if src == fmt:
        return _unsigned_view(a)
    # Another float format: rounded to nearest (even) into the operand's, as astype does.
    from . import astype  # imported here: the package imports this module first

    return _unsigned_view(np.asarray(astype(a, fmt, mode="rn")))


def _columns(arrays: List[np.ndarray], spelling: str, shape=None):
    """The broadcast shape, its size and one flat, contiguous column per operand (a single
    word where the operand has one element)."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays), *(() if shape is None else (shape,)))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(
            f"the operands of {spelling} do not broadcast together: shapes {shapes}"
        ) from None
    n = math.prod(shape)
    cols = []
    for a in arrays:
        if a.size == 1:
            c = a.reshape(1)
        else:
            c = np.broadcast_to(a, shape).reshape(-1)
        cols.append(np.ascontiguousarray(c))
    return shape, n, cols


def _eval(
    instr: Any,
    cols: List[np.ndarray],
    n: int,
    shape: Tuple[int, ...],
    threads: Any,
    mark_undefined: bool = False,
):
    try:
        return instr.eval(cols, n, threads=_threads(threads), mark_undefined=mark_undefined)
    except ValueError as e:
        # The native message counts elements in C order; name the index of a multi-d one.
        m = re.match(r"element (\d+): ", str(e))
        if m is None or len(shape) < 2 or type(e) is not ValueError:
            raise
        index = tuple(int(i) for i in np.unravel_index(int(m.group(1)), shape))
        raise ValueError(f"element {m.group(1)} (index {index}): {str(e)[m.end():]}") from None


def cvt(
    form: str,
    *operands: Any,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    threads: Optional[int] = None,
) -> np.ndarray:
    """Apply a PTX ``cvt``/``cvt.pack`` form elementwise, bit for bit as ``gpucvt eval
    --batch``.

    ``form``: the instruction without operands (``"cvt.rn.satfinite.e4m3x2.f32"``; a whole
    statement such as ``"cvt.rn.f16.f32 %h, %f;"`` is read too). It is read and checked once:
    against ``target`` (``"sm_90a"``, ...) at ``ptx_version`` (``"8.7"``; default the
    newest), or without a target, legal on some target.

    ``operands``: the source operands in instruction order after ``d`` (``a``, ``b``, then
    ``e``, ``f`` of x4 forms, ``rbits`` of ``.rs`` forms, the scale operand of ``.scaled``
    forms, ``c`` of ``cvt.pack``), each an array or scalar; they broadcast together like
    NumPy operands. Each element is

    - an unsigned integer: the operand's bit pattern (natural widths: ``uint32`` for
      ``.f32``, ``uint16`` for ``.f16`` or ``.e4m3x2``; any unsigned dtype whose values fit);
    - a signed integer: its bits; negative values in two's complement, for integer operands
      only (``.s8`` ... ``.u64``);
    - a float (``float64 float32 float16``, ml_dtypes ``bfloat16`` ...) for an operand of one
      float lane: the bits where the dtype is the operand's type, else the value rounded to
      nearest even into it (as ``astype``).

    Returns the destination register of each element as unsigned words of its width
    (``uint16`` for ``.f16`` or ``.e4m3x2``, ``uint32`` for ``cvt.pack`` ...), of the
    broadcast shape: exactly the words ``gpucvt eval --batch`` prints. Forms whose lanes all
    perform one conversion run through gpucvt's slice kernels; ``cvt.pack`` and ``.scaled``
    forms through the exact evaluator. The GIL is released; ``threads`` as in ``astype``.

    Raises :class:`IllegalInstruction` (a ``ValueError``) for a form its rules or the target
    reject, ``ValueError`` for unknown names, wrong operand counts, values wider than their
    operand (``element I (index (i, j)): ...``, I counting in C order over the broadcast
    shape) and shapes that do not broadcast,
    ``TypeError`` for arrays that cannot be operands.

    >>> import numpy as np, gpucvt
    >>> gpucvt.cvt("cvt.rn.satfinite.e4m3x2.f32", np.float32([1.0, 0.5]), np.float32(300.0))
    array([14457, 12409], dtype=uint16)
    >>> hex(gpucvt.cvt("cvt.rn.f16.f32", np.uint32(0x477FF000)))   # 65520 rounds to inf
    '0x7c00'
    >>> gpucvt.cvt("cvt.rn.f32.s32", np.int32([-1, 7])).view(np.float32)
    array([-1.,  7.], dtype=float32)
    >>> gpucvt.cvt("cvt.rs.satfinite.bf16x2.f32", 1.0, 2.0, np.uint32(0))
    array(1065369600, dtype=uint32)
    >>> try:
    ...     gpucvt.cvt("cvt.rn.satfinite.e2m1x2.f32", 1.0, 1.0, target="sm_90")
    ... except gpucvt.IllegalInstruction as e:
    ...     print(e.diagnostics[0].rule)
    ptx.target
    """
    if not isinstance(form, str):
        raise TypeError(f"form must be a str, not {type(form).__name__}")
    instr = _gpucvt.instruction(
        "ptx",
        form,
        target=_opt_str("target", target),
        ptx_version=_opt_str("ptx_version", ptx_version),
    )
    return _run(instr, operands, threads)


def _run(instr: Any, operands: Sequence[Any], threads: Any) -> np.ndarray:
    specs = instr.operands()
    spelling = instr.spelling
    if len(operands) != len(specs):
        names = ", ".join(s[0] for s in specs)
        raise ValueError(
            f"{spelling} takes {len(specs)} source operand(s) ({names}), got {len(operands)}"
        )
    arrays = [_operand(x, s, spelling) for x, s in zip(operands, specs)]
    shape, n, cols = _columns(arrays, spelling)
    out = _eval(instr, cols, n, shape, threads)
    per_row = instr.result_shape()[1]
    return out.reshape(shape + ((per_row,) if per_row > 1 else ()))


def mov(
    instruction: str,
    src: Any,
    *,
    cr0: Union[int, str] = 0,
    threads: Optional[int] = None,
) -> np.ndarray:
    """Apply a vISA move elementwise, bit for bit as ``gpucvt eval --batch --cr0 CR0``.

    ``instruction``: ``"mov[.sat] DST <- SRC"`` with vISA type names (``"mov.sat ub <- f"``,
    ``"mov hf <- f"``). ``cr0``: the control register, a raw value (``0`` at kernel entry,
    ``0x4C0`` OpenCL's) or its name as ``--cr0`` takes it (``"rtz"``, ``"rne"``,
    ``"opencl"``, ...). ``src``: bit patterns (unsigned integers), integers (signed: two's
    complement) or floats of the source type (others are rounded to nearest into it).

    Returns the destination elements as unsigned words of the destination's width, of
    ``src``'s shape; a packed immediate source (``V``, ``UV``, ``VF``) gives a trailing axis
    of its elements, element 0 first.

    Raises :class:`IllegalInstruction` for a type pair with no ``mov`` semantics,
    ``ValueError`` for bad names, ``cr0`` values and sources wider than the source type.

    >>> import numpy as np, gpucvt
    >>> gpucvt.mov("mov.sat ub <- f", np.float32([300.5, -2.0, 7.5]))   # toward zero at entry
    array([255,   0,   7], dtype=uint8)
    >>> gpucvt.mov("mov.sat ub <- f", np.float32(7.5), cr0=0x1000)   # float -> int by RNE
    array(8, dtype=uint8)
    >>> gpucvt.mov("mov f <- vf", np.uint32(0x3830)).view(np.float32)   # 4 elements
    array([1. , 1.5, 0. , 0. ], dtype=float32)
    """
    if not isinstance(instruction, str):
        raise TypeError(f"instruction must be a str, not {type(instruction).__name__}")
    if isinstance(cr0, bool) or not isinstance(cr0, (int, str, np.integer)):
        raise TypeError(f"cr0 must be an int or a str, not {type(cr0).__name__}")
    if not isinstance(cr0, str):
        c = int(cr0)
        if not 0 <= c < 1 << 32:
            raise ValueError(f"cr0 must be 0 to 2**32 - 1, not {c}")
        cr0 = str(c)
    instr = _gpucvt.instruction("visa", instruction, cr0=cr0)
    return _run(instr, (src,), threads)


def amd(
    instruction: str,
    *operands: Any,
    target: str,
    mode: int = 0,
    fp16_ovfl: bool = False,
    old: int = 0,
    threads: Optional[int] = None,
) -> np.ndarray:
    """Apply an AMD conversion instruction elementwise, bit for bit as ``gpucvt eval
    --batch --target GFX``.

    ``instruction``: the instruction as AMDGPU assembly writes it, registers and modifiers
    included (``"v_cvt_pk_fp8_f32 v1, v2, v3"``, ``"v_cvt_f32_fp8 v1, v2 byte_sel:1"``),
    read and checked once on ``target`` (``"gfx942"``: FNUZ fp8; ``"gfx950"``, ``"gfx1200"``,
    ``"gfx1201"``: OCP fp8). ``mode``: the MODE register's value; ``fp16_ovfl=True`` sets its
    FP16_OVFL bit (23), under which FP8 conversions saturate instead of giving NaN.
    ``old``: the destination register's old value, which a partial write keeps.
    ``operands``: the source operands in instruction order, each an array or scalar (bit
    patterns as unsigned integers, or floats of the operand's type), broadcast together.

    Returns the destination register of each element as unsigned words of its width.
    Raises :class:`IllegalInstruction` for an instruction the target does not have and
    ``ValueError`` for unknown names or bad operands.

    >>> import numpy as np, gpucvt
    >>> hex(gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", np.float32(2.0), np.float32(0.0), target="gfx942"))
    '0x48'
    >>> hex(gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", np.float32(2.0), np.float32(0.0), target="gfx950"))
    '0x40'
    >>> gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", np.float32([1e6]), np.float32(0.0), target="gfx950", fp16_ovfl=True)
    array([126], dtype=uint32)
    """
    if not isinstance(instruction, str):
        raise TypeError(f"instruction must be a str, not {type(instruction).__name__}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a str, not {type(target).__name__}")
    mode = operator.index(mode)
    old = operator.index(old)
    if not 0 <= mode < 1 << 32:
        raise ValueError(f"mode must be 0 to 2**32 - 1, not {mode}")
    if not 0 <= old < 1 << 32:
        # (A register pair is written whole: only a 32-bit destination keeps old bits.)
        raise ValueError(f"old must be a 32-bit value, 0 to 2**32 - 1, not {old}")
    if fp16_ovfl:
        mode |= 1 << 23
    instr = _gpucvt.instruction("amd", instruction, target=target, amd_mode=mode, amd_old=old)
    return _run(instr, operands, threads)


def tile(
    op: str,
    x: Any,
    *,
    semantics: str = "tileiras",
    target: Optional[str] = "sm_100a",
    tile_version: Optional[str] = None,
    undefined: str = "raise",
    threads: Optional[int] = None,
) -> np.ndarray:
    """Apply a CUDA Tile IR conversion op to a tile, bit for bit as ``gpucvt eval --batch``.

    ``op``: the op in its assembly syntax up to its result type (``"ftof %x
    rounding<zero> : tile<4xf32> -> tile<4xf16>"``; operand name and ``cuda_tile.`` prefix
    optional), verified at ``tile_version`` (``"13.1"`` ... ``"13.4"``, default the newest).
    ``semantics``: ``"tileiras"`` (the PTX NVIDIA's compiler emits for ``target``) or
    ``"spec"`` (the specification text).

    ``x``: the source tile's elements (bit patterns, integers or floats, as for :func:`cvt`).
    ``x`` broadcasts against the tile's shape: a scalar fills the tile, and leading
    dimensions beyond the tile's are a batch of tiles (so an op on a 0-d tile, ``tile<f32>``,
    applies elementwise to any array). Returns the result elements as unsigned words of the
    result element's width, of the broadcast shape.

    ``undefined``: where the ``spec`` semantics leaves an element undefined, ``"raise"``
    (the default) raises ``ValueError`` with the CLI's message for its tile; ``"mask"``
    returns a ``numpy.ma.MaskedArray`` whose mask marks the undefined elements (their
    words are 0).

    Raises :class:`IllegalInstruction` for an op the verifier rejects or ``tileiras``
    cannot compile for the target.

    >>> import numpy as np, gpucvt
    >>> gpucvt.tile("itof %x signed : tile<i32> -> tile<f8E5M2>", np.int32([4609, 1]))
    array([108,  60], dtype=uint8)
    >>> gpucvt.tile("itof %x signed : tile<i32> -> tile<f8E5M2>", np.int32(4609), semantics="spec")
    array(109, dtype=uint8)
    >>> gpucvt.tile("ftof : tile<2xf32> -> tile<2xf16>", np.float32([[1.0, -2.0], [0.5, 3.0]]))
    array([[15360, 49152],
           [14336, 16896]], dtype=uint16)
    >>> r = gpucvt.tile("ftoi signed : tile<f32> -> tile<i8>", np.float32([1.0, np.nan, 300.0]),
    ...                 semantics="spec", undefined="mask")
    >>> r.mask.tolist(), int(r[0])
    ([False, True, True], 1)
    """
    if not isinstance(op, str):
        raise TypeError(f"op must be a str, not {type(op).__name__}")
    if undefined not in ("raise", "mask"):
        raise ValueError(f'undefined must be "raise" or "mask", not {undefined!r}')
    instr = _gpucvt.instruction(
        "tile",
        op,
        target=_opt_str("target", target),
        semantics=_opt_str("semantics", semantics),
        tile_version=_opt_str("tile_version", tile_version),
    )
    spec = instr.operands()[0]
    tshape = tuple(int(d) for d in instr.tile_shape())
    a = _operand(x, spec, instr.spelling)
    try:
        shape = np.broadcast_shapes(a.shape, tshape)
    except ValueError:
        raise ValueError(
            f"x of shape {a.shape} does not fit the tile of shape {tshape} of {instr.spelling}: "
            "it must broadcast against it (leading dimensions: a batch of tiles)"
        ) from None
    _, n, cols = _columns([a], instr.spelling, shape)
    if undefined == "mask":
        out, flags = _eval(instr, cols, n, shape, threads, mark_undefined=True)
        return np.ma.MaskedArray(out.reshape(shape), mask=flags.view(np.bool_).reshape(shape))
    out = _eval(instr, cols, n, shape, threads)
    return out.reshape(shape)


def cvt_forms(target: str = "sm_100a", ptx_version: Optional[str] = None) -> List[str]:
    """Every distinct PTX ``cvt``/``cvt.pack`` form legal on ``target`` at ``ptx_version``
    (default: the newest the target has), as :func:`cvt` takes them, sorted.

    >>> import gpucvt
    >>> "cvt.rn.satfinite.e4m3x2.f32" in gpucvt.cvt_forms("sm_90")
    True
    >>> "cvt.rn.satfinite.e2m1x2.f32" in gpucvt.cvt_forms("sm_90")
    False
    """
    if not isinstance(target, str):
        raise TypeError(f"target must be a str, not {type(target).__name__}")
    return list(_gpucvt.cvt_forms(target, _opt_str("ptx_version", ptx_version)))


def tile_ops(tile_version: Optional[str] = None, shape: Sequence[int] = (2,)) -> List[str]:
    """Every legal CUDA Tile IR conversion op at ``tile_version`` (default: the newest) on
    tiles of ``shape``, as :func:`tile` takes them: each op and element-type pair the
    verifier accepts, with each signedness and each rounding mode it takes (and ``ftoi``'s
    ``saturating`` from 13.4).

    >>> import gpucvt
    >>> "ftof rounding<zero> : tile<2xf32> -> tile<2xf16>" in gpucvt.tile_ops()
    True
    """
    dims = [operator.index(d) for d in shape]
    if any(d < 0 for d in dims):
        raise ValueError(f"a tile shape has no negative dimensions: {tuple(dims)}")
    return list(_gpucvt.tile_ops(_opt_str("tile_version", tile_version), dims))


_FILE_SUFFIXES = (".ptx", ".visaasm", ".mlir")


def _guess_dialect(text: str) -> str:
    if "cuda_tile" in text:
        return "tile"
    if re.search(r"^\s*\.kernel\b", text, re.M):
        return "visa"
    return "ptx"


def check(
    path_or_text: Union[str, "os.PathLike[str]"],
    *,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    tile_version: Optional[str] = None,
    dialect: Optional[str] = None,
) -> List[Diagnostic]:
    """The diagnostics ``gpucvt check --json`` reports for a PTX module, a vISA assembly
    file or a CUDA Tile IR file, as a list of :class:`Diagnostic` (an empty list: no
    problem).

    ``path_or_text``: an ``os.PathLike`` is a file. A ``str`` is a file when it is one line
    and names an existing file or ends in ``.ptx``, ``.visaasm`` or ``.mlir`` (a missing
    one is ``FileNotFoundError``); any other ``str`` is the source text itself. ``dialect``
    (``"ptx"``, ``"visa"``, ``"tile"``) says how to read it; by default a file's comes from
    its extension, and text is Tile IR if it mentions ``cuda_tile``, vISA if it has a
    ``.kernel`` line, else PTX.

    ``target``/``ptx_version`` override the module's ``.target``/``.version`` (PTX only);
    ``tile_version`` selects the Tile IR specification version (default the newest).

    Raises ``OSError`` (``FileNotFoundError``, ...) when a file cannot be read,
    ``ValueError`` for unknown names, a file that is not UTF-8 or whose dialect cannot be
    told, and ``target``/``ptx_version`` given for other dialects.

    >>> import gpucvt
    >>> d = gpucvt.check(".version 8.7\\n.target sm_90\\n.entry k() {\\n  .reg .f32 %f;\\n"
    ...                  "  .reg .b16 %h;\\n  cvt.f16.f32 %h, %f;\\n}\\n")
    >>> [(x.line, x.column, x.rule) for x in d]
    [(6, 3, 'ptx.rounding-required')]
    """
    for name, v in (("target", target), ("ptx_version", ptx_version),
                    ("tile_version", tile_version), ("dialect", dialect)):
        _opt_str(name, v)
    path = None
    if isinstance(path_or_text, os.PathLike):
        path = os.fspath(path_or_text)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
    elif isinstance(path_or_text, str):
        s = path_or_text
        one_line = "\n" not in s and "\r" not in s and s.strip() == s and s != ""
        if one_line and (os.path.isfile(s) or s.lower().endswith(_FILE_SUFFIXES)):
            path = s
    else:
        raise TypeError(
            f"check takes a path or the source text (str), not {type(path_or_text).__name__}"
        )
    if path is not None:
        found = _gpucvt.check_file(
            path, dialect=dialect, target=target, ptx_version=ptx_version,
            tile_version=tile_version,
        )
    else:
        found = _gpucvt.check_text(
            path_or_text, dialect or _guess_dialect(path_or_text), target=target,
            ptx_version=ptx_version, tile_version=tile_version,
        )
    return [Diagnostic(*d) for d in found]
