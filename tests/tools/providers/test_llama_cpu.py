"""The weight layout llama.cpp may use is decided from the CPU's flags and the build's compiled-in features.

The CPUs are recorded ``/proc/cpuinfo`` files: an AMX Sapphire Rapids, an AVX-512 Skylake and an AMD
EPYC without AMX, and a Sandy Bridge without AVX2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.providers.llama_cpu import (
    cpu_model_name,
    missing_instructions,
    parse_build_features,
    plan_weight_repacking,
    read_cpu_flags,
)

CPUINFO = Path(__file__).parent / "cpuinfo"
SAPPHIRE_RAPIDS = CPUINFO / "intel-sapphire-rapids-amx.txt"
SKYLAKE = CPUINFO / "intel-skylake-avx512-no-amx.txt"
EPYC = CPUINFO / "amd-epyc-avx512.txt"
SANDY_BRIDGE = CPUINFO / "intel-sandy-bridge-no-avx2.txt"

# llama_print_system_info() of a native build on each kind of machine
NATIVE_AMX_BUILD = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | "
    "OPENMP = 1 | REPACK = 1 | "
)
NATIVE_AVX512_BUILD = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
    "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)
AVX2_BUILD = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | REPACK = 1 | "
SANDY_BRIDGE_BUILD = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "


def test_cpu_flags_are_read_from_the_first_processor():
    flags = read_cpu_flags(SAPPHIRE_RAPIDS)

    assert {"amx_int8", "amx_tile", "avx512f", "avx2"} <= flags
    assert "amx_int8" not in read_cpu_flags(EPYC)
    assert "avx2" not in read_cpu_flags(SANDY_BRIDGE)
    assert cpu_model_name(SKYLAKE) == "Intel(R) Xeon(R) Platinum 8175M CPU @ 2.50GHz"


def test_an_unreadable_cpuinfo_gives_no_flags_rather_than_an_error(tmp_path):
    assert read_cpu_flags(tmp_path / "absent") == frozenset()
    assert cpu_model_name(tmp_path / "absent") == "unknown"


def test_build_features_are_parsed_from_llama_system_info():
    features = parse_build_features(NATIVE_AMX_BUILD)

    assert features["AMX_INT8"] == "1"
    assert features["AVX512"] == "1"
    assert "AMX_INT8" not in parse_build_features(NATIVE_AVX512_BUILD)


def test_an_amx_build_on_an_amx_cpu_keeps_weights_unrepacked_because_that_path_crashes():
    plan = plan_weight_repacking(
        "auto", read_cpu_flags(SAPPHIRE_RAPIDS), parse_build_features(NATIVE_AMX_BUILD)
    )

    assert plan.use_extra_buffers is False
    assert "AMX" in plan.reason and "20824" in plan.reason and "scripts/setup.sh" in plan.reason


@pytest.mark.parametrize(
    ("cpuinfo", "system_info"),
    [
        (SAPPHIRE_RAPIDS, AVX2_BUILD),  # scripts/setup.sh's build on an AMX machine has no AMX path
        (SAPPHIRE_RAPIDS, NATIVE_AVX512_BUILD),
        (SKYLAKE, NATIVE_AVX512_BUILD),
        (EPYC, NATIVE_AVX512_BUILD),
        (SANDY_BRIDGE, SANDY_BRIDGE_BUILD),
    ],
)
def test_builds_without_an_amx_path_may_repack(cpuinfo, system_info):
    plan = plan_weight_repacking("auto", read_cpu_flags(cpuinfo), parse_build_features(system_info))

    assert plan.use_extra_buffers is True


def test_an_explicit_setting_is_obeyed_even_where_auto_would_decide_otherwise():
    amx_cpu, amx_build = read_cpu_flags(SAPPHIRE_RAPIDS), parse_build_features(NATIVE_AMX_BUILD)

    assert plan_weight_repacking("on", amx_cpu, amx_build).use_extra_buffers is True
    assert (
        plan_weight_repacking("off", read_cpu_flags(EPYC), parse_build_features(AVX2_BUILD)).use_extra_buffers
        is False
    )


def test_a_build_for_a_newer_cpu_is_named_before_it_can_die_with_an_illegal_instruction():
    assert missing_instructions(read_cpu_flags(SANDY_BRIDGE), parse_build_features(AVX2_BUILD)) == [
        "AVX2", "F16C", "FMA", "BMI2",
    ]  # fmt: skip
    assert "AMX_INT8" in missing_instructions(read_cpu_flags(SKYLAKE), parse_build_features(NATIVE_AMX_BUILD))
    assert missing_instructions(read_cpu_flags(EPYC), parse_build_features(NATIVE_AVX512_BUILD)) == []
    assert missing_instructions(frozenset(), parse_build_features(NATIVE_AMX_BUILD)) == []  # unknown CPU
