"""gpucvt.testing: the conformance kit for Python implementations of GPU conversions.

:func:`vectors` gives the test cases of an instruction with the model's answers, as
``gpucvt vectors`` writes them, in NumPy arrays; :func:`assert_matches` runs a function on
them and, where its answers differ, raises :class:`Mismatch` (an ``AssertionError``) with
the report ``gpucvt conform`` prints: the disagreements counted by class (``nan-encoding``,
``saturation``, ``sign-of-zero``, ``subnormal``, ``rounding``, ``rbits``, ``other``) and
the first of them. The cases, the answers and the classification are those of the Rust
library (``gpucvt::vectors``); this module only moves arrays to and from the function.

>>> import numpy as np
>>> from gpucvt import testing
>>> v = testing.vectors("cvt.rn.f16.f32")
>>> v.operands, v.inputs["a"].dtype, v.expected.dtype, v.cases == len(v.expected)
((Operand(name='a', bits=32, format='f32', lanes=1),), dtype('uint32'), dtype('uint16'), True)
>>> r = testing.assert_matches("cvt.rn.f16.f32", lambda a: a.astype(np.float16),
...                            allow=("nan-encoding",))   # NumPy keeps NaN payloads
>>> r.ok, r.disagree == r.classes["nan-encoding"]
(True, True)

A function that rounds ties away from zero instead of to even is caught:

>>> def ties_away(a):  # f32 -> bf16 by integer arithmetic: add half an ulp, truncate
...     b = a.view(np.uint32)
...     return np.where(np.isnan(a), 0x7FFF, (b + 0x8000) >> 16).astype(np.uint16)
>>> try:
...     testing.assert_matches("cvt.rn.bf16.f32", ties_away)
... except testing.Mismatch as e:
...     d = e.report.disagreements[0]
...     print(d.class_, d.detail, e.report.disallowed == e.report.classes["rounding"])
rounding matches rna True
"""

from __future__ import annotations

import json
import operator
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _gpucvt
from ._dialects import _native, _opt_str, _threads

__all__ = [
    "vectors",
    "assert_matches",
    "check",
    "Vectors",
    "Operand",
    "Report",
    "Disagreement",
    "RbitsRule",
    "Mismatch",
    "CLASSES",
]

#: Every class of disagreement, name -> what it means, in report order.
CLASSES: Dict[str, str] = dict(_gpucvt.disagreement_classes())


class Operand(NamedTuple):
    """One operand word of each case: its ``name`` (``a``, ``b``, ``rbits``,
    ``scale-factor``, ``c``; ``x`` for a Tile IR op's tile), its width in ``bits``, the
    gpucvt ``format`` of its lanes (``None`` for words that hold no numbers, such as
    ``rbits``) and its number of ``lanes`` (2 for ``f16x2``)."""

    name: str
    bits: int
    format: Optional[str]
    lanes: int


def _container(bits: int) -> np.dtype:
    for c in (8, 16, 32, 64):
        if bits <= c:
            return np.dtype(f"uint{c}")
    raise ValueError(f"no unsigned container holds {bits} bits")  # pragma: no cover


def _mask(bits: int) -> int:
    return (1 << min(bits, 64)) - 1


