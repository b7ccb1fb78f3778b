"""``gpucvt.convert_file``: whole tensor files, as ``gpucvt convert``."""

from __future__ import annotations

import contextlib
import copy
import json
import operator
import os
import signal
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _gpucvt

PathLike = Union[str, "os.PathLike[str]"]


class Stats:
    """Counts and error statistics of converted elements (``gpucvt convert``'s columns):
    ``elements``, ``saturated``, ``overflow_to_inf``, ``flushed_to_zero``, ``nan``,
    ``nan_to_number``, ``blocks``, ``nan_blocks``, ``error_elements``, ``max_abs_error``,
    ``mean_abs_error``, ``max_rel_error`` (over the non-zero inputs) and ``sqnr_db`` (the
    signal-to-quantization-noise ratio in dB, ``None`` where there is no error)."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self._d = d
        self.__dict__.update(d)

    def to_dict(self) -> Dict[str, Any]:
        return dict(self._d)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._d.items())
        return f"Stats({fields})"


class TensorSummary:
    """One converted tensor: ``name``, ``from_`` (source format), ``to``, ``dtype`` (the
    dtype written), ``shape`` (a tuple), ``scale`` (the scale tensor or sidecar file with
    block scaling, else ``None``), ``stats`` (:class:`Stats`)."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self.name: str = d["name"]
        self.from_: str = d["from"]
        self.to: str = d["to"]
        self.dtype: str = d["dtype"]
        self.shape = tuple(d["shape"])
        self.scale: Optional[str] = d["scale"]
        self.stats = Stats(d["stats"])

    def __repr__(self) -> str:
        return (
            f"TensorSummary({self.name!r}, shape={self.shape}, {self.from_} -> {self.to}, "
            f"dtype={self.dtype!r})"
        )


class Summary:
    """What :func:`convert_file` did.

    ``input``, ``output``, ``conversion`` (its label, e.g. ``"e4m3 rn .satfinite"``),
    ``kind`` (``npy``, ``safetensors``, ``raw``, or ``checkpoint`` for a folder), ``tensors`` (a list of
    :class:`TensorSummary`), ``copied`` (names of tensors copied unchanged, not selected),
    ``kept`` (a list of ``(name, reason)`` for tensors copied unchanged with a reason: not a
    linear layer's weight where the tensors were chosen by default, or selected but not
    something the conversion can take),
    ``notes``, ``total`` (:class:`Stats` of all converted tensors). :meth:`to_dict` is the
    object ``gpucvt convert --json`` prints. With ``dry_run=True`` the summary is the plan:
    ``tensors`` are dicts (``name``, ``action``, ``bytes``, ...), ``output_bytes`` is set and
    ``total`` is ``None``.
    """

    def __init__(self, d: Dict[str, Any]) -> None:
        self._d = d
        self.input: str = d["input"]
        self.output: str = d["output"]
        self.conversion: str = d["conversion"]
        self.kind: str = d["kind"]
        self.dry_run: bool = bool(d.get("dry_run", False))
        if self.dry_run:
            self.tensors: List[Any] = [dict(t) for t in d["tensors"]]
            self.output_bytes: Optional[int] = d["output_bytes"]
            self.copied: List[str] = []
            self.kept: List[Any] = []
            self.notes: List[str] = []
            self.total: Optional[Stats] = None
        else:
            self.tensors = [TensorSummary(t) for t in d["tensors"]]
            self.output_bytes = None
            self.copied = list(d["copied"])
            self.kept = [(k["name"], k["reason"]) for k in d["kept"]]
            self.notes = list(d["notes"])
            self.total = Stats(d["total"])

    def to_dict(self) -> Dict[str, Any]:
        """The summary as ``gpucvt convert --json`` prints it."""
        return copy.deepcopy(self._d)

    def __repr__(self) -> str:
        n = len(self.tensors)
        what = "planned" if self.dry_run else "converted"
        return (
            f"Summary({self.input!r} -> {self.output!r}, {self.conversion}, "
            f"{n} tensor{'s' if n != 1 else ''} {what})"
        )


