"""``gpucvt.mx_quantize`` / ``gpucvt.mx_dequantize``: block-scaled quantization of one
array in memory, as ``gpucvt convert --block/--recipe`` does to a file."""

from __future__ import annotations

import operator
import warnings
from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _gpucvt

#: Elements per packed group and its bytes, for the formats files pack.
_PACKING = {"e2m1": (2, 1), "e2m3": (4, 3), "e3m2": (4, 3)}

#: The unsigned word of each scale format's bits, and the dtype results carry.
_SCALE_WORDS = {"ue8m0": np.uint8, "ue4m3": np.uint8, "bf16": np.uint16, "f32": np.uint32}


def _block_text(block: Any) -> Optional[str]:
    if block is None:
        return None
    if isinstance(block, str):
        return block
    if isinstance(block, tuple) and len(block) == 2:
        r, c = (operator.index(v) for v in block)
        return f"{r}x{c}"
    if isinstance(block, (bool, float)):
        raise TypeError(f"block must be an int, (R, C), 'RxC', 'row' or 'tensor', not {block!r}")
    try:
        return str(operator.index(block))
    except TypeError:
        raise TypeError(
            f"block must be an int, (R, C), 'RxC', 'row' or 'tensor', not {block!r}"
        ) from None


def _opt_str(v: Any, what: str) -> Optional[str]:
    if v is None or isinstance(v, str):
        return v
    raise TypeError(f"{what} must be a str, not {type(v).__name__}")


def _threads(threads: Optional[int]) -> Optional[int]:
    if threads is None:
        return None
    threads = operator.index(threads)
    if threads < 1:
        raise ValueError(f"threads must be at least 1 (None: one per core), not {threads}")
    return threads


def _axis(axis: Optional[int]) -> Optional[int]:
    return None if axis is None else operator.index(axis)


def _f32_words(x: Any) -> Tuple[np.ndarray, Tuple[int, ...]]:
    """`x` widened exactly to float32, as C-contiguous uint32 words, and its shape."""
    from . import _as_array

    a = _as_array(x)
    name = a.dtype.name
    if a.dtype == np.float64:
        raise ValueError(
            "x is float64, but block scales are computed in float32 as the stacks compute "
            "them: convert it first (np.asarray(x, dtype=np.float32) rounds to nearest), or "
            "pass float32, bfloat16 or float16 data"
        )
    if name not in ("float32", "float16", "bfloat16"):
        raise TypeError(f"x must be float32, bfloat16 or float16 data, not {a.dtype}")
    # float16 and bfloat16 widen to float32 exactly.
    w = np.ascontiguousarray(a, dtype=np.float32)
    return w.reshape(-1).view(np.uint32), tuple(int(d) for d in a.shape)


def _codes_dtype(fmt: str) -> np.dtype:
    from . import _result_dtype

    dt = _result_dtype(fmt)
    if dt is not None:
        return dt
    return np.dtype(np.uint8 if _gpucvt.format_info(fmt)["bits"] <= 8 else np.uint16)


def _scales_dtype(fmt: str) -> np.dtype:
    from . import _result_dtype

    if fmt == "f32":
        return np.dtype(np.float32)
    if fmt in ("ue8m0", "bf16"):
        dt = _result_dtype(fmt)
        if dt is not None:
            return dt
    return np.dtype(_SCALE_WORDS[fmt])