class Vectors:
    """The test cases of one instruction with the model's answers (from :func:`vectors`).

    - ``form``: the instruction's canonical spelling; ``dialect``: ``ptx``, ``visa`` or
      ``tile``; ``cases``: how many;
    - ``operands``: the :class:`Operand` of each input word, in instruction order (a Tile
      IR op has one, ``x``, a whole tile);
    - ``inputs``: operand name -> its words, one per case, in the narrowest unsigned dtype
      that holds them (``uint32`` for an ``.f32`` source; a Tile IR op's ``x`` has shape
      ``(cases, *tile_shape)``); ``rbits`` is ``inputs["rbits"]`` for ``.rs`` forms, else
      ``None``;
    - ``expected``: the model's results as unsigned words, shape ``(cases,)`` (a Tile IR
      op: ``(cases, *tile_shape)``, one word per element; a result wider than 64 bits:
      ``(cases, words)`` ``uint64`` pieces, least significant first);
    - the manifest ``gpucvt vectors -o FILE.txt`` writes for the same cases (computed when
      first asked for): ``manifest`` (the whole dict, as ``FILE.txt.manifest.json`` without
      ``file`` and ``kind``), ``gpucvt_version``, ``settings``, ``target``, ``level``,
      ``seed``, ``count`` (random cases), ``rounding``, ``policy``, ``sha256`` (of that
      text file's bytes) and ``cases_sha256`` (of its case lines, the same for ``.npz``).
      Both hashes depend on the cases only, never on the machine or thread count.
    """

    def __init__(self, native: Any) -> None:
        self._v = native
        self.form: str = native.spelling
        self.dialect: str = native.dialect
        self.cases: int = native.cases
        self.operands: Tuple[Operand, ...] = tuple(Operand(*o) for o in native.operands())
        self._tile_shape: Optional[Tuple[int, ...]] = None
        shape = native.tile_shape()
        words = native.inputs()
        if shape is not None:
            # The op's operand words are the tile's elements, x[0], x[1], ...: one operand.
            self._tile_shape = tuple(shape)
            first = self.operands[0]
            self.operands = (Operand("x", first.bits, first.format, first.lanes),)
            self.inputs: Dict[str, np.ndarray] = {
                "x": words.astype(_container(first.bits)).reshape((self.cases,) + self._tile_shape)
            }
        else:
            self.inputs = {
                o.name: np.ascontiguousarray(words[:, j].astype(_container(o.bits)))
                for j, o in enumerate(self.operands)
            }
        self.rbits: Optional[np.ndarray] = self.inputs.get("rbits")
        self._element_bits: int = native.element_bits
        expected = native.expected()
        if self._tile_shape is not None:
            expected = expected.astype(_container(self._element_bits)).reshape(
                (self.cases,) + self._tile_shape
            )
        elif native.answer_words == 1:
            expected = expected[:, 0].astype(_container(self._element_bits))
        self.expected: np.ndarray = expected
        self._manifest: Optional[Dict[str, Any]] = None

    def __repr__(self) -> str:
        return f"<gpucvt.testing.Vectors {self.form}: {self.cases} cases>"

    def __len__(self) -> int:
        return self.cases

    def line(self, i: int) -> str:
        """Case ``i`` as a line of the text file: ``INPUT_LINE -> EXPECTED``, the input an
        ``eval --batch`` line."""
        return str(self._v.line(operator.index(i)))

    def arguments(self, bits: bool = False) -> Tuple[np.ndarray, ...]:
        """The arrays :func:`assert_matches` passes to the function, one per operand in
        instruction order. With ``bits=False``, an operand that holds one number of a format
        NumPy has arrives in that dtype (``float16``, ``float32``, ``float64``, ``int32``,
        ...), one of a format ml_dtypes has (``bfloat16``, ``float8_e4m3fn``, ...) in the
        ml_dtypes dtype where ml_dtypes is installed: views of the words, so NaN payloads
        and the sign of zero arrive intact. Every other operand (packed lanes such as
        ``f16x2``, ``tf32``, ``rbits``, scale factors) arrives as its unsigned words, as it
        does for every operand with ``bits=True``."""
        from . import _result_dtype  # the package's format -> dtype table

        out = []
        for o in self.operands:
            w = self.inputs[o.name]
            dt = None if bits or o.format is None or o.lanes != 1 else _result_dtype(o.format)
            out.append(w.view(dt) if dt is not None and dt.itemsize == w.itemsize else w)
        return tuple(out)

    @property
    def manifest(self) -> Dict[str, Any]:
        if self._manifest is None:
            self._manifest = json.loads(self._v.manifest())
        return dict(self._manifest)

    @property
    def gpucvt_version(self) -> str:
        return str(self.manifest["gpucvt_version"])

    @property
    def settings(self) -> Dict[str, str]:
        return dict(self.manifest["settings"])

    @property
    def target(self) -> Optional[str]:
        return self.settings.get("target")

    @property
    def level(self) -> int:
        return int(self.settings["level"])

    @property
    def seed(self) -> int:
        return int(self.settings["seed"])

    @property
    def count(self) -> int:
        return int(self.settings["count"])

    @property
    def rounding(self) -> Optional[str]:
        return self.manifest["rounding"]

    @property
    def policy(self) -> Optional[Dict[str, Any]]:
        return self.manifest["policy"]

    @property
    def sha256(self) -> str:
        return str(self.manifest["sha256"])

    @property
    def cases_sha256(self) -> str:
        return str(self.manifest["cases_sha256"])

    def _answer_words(self, results: Any, who: str) -> np.ndarray:
        """The function's results as ``cases × answer_words`` ``uint64``, or ``ValueError``
        saying what is wrong with them."""
        if isinstance(results, (list, tuple)) or np.isscalar(results) or results is None:
            raise ValueError(
                f"{who} returned {type(results).__name__}, not an array: return a NumPy "
                f"array of the {self.cases} results (their bits as unsigned integers, or a "
                "float16/float32/float64 or ml_dtypes array)"
            )
        if not isinstance(results, np.ndarray):
            if not (hasattr(results, "__array__") or hasattr(results, "__dlpack__")):
                raise ValueError(
                    f"{who} returned {type(results).__name__}, not an array: return a NumPy "
                    f"array of the {self.cases} results"
                )
            from . import _as_array

            results = _as_array(results)
        a = _native(results)
        if a.shape != self.expected.shape:
            raise ValueError(
                f"{who} returned an array of shape {a.shape}; the {self.cases} cases of "
                f"{self.form} need shape {self.expected.shape}, one result per case"
            )
        dt = a.dtype
        width = self._element_bits
        wide = self._tile_shape is None and self.expected.ndim == 2
        if dt.kind == "u" or dt.kind == "i":
            if dt.itemsize * 8 < min(width, 64):
                raise ValueError(
                    f"{who} returned {dt} results; {dt} cannot hold the {width}-bit results "
                    f"of {self.form}: return them in {_container(width)} (or wider)"
                )
            if dt.kind == "i":
                # Two's complement at the result's width (a signed -1 of an s8 result that
                # PTX writes sign-extended is its bits either way).
                words = a.astype(np.int64).view(np.uint64) & np.uint64(_mask(width))
            else:
                words = a.astype(np.uint64)
        elif dt.kind in "fV" and dt.fields is None and dt.itemsize in (1, 2, 4, 8) and not wide:
            # Float and ml_dtypes arrays: their bits, which must be the result's encoding.
            if dt.itemsize * 8 != _container(width).itemsize * 8:
                raise ValueError(
                    f"{who} returned {dt} values, {dt.itemsize * 8}-bit encodings, for the "
                    f"{width}-bit results of {self.form}: convert them to the destination "
                    "format (or return the result bits as unsigned integers)"
                )
            words = a.view(f"uint{dt.itemsize * 8}").astype(np.uint64)
        else:
            raise ValueError(
                f"{who} returned an array of dtype {dt}: return the results of {self.form} "
                "as unsigned integers (their bits), or as a float16/float32/float64 or "
                "ml_dtypes array of the destination format"
            )
        return np.ascontiguousarray(words.reshape(self.cases, -1))

    def check(
        self,
        results: Any,
        *,
        allow: Sequence[str] = (),
        max_report: int = 10,
        threads: Optional[int] = None,
    ) -> "Report":
        """The report of another implementation's ``results`` against these cases (an
        array as :func:`assert_matches` accepts it from its function); never raises for
        disagreements. ``allow`` names the classes that do not count against it
        (``Report.ok``)."""
        return _check(self, results, allow, max_report, threads, "the results")