class _Terminated(BaseException):
    """Raised by the handler :func:`_terminating_signals` installs: the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _terminating_signals() -> Iterator[None]:
    """Within it, SIGTERM and SIGHUP, whose default action ends the process at once (and would
    leave the conversion's temporary files), raise instead: the conversion stops and removes
    them, and then the signal is raised again with its default action, which ends the process
    as it would have. Handlers the program set itself are left alone, and so is everything
    outside the main thread (where Python runs no signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated(signum)

    saved = {}
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
            saved[sig] = signal.signal(sig, handler)
    try:
        yield
    except _Terminated as t:
        for sig, old in saved.items():
            signal.signal(sig, old)
        saved = {}
        signal.raise_signal(t.signum)
        raise
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def _names(x: Union[None, str, Sequence[str]], what: str) -> List[str]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    out = list(x)
    for n in out:
        if not isinstance(n, str):
            raise TypeError(f"{what} must be a str or a list of str, not {type(n).__name__}")
    return out


def convert_file(
    src: PathLike,
    dst: PathLike,
    *,
    to: Any = None,
    mode: str = "rn",
    satfinite: bool = False,
    sat: bool = False,
    relu: bool = False,
    ftz: bool = False,
    pzo: bool = False,
    rbits_width: Optional[int] = None,
    cvt: Optional[str] = None,
    from_: Any = None,
    tensor: Union[None, str, Sequence[str]] = None,
    exclude: Union[None, str, Sequence[str]] = None,
    strict: bool = False,
    threads: Optional[int] = None,
    seed: int = 0,
    block: Union[None, int, str, Tuple[int, int]] = None,
    scale: Optional[str] = None,
    scale_rule: Optional[str] = None,
    dry_run: bool = False,
    scale_method: Optional[str] = None,
    axis: Optional[int] = None,
    scale_layout: Optional[str] = None,
    scale_2: bool = False,
    recipe: Optional[str] = None,
    force: bool = False,
    all: bool = False,
    layout: Optional[str] = None,
) -> Summary:
    """Convert a whole tensor file, exactly as ``gpucvt convert SRC -o DST [options]``.

    ``src``: a ``.npy``, ``.safetensors`` or raw little-endian file (raw: give ``from_``),
    or a checkpoint folder (``config.json``, ``.safetensors`` shards and their index);
    ``dst``: the output, of the same kind (written to a temporary file or folder and renamed
    when complete). ``layout`` (``--layout``): the checkpoint layout a serving stack loads,
    ``"modelopt"``, ``"compressed-tensors"`` or ``"deepseek"`` (default ``"gpucvt"``,
    gpucvt's own); a folder then gets the stack's quantization config too. Keywords are the CLI's options: ``to`` (a format name or dtype) with ``mode``,
    ``satfinite``, ``sat``, ``relu``, ``ftz``, ``pzo``, ``rbits_width``; or ``cvt`` (a PTX
    form, ``"cvt.rn.satfinite.e4m3x2.f32"``); ``from_`` (``--from``); ``tensor`` and
    ``exclude`` (a name/glob pattern or a list of them; ``--tensor``, ``--exclude``;
    without ``tensor``, a ``.safetensors`` file's linear-layer weights are converted and
    every other tensor is kept with its reason, as the serving stacks do; ``all=True``
    converts every tensor);
    ``strict``; ``threads`` (None: one per core); ``seed`` (stochastic rounding);
    ``dry_run`` (plan only, write nothing). Block scaling: ``recipe`` (``"mxfp8"``,
    ``"nvfp4"``, ...: sets ``to``, ``satfinite`` and the block options), ``block`` (``N``,
    ``"RxC"`` or ``(R, C)``, ``"row"``, ``"tensor"``), ``axis``, ``scale`` (``ue8m0``,
    ``ue4m3``, ``f32``, ``bf16``), ``scale_rule`` (``floor``/``ocp``, ``rceil``/``rp``,
    ``ceil``, ``even``; ``scale_method`` is its old name, accepted with a
    ``DeprecationWarning``), ``scale_layout`` (``rows``,
    ``swizzled``), ``scale_2`` (NVFP4's per-tensor scale): the CLI's ``--recipe``,
    ``--block``, ``--axis``, ``--scale``, ``--scale-rule``, ``--scale-layout``,
    ``--scale-2``, read by the same library code. ``force`` (``--force``) replaces a
    read-only output (and its read-only sidecar files). ``.npy`` and raw outputs are written
    as one unit with their sidecars (``DST_scale``, ``DST_scale_2``, and the metadata
    ``DST.gpucvt.json`` with block scaling): sidecars of an earlier run that this one does
    not write are removed, and concurrent calls into one output leave one call's unit.

    The GIL is released while converting. Ctrl-C (``KeyboardInterrupt``) stops the
    conversion as it does the CLI's: the temporary files are removed, nothing is written,
    and the exception is raised; so do SIGTERM and SIGHUP (in the main thread, where no
    handler of the program's own is set for them), which then end the process as they
    would have.

    >>> import gpucvt  # doctest: +SKIP
    >>> gpucvt.convert_file("model.safetensors", "model-nvfp4.safetensors", recipe="nvfp4")  # doctest: +SKIP

    Returns a :class:`Summary`. Raises ``ValueError`` for bad options and data (the message
    names the keywords), ``PermissionError`` for a read-only output without ``force``, and
    ``OSError`` for files that cannot be read or written.
    """
    from . import _format_of

    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, not {type(mode).__name__}")
    if threads is None:
        threads = 0
    else:
        threads = operator.index(threads)
        if threads < 1:
            raise ValueError(f"threads must be at least 1 (None: one per core), not {threads}")
    seed = operator.index(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be 0 to 2**64 - 1, not {seed}")
    from ._quant import _axis, _block_text, _opt_str

    from ._quant import _renamed

    scale_rule = _renamed(scale_rule, scale_method, "scale_rule", "scale_method")
    if rbits_width is not None:
        rbits_width = operator.index(rbits_width)
    with _terminating_signals():
        text = _gpucvt.convert_file(
            os.fspath(src),
            os.fspath(dst),
            to=None if to is None else (to if isinstance(to, str) else _format_of(to)),
            mode=mode,
            satfinite=bool(satfinite),
            sat=bool(sat),
            relu=bool(relu),
            ftz=bool(ftz),
            pzo=bool(pzo),
            rbits_width=rbits_width,
            cvt=cvt,
            from_=None if from_ is None else (from_ if isinstance(from_, str) else _format_of(from_)),
            tensors=_names(tensor, "tensor"),
            exclude=_names(exclude, "exclude"),
            strict=bool(strict),
            threads=threads,
            seed=seed,
            block=_block_text(block),
            scale=_opt_str(scale, "scale"),
            scale_rule=_opt_str(scale_rule, "scale_rule"),
            dry_run=bool(dry_run),
            recipe=_opt_str(recipe, "recipe"),
            axis=_axis(axis),
            scale_layout=_opt_str(scale_layout, "scale_layout"),
            scale_2=bool(scale_2),
            force=bool(force),
            all=bool(all),
            layout=_opt_str(layout, "layout"),
        )
    return Summary(json.loads(text))


def dequantize_file(
    src: PathLike,
    dst: PathLike,
    *,
    to: Any = "f32",
    block: Union[None, int, str, Tuple[int, int]] = None,
    axis: Optional[int] = None,
    scale: Optional[str] = None,
    scale_rule: Optional[str] = None,
    scale_layout: Optional[str] = None,
    scale_2: bool = False,
    threads: Optional[int] = None,
    from_: Any = None,
    recipe: Optional[str] = None,
    force: bool = False,
) -> Summary:
    """Dequantize a block-scaled file, exactly as ``gpucvt convert SRC -o DST --dequantize
    [--to TO] [options]``: the exact products ``q × s (× s2)`` rounded once to ``to``
    (``f32``, ``bf16``, ``f16`` or ``f64``).

    ``.safetensors``: every tensor ``NAME`` with a scale tensor ``NAME_scale`` (or
    ``NAME_scale_inv``), and ``NAME_scale_2`` with NVFP4's two levels, is dequantized; the
    scale tensors are dropped and every other tensor is copied. How each tensor is blocked
    comes from the metadata gpucvt writes, else from ``block`` (with ``axis``, ``scale``,
    ``scale_rule``, ``scale_layout``, ``scale_2``, as for :func:`convert_file`) or
    ``recipe``, else from the shapes.

    ``.npy`` and raw: the file with the sidecars :func:`convert_file` wrote beside it
    (``X_scale.npy``, and ``X_scale_2.npy`` with a second level; raw: ``X_scale.EXT``);
    ``dst`` is of the same kind. The metadata ``X.npy.gpucvt.json`` written with them gives
    the element format and the blocking, and scale files whose checksums it does not record
    are refused. Without it (a file gpucvt did not write), ``from_`` (``--from``) or
    ``recipe`` names the elements' format where the file does not (``|u1`` and ``<u2``
    arrays, raw data); the blocking comes from ``block``/``recipe``, else (``.npy``) from
    the scale array's shape and dtype where they tell it unambiguously (one-byte scales are
    ue8m0 unless ``scale="ue4m3"`` or a ``_scale_2`` file says otherwise). Raw data without
    metadata needs ``block`` or ``recipe``. ``force`` replaces a read-only output. The GIL is
    released while converting, and signals stop it as for :func:`convert_file`.

    >>> import gpucvt  # doctest: +SKIP
    >>> gpucvt.convert_file("w.safetensors", "w-mx.safetensors", recipe="mxfp8")  # doctest: +SKIP
    >>> gpucvt.dequantize_file("w-mx.safetensors", "w-back.safetensors")  # doctest: +SKIP
    >>> gpucvt.convert_file("x.npy", "q.npy", recipe="nvfp4")  # doctest: +SKIP
    >>> gpucvt.dequantize_file("q.npy", "back.npy", recipe="nvfp4")  # doctest: +SKIP

    Returns a :class:`Summary`. Raises ``ValueError`` for bad options and data (the message
    names the keywords), ``PermissionError`` for a read-only output without ``force``, and
    ``OSError`` for files that cannot be read or written.
    """
    from . import _format_of
    from ._quant import _axis, _block_text, _opt_str, _threads

    t = _threads(threads)
    with _terminating_signals():
        text = _gpucvt.dequantize_file(
            os.fspath(src),
            os.fspath(dst),
            to=to if isinstance(to, str) else _format_of(to),
            block=_block_text(block),
            axis=_axis(axis),
            scale=_opt_str(scale, "scale"),
            scale_rule=_opt_str(scale_rule, "scale_rule"),
            scale_layout=_opt_str(scale_layout, "scale_layout"),
            scale_2=bool(scale_2),
            threads=0 if t is None else t,
            from_=None if from_ is None else (from_ if isinstance(from_, str) else _format_of(from_)),
            recipe=_opt_str(recipe, "recipe"),
            force=bool(force),
        )
    return Summary(json.loads(text))
