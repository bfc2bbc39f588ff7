"""The configuration search (graphs/select/graph.py) on corpora written here: SEARA's proof checked
against complete labels, minimal facts credited across chunkings, judgments paid once across
configurations, runs and crashes, staged search, and every dimension of the space."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import kendalltau

from benchsmith.agents.seam.backends import ScriptedBackend
from benchsmith.agents.seam.models import ModelSeam
from benchsmith.graphs.runtime.resources import register_model, register_scorer, run_seam
from benchsmith.graphs.select.graph import graph
from benchsmith.graphs.select.state import FACTS_FILE, JUDGMENTS_FILE, STAGES_FILE
from benchsmith.jobs.select import strategy_space
from benchsmith.stores.formats.beir import read_beir_qrels
from benchsmith.stores.formats.trec import read_trec_run
from benchsmith.stores.persistence.jsonl import load_jsonl
from benchsmith.stores.persistence.workspace import Workspace
from benchsmith.tools.retrieval.strategy_space import SelectConfiguration, grid_settings
from tests.select_fixtures import TOPICS, judge_replier, run_select, scripted_judge, write_labelled_corpus

RELEVANT_TEXTS = {question: set(texts) for question, texts in TOPICS.values()}


def labelled_quote(question: str, passage: str) -> list[str]:
    """A judge that knows the truth: a relevant passage's fact is the passage itself."""
    return [passage] if passage in RELEVANT_TEXTS[question] else []


def top(ranked: dict[str, float], k: int) -> list[str]:
    return [doc for doc, _ in sorted(ranked.items(), key=lambda item: (-item[1], item[0]))[:k]]


def test_proof_check_pseudo_precision_is_true_precision_and_recall_keeps_the_true_order(tmp_path):
    """SEARA's appendix, on a corpus whose labels are complete, judged by --judge qrels:FILE."""
    corpus, queries, qrels_file = write_labelled_corpus(tmp_path / "data")
    spec = f"qrels:{qrels_file}"
    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "proof",
        judges=[spec],
        min_votes=1,
        top_k=[1, 2, 4],
        retrievers=["bm25", "dense"],
    )
    results = result.results()
    truth = {
        query: {doc for doc, relevance in docs.items() if relevance > 0}
        for query, docs in read_beir_qrels(qrels_file).items()
    }
    all_relevant = sum(len(docs) for docs in truth.values())
    pool: set[tuple[str, str]] = set()
    pseudo_recall, true_recall = [], []
    for configuration in results["configurations"]:
        run = read_trec_run(result.run_dir / configuration["run_file"])
        depth = configuration["settings"]["top_k"]
        for k in range(1, depth + 1):
            retrieved = sum(len(top(ranked, k)) for ranked in run.values())
            hits = sum(len(set(top(ranked, k)) & truth[query]) for query, ranked in run.items())
            assert configuration["precision_at_k"][str(k)] == pytest.approx(hits / retrieved), (
                configuration["name"],
                k,
            )
        true_recall.append(hits / all_relevant)  # at k = K
        pseudo_recall.append(configuration["recall_at_k"][str(depth)])
        pool |= {(query, doc) for query, ranked in run.items() for doc in ranked}
    assert len(set(true_recall)) >= 3, "the configurations must differ for the order to say anything"
    assert kendalltau(pseudo_recall, true_recall).statistic == pytest.approx(1.0)
    assert all(pseudo >= real for pseudo, real in zip(pseudo_recall, true_recall))  # the pool misses true facts
    # Judged: exactly the pool, each pair once; never the corpus × the queries.
    judged = load_jsonl(result.run_dir / JUDGMENTS_FILE)
    documents = sum(1 for _ in corpus.open())
    assert len(judged) == len({record["pair"] for record in judged}) == len(pool) == result.pool_pairs
    assert run_seam(
        Workspace.resolve(tmp_path / "ws"), "proof", f"qrels:{qrels_file.resolve()}"
    ).pairs_looked_up == len(pool)
    assert result.whole_corpus_pairs == documents * len(truth) > 2 * len(pool)
    assert result.model_verdicts == 0


