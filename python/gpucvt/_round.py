"""``gpucvt.round``: one number converted to a format, as ``gpucvt round``."""

from __future__ import annotations

import json
import math
import operator
from typing import Any, Dict, FrozenSet, Optional

from . import _gpucvt

#: The keywords of ``round`` beyond ``from_``, ``mode`` and ``explain`` (the CLI's options).
_POLICY = (
    "satfinite",
    "sat",
    "relu",
    "ftz",
    "pzo",
    "wrap",
    "overflow",
    "nan",
    "int_nan",
    "scale",
    "rbits",
    "rbits_width",
    "bits",
)


class Rounded:
    """The result of :func:`round`.

    - ``bits``: the destination encoding (an ``int``); ``hex_bits``: it as ``gpucvt round``
      prints it (``"0x7e"``, padded to the format's width);
    - ``value``: its exact value as a decimal string (``"448"``, ``"0.1015625"``, ``"inf"``,
      ``"nan"``); ``hex``: as a hexadecimal float; ``float``: as a Python float (rounded to
      ``float64`` where the format is wider, e.g. large ``s64`` values);
    - ``flags``: the status flags (a frozenset of ``inexact``, ``overflow``, ``underflow``,
      ``saturated``, ``flushed``, ``invalid``); ``cls``: ``zero``, ``subnormal``,
      ``normal``, ``infinity``, ``nan`` or ``finite`` (integers);
    - ``format``, ``mode``: the destination and the rounding mode's name;
    - ``explanation``: the steps in words (with ``explain=True``; otherwise ``None``): the
      text ``gpucvt round --explain`` prints, byte for byte;
    - :meth:`to_dict`: the object ``gpucvt round --json`` prints (``input``, ``to``,
      ``mode``, ``policy``, ``result``).
    """

    __slots__ = ("_report", "bits", "hex_bits", "value", "hex", "float", "flags", "cls",
                 "format", "mode", "explanation")

    def __init__(self, report: Dict[str, Any], bits: int, as_float: float,
                 explanation: Optional[str]) -> None:
        report.pop("explain", None)
        self._report = report
        result = report["result"]
        self.bits: int = bits
        self.hex_bits: str = result["bits"]
        self.value: str = result["value"]
        self.hex: str = result["hex"]
        self.float: float = as_float
        self.flags: FrozenSet[str] = frozenset(result["flags"])
        self.cls: str = result["class"]
        self.format: str = report["to"]
        self.mode: str = report["mode"]
        self.explanation: Optional[str] = explanation

    def to_dict(self) -> Dict[str, Any]:
        """The report as ``gpucvt round --json`` prints it (without ``explain``)."""
        import copy

        return copy.deepcopy(self._report)

    def __int__(self) -> int:
        return self.bits

    def __float__(self) -> float:
        return self.float

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rounded):
            return NotImplemented
        return self._report == other._report

    def __hash__(self) -> int:
        return hash((self.format, self.bits, self.flags))

    def __repr__(self) -> str:
        flags = ", ".join(sorted(self.flags, key=_FLAG_ORDER.index)) or "none"
        return (
            f"Rounded({self.format} {self.hex_bits} = {self.value}, {self.cls}, "
            f"mode={self.mode}, flags: {flags})"
        )

    def __str__(self) -> str:
        return self.explanation if self.explanation else repr(self)


_FLAG_ORDER = ["inexact", "overflow", "underflow", "saturated", "flushed", "invalid"]


