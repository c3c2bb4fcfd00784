"""The only place that knows both the ranker's proto and domain types, and the one builder
of index documents: the owners send their records (atom, turn, digest) and the ranker alone
derives the id, text, terms, time and signals it indexes from them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from google.protobuf import unknown_fields
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import memory_pb2
from memmesh.engines.retrieval_ranker.domain.documents import (
    NO_SIGNALS,
    SENTENCE_KINDS,
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
from memmesh.policy.standing import is_standing_constraint
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as pb
from memmesh.runtime.timeconv import micros_of

# Key segments, critical tokens and topics say what an atom is about: each such term
# counts this many times in the atom's term frequencies (name/key matching).
ABOUT_TERM_WEIGHT = 2

# The slot of a key the extractor's learned heads made: no word of what the atom is about.
LEARNED_SLOT = "learned"

# Wire type of strings and messages.
LENGTH_DELIMITED = 2
_KIND_OF_SOURCE = {"atom": Kind.ATOM, "turn": Kind.TURN, "digest": Kind.DIGEST}
# An upsert of at most this many atoms or digests is mapped on the event loop (maps_quickly).
QUICK_UPSERT_DOCUMENTS = 8


def doc_id_of(document: pb.Document) -> str:
    """The id a document is filed under: atom, turn, episode or thread id."""
    source = document.WhichOneof("source")
    if source == "atom":
        return document.atom.atom_id
    if source == "turn":
        return document.turn.turn_id
    if source == "digest":
        return document.digest.episode_id or document.digest.thread_id
    return ""


def _text(document: pb.Document) -> str:
    source = document.WhichOneof("source")
    if source == "atom":
        return document.atom.text
    if source == "turn":
        return document.turn.text
    # A digest: title, summary and key entities, one per line.
    digest = document.digest
    return "\n".join(line for line in (digest.title, digest.summary, *digest.key_entities) if line)


def _key_words(key: str) -> str:
    """What an atom's key says it is about: its slot ("identity.occupation" -> "occupation",
    "relationship.pet_dog" -> "pet dog"). The category before it is shared by too many
    atoms to tell them apart (with it, "relationship" put a sister near "dinner"), the value
    after it is in the atom's text already, and a slot the extractor did not name
    ("learned") says nothing."""
    parts = key.split(".")
    slot = parts[1] if len(parts) > 1 else ""
    return "" if slot == LEARNED_SLOT else slot.replace("_", " ")


def _dense_text(document: pb.Document) -> str:
    """The text a document's dense vector is made of: an atom's text with its key's words,
    so that "what do I do for a living" reaches "User is an accountant." through the key
    identity.occupation (seed 001 §2.11.2, semantic keys); else the indexed text."""
    if document.HasField("atom"):
        atom = document.atom
        return " ".join(part for part in (atom.text, _key_words(atom.key)) if part)
    return _text(document)


def _vector(document: pb.Document, analyzer: Analyzer) -> bytes:
    """The document's dense vector, by the encoder its kind is embedded by."""
    text = _dense_text(document)
    if _KIND_OF_SOURCE[str(document.WhichOneof("source"))] in SENTENCE_KINDS:
        return analyzer.sentence_vector(text)
    return analyzer.vector(text)


def _time_us(document: pb.Document) -> int:
    source = document.WhichOneof("source")
    if source == "atom":
        atom = document.atom
        return micros_of(atom.create_time) if atom.HasField("create_time") else 0
    if source == "turn":
        turn = document.turn
        return micros_of(turn.time) if turn.HasField("time") else 0
    digest = document.digest
    return micros_of(digest.update_time) if digest.HasField("update_time") else 0


def canonical_document(document: pb.Document, path: str = "document") -> pb.Document:
    """The stored form of a document: exactly one source, carrying its own id."""
    source = document.WhichOneof("source")
    if source is None:
        raise InvalidInput(
            [FieldViolation(f"{path}.source", "one of atom, turn or digest is required")]
        )
    if not doc_id_of(document):
        raise InvalidInput([FieldViolation(f"{path}.{source}", "has no id")])
    if source == "turn" and document.turn.exposure == memory_pb2.EXPOSURE_INTERNAL_ONLY:
        # An INTERNAL_ONLY turn must never become an excerpt: it is never indexed.
        raise InvalidInput(
            [FieldViolation(f"{path}.turn.exposure", "an INTERNAL_ONLY turn is not indexed")]
        )
    canonical = pb.Document()
    canonical.CopyFrom(document)
    return canonical