class Disagreement(NamedTuple):
    """One case where the answers differ: its index ``case``, its ``eval --batch``
    ``input`` line, the model's ``expected`` and the implementation's ``got`` answer (as
    ``eval --batch`` prints them), the ``class_`` (a name of :data:`CLASSES`), the
    ``lane`` that decided (0 = most significant; ``None`` when no single lane did) and the
    ``detail`` (``matches rna``, ``the model saturates, the answer overflows``, ...)."""

    case: int
    input: str
    expected: str
    got: str
    class_: str
    lane: Optional[int]
    detail: str


class RbitsRule(NamedTuple):
    """For an ``.rs`` form, the use of the random bits that explains the most answers:
    ``rule`` (``a: rbits[15:0], b: rbits[31:16]``, or ``rbits ignored (as if 0)``), the
    model's own ``model`` rule in the same words, and how many of the ``cases`` it
    ``explains``."""

    rule: str
    model: str
    explains: int
    cases: int


class Report:
    """The classified comparison of an implementation's answers with the model's (the
    report of ``gpucvt conform``).

    ``form``, ``cases``, ``agree``, ``disagree``; ``classes``: every class name -> its
    count of disagreements (report order); ``allowed``: the classes allowed;
    ``disallowed``: the disagreements outside them; ``ok``: whether there are none;
    ``rbits``: the inferred :class:`RbitsRule` (``.rs`` forms with ``rbits``
    disagreements) or ``None``; ``disagreements``: the first :class:`Disagreement` s (as
    many as ``max_report``); ``text``: the report as ``gpucvt conform`` prints it (also
    ``str(report)``); ``to_dict()``: as ``gpucvt conform --json`` prints it, without
    ``file``.
    """

    def __init__(self, data: Dict[str, Any]) -> None:
        self._data = data
        self.form: str = data["instruction"]
        self.cases: int = data["cases"]
        self.agree: int = data["agree"]
        self.disagree: int = data["disagree"]
        self.classes: Dict[str, int] = {name: n for name, n in data["classes"]}
        self.allowed: Tuple[str, ...] = tuple(data["allowed"])
        self.disallowed: int = data["disallowed"]
        r = data["rbits"]
        self.rbits: Optional[RbitsRule] = None if r is None else RbitsRule(**r)
        self.disagreements: List[Disagreement] = [
            Disagreement(
                d["case"], d["input"], d["expected"], d["got"], d["class"], d["lane"], d["detail"]
            )
            for d in data["disagreements"]
        ]
        self.text: str = data["text"]

    @property
    def ok(self) -> bool:
        return self.disallowed == 0

    def to_dict(self) -> Dict[str, Any]:
        d = {k: v for k, v in self._data.items() if k != "text"}
        d["classes"] = dict(self.classes)
        d["ok"] = self.ok
        return d

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return (
            f"<gpucvt.testing.Report {self.form}: {self.agree} of {self.cases} agree, "
            f"{self.disallowed} disallowed>"
        )


