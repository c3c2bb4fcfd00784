"""The only place that knows both the ranker's proto and domain types.

Documents are stored in a canonical form derived from their source (atom, turn or
digest), so an Upsert and a Reindex of the same source index exactly the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable

from memmesh.common.v1 import memory_pb2
from memmesh.engines.retrieval_ranker.domain.documents import (
    AtomSignals,
    Candidate,
    Caps,
    IndexDoc,
    Kind,
    Retrieval,
)
from memmesh.engines.retrieval_ranker.domain.text import Analyzer
from memmesh.engines.retrieval_ranker.domain.user_index import IndexSummary
from memmesh.engines.retrieval_ranker.ports import StoredDoc
from memmesh.errors import FieldViolation, InvalidInput
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb
from memmesh.runtime.timeconv import micros_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb

# Key segments, critical tokens and topics say what an atom is about: each such term
# counts this many times in the atom's term frequencies (name/key matching).
ABOUT_TERM_WEIGHT = 2

_KINDS = {kind.value for kind in Kind}


def document_of_atom(atom: memory_pb2.Atom) -> pb.Document:
    """The canonical document of an atom."""
    document = pb.Document(
        doc_id=atom.atom_id,
        kind=pb.DOCUMENT_KIND_ATOM,
        text=atom.text,
        atom=atom,
        evidence_turn_ids=atom.evidence_turn_ids,
    )
    if atom.HasField("create_time"):
        document.time.CopyFrom(atom.create_time)
    return document


def document_of_turn(turn: memory_pb2.Turn) -> pb.Document:
    """The canonical document of an archive turn."""
    document = pb.Document(doc_id=turn.turn_id, kind=pb.DOCUMENT_KIND_TURN, text=turn.text, turn=turn)
    if turn.HasField("time"):
        document.time.CopyFrom(turn.time)
    return document


def document_of_digest(digest: thread_pb.Digest) -> pb.Document:
    """The canonical document of a thread or episode digest: title, summary and key entities,
    one per line; an episode is filed under its own id and names its thread."""
    lines = [line for line in (digest.title, digest.summary, *digest.key_entities) if line]
    document = pb.Document(
        doc_id=digest.episode_id or digest.thread_id,
        kind=pb.DOCUMENT_KIND_DIGEST,
        text="\n".join(lines),
        evidence_turn_ids=digest.evidence_turn_ids,
        thread_id=digest.thread_id if digest.episode_id else "",
    )
    if digest.HasField("update_time"):
        document.time.CopyFrom(digest.update_time)
    return document


def canonical_document(document: pb.Document, path: str = "document") -> pb.Document:
    """The stored form of a document; its source's id must agree with doc_id."""
    if document.kind not in _KINDS:
        raise InvalidInput([FieldViolation(f"{path}.kind", "is not a known document kind")])
    if document.kind == pb.DOCUMENT_KIND_ATOM and document.HasField("atom"):
        atom = memory_pb2.Atom()
        atom.CopyFrom(document.atom)
        _claim_id(atom, "atom_id", document.doc_id, path)
        return document_of_atom(atom)
    if document.kind == pb.DOCUMENT_KIND_TURN and document.HasField("turn"):
        turn = memory_pb2.Turn()
        turn.CopyFrom(document.turn)
        _claim_id(turn, "turn_id", document.doc_id, path)
        return document_of_turn(turn)
    canonical = pb.Document(
        doc_id=document.doc_id,
        kind=document.kind,
        text=document.text,
        evidence_turn_ids=document.evidence_turn_ids,
        thread_id=document.thread_id,
    )
    if document.HasField("time"):
        canonical.time.CopyFrom(document.time)
    return canonical


def _claim_id(source: memory_pb2.Atom | memory_pb2.Turn, field: str, doc_id: str, path: str) -> None:
    own = getattr(source, field)
    if own and own != doc_id:
        raise InvalidInput([FieldViolation(f"{path}.doc_id", f"must equal {field} of the source")])
    setattr(source, field, doc_id)


