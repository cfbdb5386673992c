"""The machine that computed a study: what a floating-point difference can be traced to.

The study's tables are deterministic for a given configuration and seed, but their last digits
depend on the arithmetic of the machine: which BLAS library the numerical packages load, which
kernels OpenBLAS picks for the CPU (its *core type*: ``Haswell`` on AVX2 machines, ``SkylakeX``
on AVX-512 ones, ``neoversen1`` on an ARM server ...; ``OPENBLAS_CORETYPE`` forces one), with
how many threads, which SIMD instructions numpy's own loops dispatch to (AVX-512 or AVX2; the
CLS corrections of notebook 01 move by up to 1e-4 between the two with the same BLAS kernels),
and the versions of numpy, scipy, pandas, implicit and torch. The workflow
writes this record to ``results/provenance.json`` (rule ``provenance``) with the environment of
its study steps; ``make check`` compares the tables byte for byte when the rerun's record has
the same :func:`reproduction_key` as the committed one, and within a stated tolerance otherwise
(:mod:`itemsampling_study.reproduction`).
"""

from __future__ import annotations

import os
import platform
import re
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGES", "machine_record", "reproduction_key"]

#: the packages whose versions can change the study's numbers
PACKAGES = ("itemsampling", "numpy", "scipy", "pandas", "pyarrow", "implicit", "torch")


def _cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what :mod:`platform` says)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.split(":")[0].strip() in ("model name", "Model", "cpu model"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _blas() -> list[dict]:
    """The BLAS libraries that numpy and scipy load, with their kernels and threads."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS)
    import scipy.linalg  # noqa: F401  (loads scipy's)
    from threadpoolctl import threadpool_info

    out = []
    for info in threadpool_info():
        if info.get("user_api") != "blas":
            continue
        out.append({"library": re.sub(r"-[0-9a-f]{8}(?=\.so)", "", Path(info["filepath"]).name),
                    "api": info.get("internal_api"), "version": info.get("version"),
                    "core_type": info.get("architecture"), "threading": info.get("threading_layer"),
                    "threads": info.get("num_threads")})
    return sorted(out, key=lambda entry: entry["library"])


def _numpy_simd() -> dict:
    """The SIMD instruction sets numpy compiled in (``baseline``) and those it dispatches to on
    this CPU (``dispatched``): its reductions and ufuncs add in another order with wider
    vectors, so an AVX-512 machine (X86_V4) and an AVX2 one (X86_V3) differ in the last bits
    even with the same BLAS kernels. ``NPY_DISABLE_CPU_FEATURES`` switches targets off."""
    try:
        from numpy._core._multiarray_umath import (
            __cpu_baseline__,
            __cpu_dispatch__,
            __cpu_features__,
        )
    except ImportError:  # numpy < 2 keeps them in numpy.core
        try:
            from numpy.core._multiarray_umath import (
                __cpu_baseline__,
                __cpu_dispatch__,
                __cpu_features__,
            )
        except ImportError:
            return {"baseline": None, "dispatched": None}
    return {"baseline": list(__cpu_baseline__),
            "dispatched": [target for target in __cpu_dispatch__ if __cpu_features__.get(target)]}


def machine_record() -> dict:
    """What computed the study on this machine, in this environment.

    Returns
    -------
    dict
        ``python``, ``system``, ``machine`` (the instruction set), ``cpu`` (model name),
        ``openblas_coretype`` (the forced kernels, or ``None``), ``environment`` (the
        ``OPENBLAS_*`` and ``NPY_*`` variables that change kernels or blocking), ``blas`` (one
        entry per loaded BLAS library: file, API, version, core type, threading layer and
        threads), ``numpy_simd`` (:func:`_numpy_simd`) and ``packages`` (the versions of
        :data:`PACKAGES`). No host name, user or time: the same machine gives the same record.
    """
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "system": platform.system(),
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE") or None,
        "environment": {k: v for k, v in sorted(os.environ.items())
                        if k.startswith(("OPENBLAS_", "NPY_")) and k != "OPENBLAS_NUM_THREADS"},
        "blas": _blas(),
        "numpy_simd": _numpy_simd(),
        "packages": {package: _version(package) for package in PACKAGES},
    }


def reproduction_key(record: dict) -> dict:
    """The part of a :func:`machine_record` that decides the bits of the results: the instruction
    set, each BLAS library's version, kernels and threads, the SIMD targets numpy dispatches to,
    and the package versions (not the CPU's name: two CPUs on which OpenBLAS and numpy pick the
    same kernels compute the same bits). A record without ``numpy_simd`` (older ones) matches no
    other, so the comparison falls back to the tolerances."""
    blas = [{k: entry.get(k) for k in ("library", "version", "core_type", "threads")} for entry in record["blas"]]
    return {"machine": record["machine"], "blas": blas, "numpy_simd": record.get("numpy_simd", "unknown"),
            "packages": {k: v for k, v in record["packages"].items() if k != "itemsampling"}}
