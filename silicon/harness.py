"""gpucvt against real silicon: the same `cvt` instructions on a GPU and in gpucvt, hashed.

The layout of every form's instructions comes from gpucvt itself (``gpucvt sweep --list
--json``): which input units feed which operand, the `rbits` stream of `.rs` forms, the fixed
operands and the result width. This module turns that layout into

- PTX statements, checked with ``gpucvt check`` before anything runs (:func:`check_module`);
- CUDA kernels with the statement as inline PTX (:func:`cuda_source`), one per form;
- a driver (:class:`Driver`) that runs a form's instructions on a *backend* in chunks, streams
  the result words into an XXH3-64 hash (the hash ``gpucvt sweep --hash`` prints), compares it
  with gpucvt's, and on a difference finds the first differing instructions.

The backend is the GPU (``cupy_backend.py``) on the silicon machine and a NumPy stand-in
(``tests/standin.py``) in the CPU tests, so that a bug in the chunking, hashing or search
cannot pass for agreement.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

#: SplitMix64 (the one random stream of gpucvt: `.rs` forms' `rbits`, sampled inputs).
GAMMA = 0x9E3779B97F4A7C15
_M64 = (1 << 64) - 1

#: Register of each operand width in inline PTX: (constraint letter, PTX register type, C type).
#: 8-bit operands use 16-bit registers: `cvt` accepts registers wider than its types.
REGISTERS = {
    8: ("h", "b16", "unsigned short"),
    16: ("h", "b16", "unsigned short"),
    32: ("r", "b32", "unsigned int"),
    64: ("l", "b64", "unsigned long long"),
}

#: NumPy type of a result word of 1, 2, 4 or 8 bytes (what a sweep writes, little-endian).
RESULT_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class HarnessError(Exception):
    """A failure of the harness itself (not a difference between GPU and gpucvt)."""


@dataclasses.dataclass(frozen=True)
class Operand:
    """One source operand of a form's instruction (after ``d``), as gpucvt lays it out."""

    role: str
    bits: int
    feed: str  # "unit", "rbits" or "fixed"
    unit: Optional[int] = None
    value: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class Shape:
    """A form and the layout of its sweep (``gpucvt sweep --list --json``)."""

    form: str
    dst_bits: int
    result_bits: int
    result_bytes: int
    unit_bits: int
    units_per_instruction: int
    operands: Tuple[Operand, ...]
    every_input: Optional[int]

    @staticmethod
    def from_json(j: dict) -> "Shape":
        ops = tuple(
            Operand(o["role"], o["bits"], o["feed"], o.get("unit"), o.get("value"))
            for o in j["operands"]
        )
        return Shape(
            j["form"],
            j["dst_bits"],
            j["result_bits"],
            j["result_bytes"],
            j["unit_bits"],
            j["units_per_instruction"],
            ops,
            j["every_input"],
        )

    @property
    def stochastic(self) -> bool:
        return any(o.feed == "rbits" for o in self.operands)

    @property
    def result_dtype(self) -> type:
        return RESULT_DTYPES[self.result_bytes]

    @property
    def source_type(self) -> str:
        """The PTX source type (the last type suffix of a `cvt`, the a/b type of `cvt.pack`)."""
        parts = self.form.split(".")
        return parts[-2] if self.form.startswith("cvt.pack") and len(parts) > 5 else parts[-1]

    @property
    def dest_type(self) -> str:
        parts = self.form.split(".")
        return parts[-3] if self.form.startswith("cvt.pack") and len(parts) > 5 else parts[-2]

    def modifiers(self) -> Tuple[str, ...]:
        """The qualifiers between `cvt` and the types (rounding first where there is one)."""
        parts = self.form.split(".")[1:]
        n_types = 3 if self.form.startswith("cvt.pack") and len(parts) > 4 else 2
        return tuple(parts[: len(parts) - n_types])


@dataclasses.dataclass(frozen=True)
class Catalogue:
    """Every form legal on a target at a PTX version."""

    target: str
    ptx_version: str
    shapes: Tuple[Shape, ...]