def _signals(document: pb.Document) -> AtomSignals:
    if not document.HasField("atom"):
        return NO_SIGNALS
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
    terms = analyzer.terms(_text(document))
    if document.HasField("atom"):
        atom = document.atom
        about = analyzer.terms(" ".join([atom.key, *atom.critical_tokens, *atom.topics]))
        terms.extend(about * ABOUT_TERM_WEIGHT)
    return tuple(terms)


def _constraint_text(document: pb.Document) -> str:
    """The atom's text when it is a standing constraint, else ''."""
    if not document.HasField("atom"):
        return ""
    atom = document.atom
    category = memory_pb2.AtomCategory.Name(atom.category).removeprefix("ATOM_CATEGORY_")
    return atom.text if is_standing_constraint(atom.key, atom.text, category) else ""


def index_doc(
    canonical: pb.Document,
    analyzer: Analyzer,
    vector: bytes | None = None,
    terms: tuple[str, ...] | None = None,
    payload: bytes | None = None,
) -> IndexDoc:
    """The domain document of a canonical document; its dense vector, terms and serialized
    form are those given (as stored), else derived from it."""
    superseded = canonical.atom.status == memory_pb2.ATOM_STATUS_SUPERSEDED
    if vector is None:
        vector = b"" if superseded else _vector(canonical, analyzer)
    return IndexDoc(
        # Interned: a digest's citations of a turn share the turn's own id string.
        doc_id=sys.intern(doc_id_of(canonical)),
        kind=_KIND_OF_SOURCE[str(canonical.WhichOneof("source"))],
        terms=_terms(canonical, analyzer) if terms is None else terms,
        time_us=_time_us(canonical),
        signals=_signals(canonical),
        payload=canonical.SerializeToString(deterministic=True) if payload is None else payload,
        constraint_text=_constraint_text(canonical),
        vector=vector,
        cites=tuple(map(sys.intern, canonical.digest.evidence_turn_ids)),
        addressed=analyzer.addressed(canonical.turn.text) if canonical.HasField("turn") else (),
    )


def _legacy_digest(document: pb.Document) -> pb.Document:
    """A digest stored before documents carried their source: id, text ("title\nsummary\n
    entity…"), evidence, time and thread were fields 1, 3, 6, 7 and 8 (unknown fields now).
    A Reindex stores it again in the current form."""
    values: dict[int, bytes] = {}
    evidence: list[str] = []
    for field in unknown_fields.UnknownFieldSet(document):  # type: ignore[attr-defined]  # iterable at run time; the stubs miss __iter__
        if field.wire_type == LENGTH_DELIMITED and field.field_number == 6:
            evidence.append(bytes(field.data).decode())
        elif field.wire_type == LENGTH_DELIMITED:
            values[field.field_number] = bytes(field.data)
    doc_id, thread_id = values.get(1, b"").decode(), values.get(8, b"").decode()
    lines = values.get(3, b"").decode().split("\n")
    digest = memory_pb2.Digest(
        thread_id=thread_id or doc_id,
        episode_id=doc_id if thread_id else "",
        title=lines[0],
        summary=lines[1] if len(lines) > 1 else "",
        key_entities=lines[2:],
        evidence_turn_ids=evidence,
    )
    if 7 in values:
        digest.update_time.CopyFrom(Timestamp.FromString(values[7]))
    return pb.Document(digest=digest)


