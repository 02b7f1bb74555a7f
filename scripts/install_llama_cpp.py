"""Compile and install llama-cpp-python for this CPU, without ggml's AMX path, once per CPU and build flags.

    .venv/bin/python scripts/install_llama_cpp.py        (scripts/setup.sh runs it before `pip install -e .`)

Why not a plain `pip install`: the sdist compiles with ``-march=native``, which on an Intel CPU with
AMX turns on ggml's AMX weight path, and that path crashes with a segmentation fault on the Q4_K weights
ragpilot ships (ggml-org/llama.cpp#20824). Here the build stays native (AVX2, AVX-512... whatever this
CPU has) but the compiler is told ``-mno-amx-*``, so llama.cpp keeps its CPU repack layout and never
takes the AMX path. pip's own wheel cache is keyed by the sdist alone, so a wheel compiled with other
flags, or on another machine, would be reinstalled silently; this wheel is built with ``--no-cache-dir``
into ``~/.cache/ragpilot/wheels/<key>``, keyed by the version, the flags, the compiler and the CPU.

A user who runs ``pip install .`` directly is still safe: at run time ragpilot does not let an AMX build
repack weights on an AMX CPU, and it tries the model in a child process before first use
(tools/providers/native_probe.py). This script only keeps the fast layout available on those machines.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = Path(sys.prefix) / "ragpilot-llama-build.txt"
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"


def pinned_requirement() -> str:
    """The ``llama-cpp-python==X`` line of pyproject.toml: one place says which version ragpilot runs."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return next(d for d in dependencies if re.match(r"llama-cpp-python\s*==", d))


def compiler_accepts(flags: str) -> bool:
    compiler = os.environ.get("CC", "cc")
    try:
        done = subprocess.run(
            [compiler, *shlex.split(flags), "-x", "c", "-E", "-"], input="", capture_output=True, text=True
        )
    except OSError:
        return False
    return done.returncode == 0


def cmake_args() -> str:
    user_args = os.environ.get("CMAKE_ARGS", "")  # a user's own flags come first and are kept
    if platform.machine().lower() not in ("x86_64", "amd64") or not compiler_accepts(NO_AMX):
        return user_args  # no AMX to avoid (or a compiler too old to know it, so it cannot emit it)
    return f"{user_args} -DCMAKE_C_FLAGS='{NO_AMX}' -DCMAKE_CXX_FLAGS='{NO_AMX}'".strip()


def build_key(requirement: str, args: str) -> str:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        cpuinfo = ""
    first_cpu = cpuinfo.split("\n\n", 1)[0]
    cpu = [line for line in first_cpu.splitlines() if line.startswith(("model name", "flags", "Features"))]
    compiler = subprocess.run(
        [os.environ.get("CC", "cc"), "--version"], capture_output=True, text=True
    ).stdout
    material = "\n".join([requirement, args, platform.machine(), *cpu, compiler.split("\n", 1)[0]])
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def main() -> int:
    requirement = pinned_requirement()
    args = cmake_args()
    key = build_key(requirement, args)
    if MARKER.exists() and MARKER.read_text().strip() == key:
        return 0  # this venv already has the wheel built for this CPU and these flags
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ragpilot" / "wheels" / key
    wheels = sorted(cache.glob("llama_cpp_python-*.whl"))
    pip = [sys.executable, "-m", "pip"]
    if not wheels:
        print(f"compiling {requirement} for this CPU (about 5 minutes on 2 cores); CMAKE_ARGS={args}")
        cache.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "CMAKE_ARGS": args}
        subprocess.run([*pip, "wheel", "--quiet", "--no-deps", "--no-cache-dir", "-w", str(cache), requirement],
                       check=True, env=env)  # fmt: skip
        wheels = sorted(cache.glob("llama_cpp_python-*.whl"))
    subprocess.run(
        [*pip, "install", "--quiet", "--no-deps", "--force-reinstall", str(wheels[-1])], check=True
    )
    MARKER.write_text(key + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