def _signals(document: pb.Document) -> AtomSignals:
    if not document.HasField("atom"):
        return AtomSignals()
    atom = document.atom
    return AtomSignals(
        pinned=atom.pinned,
        provenance=int(atom.provenance),
        confidence_bp=atom.confidence_bp,
        last_use_us=micros_of(atom.last_use_time) if atom.HasField("last_use_time") else 0,
        use_count=atom.use_count,
        superseded=atom.status == memory_pb2.ATOM_STATUS_SUPERSEDED,
    )


def _terms(document: pb.Document, analyzer: Analyzer) -> tuple[str, ...]:
    if document.atom.status == memory_pb2.ATOM_STATUS_SUPERSEDED:
        # Kept for the checksum but never matched, and no weight in the term statistics.
        return ()
    terms = analyzer.terms(document.text)
    if document.HasField("atom"):
        atom = document.atom
        about = analyzer.terms(" ".join([atom.key, *atom.critical_tokens, *atom.topics]))
        terms.extend(about * ABOUT_TERM_WEIGHT)
    return tuple(terms)


def index_doc(canonical: pb.Document, analyzer: Analyzer) -> IndexDoc:
    """The domain document of a canonical document."""
    return IndexDoc(
        doc_id=canonical.doc_id,
        kind=Kind(canonical.kind),
        terms=_terms(canonical, analyzer),
        time_us=micros_of(canonical.time) if canonical.HasField("time") else 0,
        signals=_signals(canonical),
        payload=canonical.SerializeToString(deterministic=True),
    )


def decoder(analyzer: Analyzer) -> Callable[[StoredDoc], IndexDoc]:
    """Turns a stored row back into a domain document."""

    def decode(stored: StoredDoc) -> IndexDoc:
        return index_doc(pb.Document.FromString(stored.payload), analyzer)

    return decode


def upsert_docs(request: pb.UpsertRequest, analyzer: Analyzer) -> list[IndexDoc]:
    """Domain documents of an upsert; an id may appear once per request."""
    docs, seen = [], set()
    for position, document in enumerate(request.documents):
        path = f"documents[{position}]"
        if document.doc_id in seen:
            raise InvalidInput([FieldViolation(f"{path}.doc_id", "appears twice in the request")])
        seen.add(document.doc_id)
        docs.append(index_doc(canonical_document(document, path), analyzer))
    return docs


def caps_of(request: pb.RetrieveRequest) -> Caps:
    """The caps of a retrieval (the field rules bound them)."""
    return Caps(request.caps.max_atoms, request.caps.max_turns, request.caps.max_digests)


def _candidate(candidate: Candidate) -> pb.Candidate:
    return pb.Candidate(
        document=pb.Document.FromString(candidate.doc.payload),
        relevance_micros=candidate.relevance_micros,
        relevance_tier=candidate.tier,
    )


def retrieve_response(retrieval: Retrieval) -> pb.RetrieveResponse:
    """A retrieval as the API returns it."""
    return pb.RetrieveResponse(
        atoms=[_candidate(c) for c in retrieval.atoms],
        turns=[_candidate(c) for c in retrieval.turns],
        digests=[_candidate(c) for c in retrieval.digests],
        generic_query=retrieval.generic_query,
    )


def reindex_response(summary: IndexSummary) -> pb.ReindexResponse:
    return pb.ReindexResponse(document_count=summary.document_count, checksum=summary.checksum)


def describe_response(summary: IndexSummary) -> pb.DescribeIndexResponse:
    return pb.DescribeIndexResponse(
        document_count=summary.document_count,
        checksum=summary.checksum,
        atom_count=summary.counts[Kind.ATOM],
        turn_count=summary.counts[Kind.TURN],
        digest_count=summary.counts[Kind.DIGEST],
    )