def test_the_best_configuration_file_is_a_space_of_exactly_that_configuration(tmp_path):
    corpus, queries, qrels_file = write_labelled_corpus(tmp_path / "data")
    # Top 3 against top 1: intervals far apart on these queries (0.87-0.98 against 0.36-0.71), a winner.
    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "best",
        judges=[f"qrels:{qrels_file}"],
        min_votes=1,
        top_k=[1, 3],
        retrievers=["bm25"],
    )
    (only,) = grid_settings(strategy_space(result.report["best"]))
    assert SelectConfiguration.from_settings(only).name == result.best == result.ranking[0]
    assert result.tied == [] and result.results()["best"]["configuration"] == result.best
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert "```\n# The best configuration" in markdown and "top_k:\n- " in markdown
    sections = re.findall(r"^## (.+)$", markdown, re.M)
    assert (
        sections[:5]
        == ["Overview", "Judgments", "The best configuration, ready to use", "Ranking", "Precision–recall curves"]
        and "Main effects" in sections
    )
    ranked = re.findall(r"^\| (\d+) \| (.+?) \| (?:\*\*)?([\d.]+)", markdown, re.M)
    assert [name for _, name, _ in ranked] == [name.replace("|", "\\|") for name in result.ranking]
    assert [float(value) for _, _, value in ranked] == sorted(
        (round(v, 3) for v in result.pr_auc.values()), reverse=True
    )


def test_configurations_with_identical_runs_are_a_tie_and_no_best_configuration_is_written(tmp_path):
    """Whole documents and 40-word chunks of these short documents are the same chunks: the two
    configurations retrieve the same texts, score the same, and neither may be called the best."""
    corpus, queries, qrels_file = write_labelled_corpus(tmp_path / "data")
    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "tie",
        judges=[f"qrels:{qrels_file}"],
        min_votes=1,
        top_k=[1],
        retrievers=["bm25"],
        chunkings=["whole", "size=40"],
    )
    first, second = result.ranking
    run_dir = result.report["results"].parent
    assert result.pr_auc[first] == result.pr_auc[second]
    assert result.best is None and sorted(result.tied) == sorted(result.ranking)
    assert "best" not in result.report and not (run_dir / "best-configuration.yaml").exists()
    results = json.loads((run_dir / "selection.json").read_text(encoding="utf-8"))
    assert results["best"] is None and sorted(results["tied"]) == sorted(result.ranking)
    assert results["separation"]["difference"] == 0 and results["separation"]["queries_needed"] is None
    markdown = result.report["markdown"].read_text(encoding="utf-8")
    assert "No winner:" in markdown and "No best-configuration.yaml was written" in markdown
    assert "The best configuration, ready to use" not in markdown


HARBOUR = (
    "The harbour opened in 1850 and was rebuilt after the storm of 1953. Fishing boats still land crab and "
    "lobster there every morning. The harbour tide peaks at 6 pm on Sundays. Visitors can walk the sea wall "
    "to the lighthouse when the weather is calm. The cafe on the quay sells tea and cake until five."
)
FACT_QUOTES = {
    "long": "The harbour tide peaks at 6 pm on Sundays.",
    "medium": "tide peaks at 6 pm on Sundays",
    "short": "the tide peaks at 18:00 on Sundays",
}


def quote_by_chunk_length(question: str, passage: str) -> list[str]:
    """Each chunking's chunk holds the fact with other surroundings, and the judge quotes it with
    other boundaries: the sentence, a shorter span, a paraphrase."""
    if "tide peaks" not in passage:
        return []
    return [FACT_QUOTES["long" if len(passage) > 250 else "medium" if len(passage) > 100 else "short"]]


def harbour_corpus(directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    documents = [{"_id": "harbour", "title": "", "text": HARBOUR}] + [
        {"_id": f"d{number}", "title": "", "text": text}
        for number, text in enumerate(
            ["Mountain huts open in June.", "The library lends bicycles.", "Apples ripen in September."]
        )
    ]
    corpus = directory / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    queries = directory / "queries.txt"
    queries.write_text("When does the harbour tide peak?\n", encoding="utf-8")
    return corpus, queries


@pytest.mark.parametrize("judge_says_same", [True, False])
def test_one_fact_in_three_chunkings_is_credited_to_each_and_counted_once(tmp_path, judge_says_same):
    corpus, queries = harbour_corpus(tmp_path / "data")
    asked: list[tuple[str, str]] = []

    def same_fact(first: str, second: str) -> bool:
        asked.append((first, second))
        return judge_says_same

    judge = scripted_judge("scripted:facts", quote_by_chunk_length, same_fact=same_fact)
    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "facts",
        judges=[judge],
        min_votes=1,
        retrievers=["bm25"],
        top_k=[1],
        chunkings=["whole", "size=200", "size=70"],
    )
    results = result.results()
    chunk_lengths = {
        configuration["settings"]["chunking"]: configuration for configuration in results["configurations"]
    }
    assert set(chunk_lengths) == {"whole", "size=200", "size=70"}
    (facts,) = load_jsonl(result.run_dir / FACTS_FILE)
    quotes = sorted(quote for fact in facts["facts"] for quote in fact["quotes"])
    assert quotes == sorted(FACT_QUOTES.values())  # every chunking's chunk was retrieved and quoted
    assert asked, "the paraphrase is a near-match: the judge must be asked"
    if judge_says_same:
        assert len(facts["facts"]) == 1
        for configuration in results["configurations"]:  # each chunking is credited with the one fact
            assert configuration["precision_at_k"]["1"] == 1.0 and configuration["recall_at_k"]["1"] == 1.0
    else:  # the sentence and its shorter span still match by text; the paraphrase is another fact
        assert len(facts["facts"]) == 2
        assert {
            configuration["settings"]["chunking"]: configuration["recall_at_k"]["1"]
            for configuration in results["configurations"]
        } == {"whole": 0.5, "size=200": 0.5, "size=70": 0.5}