class DocumentCodec:
    """Index documents to stored rows and back. A row keeps what was derived from its
    document at write time (the dense vector, the analysed terms), so reading a user's index
    parses each payload but analyses no text; a row without them (written before they were
    stored, or by a Reindex) or with terms of another analysis is derived again."""

    def __init__(self, analyzer: Analyzer) -> None:
        self._analyzer = analyzer
        # Raised when _terms (or ABOUT_TERM_WEIGHT) changes what a document's terms are, or
        # _dense_text what its vector is made of: a row of another form is derived again.
        self._form = "3"
        # Within a form, terms of another analysis and a vector other encoders made are each
        # derived again on their own: a new analysis of words does not embed every turn again
        # (the sentence encoder's time, seconds for a long history, on a user's first read).
        self._terms_tag = f"{self._form}.{analyzer.fingerprint}.{analyzer.vectors_id}"

    def encode(self, doc: IndexDoc, version: int = 0) -> StoredDoc:
        """The row of a document: its payload, vector and tagged terms (space-separated:
        index terms are runs of letters and digits)."""
        terms = f"{self._terms_tag} {' '.join(doc.terms)}"
        return StoredDoc(doc.doc_id, doc.kind.value, doc.payload, version, doc.vector, terms)

    def _reusable(self, stored: StoredDoc) -> tuple[tuple[str, ...] | None, bytes | None]:
        """The stored terms and vector that this analyzer would derive alike, else None."""
        tag, _, terms = stored.terms.partition(" ")
        form, _, made_by = tag.partition(".")
        fingerprint, _, vectors_id = made_by.partition(".")
        if form != self._form:
            return None, None
        reused_terms = (
            # Interned: the users' indexes in memory share one string per term.
            (tuple(map(sys.intern, terms.split(" "))) if terms else ())
            if fingerprint == self._analyzer.fingerprint
            else None
        )
        vector = stored.vector if vectors_id == self._analyzer.vectors_id else b""
        return reused_terms, vector or None

    def decode(self, stored: StoredDoc) -> IndexDoc:
        """The document of a row, with the vector and terms stored beside it when it has them."""
        document = pb.Document.FromString(stored.payload)
        if document.WhichOneof("source") is None:
            return index_doc(_legacy_digest(document), self._analyzer, stored.vector or None)
        terms, vector = self._reusable(stored)
        return index_doc(
            document,
            self._analyzer,
            vector,
            terms,
            # Rows hold canonical serializations (IndexDoc.payload as written).
            stored.payload,
        )


def maps_quickly(request: pb.UpsertRequest) -> bool:
    """Whether an upsert is a few documents none of which the sentence encoder embeds (a
    turn's atoms): mapped on the event loop, in well under a millisecond."""
    return len(request.documents) <= QUICK_UPSERT_DOCUMENTS and not any(
        _KIND_OF_SOURCE.get(str(document.WhichOneof("source"))) in SENTENCE_KINDS
        for document in request.documents
    )


def upsert_docs(request: pb.UpsertRequest, analyzer: Analyzer) -> list[IndexDoc]:
    """Domain documents of an upsert; an id may appear once per request."""
    docs, seen = [], set()
    for position, document in enumerate(request.documents):
        path = f"documents[{position}]"
        doc = index_doc(canonical_document(document, path), analyzer)
        if doc.doc_id in seen:
            source = document.WhichOneof("source")
            raise InvalidInput(
                [
                    FieldViolation(
                        f"{path}.{source}", f"id {doc.doc_id} appears twice in the request"
                    )
                ]
            )
        seen.add(doc.doc_id)
        docs.append(doc)
    return docs


def caps_of(request: pb.RetrieveRequest) -> Caps:
    """The caps of a retrieval (the field rules bound them)."""
    return Caps(request.caps.max_atoms, request.caps.max_turns, request.caps.max_digests)


def _add_candidates(
    field: RepeatedCompositeFieldContainer[pb.Candidate], candidates: Sequence[Candidate]
) -> None:
    for candidate in candidates:
        added = field.add(
            doc_id=candidate.doc.doc_id,
            relevance_micros=candidate.relevance_micros,
            relevance_tier=candidate.tier,
        )
        # Parsed in place: a Document built apart would be parsed, then copied in.
        added.document.MergeFromString(candidate.doc.payload)


def retrieve_response(retrieval: Retrieval) -> pb.RetrieveResponse:
    """A retrieval as the API returns it."""
    response = pb.RetrieveResponse(generic_query=retrieval.generic_query)
    _add_candidates(response.atoms, retrieval.atoms)
    _add_candidates(response.turns, retrieval.turns)
    _add_candidates(response.digests, retrieval.digests)
    _add_candidates(response.standing_constraints, retrieval.standing)
    return response


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
