"""Type stubs of gpucvt.testing (see the module's docstrings for the behaviour)."""

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

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

CLASSES: Dict[str, str]

class Operand(NamedTuple):
    """One operand word of each case."""

    name: str
    bits: int
    format: Optional[str]
    lanes: int

class Vectors:
    """The test cases of one instruction with the model's answers."""

    form: str
    dialect: str
    cases: int
    operands: Tuple[Operand, ...]
    inputs: Dict[str, npt.NDArray[np.unsignedinteger[Any]]]
    rbits: Optional[npt.NDArray[np.unsignedinteger[Any]]]
    expected: npt.NDArray[np.unsignedinteger[Any]]
    def __init__(self, native: Any) -> None: ...
    def __len__(self) -> int: ...
    def line(self, i: int) -> str: ...
    def arguments(self, bits: bool = False) -> Tuple[npt.NDArray[Any], ...]: ...
    @property
    def manifest(self) -> Dict[str, Any]: ...
    @property
    def gpucvt_version(self) -> str: ...
    @property
    def settings(self) -> Dict[str, str]: ...
    @property
    def target(self) -> Optional[str]: ...
    @property
    def level(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def rounding(self) -> Optional[str]: ...
    @property
    def policy(self) -> Optional[Dict[str, Any]]: ...
    @property
    def sha256(self) -> str: ...
    @property
    def cases_sha256(self) -> str: ...
    def check(
        self,
        results: Any,
        *,
        allow: Sequence[str] = (),
        max_report: int = 10,
        threads: Optional[int] = None,
    ) -> Report: ...

class Disagreement(NamedTuple):
    """One case where the answers differ."""

    case: int
    input: str
    expected: str
    got: str
    class_: str
    lane: Optional[int]
    detail: str

class RbitsRule(NamedTuple):
    """The inferred use of the random bits of an ``.rs`` form."""

    rule: str
    model: str
    explains: int
    cases: int

class Report:
    """The classified comparison of an implementation's answers with the model's."""

    form: str
    cases: int
    agree: int
    disagree: int
    classes: Dict[str, int]
    allowed: Tuple[str, ...]
    disallowed: int
    rbits: Optional[RbitsRule]
    disagreements: List[Disagreement]
    text: str
    def __init__(self, data: Dict[str, Any]) -> None: ...
    @property
    def ok(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Mismatch(AssertionError):
    """Answers that disagree outside the allowed classes; ``report`` says how."""

    report: Report
    def __init__(self, report: Report) -> None: ...

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
    """The test cases of ``form`` with the model's answers (``gpucvt vectors``)."""

def check(
    v: Vectors,
    results: Any,
    *,
    allow: Sequence[str] = (),
    max_report: int = 10,
    threads: Optional[int] = None,
) -> Report:
    """The report of ``results`` against ``v``."""

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
    """Checks that ``fn`` computes ``form`` as the GPU does; raises ``Mismatch`` if not."""
