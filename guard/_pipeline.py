"""The guard: candidates -> evidence -> (self-audit) -> score -> policy -> decisions."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

import anyio
import anyio.to_thread

from mirage_guard.guard._audit import SelfAuditor
from mirage_guard.guard._decision import decide
from mirage_guard.guard._domain import (
    AuditSource,
    AuditVerdict,
    Candidate,
    Decision,
    EvidenceLink,
    QuoteCheck,
    Role,
    Turn,
)
from mirage_guard.guard._language import (
    LanguageDetector,
    Py3LangidDetector,
    fail_closed,
    uncovered_languages,
)
from mirage_guard.guard._limits import RequestLimits, check_limits
from mirage_guard.guard._observer import GuardObserver, NullObserver
from mirage_guard.guard._policy import Policy
from mirage_guard.guard._quotes import check_quotes, quote_links
from mirage_guard.guard.errors import (
    ConfigError,
    InputError,
    LLMError,
    LLMOutputError,
    ProfileError,
)
from mirage_guard.guard.evidence import (
    FEATURE_NAMES,
    Embedder,
    EvidenceLinker,
    known_people,
    plain,
    shared_minilm,
    shipped_support,
)
from mirage_guard.guard.llm import LLMClient, create_llm
from mirage_guard.guard.scoring import (
    AUDIT_FEATURES,
    QUOTE_FEATURES,
    CalibrationProfile,
    ProfileMode,
    ProfileStore,
    audit_features,
    quote_features,
)
from mirage_guard.guard.settings import AuditFailure, AuditMode, GuardSettings
from mirage_guard.prompts import load_prompt

_MODE_FOR_AUDIT = {
    AuditMode.SEPARATE: ProfileMode.SELF_AUDIT_SEPARATE,
    AuditMode.INLINE: ProfileMode.SELF_AUDIT_INLINE,
}
EVIDENCE_ONLY = "evidence-only"
_NULL_OBSERVER = NullObserver()
LinkerThread = Literal["dedicated", "pool"]
_R = TypeVar("_R")

log = logging.getLogger("mirage.guard")


class ActiveProfiles(NamedTuple):
    """The profiles a guard scores with, swapped together (one attribute: never half a reload)."""

    evidence: CalibrationProfile
    audit: CalibrationProfile | None


def validate_write(turns: Sequence[Turn], candidates: Sequence[Candidate]) -> None:
    """Typed errors for bad input, before anything is computed or written."""
    seen: set[str] = set()
    for t in turns:
        if t.id in seen:
            raise InputError(f"duplicate turn id {t.id!r}")
        seen.add(t.id)
    cids: set[str] = set()
    for c in candidates:
        if c.id in cids:
            raise InputError(f"duplicate candidate id {c.id!r}")
        cids.add(c.id)
    if candidates and not any(t.role is Role.USER for t in turns):
        # Not an error: every candidate will be generated. Callers are told in the reasons.
        return


def settings_policy(settings: GuardSettings) -> Policy:
    """The policy ``settings`` configure (what each provenance does, the stated floor)."""
    return Policy(
        inferred_action=settings.inferred_action,
        generated_action=settings.generated_action,
        stated_min=settings.stated_min,
    )


def settings_limits(settings: GuardSettings) -> RequestLimits:
    """The request limits ``settings`` configure."""
    return RequestLimits(
        max_turn_chars=settings.max_turn_chars,
        max_candidate_chars=settings.max_candidate_chars,
        max_sentences_per_request=settings.max_sentences_per_request,
    )


class Guard:
    """Tags every candidate attribute stated / inferred / generated and picks an action.

    Thread-safe; one instance serves many writes (turn embeddings are cached across them).
    The rule itself is the pure :func:`~mirage_guard.guard.decide`; ``metrics`` is any
    :class:`~mirage_guard.guard.GuardObserver` (the Prometheus one lives in the adapters layer).
    """

    def __init__(
        self,
        *,
        linker: EvidenceLinker,
        evidence_profile: CalibrationProfile,
        policy: Policy | None = None,
        auditor: SelfAuditor | None = None,
        audit_mode: AuditMode = AuditMode.OFF,
        audit_profile: CalibrationProfile | None = None,
        on_audit_failure: AuditFailure = AuditFailure.QUARANTINE,
        writer_model: str | None = None,
        metrics: GuardObserver | None = None,
        linker_thread: LinkerThread = "dedicated",
        limits: RequestLimits | None = None,
        language_detector: LanguageDetector | None = None,
        auditor_model: str | None = None,
    ) -> None:
        """``auditor_model``: an independent auditor (a model other than the writer) whose
        labels ``auditor`` gives; the audit profile must then be that model's own. Unset: the
        writer audits itself and the audit profile must be the writer's."""
        if auditor_model is not None and audit_mode is not AuditMode.SEPARATE:
            raise ConfigError(
                "an independent auditor labels in a call of its own: it needs audit_mode "
                f"'separate', not {audit_mode.value!r}"
            )
        if auditor_model is not None and auditor is not None and auditor.llm.model != auditor_model:
            raise ConfigError(  # its labels would be scored with another model's profile
                f"the auditor calls {auditor.llm.model!r}, not the auditor_model {auditor_model!r}"
            )
        if (
            auditor_model is None
            and auditor is not None
            and writer_model is not None
            and audit_mode is AuditMode.SEPARATE
            and auditor.llm.model != writer_model
        ):
            raise ConfigError(  # scored with the writer's profile, yet another model's labels
                f"the self-audit calls {auditor.llm.model!r}, not the writer_model "
                f"{writer_model!r}: a writer audits itself (or name the other model as "
                "auditor_model, an independent auditor)"
            )
        self.linker = linker
        self.auditor = auditor
        self.audit_mode = audit_mode
        self.writer_model = writer_model
        self.auditor_model = auditor_model
        self._active = self._checked(evidence_profile, audit_profile)
        self.policy = policy or Policy()
        self.on_audit_failure = on_audit_failure
        self.metrics = metrics
        self.limits = limits or RequestLimits()
        self.language_detector = language_detector or Py3LangidDetector()
        self._closed = False
        self._lock = threading.Lock()
        # "dedicated": one long-lived thread runs the encoder, so torch's OpenMP team stays warm
        # on it (~10 % faster for sequential writes, `mirage perf evidence`). "pool": anyio's
        # worker threads, so concurrent writes reach a coalescing embedder together and share
        # one forward pass (the sidecar: ~1.7x the writes/s of "dedicated", `mirage perf sidecar`).
        self._linker_thread = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirage-linker")
            if linker_thread == "dedicated"
            else None
        )

    # ------------------------------------------------------------------ profiles
    def _checked(
        self, evidence: CalibrationProfile, audit: CalibrationProfile | None
    ) -> ActiveProfiles:
        """The pair, if this guard may score with it; else ProfileMismatchError."""
        evidence.check_applicable(mode=ProfileMode.EVIDENCE, writer_model=None, prompt_version=None)
        embedder_names = profile_embedders(self.linker.embedder)
        evidence.check_embedder(embedder_names)  # another embedder's profile: refused
        support = self.linker.support_sha256
        evidence.check_support_model(support)  # ... or another claim-support model's
        evidence.check_features(FEATURE_NAMES)  # ... or one that reads a feature never computed
        if audit is not None:
            audit.check_embedder(embedder_names)
            audit.check_support_model(support)
            audit.check_features((*FEATURE_NAMES, *AUDIT_FEATURES, *QUOTE_FEATURES))
            # refuse another model's (or another prompt's) profile, loudly
            audit.check_applicable(
                mode=_MODE_FOR_AUDIT.get(self.audit_mode, ProfileMode.SELF_AUDIT_SEPARATE),
                writer_model=self.labeller_model,
                prompt_version=self.auditor.prompt_version
                if self.auditor
                else _inline_prompt_version()
                if self.audit_mode is AuditMode.INLINE
                else audit.prompt_version,
            )
        return ActiveProfiles(evidence, audit)

    @property
    def labeller_model(self) -> str | None:
        """The model whose labels the audit profile calibrates: the independent auditor when
        there is one, else the writer."""
        return self.auditor_model or self.writer_model

    def uncalibrated_audit(
        self, *, api_base: str | None = None, store: ProfileStore | None = None
    ) -> str | None:
        """Why this guard asks for an audit whose labels no profile calibrates (None: a profile
        does, or no audit is asked for, or no model is configured to label): every decision is
        then uncalibrated, and the labels, paid for on every write, may only make a decision
        more cautious. Said at start and after a reload (the drop-in and the sidecar log it as
        a warning). ``api_base``: the labeller's, for the command it names; ``store``: the
        profiles, to name one of the same model fitted for another prompt or mode."""
        model = self.labeller_model
        if self.audit_mode is AuditMode.OFF or self._active.audit is not None or not model:
            return None
        role = "independent auditor" if self.auditor_model else "writer model"
        prompt = self.auditor.prompt_version if self.auditor else _inline_prompt_version()
        flag = " --as-auditor" if self.auditor_model else ""
        base = f" --api-base {api_base}" if api_base else ""
        fit = (
            f"Fit one: `mirage calibrate job`, or `mirage calibrate audit --model {model}{flag}"
            f"{base} --out V.jsonl` then `mirage calibrate fit --verdicts V.jsonl --profile-dir "
            "DIR`"
            if self.audit_mode is AuditMode.SEPARATE
            # inline labels are of the writer's own extractions: only labelled traffic has them
            else "Fit its self_audit_inline profile on your own traffic once the decision log "
            "holds inline-mode writes: "
            f"`mirage report label-sample --writer-model {model} --out S.jsonl --verdicts-out "
            "V.jsonl`, label S.jsonl (`mirage report label S.jsonl`), then `mirage calibrate fit "
            "--verdicts V.jsonl --data S.jsonl --profile-dir DIR`"
        )
        said = (
            f"MIRAGE_AUDIT_MODE={self.audit_mode.value}, but no calibration profile for the "
            f"{role} {model!r} and prompt {prompt} is shipped or in MIRAGE_PROFILE_DIR: every "
            "decision is uncalibrated (evidence-only; the audit may only make it more cautious). "
            + fit
        )
        others = [p for p in (store.all() if store else []) if p.writer_model == model]
        if others:  # e.g. the auditor fitted without --as-auditor: another prompt's version
            said += (
                f"; {model!r} has profiles for another prompt or mode, which are not used: "
                + ", ".join(f"{p.profile_id} ({p.mode.value}, {p.prompt_version})" for p in others)
            )
        return said

    @property
    def evidence_profile(self) -> CalibrationProfile:
        return self._active.evidence

    @property
    def audit_profile(self) -> CalibrationProfile | None:
        return self._active.audit

    @property
    def profiles(self) -> ActiveProfiles:
        """The profiles in use now (one consistent pair)."""
        return self._active

    def use_profiles(
        self, evidence: CalibrationProfile, audit: CalibrationProfile | None
    ) -> ActiveProfiles:
        """Swap the profiles atomically. A pair this guard may not use (another model's,
        prompt's, mode's or embedder's profile) raises ProfileMismatchError and changes
        nothing; a write in flight finishes with the pair it started with."""
        checked = self._checked(evidence, audit)
        with self._lock:
            self._active = checked
        return checked

    def reload_profiles(self, store: ProfileStore) -> ActiveProfiles:
        """Pick this guard's profiles from ``store`` (as :meth:`from_settings` does) and swap
        them in atomically; see :meth:`use_profiles`."""
        evidence = store.evidence_only(profile_embedders(self.linker.embedder))
        audit = _audit_profile_in(
            store, self.audit_mode, self.labeller_model, self.auditor.prompt_version
            if self.auditor else _inline_prompt_version(),
        )  # fmt: skip
        return self.use_profiles(evidence, audit)

    def with_policy(self, policy: Policy) -> Guard:
        """A guard that decides with ``policy`` and shares everything else with this one: the
        linker (its models and caches), the profiles in use now, the auditor and the limits.
        Closing either leaves the other open. (`mirage calibrate stated-floor` scores one set
        under several floors without loading the models again.)"""
        active = self._active
        return Guard(
            linker=self.linker,
            evidence_profile=active.evidence,
            policy=policy,
            auditor=self.auditor,
            audit_mode=self.audit_mode,
            audit_profile=active.audit,
            on_audit_failure=self.on_audit_failure,
            writer_model=self.writer_model,
            metrics=self.metrics,
            linker_thread="dedicated" if self._linker_thread is not None else "pool",
            limits=self.limits,
            language_detector=self.language_detector,
            auditor_model=self.auditor_model,
        )

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_settings(
        cls,
        settings: GuardSettings | None = None,
        *,
        writer_llm: LLMClient | None = None,
        auditor_llm: LLMClient | None = None,
        embedder: Embedder | None = None,
        metrics: GuardObserver | None = None,
        profiles: ProfileStore | None = None,
        linker_thread: LinkerThread = "dedicated",
    ) -> Guard:
        """``auditor_llm`` (or MIRAGE_AUDITOR_MODEL): an independent auditor that labels every
        write's candidates in place of the writer, scored with its own profile."""
        s = settings or GuardSettings.from_env()
        store = profiles or ProfileStore(_profile_dir(s.profile_dir))
        writer_model = writer_llm.model if writer_llm else s.writer_model
        separate = s.audit_mode is AuditMode.SEPARATE
        auditor_model = auditor_llm.model if auditor_llm else s.auditor_model
        if auditor_llm is None and s.auditor_model and separate:
            auditor_llm = create_llm(
                s.auditor_model, api_base=s.auditor_api_base, timeout_s=s.audit_timeout_s
            )
        elif auditor_llm is None and separate:  # the writer audits itself
            if writer_llm is None and s.writer_model:
                writer_llm = create_llm(
                    s.writer_model, api_base=s.writer_api_base, timeout_s=s.writer_timeout_s
                )
            auditor_llm = writer_llm
        auditor = (
            (SelfAuditor.independent if auditor_model else SelfAuditor)(
                auditor_llm, timeout_s=s.audit_timeout_s
            )
            if auditor_llm is not None and separate
            else None
        )
        prompt_version = auditor.prompt_version if auditor else _inline_prompt_version()
        audit_profile = _audit_profile_in(
            store, s.audit_mode, auditor_model or writer_model, prompt_version
        )
        return cls(
            linker=_default_linker(
                embedder, s.linker_cache_bytes, s.support_precision, s.support_dir
            ),
            evidence_profile=store.evidence_only(profile_embedders(embedder or shared_minilm())),
            policy=settings_policy(s),
            auditor=auditor,
            audit_mode=s.audit_mode,
            audit_profile=audit_profile,
            on_audit_failure=s.on_audit_failure,
            writer_model=writer_model,
            auditor_model=auditor_model,
            metrics=metrics,
            linker_thread=linker_thread,
            limits=settings_limits(s),
        )

    # ------------------------------------------------------------------ tagging
    @contextmanager
    def _stage(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        except Exception as exc:
            self._observer.on_error(stage, exc)
            raise
        finally:
            self._observer.on_stage(stage, time.perf_counter() - start)

    async def atag(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        *,
        writer_model: str | None = None,
        audit: Sequence[AuditVerdict] | None = None,
        user_name: str | None = None,
        audit_prompt: str | None = None,
    ) -> list[Decision]:
        """Decide every candidate of one write. ``audit`` passes inline self-audit verdicts;
        ``user_name``, the user's own name when the caller knows it: a claim that names the user
        ("Ingrid worked as a pharmacist") does not assert a name the user never said.
        ``audit_prompt``: the version of the prompt ``audit`` came from (the extraction prompt's,
        in inline mode), so the decisions can name whose labels they are (``audit_source``)."""
        if self._closed:
            raise InputError("this Guard is closed")
        validate_write(turns, candidates)
        if not candidates:
            return []
        check_limits(turns, candidates, self.limits)  # before the shared encoder sees anything
        with self._stage("linker"):
            links = await self._run_linker(turns, candidates, user_name)
        verdicts, audit_error = await self._verdicts(turns, candidates, audit)
        # an independent auditor's profile scores its own labels only, never a caller's
        by_auditor = audit is None and self.auditor_model is not None
        with self._stage("score"):  # scoring the quotes against their claims is part of it
            spans = await self._quote_spans(candidates, verdicts)
            said = {t.id: plain(t.content) for t in turns if t.role is Role.USER}
            decisions = self._decide(
                candidates, links, verdicts, audit_error, writer_model, spans, said, user_name,
                by_auditor=by_auditor,
            )  # fmt: skip
            source = self._audit_source(audit, writer_model, audit_prompt) if verdicts else None
            if source is not None:
                decisions = [
                    d.model_copy(update={"audit_source": source}) if d.audit is not None else d
                    for d in decisions
                ]
            decisions = self._fail_closed_on_language(turns, candidates, decisions)
        # metrics by writer; with an independent auditor and no writer configured, by auditor
        # (its profile is the one missing or drifting), never the "none" series
        self._observer.on_decisions(
            decisions, writer_model=writer_model or self.writer_model or self.auditor_model
        )
        return decisions

    def tag(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        *,
        writer_model: str | None = None,
        audit: Sequence[AuditVerdict] | None = None,
        user_name: str | None = None,
        audit_prompt: str | None = None,
    ) -> list[Decision]:
        """Synchronous twin of :meth:`atag` (do not call from inside a running event loop)."""

        async def _run() -> list[Decision]:
            return await self.atag(
                turns,
                candidates,
                writer_model=writer_model,
                audit=audit,
                user_name=user_name,
                audit_prompt=audit_prompt,
            )

        return anyio.run(_run)

    def link(
        self, turns: Sequence[Turn], candidates: Sequence[Candidate], user_name: str | None = None
    ) -> list[EvidenceLink]:
        validate_write(turns, candidates)
        return self.linker.link(turns, candidates, user_name)

    async def _verdicts(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        audit: Sequence[AuditVerdict] | None,
    ) -> tuple[dict[str, AuditVerdict], LLMError | None]:
        if audit is not None:  # the guard checks every quote itself, whoever parsed it
            ids = {c.id for c in candidates}
            stray = sorted({v.candidate_id for v in audit} - ids)
            if stray:  # a verdict for no candidate was dropped silently: the caller's ids are off
                raise InputError(
                    f"audit verdicts name {len(stray)} candidate ids this write has not (first: "
                    f"{stray[0]!r}): each verdict's candidate_id must be a candidate's id"
                )
            return {v.candidate_id: v for v in check_quotes(audit, turns)}, None
        if self.audit_mode is not AuditMode.SEPARATE or self.auditor is None:
            return {}, None
        try:
            with self._stage("audit"):
                verdicts = await self.auditor.audit(turns, candidates)
        except Exception as exc:  # any auditor failure fails closed, typed
            error = (
                exc
                if isinstance(exc, LLMError)
                else LLMOutputError(
                    f"self-audit failed unexpectedly: {type(exc).__name__}",
                    model=self.labeller_model,
                )
            )
            # said like a writer's failure (the error's type only: its text may quote the
            # conversation); the write's claims fail closed
            log.warning(
                "the self-audit by %s failed (%s): %s",
                self.labeller_model,
                type(error).__name__,
                "the write is refused"
                if self.on_audit_failure is AuditFailure.ERROR
                else "no claim of the write is stored as a stated fact",
            )
            if self.on_audit_failure is AuditFailure.ERROR:
                if error is exc:
                    raise
                raise error from exc
            return {}, error
        return {v.candidate_id: v for v in check_quotes(verdicts, turns)}, None

    def _audit_source(
        self,
        passed: Sequence[AuditVerdict] | None,
        writer_model: str | None,
        audit_prompt: str | None,
    ) -> AuditSource | None:
        """Whose labels this write's verdicts are, when the guard knows it:

        - its own audit call's: the model it called (the independent auditor, else the writer)
          with the audit prompt; not when the writer audits itself and the write names another
          writer (the self-audit prompt's "you wrote" is then untrue of the claims);
        - in inline mode, labels passed with the version of the prompt they came from (the
          drop-in's extraction call): the writer's, named for the write or configured.

        None otherwise: no model and prompt of this guard vouch for a caller's own verdicts."""
        if passed is None and self.audit_mode is AuditMode.SEPARATE and self.auditor is not None:
            called = self.auditor_model or self.auditor.llm.model
            if self.auditor_model is None and writer_model and writer_model != called:
                return None
            return AuditSource(
                model=called,
                prompt_version=self.auditor.prompt_version,
                mode=ProfileMode.SELF_AUDIT_SEPARATE.value,
            )
        writer = writer_model or self.writer_model
        if passed is not None and self.audit_mode is AuditMode.INLINE and audit_prompt and writer:
            return AuditSource(
                model=writer, prompt_version=audit_prompt, mode=ProfileMode.SELF_AUDIT_INLINE.value
            )
        return None

    async def _quote_spans(
        self, candidates: Sequence[Candidate], verdicts: dict[str, AuditVerdict]
    ) -> dict[str, EvidenceLink]:
        """Claims scored against their verified quotes (only for a profile that reads them)."""
        audit = self._active.audit
        if not verdicts or audit is None or not reads_quotes(audit):
            return {}
        return await self._in_linker_thread(quote_links, self.linker, candidates, verdicts)

    def _decide(
        self,
        candidates: Sequence[Candidate],
        links: Sequence[EvidenceLink],
        verdicts: dict[str, AuditVerdict],
        audit_error: LLMError | None,
        writer_model: str | None,
        spans: dict[str, EvidenceLink] | None = None,
        said: dict[str, str] | None = None,
        user_name: str | None = None,
        *,
        by_auditor: bool = False,
    ) -> list[Decision]:
        """``said``: the user turns' texts by id (the word rules read the whole linked turn);
        ``by_auditor``: the verdicts are the independent auditor's (not a caller's)."""
        model = writer_model or self.writer_model
        # whose labels the verdicts are: the profile must be that model's; verdicts a caller
        # passes with an auditor configured are nobody's this guard knows (named if the write
        # names its writer)
        labeller = self.auditor_model if by_auditor else model
        if labeller is None and self.auditor_model is not None and verdicts:
            labeller = "unnamed (verdicts passed in)"
        active = self._active  # one read: a concurrent reload never mixes two profile sets
        use_audit_profile = (
            active.audit is not None
            and self.audit_mode is not AuditMode.OFF
            # an independent auditor labels every writer's claims with its own profile; a writer
            # auditing itself has a profile for its own claims only; verdicts a caller passes
            # with an auditor configured are no model's this guard has a profile for
            and (
                by_auditor
                if self.auditor_model is not None
                else writer_model is None or writer_model == active.audit.writer_model
            )
            and all(c.id in verdicts for c in candidates)
        )
        profile = active.audit if use_audit_profile and active.audit else active.evidence
        # the names the user gives others anywhere in the conversation ("my girlfriend Jess"), so
        # a later "jess is vegan" is read as Jess's
        people = known_people((said or {}).values(), user_name)
        rows: list[dict[str, float]] = []
        for c, link in zip(candidates, links, strict=True):
            row = dict(link.features)
            if profile.mode.uses_audit:
                row.update(audit_features(verdicts[c.id]))
                row.update(quote_features(verdicts[c.id], (spans or {}).get(c.id)))
            rows.append(row)
        p_oi = profile.oi_model.predict_proba(profile.oi_model.matrix(rows))
        p_stated = profile.stated_model.predict_proba(profile.stated_model.matrix(rows))
        if profile.mode.uses_audit:
            # without a verified quote of a writer whose quotes the profile trusts, the
            # self-audit may only make a decision more cautious than the evidence alone
            ev = active.evidence
            ev_oi = ev.oi_model.predict_proba(ev.oi_model.matrix(rows))
            ev_stated = ev.stated_model.predict_proba(ev.stated_model.matrix(rows))
            for i, c in enumerate(candidates):
                if not counts_for(profile, verdicts[c.id]):
                    p_oi[i] = max(p_oi[i], ev_oi[i])
                    p_stated[i] = min(p_stated[i], ev_stated[i])
        wants_calibration = self.audit_mode is not AuditMode.OFF and labeller is not None
        calibrated = (not wants_calibration) or profile.mode.uses_audit
        return [
            decide(
                c,
                link,
                p_oi=float(p_oi[i]),
                p_stated=float(p_stated[i]),
                profile=profile,
                policy=self.policy,
                verdict=verdicts.get(c.id),
                audit_error=audit_error,
                calibrated=calibrated,
                writer_model=labeller,
                turn_text=(said or {}).get(link.turn_id or ""),
                user_name=user_name,
                people=people,
            )
            for i, (c, link) in enumerate(zip(candidates, links, strict=True))
        ]

    def _fail_closed_on_language(
        self, turns: Sequence[Turn], candidates: Sequence[Candidate], decisions: list[Decision]
    ) -> list[Decision]:
        """Generated, never stated, where the profile does not cover the language."""
        covered = self.evidence_profile.languages
        uncovered = uncovered_languages(turns, candidates, covered, self.language_detector)
        if not uncovered:
            return decisions
        return [
            fail_closed(d, uncovered[d.candidate.id], covered, self.policy)
            if d.candidate.id in uncovered
            else d
            for d in decisions
        ]

    @property
    def _observer(self) -> GuardObserver:
        return self.metrics if self.metrics is not None else _NULL_OBSERVER

    def describe(self) -> dict[str, Any]:
        return {
            "evidence_profile": self.evidence_profile.profile_id,
            "audit_mode": self.audit_mode.value,
            "audit_profile": self.audit_profile.profile_id if self.audit_profile else None,
            "writer_model": self.writer_model,
            "auditor_model": self.auditor_model,
            "policy": self.policy.model_dump(mode="json"),
        }

    async def _run_linker(
        self, turns: Sequence[Turn], candidates: Sequence[Candidate], user_name: str | None = None
    ) -> list[EvidenceLink]:
        return await self._in_linker_thread(self.linker.link, turns, candidates, user_name)

    async def _in_linker_thread(self, fn: Callable[..., _R], *args: Any) -> _R:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another anyio backend (trio): use its thread pool
            loop = None
        if loop is not None and self._linker_thread is not None:
            context = contextvars.copy_context()  # the caller's cache namespace goes along
            return await loop.run_in_executor(self._linker_thread, context.run, fn, *args)
        return await anyio.to_thread.run_sync(fn, *args)

    def close(self) -> None:
        self._closed = True
        if self._linker_thread is not None:
            self._linker_thread.shutdown(wait=False)


def _profile_dir(path: Path | None) -> Path | None:
    """MIRAGE_PROFILE_DIR as given: a file there is a :class:`ConfigError`; a directory not
    made yet (a calibration job may make it) is said in a warning, since a mistyped one leaves
    every writer model on the evidence-only profile, uncalibrated, without another word."""
    if path is not None and path.exists() and not path.is_dir():
        raise ConfigError(f"MIRAGE_PROFILE_DIR: {path} is a file, not a directory of profiles")
    if path is not None and not path.exists():
        log.warning(
            "MIRAGE_PROFILE_DIR %s does not exist: only the shipped profiles are used", path
        )
    return path


def profile_embedders(embedder: Embedder) -> tuple[str, ...]:
    """The embedder names whose calibration profiles apply to ``embedder``: its own, and the one
    it declares to stand in for (``profile_embedder``: a test double or a re-packaged export of
    the same model), if any."""
    names = [embedder.name]
    stand_in = getattr(embedder, "profile_embedder", None)
    if isinstance(stand_in, str) and stand_in not in names:
        names.append(stand_in)
    return tuple(names)


def _audit_profile_in(
    store: ProfileStore, mode: AuditMode, writer_model: str | None, prompt_version: str
) -> CalibrationProfile | None:
    """The writer's self-audit profile in ``store``; None when none fits (every decision then
    says calibrated=False)."""
    if mode is AuditMode.OFF or not writer_model:
        return None
    try:
        return store.for_writer(writer_model, _MODE_FOR_AUDIT[mode], prompt_version)
    except ProfileError:
        return None


def reads_quotes(profile: CalibrationProfile) -> bool:
    """The profile was fitted with the quote features (a profile from before quotes: no)."""
    return all(f in profile.oi_model.features for f in QUOTE_FEATURES)


def counts_for(profile: CalibrationProfile, verdict: AuditVerdict) -> bool:
    """May this verdict make the decision *less* cautious than the evidence alone? Only with a
    quote verified in a user turn, under a profile that trusts this writer's quotes."""
    return verdict.quote_check is QuoteCheck.VALID and profile.trusts_quotes


def _inline_prompt_version() -> str:
    try:
        return load_prompt("extract_candidates").ref
    except LookupError:
        return "extract_candidates@missing"


def _default_linker(
    embedder: Embedder | None,
    cache_bytes: int,
    precision: str = "fp32",
    support_dir: Path | None = None,
) -> EvidenceLinker:
    """MiniLM (or the given embedder) with the shipped claim-support model (or the one in
    ``support_dir``) when the embedder gives token vectors (MiniLM does); without them the
    support signal is lexical only."""
    emb = embedder or shared_minilm()
    tokens = hasattr(emb, "encode_with_tokens")
    support = shipped_support(precision, support_dir) if tokens else None
    return EvidenceLinker(emb, cache_bytes=cache_bytes, support=support)
