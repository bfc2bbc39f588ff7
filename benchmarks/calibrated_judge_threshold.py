"""How validate's offline pool judge (agents/calibrated_pool_judge.py) got its threshold: on the
pairs a ``validate`` run over the development labels judged (``data/stdlib-validity.jsonl``;
never a test-half corpus's), the held-out Cohen's κ of the threshold on ``(L + D + B) / 3``
chosen by 5-fold cross-validation over questions (each fold's threshold the best κ on the other
four), over five seeded fold draws, beside the lexical rule of ``PoolJudge.baseline`` and the
best threshold on all pairs.

Make the run first (any benchmark synthesized from the stdlib collection; the judged pairs
depend on the human set and the retrievers only)::

    benchsmith validate stdlib-r11 --human data/stdlib-validity.jsonl --judge baseline \\
        --history oracle --run-id judge-dev-stdlib [--retriever ... as in docs/concepts/validity.md]
    .venv/bin/python benchmarks/calibrated_judge_threshold.py .benchsmith/runs/judge-dev-stdlib \\
        [--workspace .benchsmith]

Minutes on 2 CPU cores the first time (every sentence of the pooled chunks is embedded), seconds
once the workspace's embedding cache holds them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load the embedder

from benchsmith.agents.calibrated_pool_judge import calibrated_support  # noqa: E402
from benchsmith.agents.pool_judge import PoolJudge, passage_support, query_names, weighted_query_terms  # noqa: E402
from benchsmith.evals.measures.agreement import cohen_kappa  # noqa: E402
from benchsmith.graphs.runtime.corpus_indexes import document_text  # noqa: E402
from benchsmith.graphs.validate.judge_evidence import dense_evidence  # noqa: E402
from benchsmith.graphs.validate.state import JUDGE_BATCH, PAIRS_FILE  # noqa: E402
from benchsmith.stores.persistence.jsonl import load_jsonl  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.corpus.corpus_statistics import exact_word_statistics  # noqa: E402

FOLDS, DRAWS = 5, 5


def best_threshold(scores: np.ndarray, human: np.ndarray) -> tuple[float, float]:
    """``(κ, threshold)``: the threshold among the scores with the best κ on these pairs."""
    best = (-1.0, 0.0)
    for threshold in np.unique(scores):
        kappa = cohen_kappa(list(human), list(scores >= threshold))
        if kappa is not None and kappa > best[0]:
            best = (kappa, float(threshold))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a validate run directory over data/stdlib-validity.jsonl")
    parser.add_argument("--workspace", default=None, help="where the embedding cache is")
    arguments = parser.parse_args()
    corpus = {
        row["_id"]: (row.get("title", ""), row["text"]) for row in load_jsonl(arguments.run / "human/corpus.jsonl")
    }
    questions = {row["_id"]: row["text"] for row in load_jsonl(arguments.run / "human/queries.jsonl")}
    statistics = exact_word_statistics(document_text(*document) for document in corpus.values())
    workspace = Workspace.resolve(arguments.workspace)
    by_question: dict[str, list[dict]] = {}
    for pair in load_jsonl(arguments.run / PAIRS_FILE):
        by_question.setdefault(pair["query_id"], []).append(pair)
    question_of, human, lexical, scores = [], [], [], []
    for query_id, pairs in by_question.items():
        question = questions[query_id]
        documents = [corpus[pair["doc_id"]] for pair in pairs]
        weights, names = weighted_query_terms([], question, statistics), query_names([], question)
        similarities, sentence_similarities = dense_evidence(workspace, question, documents)
        for start in range(0, len(pairs), JUDGE_BATCH):  # the lexical rule depends on its batch: validate's
            batch = documents[start : start + JUDGE_BATCH]
            verdicts = PoolJudge(len(batch)).baseline(
                history=[],
                question=question,
                passages=[document_text(*document) for document in batch],
                statistics=statistics,
            )
            lexical += [judgment.relevant for judgment in verdicts.judgments]
        for pair, (title, text), similarity, best in zip(pairs, documents, similarities, sentence_similarities):
            window = passage_support(weights, names, text, title).window
            question_of.append(query_id)
            human.append(bool(pair["human"]))
            scores.append(calibrated_support(window, similarity, best))
    labels, values, asked = np.array(human), np.array(scores), np.array(question_of)
    print(f"{len(labels)} pairs, {len(by_question)} questions, {labels.sum()} gold")
    print(f"lexical rule (PoolJudge.baseline): κ {cohen_kappa(list(labels), lexical):.3f}")
    kappa, threshold = best_threshold(values, labels)
    print(f"best threshold on all pairs: {threshold:.3f} (κ {kappa:.3f}, in sample)")
    held_out = []
    for draw in range(DRAWS):
        order = np.random.default_rng(draw).permutation(sorted(by_question))
        fold = {query_id: position % FOLDS for position, query_id in enumerate(order)}
        folds = np.array([fold[query_id] for query_id in asked])
        predicted = np.zeros(len(labels), dtype=bool)
        for k in range(FOLDS):
            _, chosen = best_threshold(values[folds != k], labels[folds != k])
            predicted[folds == k] = values[folds == k] >= chosen
        held_out.append(cohen_kappa(list(labels), list(predicted)))
    print(
        f"held-out κ, {FOLDS}-fold over questions, {DRAWS} draws: mean {np.mean(held_out):.3f}, "
        f"range {min(held_out):.3f}-{max(held_out):.3f}"
    )


if __name__ == "__main__":
    main()