def _pack(q: np.ndarray, fmt: str) -> np.ndarray:
    """FP4 two elements per byte (the first in the low nibble), FP6 four per three bytes
    (a little-endian 24-bit word, element i in bits 6i..6i+5), along the last axis."""
    per, nbytes = _PACKING[fmt]
    last = q.shape[-1]
    if last % per:
        raise ValueError(
            f"packed=True packs the last axis {per} {fmt} elements to {nbytes} byte"
            f"{'s' if nbytes > 1 else ''}: its length {last} is not a multiple of {per}"
        )
    g = q.reshape(-1, per).astype(np.uint32)
    word = np.zeros(g.shape[0], dtype=np.uint32)
    bits = 8 * nbytes // per
    for k in range(per):
        word |= g[:, k] << np.uint32(bits * k)
    out = np.stack([(word >> np.uint32(8 * b)) & np.uint32(0xFF) for b in range(nbytes)], axis=-1)
    return out.astype(np.uint8).reshape(q.shape[:-1] + (last // per * nbytes,))


def _unpack(p: np.ndarray, fmt: str) -> np.ndarray:
    per, nbytes = _PACKING[fmt]
    last = p.shape[-1]
    if last % nbytes:
        raise ValueError(
            f"packed {fmt} data holds {per} elements in {nbytes} bytes: the last axis "
            f"length {last} is not a multiple of {nbytes}"
        )
    b = p.reshape(-1, nbytes).astype(np.uint32)
    word = np.zeros(b.shape[0], dtype=np.uint32)
    for k in range(nbytes):
        word |= b[:, k] << np.uint32(8 * k)
    bits = 8 * nbytes // per
    mask = np.uint32((1 << bits) - 1)
    q = np.stack([(word >> np.uint32(bits * k)) & mask for k in range(per)], axis=-1)
    return q.astype(np.uint8).reshape(p.shape[:-1] + (last // nbytes * per,))



def _renamed(new: Optional[str], old: Optional[str], new_name: str, old_name: str) -> Optional[str]:
    """The value of keyword `new_name`, also accepted under its old name `old_name` with a
    DeprecationWarning (one name for one thing; the old one goes in a later release)."""
    if old is None:
        return new
    warnings.warn(
        f"{old_name}= is the old name of {new_name}=; use {new_name}=",
        DeprecationWarning,
        stacklevel=3,
    )
    if new is not None and new != old:
        raise ValueError(f"give {new_name} or its old name {old_name}, not both")
    return old

def mx_quantize(
    x: Any,
    elem: Any = None,
    *,
    block: Union[None, int, str, Tuple[int, int]] = None,
    scale: Optional[str] = None,
    scale_rule: Optional[str] = None,
    axis: Optional[int] = None,
    packed: bool = False,
    scale_2: bool = False,
    layout: Optional[str] = None,
    recipe: Optional[str] = None,
    mode: str = "rn",
    satfinite: bool = True,
    seed: int = 0,
    threads: Optional[int] = None,
    rbits: Any = None,
    rbits_width: Optional[int] = None,
    method: Optional[str] = None,
) -> Tuple[Any, ...]:
    """Quantize ``x`` with block scales, as ``gpucvt convert --block ... / --recipe ...``
    does to a tensor of a file: returns ``(q, scales)``, or ``(q, scales, scale_2)`` with a
    second level.

    ``x``: float32, bfloat16 or float16 data (any array-like; float16 and bfloat16 widen to
    float32 exactly, and the scales are computed in float32 as the stacks compute them).
    float64 is refused: convert it first (``np.asarray(x, dtype=np.float32)``).
    ``elem``: the element format (a gpucvt or ml_dtypes name, or a dtype: ``"e4m3"``,
    ``"float4_e2m1fn"``, ...); with ``recipe`` it may be ``None``.

    Keywords (each the ``gpucvt convert`` option of the same name; the defaults are OCP MX's):

    - ``block``: ``N`` (default 32) consecutive elements along ``axis``, ``"RxC"`` or
      ``(R, C)`` tiles over the last two axes (ragged edges allowed), ``"row"`` (one scale
      per slice along ``axis``) or ``"tensor"``;
    - ``axis``: the blocked axis of ``N`` and ``"row"`` blocks (default -1);
    - ``scale``: ``"ue8m0"`` (default; a power of two), ``"ue4m3"`` (NVFP4), ``"f32"``,
      ``"bf16"`` (``amax / max`` rounded to the format);
    - ``scale_rule``: how a ue8m0 scale is chosen: ``"floor"`` (default; alias ``"ocp"``),
      ``"rceil"`` (``"rp"``), ``"ceil"``, ``"even"`` (``--scale-rule``; ``method`` is its
      old name, accepted with a ``DeprecationWarning``);
    - ``scale_2``: NVFP4's per-tensor second level (ue4m3 scales only);
    - ``layout``: ``"rows"`` (default) or ``"swizzled"`` (cuBLAS's 128x4 tiles; blocks of
      N along the last axis);
    - ``recipe``: ``"mxfp8"``, ``"mxfp6"``, ``"mxfp4"``, ``"nvfp4"``, ``"fp8-block128"``,
      ``"fp8-tensor"``, ``"fp8-row"``: sets ``elem``, ``block``, ``scale`` and
      ``scale_2`` (giving one of those too is an error); ``scale_rule``, ``axis`` and
      ``layout`` given with it override the recipe's;
    - ``mode``: the elements' rounding (``"rn"``; ``"rs"`` draws the words of
      ``gpucvt convert --seed seed`` on a ``.npy`` file, unless ``rbits`` gives them);
    - ``rbits`` (``mode="rs"``): one unsigned integer word per element of ``x`` (C order),
      of which the low ``rbits_width`` bits round that element, as :func:`astype`'s
      ``rbits`` and ``gpucvt round --rbits``; ``rbits_width``: 1 to 32 (default as PTX: 13
      for f16, 16 for bf16, 8 otherwise; ``--rbits-width``);
    - ``satfinite``: elements beyond the format's range clamp to its largest finite value,
      as every stack's quantizer clamps (default ``True``; with ``False`` they become NaN
      or infinity where the format has them, as the plain conversion does);
    - ``packed``: FP4 two elements per byte (the first in the low nibble), FP6 four per
      three bytes, along the last axis, as ``gpucvt convert`` writes files (``uint8``);
    - ``threads``: worker threads (default: one per core); results do not depend on it.

    ``q`` has the shape of ``x`` and one element per container, with the ml_dtypes dtype
    (``float8_e4m3fn``, ``float4_e2m1fn``, ...) where ml_dtypes is installed, else the
    ``uint8`` codes. ``scales``: ue8m0 as ``float8_e8m0fnu`` (or ``uint8``), ue4m3 as the
    ``uint8`` e4m3 bytes (``.view(ml_dtypes.float8_e4m3fn)`` reads them), f32 as
    ``float32``, bf16 as ``bfloat16`` (or ``uint16``); shaped as the scales are (the
    blocked axis divided by N, tiles rounded up, the blocked axis made 1 for ``"row"``, a
    0-d array for ``"tensor"``; swizzled: the leading axes and the padded swizzled length).
    ``scale_2`` is a ``numpy.float32``: ``amax / 2688`` (over the blocks without NaN or
    infinity), at least ``2**-121`` so that every element factor is finite; 0 for an all-zero
    tensor, whose scales are then 0 and its elements ±0. A block holding a NaN or an infinity
    gets the scale format's NaN and its elements are converted unscaled (they all read back
    as NaN). The GIL is released while
    quantizing. Raises ``ValueError`` for bad options and shapes (naming the keywords).

    >>> import numpy as np, gpucvt
    >>> x = np.float32([[0.5, -1.0, 3.0, 8.0], [0.0, 0.0, 0.0, 0.25]])
    >>> q, s = gpucvt.mx_quantize(x, "e2m1", block=4)
    >>> q.view(np.uint8).tolist(), s.view(np.uint8).tolist()
    ([[0, 9, 3, 6], [0, 0, 0, 6]], [[128], [123]])
    >>> q, s, s2 = gpucvt.mx_quantize(np.ones((1, 16), np.float32), recipe="nvfp4")
    >>> float(s2), s.tolist()
    (0.00037202381645329297, [[126]])
    >>> gpucvt.mx_dequantize(q, s, "e2m1", block=16, scale="ue4m3", scale_2=s2)[0, :2]
    array([1., 1.], dtype=float32)
    >>> q, s, s2 = gpucvt.mx_quantize(np.zeros((1, 16), np.float32), recipe="nvfp4")
    >>> float(s2), s.tolist(), int(q.view(np.uint8).max())
    (0.0, [[0]], 0)
    """
    from . import _format_of

    scale_rule = _renamed(scale_rule, method, "scale_rule", "method")
    words, shape = _f32_words(x)
    if recipe is None and block is None:
        block = 32
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, not {type(mode).__name__}")
    seed = operator.index(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be 0 to 2**64 - 1, not {seed}")
    fmt = None if elem is None else _format_of(elem)
    if rbits_width is not None:
        rbits_width = operator.index(rbits_width)
    r = None
    if rbits is not None:
        from . import _rbits_words

        if mode.lower() != "rs":
            raise ValueError('rbits is only valid with mode="rs"')
        r = _rbits_words(rbits, words.size)
    q, s, s2, sshape, efmt, sfmt = _gpucvt.mx_quantize(
        words,
        list(shape),
        fmt,
        _opt_str(recipe, "recipe"),
        _block_text(block),
        _axis(axis),
        _opt_str(scale, "scale"),
        _opt_str(scale_rule, "scale_rule"),
        _opt_str(layout, "layout"),
        bool(scale_2),
        mode,
        bool(satfinite),
        seed,
        _threads(threads),
        r,
        rbits_width,
    )
    q = q.reshape(shape)
    if packed:
        q = _pack(q, efmt) if efmt in _PACKING else q.view(np.uint8) if q.itemsize == 1 else q
    else:
        q = q.view(_codes_dtype(efmt))
    words_dt = _SCALE_WORDS[sfmt]
    s = s.astype(words_dt).view(_scales_dtype(sfmt)).reshape(tuple(sshape))
    if s2 is None:
        return q, s
    return q, s, np.float32(s2)


def mx_dequantize(
    q: Any,
    scales: Any,
    elem: Any = None,
    *,
    block: Union[None, int, str, Tuple[int, int]] = None,
    axis: Optional[int] = None,
    packed: bool = False,
    scale: Optional[str] = None,
    scale_rule: Optional[str] = None,
    layout: Optional[str] = None,
    scale_2: Any = None,
    recipe: Optional[str] = None,
    dtype: Any = np.float32,
    threads: Optional[int] = None,
    method: Optional[str] = None,
) -> np.ndarray:
    """The values of block-scaled elements: ``q × scales (× scale_2)``, exact, rounded once
    to ``dtype`` (``float32``, default, or ``float64``, which holds every such product
    exactly). NaN where a block's scale is NaN.

    ``q`` and ``scales`` as :func:`mx_quantize` returns them (``q``: its ml_dtypes dtype or
    the codes in ``uint8``/``uint16``; with ``packed=True`` the packed bytes; ``scales``:
    the scale format's dtype or its bits in an unsigned word of its width, in the layout
    ``layout`` says). ``elem``, ``block``, ``axis``, ``scale``, ``layout`` and ``recipe``
    describe the quantization as for :func:`mx_quantize` (``scale_rule`` is accepted and
    does not matter: the scales are given; ``method`` is its old name); ``scale_2``: the per-tensor scale of a second level
    (``scale_2=True`` or ``recipe="nvfp4"`` at quantization), a float32 value of at least 0.

    >>> import numpy as np, gpucvt
    >>> q, s = gpucvt.mx_quantize(np.float32([[0.1, 0.2, 6.5, -3.0]]), "e4m3", block=4)
    >>> gpucvt.mx_dequantize(q, s, "e4m3", block=4)
    array([[ 0.1015625,  0.203125 ,  6.5      , -3.       ]], dtype=float32)
    """
    from . import _as_array, _format_of

    out_dt = np.dtype(dtype)
    if out_dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, not {out_dt}")
    if recipe is None and block is None:
        block = 32
    fmt = None if elem is None else _format_of(elem)
    recipe = _opt_str(recipe, "recipe")
    r_elem, r_scale = (None, None) if recipe is None else _gpucvt.quant_recipe(recipe)
    if fmt is None:
        if r_elem is None:
            raise ValueError("say what q holds: elem=FMT or recipe=NAME")
        fmt = r_elem
    qa = _as_array(q)
    if packed and fmt in _PACKING:
        if qa.dtype.itemsize != 1 or qa.dtype.kind not in "uV":
            raise TypeError(f"packed {fmt} data must be uint8 bytes, not {qa.dtype}")
        codes = _unpack(qa.view(np.uint8), fmt)
    else:
        bits = _gpucvt.format_info(fmt)["bits"]
        want = 1 if bits <= 8 else 2
        if qa.dtype.itemsize != want or qa.dtype.kind not in "uifV":
            raise TypeError(
                f"q must hold one {fmt} code per {want}-byte element "
                f"({_codes_dtype(fmt)} or uint{8 * want}), not {qa.dtype}"
            )
        codes = qa.view(np.uint8 if want == 1 else np.uint16)
    shape = codes.shape
    sa = _as_array(scales)
    if r_scale is not None and scale is None:
        sfmt = r_scale
    else:
        sfmt = "ue8m0" if scale is None else str(scale).lower()
    if sfmt in _SCALE_WORDS:
        word = np.dtype(_SCALE_WORDS[sfmt])
        if sa.dtype.itemsize != word.itemsize or sa.dtype.kind not in "uifV":
            raise TypeError(
                f"{sfmt} scales are {word.itemsize}-byte words ({_scales_dtype(sfmt)} or "
                f"{word}), not {sa.dtype}"
            )
        sw = np.ascontiguousarray(sa).view(word).reshape(-1).astype(np.uint32)
    else:
        sw = np.ascontiguousarray(sa).reshape(-1).view(np.uint8).astype(np.uint32)
    s2: Optional[float] = None
    if scale_2 is not None:
        s2 = float(np.float32(scale_2))
        if s2 != float(np.asarray(scale_2, dtype=np.float64)):
            raise ValueError(f"scale_2 must be a float32 value, not {scale_2!r}")
    second = bool(scale_2 is not None) if recipe is None else False
    vals = _gpucvt.mx_dequantize(
        np.ascontiguousarray(codes).reshape(-1),
        sw,
        s2,
        list(shape),
        fmt,
        recipe,
        _block_text(block),
        _axis(axis),
        _opt_str(scale, "scale"),
        _opt_str(_renamed(scale_rule, method, "scale_rule", "method"), "scale_rule"),
        _opt_str(layout, "layout"),
        second,
        _threads(threads),
    )
    # The products are exact in float64: one rounding to float32.
    return vals.reshape(shape).astype(out_dt)
