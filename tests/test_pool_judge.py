"""The offline pool judge of a configuration search (agents/pool_judge.py, ``PoolJudge.baseline``):
IDF-weighted evidence, titles and names, and the cap relative to the best pooled passage."""

from __future__ import annotations

from benchsmith.agents.pool_judge import PoolJudge, passage_support, query_names, weighted_query_terms
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.agents.text import PassageStatistics
from benchsmith.graphs.select.judging import judge_batch
from benchsmith.stores.formats.beir import BenchmarkQuery
from benchsmith.stores.persistence.llm_cache import LLMCache

# A small API reference: (chunk id, title, text). Words such as "file", "return", "archive"
# occur in most chunks; each question's answer holds its rarer words.
REFERENCE = [
    (
        "extract",
        "archive › extract_all",
        "Extract every member of the archive into the target directory. Members whose name already exists there "
        "are overwritten unless skip_existing is true.",
    ),
    (
        "open",
        "archive › open",
        "Open an archive file and return an Archive object. The file must exist and be readable.",
    ),
    ("names", "archive › Archive.names", "Return the names of the files in the archive, in the order they were added."),
    ("close", "archive › Archive.close", "Close the archive file. Further calls on the archive raise an error."),
    (
        "compress",
        "archive › Archive.add",
        "Add a file to the archive. The compression level runs from 0 (store only) to 9 (smallest); "
        "the default level is 6.",
    ),
    (
        "password",
        "archive › Archive.set_password",
        "Encrypt the members added after this call with the given password. Reading them back needs the same password.",
    ),
    (
        "intro",
        "archive",
        "The archive module reads and writes archive files. Each file in an archive is a member with a name and a "
        "size.",
    ),
    (
        "checksum",
        "archive › Archive.verify",
        "Compute the checksum of every member and compare it with the stored one. Return the names of the members "
        "whose checksum differs.",
    ),
    ("errors", "archive › ArchiveError", "Raised when a file is not a valid archive or a member cannot be read."),
    (
        "temp",
        "archive › temporary_copy",
        "Return the path of a temporary copy of the archive file; the copy is removed when the program exits.",
    ),
]
STATISTICS = PassageStatistics(f"{title} {text}" for _, title, text in REFERENCE)
# (question, ids of the chunks that answer it): complete labels over the whole reference.
LABELLED = [
    ("How do I stop extraction from overwriting members that already exist in the target directory?", {"extract"}),
    ("Which compression level gives the smallest archive, and what is the default?", {"compress"}),
    ("Can I protect the archive members with a password?", {"password"}),
    ("How do I find members whose stored checksum does not match?", {"checksum"}),
    ("What is raised when the file is not a valid archive?", {"errors"}),
    ("In which order does Archive.names list the files?", {"names"}),
]


def judged(question: str, chunks=REFERENCE, statistics=STATISTICS, titles: bool = True) -> dict[str, list[str]]:
    """{chunk id: facts} of the chunks judged relevant."""
    verdicts = PoolJudge(len(chunks)).baseline(
        history=[],
        question=question,
        passages=[text for _, _, text in chunks],
        passage_titles=[title for _, title, _ in chunks] if titles else None,
        statistics=statistics,
    )
    return {
        chunk_id: verdict.facts for (chunk_id, _, _), verdict in zip(chunks, verdicts.judgments) if verdict.relevant
    }


def test_the_answer_is_relevant_and_a_chunk_sharing_only_common_words_is_not():
    question = "How do I stop extraction from overwriting members that already exist in the target directory?"
    relevant = judged(question)
    assert list(relevant) == ["extract"]
    # "open" shares "exist" and "file"-like words of the question; "intro" shares "members": common words.
    weights = weighted_query_terms([], question, STATISTICS)
    assert weights["target"] > weights["member"]  # one chunk says "target", most say "member"
    # The facts are the answer's own sentences, verbatim.
    text = REFERENCE[0][2]
    assert relevant["extract"] and all(fact in text for fact in relevant["extract"])
    assert any("overwritten unless skip_existing" in fact for fact in relevant["extract"])


def test_an_unrelated_chunk_among_many_sharing_the_topic_is_not_relevant():
    # The demo's failure: 16 of 17 pooled chunks relevant, one unrelated among them. Here 15
    # chunks hold half of the question's words in one sentence (the common ones: archive, file,
    # give), one is off topic yet shares even more of them, and one answers: only it counts.
    filler = [
        (f"filler-{number}", f"archive › helper_{number}", f"Helper {number} gives information about an archive file.")
        for number in range(15)
    ]
    unrelated = ("weather", "weather › records", "The weather archive file gives the smallest rainfall of each day.")
    pool = [REFERENCE[4], *filler, unrelated]
    assert len(pool) == 17
    statistics = PassageStatistics(f"{title} {text}" for _, title, text in pool + REFERENCE)
    relevant = judged("Which compression level gives the smallest archive file?", pool, statistics)
    assert list(relevant) == ["compress"]


def test_the_title_and_a_written_name_are_evidence():
    question = "Does temporary_copy delete the copy when the program ends?"
    assert query_names([], question) == {"temporary_copi"}
    weights = weighted_query_terms([], question, STATISTICS)
    text = REFERENCE[-1][2]
    with_title = passage_support(weights, query_names([], question), text, REFERENCE[-1][1])
    without = passage_support(weights, query_names([], question), text, "")
    assert with_title.window > without.window and with_title.support > without.support + 0.1
    assert "temp" in judged(question)


def test_a_passage_below_the_best_pooled_support_is_not_relevant():
    # Both share the question's rare words, but only one holds them together in one place.
    question = "How do I verify the checksum of every member?"
    pool = [
        REFERENCE[7],
        (
            "scattered",
            "archive › misc",
            "Verify the archive. Other notes follow.\n\nA member may be large.\n\n"
            "Checksums are described elsewhere in the manual.",
        ),
    ]
    assert list(judged(question, pool)) == ["checksum"]


def test_a_terse_follow_up_borrows_the_previous_questions_terms():
    verdicts = PoolJudge(1).baseline(
        history=[("Can I protect the archive members with a password?", "")],
        question="and read them back?",
        passages=[REFERENCE[5][2]],
        passage_titles=[REFERENCE[5][1]],
        statistics=STATISTICS,
    )
    assert verdicts.judgments[0].relevant


def test_precision_and_recall_on_a_small_labelled_reference_stay_above_a_bound():
    true_positives = false_positives = false_negatives = 0
    for question, gold in LABELLED:
        relevant = set(judged(question))
        true_positives += len(relevant & gold)
        false_positives += len(relevant - gold)
        false_negatives += len(gold - relevant)
    precision = true_positives / (true_positives + false_positives)
    recall = true_positives / (true_positives + false_negatives)
    assert precision >= 0.8 and recall >= 0.8, (precision, recall)


def test_judge_batch_gives_the_offline_judge_the_records_titles_and_statistics(tmp_path):
    question = "Does temporary_copy delete the copy when the program ends?"
    records = [
        {
            "pair": f"q::{chunk_id}",
            "query_id": "q",
            "key": chunk_id,
            "chunk_id": chunk_id,
            "doc_id": "archive",
            "title": title,
            "text": text,
        }
        for chunk_id, title, text in REFERENCE
    ]
    store = LLMCache(tmp_path / "verdicts.sqlite")
    try:
        results = judge_batch(
            records,
            BenchmarkQuery("q", question, question),
            [("baseline", ModelSeam(None))],
            store,
            1,
            statistics=STATISTICS,
        )
    finally:
        store.close()
    assert [result["chunk_id"] for result in results if result["relevant"]] == ["temp"]