def test_a_second_run_with_more_configurations_judges_only_the_new_pairs(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    seen: list[tuple[str, str]] = []
    judge = scripted_judge("scripted:counting", labelled_quote, seen)
    first = run_select(
        tmp_path / "ws", queries, corpus, "first", judges=[judge], min_votes=1, retrievers=["bm25", "dense"], top_k=[2]
    )
    judged_first = set(seen)
    assert len(seen) == len(judged_first) == first.pool_pairs == first.model_verdicts
    seen.clear()
    second = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "second",
        judges=[judge],
        min_votes=1,
        retrievers=["bm25", "dense"],
        top_k=[2, 4],
    )
    pool = {(record["pair"], record["key"]) for record in load_jsonl(second.run_dir / "pool.jsonl")}
    assert second.pool_pairs == len(pool) > first.pool_pairs
    assert len(seen) == len(set(seen)) == second.pool_pairs - first.pool_pairs == second.model_verdicts
    assert not set(seen) & judged_first
    stored = sum(1 for record in load_jsonl(second.run_dir / JUDGMENTS_FILE) if record["verdicts"][judge]["cached"])
    assert stored == first.pool_pairs
    # The run's verdicts, by source: the stored ones are counted as judged in this run, as cache hits.
    assert second.verdicts == {
        "total": second.pool_pairs,
        "model": second.model_verdicts,
        "stored": stored,
        "offline": 0,
    }
    # Same verdicts: the shared configurations keep their precision (recall divides by the larger pool's facts).
    before = {c["name"]: c["precision_at_k"] for c in first.results()["configurations"]}
    for configuration in second.results()["configurations"]:
        if configuration["name"] in before:
            assert configuration["precision_at_k"] == before[configuration["name"]]


def test_a_crash_mid_judging_resumes_without_judging_any_pair_twice(tmp_path):
    corpus, queries, _ = write_labelled_corpus(tmp_path / "data")
    seen: list[tuple[str, str]] = []
    calls = Counter()
    reply = judge_replier(labelled_quote, seen)

    def crashing(messages, schema):
        calls["made"] += 1
        if calls["made"] == 4:
            raise RuntimeError("injected judge crash")
        return reply(messages, schema)

    register_model("scripted:crashing", ModelSeam(ScriptedBackend(replier=crashing, model="crashing")))
    options = dict(
        judges=["scripted:crashing"], min_votes=1, retrievers=["bm25", "dense"], top_k=[3], batch_size=2, concurrency=1
    )
    with pytest.raises(RuntimeError, match="injected judge crash"):
        run_select(tmp_path / "ws", queries, corpus, "crash", **options)
    before = load_jsonl(tmp_path / "ws" / "runs" / "crash" / JUDGMENTS_FILE)
    assert 0 < len(before) <= len(seen)  # every answered batch written (a sibling may still finish after the crash)
    result = run_select(tmp_path / "ws", queries, corpus, "crash", **options)
    assert result.resumed
    assert len(seen) == len(set(seen)) == result.pool_pairs
    assert len(load_jsonl(result.run_dir / JUDGMENTS_FILE)) == result.pool_pairs


def test_staged_search_settles_one_dimension_per_stage(tmp_path):
    corpus, queries, qrels_file = write_labelled_corpus(tmp_path / "data")
    space = {"search": "staged", "order": ["top_k", "retriever"], "retriever": ["bm25", "dense"], "top_k": [1, 4]}
    result = run_select(
        tmp_path / "ws", queries, corpus, "staged", space=space, judges=[f"qrels:{qrels_file}"], min_votes=1
    )
    stages = load_jsonl(result.run_dir / STAGES_FILE)
    assert [stage["dimension"] for stage in stages] == ["top_k", "retriever"]
    first, second = stages
    # Stage 1: bm25 at k = 1 and 4; stage 2: both retrievers at the k kept.
    assert (
        set(first["pr_auc"]) == {"1", "4"}
        and str(first["chosen"]) == max(first["pr_auc"], key=first["pr_auc"].get)
        and first["chosen"] == 4
    )
    assert set(second["pr_auc"]) == {"bm25", "dense"}
    assert second["pr_auc"]["bm25"] == pytest.approx(first["pr_auc"]["4"])  # the kept configuration, not re-run
    results = result.results()
    assert len(results["configurations"]) == 3
    assert (result.best or result.tied[0]) == results["ranking"][0]  # a winner, or the top of a tie
    assert results["stages"][1]["chosen"] == results["configurations"][0]["settings"]["retriever"]