class Mismatch(AssertionError):
    """Raised by :func:`assert_matches` when answers disagree outside the allowed classes;
    ``report`` is the :class:`Report`, and the message its text."""

    def __init__(self, report: Report) -> None:
        allowed = ", ".join(report.allowed) or "none"
        super().__init__(
            f"{report.text}FAIL: {report.disallowed} disagreement(s) outside the allowed "
            f"classes ({allowed})"
        )
        self.report = report

    def __reduce__(self):  # keeps the report through pickling
        return (type(self), (self.report,))


def _index(name: str, v: Any, lo: int = 0, hi: Optional[int] = None) -> int:
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(v).__name__}") from None
    if i < lo or (hi is not None and i > hi):
        bound = f"{lo} to {hi}" if hi is not None else f"at least {lo}"
        raise ValueError(f"{name} must be {bound}, not {i}")
    return i


def vectors(
    form: str,
    *,
    target: Optional[str] = None,
    ptx_version: Optional[str] = None,
    cr0: Union[int, str, None] = None,
    semantics: Optional[str] = None,
    tile_version: Optional[str] = None,
    level: int = 1,
    seed: int = 0,
    count: Optional[int] = None,
    threads: Optional[int] = None,
) -> Vectors:
    """The test cases of ``form`` with the model's answers: what ``gpucvt vectors FORM``
    writes with the same options (``target``, ``ptx_version``, ``cr0`` for vISA moves,
    ``semantics`` and ``tile_version`` for Tile IR ops), as a :class:`Vectors`.

    ``level=1`` is the boundaries (every encoding for sources of at most 16 bits, each
    destination value and tie ±1 ulp of the source for wider ones, every ``rbits``
    pattern for ``.rs`` forms); ``level=2`` adds ``count`` (default 10000) cases drawn from
    ``seed``. The cases are built on ``threads`` threads (default: every core), and do not
    depend on it. Bad forms raise :class:`gpucvt.IllegalInstruction` (a ``ValueError``)
    with the CLI's message; bad options ``ValueError``.

    >>> v = vectors("cvt.rs.satfinite.bf16x2.f32")
    >>> [o.name for o in v.operands], v.rbits.dtype, v.expected.dtype
    (['a', 'b', 'rbits'], dtype('uint32'), dtype('uint32'))
    >>> v.line(0)
    'cvt.rs.satfinite.bf16x2.f32 0x00000000 0x9e19ffff 0x00000000 -> 0x00009e19'
    """
    if not isinstance(form, str):
        raise TypeError(f"form must be an instruction as a str, not {type(form).__name__}")
    level = _index("level", level, 0, 255)  # the library says which levels exist
    seed = _index("seed", seed, 0, 2**64 - 1)
    if count is not None:
        count = _index("count", count, 0, 2**64 - 1)
    if cr0 is not None and not isinstance(cr0, str):
        cr0 = hex(_index("cr0", cr0, 0, 2**32 - 1))
    native = _gpucvt.vectors(
        form,
        target=_opt_str("target", target),
        ptx_version=_opt_str("ptx_version", ptx_version),
        cr0=cr0,
        semantics=_opt_str("semantics", semantics),
        tile_version=_opt_str("tile_version", tile_version),
        level=level,
        seed=seed,
        count=count,
        threads=_threads(threads),
    )
    return Vectors(native)