# ---------------------------------------------------------------------------------------
# gpucvt, the program.


class Gpucvt:
    """The gpucvt binary: the forms, their statements' check, and `sweep`."""

    def __init__(self, binary: str, threads: Optional[int] = None):
        self.binary = binary
        self.threads = threads

    def _run(self, args: Sequence[str], check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([self.binary, *args], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise HarnessError(f"gpucvt {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
        return p

    def catalogue(self, target: str, ptx_version: Optional[str] = None) -> Catalogue:
        args = ["sweep", "--list", "--target", target, "--json"]
        if ptx_version:
            args += ["--ptx-version", ptx_version]
        j = json.loads(self._run(args).stdout)
        return Catalogue(j["target"], j["ptx_version"], tuple(Shape.from_json(f) for f in j["forms"]))

    def check(self, path: Path, target: str, ptx_version: str) -> List[dict]:
        p = self._run(
            ["check", str(path), "--target", target, "--ptx-version", ptx_version, "--json"],
            check=False,
        )
        if p.returncode not in (0, 1):
            raise HarnessError(f"gpucvt check failed ({p.returncode}): {p.stderr.strip()}")
        return json.loads(p.stdout)

    def _sweep_args(self, shape: Shape, plan: "Inputs") -> List[str]:
        args = ["sweep", shape.form, "--seed", str(plan.seed)]
        if plan.sample is not None:
            args += ["--sample", str(plan.sample)]
        if self.threads:
            args += ["--threads", str(self.threads)]
        return args

    def sweep_hash(self, shape: Shape, plan: "Inputs", first: int = 0, count: Optional[int] = None) -> str:
        args = self._sweep_args(shape, plan) + ["--hash", "--json", "--first", str(first)]
        if count is not None:
            args += ["--count", str(count)]
        return json.loads(self._run(args).stdout)["hash"]

    def sweep_hash_async(self, shape: Shape, plan: "Inputs") -> subprocess.Popen:
        args = self._sweep_args(shape, plan) + ["--hash", "--json"]
        return subprocess.Popen([self.binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    @staticmethod
    def hash_of(p: subprocess.Popen) -> str:
        out, err = p.communicate()
        if p.returncode != 0:
            raise HarnessError(f"gpucvt sweep failed ({p.returncode}): {err.strip()}")
        return json.loads(out)["hash"]

    def sweep_words(self, shape: Shape, plan: "Inputs", first: int, count: int, scratch: Path) -> np.ndarray:
        out = scratch / "sweep.bin"
        args = self._sweep_args(shape, plan) + ["--out", str(out), "--first", str(first), "--count", str(count)]
        self._run(args)
        try:
            return np.fromfile(out, dtype=np.dtype(shape.result_dtype).newbyteorder("<"))
        finally:
            out.unlink(missing_ok=True)

    def units(self, shape: Shape, plan: "Inputs", scratch: Path) -> np.ndarray:
        """The input units of a sampled sweep (memory order), as gpucvt lists them."""
        out = scratch / "units.bin"
        self._run(self._sweep_args(shape, plan) + ["--units-out", str(out)])
        try:
            return np.fromfile(out, dtype="<u8")
        finally:
            out.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------
# Statements and kernels.


def statement(shape: Shape, names: Sequence[str]) -> str:
    """The form with its operands: ``cvt.rn.f16.f32 NAME0, NAME1;``."""
    return f"{shape.form} {', '.join(names)};"


def asm_lines(shape: Shape, names: Sequence[str]) -> List[str]:
    """The statements one instruction runs, on the registers ``names`` (``d`` first, each
    of the width :data:`REGISTERS` gives). An 8-bit operand gets a `.b8` register of its own
    (ptxas requires it of some forms, e.g. `cvt.rn.bf16.u8`), moved from or to the 16-bit
    one with an exact `cvt.u8.u16`/`cvt.u16.u8`."""
    bits = [shape.dst_bits] + [o.bits for o in shape.operands]
    regs = list(names)
    before, after, locals_ = [], [], []
    for k, b in enumerate(bits):
        if b == 8:
            t = f"b8_{k}"
            locals_.append(t)
            if k == 0:
                after.append(f"cvt.u16.u8 {names[0]}, {t};")
            else:
                before.append(f"cvt.u8.u16 {t}, {names[k]};")
            regs[k] = t
    if not locals_:
        return [statement(shape, regs)]
    return ["{", f".reg .b8 {', '.join(locals_)};", *before, statement(shape, regs), *after, "}"]


def ptx_module(cat: Catalogue, shapes: Iterable[Shape]) -> str:
    """A PTX module with the statements of every form, on registers of the widths the CUDA
    kernels use, for ``gpucvt check``."""
    lines = [
        f".version {cat.ptx_version}",
        f".target {cat.target}",
        ".address_size 64",
        "",
        ".visible .entry silicon_forms()",
        "{",
        "    .reg .b16 %h<8>;",
        "    .reg .b32 %r<8>;",
        "    .reg .b64 %l<8>;",
    ]
    for s in shapes:
        names = []
        for k, bits in enumerate([s.dst_bits] + [o.bits for o in s.operands]):
            reg = REGISTERS[_register_width(bits)][1]
            names.append({"b16": "%h", "b32": "%r", "b64": "%l"}[reg] + str(k))
        lines.append(f"    // {s.form}")
        lines += ["    " + line for line in asm_lines(s, names)]
    lines += ["    ret;", "}", ""]
    return "\n".join(lines)


def _register_width(bits: int) -> int:
    for w in (8, 16, 32, 64):
        if bits <= w:
            return w
    raise HarnessError(f"no register of {bits} bits")


def check_module(gpucvt: Gpucvt, cat: Catalogue, shapes: Sequence[Shape], scratch: Path) -> List[dict]:
    """``gpucvt check`` of every statement the kernels will run; its diagnostics (errors and
    warnings), empty when every statement is clean."""
    path = scratch / f"silicon-{cat.target}.ptx"
    path.write_text(ptx_module(cat, shapes))
    return gpucvt.check(path, cat.target, cat.ptx_version)


def kernel_name(index: int) -> str:
    return f"silicon_form_{index}"


_CUDA_PRELUDE = r"""
// Generated by silicon/harness.py from `gpucvt sweep --list --json`: one kernel per form.
// Thread i runs instruction `first + i` of the form's sweep: its input units are
// `(first + i) * L + k` (every input) or `units[i * L + k]` (a sample), its rbits the word of
// gpucvt's SplitMix64 stream, and it stores the low result bits of d.
__device__ __forceinline__ unsigned int gpucvt_rbits(unsigned long long seed,
                                                     unsigned long long i) {
    unsigned long long z = seed + i * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (unsigned int)(z ^ (z >> 31));
}
"""


def cuda_kernel(shape: Shape, index: int) -> str:
    """The CUDA kernel of one form."""
    per = shape.units_per_instruction
    rtype = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[
        shape.result_bytes
    ]
    mask = (1 << shape.result_bits) - 1
    body = []
    inputs = []
    for k, o in enumerate(shape.operands):
        letter, _, ctype = REGISTERS[_register_width(o.bits)]
        if o.feed == "unit":
            src = f"(units ? units[i * {per}ull + {o.unit}ull] : ins * {per}ull + {o.unit}ull)"
        elif o.feed == "rbits":
            src = "gpucvt_rbits(seed, ins)"
        else:
            src = f"{o.value}ull"
        body.append(f"    {ctype} s{k} = ({ctype})({src});")
        inputs.append(f'"{letter}"(s{k})')
    dletter, _, dctype = REGISTERS[_register_width(shape.dst_bits)]
    names = ["%0"] + [f"%{k + 1}" for k in range(len(shape.operands))]
    asm = " ".join(asm_lines(shape, names))
    return "\n".join(
        [
            f"// {shape.form}",
            f'extern "C" __global__ void {kernel_name(index)}(const unsigned long long* __restrict__ units,',
            "        unsigned long long first, unsigned long long n, unsigned long long seed,",
            f"        {rtype}* __restrict__ out) {{",
            "    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;",
            "    if (i >= n) return;",
            "    unsigned long long ins = first + i;",
            "    (void)seed;",
            *body,
            f"    {dctype} d;",
            f'    asm volatile("{asm}" : "={dletter}"(d) : {", ".join(inputs)});',
            f"    out[i] = ({rtype})((unsigned long long)d & {mask}ull);",
            "}",
            "",
        ]
    )


def cuda_source(shapes: Sequence[Shape]) -> str:
    return _CUDA_PRELUDE + "\n" + "\n".join(cuda_kernel(s, i) for i, s in enumerate(shapes))


# ---------------------------------------------------------------------------------------
# The inputs of a run, on both sides.


@dataclasses.dataclass(frozen=True)
class Inputs:
    """Which instructions of a form run: every input (``sample`` None) or gpucvt's seeded
    sample of ``sample`` random units (after the boundary-dense set of wide sources)."""

    seed: int = 0
    sample: Optional[int] = None


def splitmix_words(seed: int, first: int, n: int) -> np.ndarray:
    """Words ``first .. first+n`` of gpucvt's SplitMix64 stream (low 32 bits), in NumPy."""
    i = np.arange(first, first + n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (i + np.uint64(1)) * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z & np.uint64(0xFFFFFFFF)).astype(np.uint32)


class Backend:
    """Runs instructions ``first .. first+n`` of a form; returns their result words."""

    name = "backend"

    def prepare(self, shapes: Sequence[Shape]) -> None:
        """Called once with every form that may run (compiles the kernels)."""

    def run(self, index: int, shape: Shape, first: int, n: int, seed: int,
            units: Optional[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def device(self) -> str:
        return self.name


# ---------------------------------------------------------------------------------------
# The driver.


@dataclasses.dataclass
class Example:
    instruction: int
    units: List[int]
    rbits: Optional[int]
    gpu: int
    gpucvt: int


@dataclasses.dataclass
class FormResult:
    form: str
    instructions: int
    coverage: str  # "exhaustive" or "sampled (N)"
    gpu_hash: str
    gpucvt_hash: str
    seconds: float
    differences: Optional[int] = None  # counted over the searched chunks, when they differ
    searched: Optional[int] = None  # instructions searched for differences
    examples: List[Example] = dataclasses.field(default_factory=list)

    @property
    def agree(self) -> bool:
        return self.gpu_hash == self.gpucvt_hash


class Driver:
    """Runs forms on a backend and in gpucvt and compares them by hash, chunk by chunk."""

    def __init__(self, gpucvt: Gpucvt, backend: Backend, scratch: Path, chunk: int = 1 << 26,
                 max_examples: int = 50, hasher: Optional[Callable[[], object]] = None):
        self.gpucvt = gpucvt
        self.backend = backend
        self.scratch = scratch
        self.chunk = chunk
        self.max_examples = max_examples
        self.hasher = hasher or _xxh3
        self._units: Dict[Tuple[str, int, int, Optional[int]], np.ndarray] = {}

    def units_for(self, shape: Shape, plan: Inputs) -> Optional[np.ndarray]:
        """The sampled units (shared by every form with the same source type and units per
        instruction), or None for every input."""
        if plan.sample is None:
            return None
        key = (shape.source_type, shape.units_per_instruction, plan.seed, plan.sample)
        if key not in self._units:
            self._units[key] = self.gpucvt.units(shape, plan, self.scratch)
        return self._units[key]

    def instructions(self, shape: Shape, plan: Inputs) -> int:
        if plan.sample is None:
            if shape.every_input is None:
                raise HarnessError(f"{shape.form}: a wide source is sampled, not swept")
            return shape.every_input
        return len(self.units_for(shape, plan)) // shape.units_per_instruction

    def gpu_words(self, index: int, shape: Shape, plan: Inputs, first: int, n: int) -> np.ndarray:
        units = self.units_for(shape, plan)
        per = shape.units_per_instruction
        chunk_units = None if units is None else units[first * per:(first + n) * per]
        words = self.backend.run(index, shape, first, n, plan.seed, chunk_units)
        words = np.ascontiguousarray(words, dtype=shape.result_dtype)
        if words.shape != (n,):
            raise HarnessError(f"{shape.form}: the backend returned {words.shape} words for {n}")
        return words

    def gpu_hash(self, index: int, shape: Shape, plan: Inputs, first: int = 0,
                 count: Optional[int] = None) -> str:
        total = self.instructions(shape, plan)
        end = total if count is None else min(total, first + count)
        h = self.hasher()
        at = first
        while at < end:
            n = min(self.chunk, end - at)
            h.update(self.gpu_words(index, shape, plan, at, n).astype(
                np.dtype(shape.result_dtype).newbyteorder("<"), copy=False).tobytes())
            at += n
        return f"{h.intdigest():016x}"

    def run_form(self, index: int, shape: Shape, plan: Inputs) -> FormResult:
        start = time.monotonic()
        total = self.instructions(shape, plan)
        cpu = self.gpucvt.sweep_hash_async(shape, plan)
        try:
            gpu = self.gpu_hash(index, shape, plan)
        finally:
            ours = Gpucvt.hash_of(cpu)
        coverage = "exhaustive" if plan.sample is None else f"sampled ({plan.sample} random units)"
        r = FormResult(shape.form, total, coverage, gpu, ours, 0.0)
        if not r.agree:
            self.search(index, shape, plan, r)
        r.seconds = time.monotonic() - start
        return r

    def search(self, index: int, shape: Shape, plan: Inputs, r: FormResult) -> None:
        """Finds the first differing instructions, chunk by chunk: a chunk whose hashes agree
        is skipped; the words of one that differs are compared."""
        total = r.instructions
        per = shape.units_per_instruction
        units = self.units_for(shape, plan)
        r.differences, r.searched = 0, 0
        at = 0
        while at < total and len(r.examples) < self.max_examples:
            n = min(self.chunk, total - at)
            gpu = self.gpu_words(index, shape, plan, at, n)
            h = self.hasher()
            h.update(gpu.astype(np.dtype(shape.result_dtype).newbyteorder("<"), copy=False).tobytes())
            if f"{h.intdigest():016x}" != self.gpucvt.sweep_hash(shape, plan, at, n):
                ours = self.gpucvt.sweep_words(shape, plan, at, n, self.scratch)
                if ours.shape != gpu.shape:
                    raise HarnessError(f"{shape.form}: gpucvt wrote {ours.shape} words for {n}")
                where = np.nonzero(gpu != ours)[0]
                r.differences += int(where.size)
                for j in where[: self.max_examples - len(r.examples)]:
                    i = at + int(j)
                    if units is None:
                        us = [i * per + k for k in range(per)]
                    else:
                        us = [int(u) for u in units[i * per:(i + 1) * per]]
                    rb = int(splitmix_words(plan.seed, i, 1)[0]) if shape.stochastic else None
                    r.examples.append(Example(i, us, rb, int(gpu[j]), int(ours[j])))
            r.searched += n
            at += n


def _xxh3():
    import xxhash

    return xxhash.xxh3_64()


# ---------------------------------------------------------------------------------------
# Ordering and budget.


def informative_order(shapes: Sequence[Shape]) -> List[Shape]:
    """The forms, the most informative first: one form for every destination type x
    rounding x modifier set (preferring an `f32` source: the most varied inputs), then the
    rest, each group in catalogue order."""
    first: List[Shape] = []
    rest: List[Shape] = []
    seen = set()
    for s in sorted(shapes, key=lambda s: (s.source_type != "f32", s.every_input is None)):
        key = (s.dest_type, s.modifiers())
        if key in seen:
            rest.append(s)
        else:
            seen.add(key)
            first.append(s)
    order = {s.form: i for i, s in enumerate(shapes)}
    first.sort(key=lambda s: order[s.form])
    rest.sort(key=lambda s: order[s.form])
    return first + rest


class Schedule:
    """Decides, form by form in :func:`informative_order`, whether a form runs on every input
    or on a sample, so that the whole run ends by ``budget_s`` (from the schedule's start):
    a form runs exhaustively while its estimated time fits what is left after reserving a
    sample's time for every form still to come. The estimates follow the measured times."""

    def __init__(self, shapes: Sequence[Shape], budget_s: float, seconds_per_instruction: float,
                 sample: int = 1 << 24, seed: int = 0, seconds_per_sample: float = 0.5,
                 clock: Callable[[], float] = time.monotonic):
        self.order = informative_order(shapes)
        self.sample, self.seed = sample, seed
        self.rate = seconds_per_instruction
        self.per_sample = seconds_per_sample
        self.clock = clock
        self.deadline = clock() + budget_s

    def __iter__(self):
        for k, s in enumerate(self.order):
            left = self.deadline - self.clock() - (len(self.order) - k - 1) * self.per_sample
            if s.every_input is not None and s.every_input * self.rate <= left:
                yield s, Inputs(seed=self.seed)
            else:
                yield s, Inputs(seed=self.seed, sample=self.sample)

    def measured(self, r: "FormResult", inputs: Inputs) -> None:
        """Updates the estimates with a form's measured time."""
        if inputs.sample is None:
            self.rate = 0.5 * self.rate + 0.5 * r.seconds / max(r.instructions, 1)
        else:
            self.per_sample = 0.5 * self.per_sample + 0.5 * r.seconds


# ---------------------------------------------------------------------------------------
# Report.


def report_markdown(results: Sequence[FormResult], header: Dict[str, str]) -> str:
    lines = ["# gpucvt against silicon", ""]
    for k, v in header.items():
        lines.append(f"- {k}: {v}")
    agree = sum(r.agree for r in results)
    lines += [
        "",
        f"{len(results)} forms: {agree} agree, {len(results) - agree} differ.",
        "",
        "| form | inputs | coverage | result | seconds |",
        "| --- | ---: | --- | --- | ---: |",
    ]
    for r in results:
        verdict = "agree" if r.agree else f"**differ** ({r.differences} in {r.searched} searched)"
        lines.append(f"| `{r.form}` | {r.instructions} | {r.coverage} | {verdict} | {r.seconds:.2f} |")
    for r in results:
        if r.agree:
            continue
        lines += ["", f"## `{r.form}`", "", "| instruction | units | rbits | GPU | gpucvt |",
                  "| ---: | --- | --- | --- | --- |"]
        for e in r.examples:
            us = " ".join(f"0x{u:x}" for u in e.units)
            rb = "" if e.rbits is None else f"0x{e.rbits:08x}"
            lines.append(f"| {e.instruction} | {us} | {rb} | 0x{e.gpu:x} | 0x{e.gpucvt:x} |")
    return "\n".join(lines) + "\n"


def results_json(results: Sequence[FormResult], header: Dict[str, str]) -> str:
    return json.dumps(
        {"header": header, "forms": [dataclasses.asdict(r) | {"agree": r.agree} for r in results]},
        indent=1,
    )


def default_binary(repo: Path) -> str:
    env = os.environ.get("GPUCVT_BIN")
    if env:
        return env
    for p in (repo / "target" / "release" / "gpucvt", repo / "silicon" / "bin" / "gpucvt"):
        if p.exists():
            return str(p)
    raise HarnessError("no gpucvt binary: set GPUCVT_BIN or build target/release/gpucvt")


def scratch_dir(base: Optional[Path] = None) -> Path:
    return Path(tempfile.mkdtemp(prefix="gpucvt-silicon-", dir=base))
