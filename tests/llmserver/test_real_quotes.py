"""Self-audit quotes from a real (weak) writer: llama.cpp's server, Gemma 3 270M base model.

Whatever the model quotes, the guard looks it up itself: a quote that is not a user's words
never makes a stated fact, and junk fails closed. The checks are printed (`-s`) so a run shows
what the base model actually quoted.
"""

from __future__ import annotations

import pytest

from mirage_guard.guard import AuditMode, Guard, Provenance, ReasonCode, SelfAuditor
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.llm import LiteLLMClient, SamplingParams
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder
from tests.guard.paper import PAPER_TURNS, STATED, UNSUPPORTED
from tests.llmserver.conftest import LocalServer

pytestmark = [
    pytest.mark.llm_server,
    pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

BAD_QUOTE = {
    ReasonCode.AUDIT_QUOTE_MISSING,
    ReasonCode.AUDIT_QUOTE_INVALID,
    ReasonCode.AUDIT_QUOTE_ASSISTANT,
}


async def test_a_real_writer_s_quotes_are_checked_and_a_bad_one_never_makes_a_fact(
    llm_server: LocalServer,
) -> None:
    llm = LiteLLMClient(llm_server.openai_model, api_base=llm_server.api_base, timeout_s=300)
    auditor = SelfAuditor(
        llm, timeout_s=300, params=SamplingParams(temperature=0.0, max_tokens=300, seed=7)
    )
    guard = Guard(
        linker=EvidenceLinker(HashingEmbedder()),
        evidence_profile=make_profile(),
        auditor=auditor,
        audit_mode=AuditMode.SEPARATE,
        writer_model=llm.model,
    )
    try:
        decisions = await guard.atag(PAPER_TURNS, [STATED, UNSUPPORTED])
    finally:
        guard.close()
    for d in decisions:
        codes = {r.code for r in d.reasons}
        print(
            f"{d.candidate.id}: label={d.audit.label.value if d.audit else None} "
            f"quote={d.audit.quote if d.audit else None!r} "
            f"check={d.audit.quote_check if d.audit else 'audit failed'} -> {d.provenance.value}"
        )
        if d.audit is None:
            assert ReasonCode.SELF_AUDIT_FAILED in codes  # junk: fail closed
            assert d.provenance is not Provenance.STATED
            continue
        assert d.audit.quote_check is not None  # the guard checked it, whatever came back
        if d.audit.quote_bad:
            assert d.provenance is not Provenance.STATED
            assert codes & BAD_QUOTE
    # the unsupported claim is never a fact, whatever the model says about it
    assert decisions[1].provenance is not Provenance.STATED