def _check(
    v: Vectors, results: Any, allow: Sequence[str], max_report: int, threads: Any, who: str
) -> Report:
    if isinstance(allow, str):
        allow = (allow,)
    names = []
    for a in allow:
        if not isinstance(a, str):
            raise TypeError(f"allow must name classes as str, not {type(a).__name__}")
        names.append(a)
    show = _index("max_report", max_report)
    words = v._answer_words(results, who)
    text = v._v.check(words, show=show, allow=names, threads=_threads(threads))
    return Report(json.loads(text))


def check(
    v: Vectors,
    results: Any,
    *,
    allow: Sequence[str] = (),
    max_report: int = 10,
    threads: Optional[int] = None,
) -> Report:
    """:meth:`Vectors.check`: the :class:`Report` of ``results`` against ``v``."""
    if not isinstance(v, Vectors):
        raise TypeError(f"check takes a gpucvt.testing.Vectors, not {type(v).__name__}")
    return _check(v, results, allow, max_report, threads, "the results")


def assert_matches(
    form: Union[str, Vectors],
    fn: Callable[..., Any],
    *,
    level: int = 1,
    target: Optional[str] = None,
    seed: int = 0,
    count: Optional[int] = None,
    allow: Sequence[str] = (),
    max_report: int = 10,
    bits: bool = False,
    threads: Optional[int] = None,
    **options: Any,
) -> Report:
    """Checks that ``fn`` computes ``form`` as the GPU does, on :func:`vectors`'s cases.

    ``fn`` is called once, ``fn(*v.arguments(bits))``: one array per operand in
    instruction order (``a``, ``b``, ... then ``rbits`` for ``.rs`` forms, the scale
    factor, ``c``), one element per case. Sources of a format NumPy has arrive in its dtype
    (``float32`` for ``.f32``), those of a format ml_dtypes has in its dtype, the rest
    (packed lanes, ``rbits``) as unsigned words; ``bits=True`` gives every operand as
    unsigned words. It returns one result per case (a Tile IR op: a tile per case), as an
    array of the result's bits (unsigned integers; signed ones are read in two's
    complement) or of the destination's encoding (``float16``, an ml_dtypes dtype: their
    bits are taken). Anything else is a ``ValueError`` that says what was expected.

    Disagreements are classified by the Rust library exactly as ``gpucvt conform`` does.
    Those outside ``allow`` (class names, :data:`CLASSES`) raise :class:`Mismatch`, an
    ``AssertionError`` whose ``report`` has the counts and the first ``max_report``
    disagreements; otherwise the :class:`Report` is returned. ``form`` may be a
    :class:`Vectors` already built (then the options must be left out); ``level``,
    ``target``, ``seed``, ``count``, ``threads`` and the other ``options`` of
    :func:`vectors` (``ptx_version``, ``cr0``, ``semantics``, ``tile_version``) choose
    the cases otherwise.

    >>> import numpy as np
    >>> assert_matches("cvt.f32.f16", lambda a: a.astype(np.float32), allow=("nan-encoding",)).ok
    True
    """
    if isinstance(form, Vectors):
        chosen = {"level": level != 1, "target": target is not None, "seed": seed != 0,
                  "count": count is not None}
        given = [k for k, c in chosen.items() if c] + sorted(options)
        if given:
            raise ValueError(
                f"{', '.join(given)}: options of the cases, which a Vectors already has; "
                "pass the form instead, or build the Vectors with them"
            )
        v = form
    else:
        v = vectors(form, level=level, target=target, seed=seed, count=count,
                    threads=threads, **options)
    if not callable(fn):
        raise TypeError(f"fn must be callable, not {type(fn).__name__}")
    results = fn(*v.arguments(bits=bits))
    name = getattr(fn, "__name__", type(fn).__name__)
    report = _check(v, results, allow, max_report, threads, f"fn ({name})")
    if not report.ok:
        raise Mismatch(report)
    return report
