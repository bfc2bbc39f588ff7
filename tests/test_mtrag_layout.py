"""Benchmarks in MTRAG's layouts (stores/formats/mtrag.py), written here by the test in the shapes of
github.com/IBM/mt-rag-benchmark: the conversation layout of mtrag-human (conversations.json,
retrieval_tasks/<domain>/qrels/dev.tsv, corpora/passage_level/<domain>.jsonl) and the task layout
of mtragun-human (generation_tasks/reference.jsonl, retrieval_tasks/qrels/<domain>.tsv).
`evaluate` reads them, its numbers are ir_measures' on the file's own qrels, and the turns
without qrels are counted and compared by their top retrieved score."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest

import benchsmith
from benchsmith.evals.quality_gate import GATE_CLASSES
from benchsmith.stores.errors import InputError
from benchsmith.stores.formats.beir import load_benchmark
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.jsonl import read_json
from benchsmith.stores.persistence.workspace import Workspace

TOPICS = {
    "cardinals": "The Arizona Cardinals play football in Arizona; they once played in London.",
    "patriots": "The New England Patriots coach is Bill Belichick, hired in 2000.",
    "steelers": "The Pittsburgh Steelers won six Super Bowls, the most of any team.",
    "playoffs": "Twelve teams qualify for the NFL playoffs, six from each conference.",
    "stadium": "Twickenham Stadium in London hosted an NFL International Series game.",
    "draft": "The NFL draft assigns college players to teams in reverse order of standing.",
}


def user(text: str, answerability: str, question_type: str, multi_turn: str) -> dict:
    return {
        "speaker": "user",
        "text": text,
        "timestamp": 1724708469,
        "enrichments": {"Question Type": [question_type], "Multi-Turn": [multi_turn], "Answerability": [answerability]},
    }


def agent(text: str, relevant: list[str]) -> dict:
    return {
        "speaker": "agent",
        "text": text,
        "timestamp": 1724708471,
        "contexts": [
            {
                "document_id": doc,
                "text": TOPICS[doc],
                "title": doc,
                "score": 18.7,
                "feedback": {"relevant": {"annotator": {"value": "yes", "timestamp": 1724708654}}},
            }
            for doc in relevant
        ],
    }


CONVERSATIONS = [
    {
        "conversation_id": "conv-a",
        "author": "annotator",
        "domain": "mt-rag-nfl-elser-512-100-20240503",
        "retriever": {"collection": {"name": "mt-rag-nfl-elser-512-100-20240503"}},
        "messages": [
            user("Who coaches the Patriots?", "ANSWERABLE", "Factoid", "N/A"),
            agent("Bill Belichick.", ["patriots"]),
            user(
                "Which team won the most Super Bowls and how many teams make the playoffs?",
                "ANSWERABLE",
                "Composite",
                "Follow-up",
            ),
            agent("The Steelers; twelve teams.", ["steelers", "playoffs"]),
            user("What will the Patriots eat for dinner tonight?", "UNANSWERABLE", "Factoid", "Follow-up"),
            agent("I do not have specific information.", []),
        ],
    },
    # MTRAG's conversations.json names no conversation id: the retrieval task files give it.
    {
        "author": "annotator",
        "retriever": {"collection": {"name": "mt-rag-nfl-elser-512-100-20240503"}},
        "messages": [
            user("Where do the Arizona Cardinals play football?", "PARTIAL", "Explanation", "N/A"),
            agent("In Arizona, once in London.", ["cardinals", "stadium"]),
            user("Thanks!", "CONVERSATIONAL", "Non-Question", "Follow-up"),
            agent("You are welcome.", []),
        ],
    },
]
QRELS = [
    ("conv-a<::>1", "patriots"),
    ("conv-a<::>2", "steelers"),
    ("conv-a<::>2", "playoffs"),
    ("hash-b<::>1", "cardinals"),
    ("hash-b<::>1", "stadium"),
]


def write_mtrag(root: Path, domain: str = "nfl") -> Path:
    (root / "conversations").mkdir(parents=True)
    (root / "conversations" / "conversations.json").write_text(json.dumps(CONVERSATIONS), encoding="utf-8")
    tasks = root / "retrieval_tasks" / domain
    (tasks / "qrels").mkdir(parents=True)
    (tasks / "qrels" / "dev.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{query}\t{doc}\t1\n" for query, doc in QRELS), encoding="utf-8"
    )
    (tasks / f"{domain}_lastturn.jsonl").write_text(
        "".join(
            json.dumps(record) + "\n"
            for record in [
                {"_id": "conv-a<::>1", "text": "|user|: Who coaches the Patriots?"},
                {"_id": "hash-b<::>1", "text": "|user|: Where do the Arizona Cardinals play football?"},
            ]
        ),
        encoding="utf-8",
    )
    (tasks / f"{domain}_rewrite.jsonl").write_text(
        json.dumps({"_id": "conv-a<::>2", "text": "|user|: Which NFL team won the most Super Bowls?"}) + "\n",
        encoding="utf-8",
    )
    # MTRAG keeps its corpora beside mtrag-human/, at the repository's top level.
    passages = root.parent / "corpora" / "passage_level"
    passages.mkdir(parents=True)
    (passages / f"{domain}.jsonl").write_text(
        "".join(
            json.dumps({"_id": doc, "id": doc, "title": doc, "text": text, "url": f"https://example.org/{doc}"}) + "\n"
            for doc, text in TOPICS.items()
        ),
        encoding="utf-8",
    )
    return root


def test_the_conversation_layout_reads_every_user_turn_with_its_history_labels_and_qrels(tmp_path):
    root = write_mtrag(tmp_path / "mtrag-human")
    benchmark = load_benchmark(root, Workspace.resolve(tmp_path / "ws"))
    by_id = benchmark.queries_by_id
    assert set(by_id) == {"conv-a<::>1", "conv-a<::>2", "conv-a<::>3", "hash-b<::>1", "hash-b<::>2"}
    second = by_id["conv-a<::>2"]
    assert second.history == [("Who coaches the Patriots?", "Bill Belichick.")]
    assert second.rewrite == "Which NFL team won the most Super Bowls?"
    assert second.response == "The Steelers; twelve teams."
    assert (second.answerability, second.question_type, second.standalone) == ("answerable", "composite", None)
    assert by_id["conv-a<::>3"].answerability == "unanswerable"
    assert by_id["hash-b<::>1"].question_type == "explanation" and by_id["hash-b<::>1"].answerability == "partial"
    assert by_id["hash-b<::>2"].answerability == "conversational"  # kept as MTRAG names it
    assert benchmark.qrels["conv-a<::>2"] == {"steelers": 1, "playoffs": 1}
    assert benchmark.corpus_path == tmp_path / "corpora" / "passage_level" / "nfl.jsonl"


def test_a_root_of_several_domains_asks_for_one_and_the_domain_folder_names_it(tmp_path):
    root = write_mtrag(tmp_path / "mtrag-human")
    (root / "retrieval_tasks" / "govt" / "qrels").mkdir(parents=True)
    with pytest.raises(InputError, match=r"2 domains \(govt, nfl\)"):
        load_benchmark(root, Workspace.resolve(tmp_path / "ws"))
    assert len(load_benchmark(root / "retrieval_tasks" / "nfl", Workspace.resolve(tmp_path / "ws")).queries) == 5


def test_a_zipped_corpus_is_named_with_how_to_unzip_it(tmp_path):
    root = write_mtrag(tmp_path / "mtrag-human")
    corpus = tmp_path / "corpora" / "passage_level" / "nfl.jsonl"
    corpus.rename(corpus.with_name("nfl.jsonl.zip"))
    with pytest.raises(InputError, match="unzip it first"):
        load_benchmark(root, Workspace.resolve(tmp_path / "ws"))


def test_a_bad_enrichment_names_its_conversation_and_message(tmp_path):
    root = write_mtrag(tmp_path / "mtrag-human")
    conversations = read_json(root / "conversations" / "conversations.json")
    conversations[1]["messages"][2]["enrichments"]["Answerability"] = [3]
    (root / "conversations" / "conversations.json").write_text(json.dumps(conversations), encoding="utf-8")
    # Named by the id the task files give it (conversations.json names none), not by its index.
    with pytest.raises(InputError, match=r"conversation 'hash-b', message 2: enrichment 'Answerability'"):
        load_benchmark(root, Workspace.resolve(tmp_path / "ws"))
    conversations[0]["messages"][0]["speaker"] = "narrator"
    (root / "conversations" / "conversations.json").write_text(json.dumps(conversations), encoding="utf-8")
    with pytest.raises(InputError, match=r"conversation 'conv-a', message 0: needs 'speaker'"):
        load_benchmark(root, Workspace.resolve(tmp_path / "ws"))
    conversations[0] = {"messages": conversations[0]["messages"]}  # no id anywhere: its index, said to be one
    (root / "conversations" / "conversations.json").write_text(json.dumps(conversations), encoding="utf-8")
    with pytest.raises(InputError, match=r"conversation at index 0 \(no conversation_id\), message 0"):
        load_benchmark(root, Workspace.resolve(tmp_path / "ws"))


def test_the_task_layout_of_mtrag_un_reads_each_task_with_its_labels(tmp_path):
    root = tmp_path / "mtragun-human"
    (root / "generation_tasks").mkdir(parents=True)
    (root / "retrieval_tasks" / "qrels").mkdir(parents=True)
    task = {
        "conversation_id": "conv-a",
        "task_id": "conv-a<::>2",
        "task_type": "rag",
        "turn": "2",
        "dataset": "MT-RAG 2.0",
        "contexts": [],
        "Collection": "nfl",
        "input": [
            {"speaker": "user", "text": "Who coaches the Patriots?"},
            {"speaker": "agent", "text": "Bill Belichick."},
            {"speaker": "user", "text": "And the other one?"},
        ],
        "targets": [{"speaker": "agent", "text": "Which team do you mean?"}],
        "answerability": ["UNDERSPECIFIED"],
        "Question Type": ["Factoid"],
        "Multi-Turn": ["Follow-up"],
    }
    answerable = {
        **task,
        "task_id": "conv-b<::>1",
        "conversation_id": "conv-b",
        "turn": "1",
        "input": [{"speaker": "user", "text": "Who won the most Super Bowls?"}],
        "answerability": ["ANSWERABLE"],
        "Question Type": ["Summarization"],
    }
    (root / TASKS).write_text(json.dumps(task) + "\n" + json.dumps(answerable) + "\n", encoding="utf-8")
    (root / "retrieval_tasks" / "qrels" / "nfl.tsv").write_text(
        "query-id\tcorpus-id\tscore\nconv-b<::>1\tsteelers\t1\n", encoding="utf-8"
    )
    (root / "corpora").mkdir()
    (root / "corpora" / "nfl.jsonl").write_text(
        "".join(json.dumps({"_id": doc, "title": "", "text": text}) + "\n" for doc, text in TOPICS.items()),
        encoding="utf-8",
    )
    benchmark = load_benchmark(root, Workspace.resolve(tmp_path / "ws"))
    underspecified = benchmark.queries_by_id["conv-a<::>2"]
    assert underspecified.question == "And the other one?"
    assert underspecified.history == [("Who coaches the Patriots?", "Bill Belichick.")]
    assert (underspecified.answerability, underspecified.turn) == ("underspecified", 2)
    assert benchmark.queries_by_id["conv-b<::>1"].question_type == "summary"
    assert benchmark.qrels == {"conv-b<::>1": {"steelers": 1}}


TASKS = Path("generation_tasks") / "reference.jsonl"
MEASURES = ["nDCG@10", "R@5", "RR@10", "AP"]


def test_evaluate_on_an_mtrag_layout_equals_ir_measures_on_its_qrels_and_counts_the_unjudged_turns(tmp_path):
    root = write_mtrag(tmp_path / "mtrag-human")
    result = benchsmith.evaluate(
        root,
        retrievers=["bm25"],
        histories=["full", "current"],
        measures=MEASURES,
        workspace=str(tmp_path / "ws"),
        run_id="mtrag-eval",
    )
    results = json.loads(result.report["results"].read_text(encoding="utf-8"))
    qrels = [ir_measures.Qrel(query, doc, 1) for query, doc in QRELS]
    for configuration in results["configurations"]:
        run = read_trec_run(result.run_dir / configuration["run_file"])
        expected = {
            (m.query_id, str(m.measure)): m.value
            for m in ir_measures.iter_calc(
                [ir_measures.parse_measure(name) for name in MEASURES],
                qrels,
                [ir_measures.ScoredDoc(q, d, s) for q, ranking in run.items() for d, s in ranking.items()],
            )
        }
        per_query = results["per_query"][configuration["name"]]
        assert set(per_query) == {"conv-a<::>1", "conv-a<::>2", "hash-b<::>1"}  # the judged turns only
        for (query, measure), value in expected.items():
            assert per_query[query][measure] == pytest.approx(value)
        for measure in MEASURES:
            mean = sum(value for (_, name), value in expected.items() if name == measure) / 3
            assert results["aggregate"][configuration["name"]][measure] == pytest.approx(mean)
        by_answerability = results["by_answerability"][configuration["name"]]
        assert by_answerability["answerable"]["queries"] == 2 and by_answerability["partial"]["queries"] == 1
        assert by_answerability["partial"]["nDCG@10"] == pytest.approx(per_query["hash-b<::>1"]["nDCG@10"])
        assert set(results["by_question_type"][configuration["name"]]) == {"factoid", "composite", "explanation"}
        # Every turn was retrieved for, the unjudged ones too: their top scores are compared.
        top = results["unjudged"]["top_score"][configuration["name"]]
        retrieved = [
            max(run[q].values()) for q in ("conv-a<::>3", "hash-b<::>2") if run.get(q)
        ]  # "Thanks!" may match nothing
        assert top["unjudged"]["queries"] == len(retrieved) >= 1 and top["answerable"]["queries"] == 2
        assert top["unjudged"]["max"] == pytest.approx(max(retrieved))
    assert results["unjudged"]["queries"] == 2
    assert results["unjudged"]["by_answerability"] == {"conversational": 1, "unanswerable": 1}
    assert results["benchmark"]["unjudged_queries"] == 2
    assert results["by_standalone"] == {}  # MTRAG has no standalone label
    report = result.report["markdown"].read_text(encoding="utf-8")
    assert "## Turns without relevance judgments" in report and "## nDCG@10 by answerability" in report


def test_audit_reads_an_mtrag_layout_and_judges_its_judged_turns(tmp_path):
    from benchsmith.graphs.runtime.resources import register_embedder
    from tests.embedders import HashingEmbedder

    root = write_mtrag(tmp_path / "mtrag-human")
    result = benchsmith.audit(
        root,
        judges=["baseline"],
        workspace=str(tmp_path / "ws"),
        embedder=register_embedder(HashingEmbedder()),
        run_id="mtrag-audit",
    )
    assert result.instances == 3  # the turns with qrels; the unanswerable and conversational ones have none
    # the gate's counts reach the result (the CLI's "quality gate: turns flagged" row reads them)
    assert result.quality_gate["turns"] >= 3 and set(result.quality_gate["by_class"]) == set(GATE_CLASSES)
