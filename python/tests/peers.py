"""What the peers that gpucvt's tests compare with do, version by version.

gpucvt is tested against exact references (the big-rational model in Rust; in these tests,
search in a format's table of values). A peer (ml_dtypes, NumPy) is compared only to
document what it does, and only in versions described here: on any other version a peer
test skips with a message saying so, and `scripts/test --latest` shows which versions the
package index would now bring. Describing a new version is a reviewed change of this file
(and of the docs' statements about it), made after comparing by hand.
"""

from __future__ import annotations

import pytest

import ml_dtypes


def _series(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


#: The ml_dtypes series (major, minor) whose behaviour the tests describe.
ML_DTYPES_DESCRIBED = {(0, 5), (0, 6), (0, 7)}
ML_DTYPES = _series(ml_dtypes.__version__)


def ml_dtypes_f64_double_rounds() -> bool:
    """Whether this ml_dtypes converts f64 sources to its formats through f32, rounding
    twice (0.5 and 0.6). 0.7 rounds them once, correctly."""
    return ML_DTYPES < (0, 7)


def ml_dtypes_described() -> None:
    """Skips the calling test unless this ml_dtypes version is one the tests describe."""
    if ML_DTYPES not in ML_DTYPES_DESCRIBED:
        described = ", ".join(f"{a}.{b}" for a, b in sorted(ML_DTYPES_DESCRIBED))
        pytest.skip(
            f"ml_dtypes {ml_dtypes.__version__} is not a version these tests describe "
            f"({described}); compare it by hand and describe it in python/tests/peers.py"
        )


#: The ml_dtypes series whose casts test_testing.py records through the conformance kit
#: (which classes of disagreement each cast has against its PTX form), compared by hand.
ML_DTYPES_KIT_RECORDED = {(0, 7)}


def ml_dtypes_kit_recorded() -> None:
    """Skips the calling test unless the kit's records describe this ml_dtypes version."""
    if ML_DTYPES not in ML_DTYPES_KIT_RECORDED:
        described = ", ".join(f"{a}.{b}" for a, b in sorted(ML_DTYPES_KIT_RECORDED))
        pytest.skip(
            f"the conformance kit's records of ml_dtypes describe {described}, not "
            f"{ml_dtypes.__version__}; run them by hand and record it in python/tests/peers.py"
        )