def conversation_queries(path: Path) -> Path:
    path.write_text(
        json.dumps({"id": "c1", "question": "How do I fix a flat bike tyre?"})
        + "\n"
        + json.dumps(
            {
                "id": "c2",
                "question": "and how hard should I pump it?",
                "history": [{"question": "How do I fix a flat bike tyre?", "answer": "Patch the tube."}],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    return path


def test_rewrites_rerankers_and_filters_are_dimensions_of_the_space(tmp_path):
    corpus, _, _ = write_labelled_corpus(tmp_path / "data")
    queries = conversation_queries(tmp_path / "conversation.jsonl")
    # A reranker that prefers shorter chunks: its order is easy to check.
    register_scorer("test-shortest", lambda pairs: [-float(len(text)) for _, text in pairs])
    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "dimensions",
        judges=["baseline"],
        min_votes=1,
        retrievers=["bm25"],
        rewrites=["none", "rewrite"],
        reranks=["none", "test-shortest"],
        filters=["none", "doc_id^bike"],
        top_k=[3],
    )
    results = result.results()
    assert len(results["configurations"]) == 8
    documents = {json.loads(line)["_id"]: json.loads(line)["text"] for line in corpus.open()}
    rewritten = {record["_id"]: record["texts"] for record in load_jsonl(result.run_dir / "queries" / "rewrite.jsonl")}
    assert rewritten["c1"] == ["How do I fix a flat bike tyre?"]  # self-contained already
    assert rewritten["c2"][0].startswith("and how hard should I pump it?") and "tyre" in rewritten["c2"][0]
    for configuration in results["configurations"]:
        run = read_trec_run(result.run_dir / configuration["run_file"])
        settings = configuration["settings"]
        if settings["filter"] != "none":
            assert run and all(doc.startswith("bike") for ranked in run.values() for doc in ranked)
        if settings["rerank"] != "none":
            for ranked in run.values():
                lengths = [len(documents[doc]) for doc in top(ranked, len(ranked))]
                assert lengths == sorted(lengths)
    effects = {(row["dimension"], str(row["level"])): row for row in results["main_effects"]}
    assert effects[("rerank", "test-shortest")]["pairs"] == 4  # every other dimension's levels paired
    judged = load_jsonl(result.run_dir / JUDGMENTS_FILE)
    assert {record["query_id"] for record in judged} == {"c1", "c2"}


def test_expansion_fuses_the_runs_of_the_query_and_its_alternatives(tmp_path):
    corpus, _, _ = write_labelled_corpus(tmp_path / "data")
    queries = conversation_queries(tmp_path / "conversation.jsonl")
    result = run_select(
        tmp_path / "ws",
        queries,
        corpus,
        "expand",
        judges=["baseline"],
        min_votes=1,
        retrievers=["bm25"],
        rewrites=["none", "expand:2"],
        top_k=[3],
    )
    expanded = load_jsonl(result.run_dir / "queries" / "expand-2.jsonl")
    assert expanded
    assert all(len(record["texts"]) == 2 for record in expanded)
    assert "flat bike tyre" in expanded[1]["texts"][0]  # the follow-up carries its history
    by_rewrite = {
        c["settings"]["rewrite"]: read_trec_run(result.run_dir / c["run_file"])
        for c in result.results()["configurations"]
    }
    assert by_rewrite["expand:2"] != by_rewrite["none"] and all(len(r) <= 3 for r in by_rewrite["expand:2"].values())


def test_the_studio_graph_runs_with_no_context(tmp_path, monkeypatch):
    corpus, queries, qrels_file = write_labelled_corpus(tmp_path / "data")
    monkeypatch.chdir(tmp_path)  # the default workspace is ./.benchsmith
    output = graph.invoke(
        {
            "run_id": "studio",
            "queries": str(queries),
            "corpus": [str(corpus)],
            "space": {"retriever": ["bm25"], "top_k": [2, 3]},
            "judges": [f"qrels:{qrels_file}"],
        }
    )
    assert len(output["ranking"]) == 2 and Path(output["report"]["html"]).is_file()
    assert (tmp_path / ".benchsmith" / "runs" / "studio" / "selection.json").is_file()