def _number_text(value: Any) -> str:
    """The CLI's text of a number: a float exactly (its hexadecimal form), an int in decimal,
    a str as it is."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError("value must be a number or a str, not bool")
    if isinstance(value, float):
        if math.isnan(value):
            return "-nan" if math.copysign(1.0, value) < 0 else "nan"
        if math.isinf(value):
            return "-inf" if value < 0 else "inf"
        return value.hex()
    try:
        return str(operator.index(value))
    except TypeError:
        pass
    try:
        return float(value).hex()  # NumPy scalars and other real numbers, exactly as floats
    except (TypeError, ValueError):
        raise TypeError(
            f"value must be a float, an int or a str, not {type(value).__name__}"
        ) from None


def _pattern(p: Any, what: str) -> str:
    if isinstance(p, str):
        return p
    try:
        return str(operator.index(p))
    except TypeError:
        raise TypeError(f"{what} must be an int or a str, not {type(p).__name__}") from None


def round(  # noqa: A001 - the CLI's name
    value: Any = None,
    to: Any = None,
    *,
    from_: Any = None,
    mode: str = "rn",
    explain: bool = False,
    **policy: Any,
) -> Rounded:
    """Convert one number to the format ``to``, exactly as ``gpucvt round VALUE --to TO``.

    ``value``: a Python ``float`` (taken exactly) or ``int``, or a string in the CLI's syntax:
    a decimal of any length (``"0.1"``, ``"-1e-3"``), a hexadecimal float (``"0x1.8p3"``), a
    binary number (``"0b1.1"``), ``"inf"``, ``"nan"``. ``from_``: first round the number
    (rn) to this format, then convert from its bits (``--from``); with ``bits=PATTERN``
    (an int or ``"0x…"``, ``"0b…"`` text) the value is that bit pattern of ``from_``
    (``--bits``) and ``value`` is left out. ``to`` and ``from_`` take any name gpucvt accepts
    or a NumPy/ml_dtypes dtype.

    ``mode``: ``rn rna rz rm rp rs rni rzi rmi rpi``. ``explain=True``: ``.explanation``
    says how the result came about. Policy keywords (the CLI's options): ``satfinite``,
    ``sat``, ``relu``, ``ftz``, ``pzo``, ``wrap`` (booleans), ``overflow`` (``"ieee"`` or
    ``"saturate"``), ``nan`` (``"canonical"`` or ``"payload"``), ``int_nan`` (``"zero"`` or
    ``"highbit"``), ``scale`` (multiply by 2^k first), and for ``mode="rs"`` the random bits
    ``rbits`` (required: an int or pattern text) with ``rbits_width`` (1 to 64, default 32).

    Raises ``ValueError`` with the CLI's message for unknown names, malformed numbers and
    options that do not go together.

    >>> import gpucvt
    >>> r = gpucvt.round(0.1, "e4m3")
    >>> r.bits, r.value, sorted(r.flags)
    (29, '0.1015625', ['inexact'])
    >>> gpucvt.round("500", "e4m3", satfinite=True)
    Rounded(e4m3 0x7e = 448, normal, mode=rn, flags: inexact, overflow, saturated)
    >>> gpucvt.round(None, "f32", from_="bf16", bits=0x3F80).value
    '1'
    """
    from . import _format_of

    unknown = sorted(set(policy) - set(_POLICY))
    if unknown:
        raise TypeError(
            f"round() got unexpected keyword argument(s) {', '.join(unknown)}; "
            f"accepted: from_, mode, explain, {', '.join(_POLICY)}"
        )
    if to is None:
        raise TypeError("round() needs the destination format: round(value, to)")
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, not {type(mode).__name__}")
    bits = policy.pop("bits", None)
    number = None if value is None else _number_text(value)
    kw: Dict[str, Any] = {}
    for flag in ("satfinite", "sat", "relu", "ftz", "pzo", "wrap"):
        if flag in policy:
            kw[flag] = bool(policy[flag])
    for name in ("overflow", "nan", "int_nan"):
        v = policy.get(name)
        if v is not None:
            if not isinstance(v, str):
                raise TypeError(f"{name} must be a str, not {type(v).__name__}")
            kw[name] = v
    # Range checks are the library's (with the CLI's messages); an int beyond 64 bits is
    # outside every range, so it is passed as the nearest out-of-range one that fits.
    for name in ("scale", "rbits_width"):
        if policy.get(name) is not None:
            kw[name] = max(-(2**63), min(2**63 - 1, operator.index(policy[name])))
    if policy.get("rbits") is not None:
        kw["rbits"] = _pattern(policy["rbits"], "rbits")
    report, as_int, as_float, explanation = _gpucvt.round(
        number,
        to if isinstance(to, str) else _format_of(to),
        from_=from_ if from_ is None or isinstance(from_, str) else _format_of(from_),
        bits=None if bits is None else _pattern(bits, "bits"),
        mode=mode,
        explain=bool(explain),
        **kw,
    )
    return Rounded(json.loads(report), as_int, as_float, explanation)
