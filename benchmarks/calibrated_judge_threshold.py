"""How validate's offline pool judge (agents/calibrated_pool_judge.py) got its threshold: on the
pairs ``validate`` runs over development labels judged (never a test-half corpus's), each
candidate rule's threshold chosen on some corpora and its Cohen's κ measured on the others.

Per corpus (one validate run each): the lexical rule of ``PoolJudge.baseline``, the shipped rule
at its threshold, the best threshold on that corpus's pairs (in sample) and the held-out κ of a
threshold chosen by 5-fold cross-validation over its questions (five seeded fold draws).

Across corpora (two runs or more): leave one corpus out. For each candidate rule (a weighting of
the lexical window coverage ``L`` and the dense similarities ``D`` and ``B``), the threshold with
the best κ on the other corpora's pairs, its κ on the corpus left out, and the worse of those
held-out κ, the figure a rule is chosen by: a rule must transfer to a tree it was not calibrated on.
The best of them replaces the shipped rule only when its gain on that worse corpus has a 95% paired
bootstrap interval (over the corpus's questions) above 0: with 20 questions a few pairs move κ by
0.05. Then the threshold with the best κ on all development pairs together, each corpus's κ there
and at the shipped threshold, with the same interval.

Make the runs first (any benchmark synthesized from each collection; the judged pairs depend on
the human set and the retrievers only)::

    benchsmith validate stdlib-r11 --human data/stdlib-validity.jsonl --judge baseline \\
        --history oracle --run-id judge-dev-stdlib [--retriever ... as in docs/concepts/validity.md]
    benchsmith validate werkzeug-r14u --human data/werkzeug-validity.jsonl --judge baseline \\
        --history oracle --run-id judge15-werkzeug [--retriever ...]
    .venv/bin/python benchmarks/calibrated_judge_threshold.py .benchsmith/runs/judge-dev-stdlib \\
        .benchsmith/runs/judge15-werkzeug [--workspace .benchsmith]

A run over a test-half corpus of benchmarks/doc_corpora.py stops the script (exit 2): no rule is
tuned on it. Minutes on 2 CPU cores the first time (every sentence of the pooled chunks is
embedded), seconds once the workspace's embedding cache holds them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsmith.tools.offline import offline_environment

offline_environment()  # before the imports below load the embedder

from doc_corpora import CORPORA  # noqa: E402  # this folder's corpus kit: which half each corpus is in

from benchsmith.agents.calibrated_pool_judge import CALIBRATED_THRESHOLD, calibrated_support  # noqa: E402
from benchsmith.agents.pool_judge import PoolJudge, passage_support, query_names, weighted_query_terms  # noqa: E402
from benchsmith.evals.measures.agreement import cohen_kappa  # noqa: E402
from benchsmith.graphs.runtime.corpus_indexes import document_text  # noqa: E402
from benchsmith.graphs.validate.judge_evidence import dense_evidence  # noqa: E402
from benchsmith.graphs.validate.state import JUDGE_BATCH, PAIRS_FILE  # noqa: E402
from benchsmith.stores.persistence.jsonl import load_jsonl  # noqa: E402
from benchsmith.stores.persistence.workspace import Workspace  # noqa: E402
from benchsmith.tools.corpus.corpus_statistics import exact_word_statistics  # noqa: E402

FOLDS, DRAWS = 5, 5
BOOTSTRAP = 1000  # resamples of the paired interval of a rule's gain on the worse held-out corpus

# Each rule maps (L, D, B) arrays to one score; the first is the shipped one.
Rule = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
SHIPPED = "(L+D+B)/3 (shipped)"
RULES: dict[str, Rule] = {
    SHIPPED: lambda lexical, whole, sentence: calibrated_support(lexical, whole, sentence),
    "(D+B)/2": lambda lexical, whole, sentence: (whole + sentence) / 2,
    "(L+B)/2": lambda lexical, whole, sentence: (lexical + sentence) / 2,
    "(L+D)/2": lambda lexical, whole, sentence: (lexical + whole) / 2,
    "(L+D+2B)/4": lambda lexical, whole, sentence: (lexical + whole + 2 * sentence) / 4,
    "(2L+D+B)/4": lambda lexical, whole, sentence: (2 * lexical + whole + sentence) / 4,
    "(L+2D+B)/4": lambda lexical, whole, sentence: (lexical + 2 * whole + sentence) / 4,
}


@dataclass
class JudgedPairs:
    """One validate run's judged pairs: human label, question, lexical verdict and the three features."""

    corpus: str
    human: np.ndarray
    question: np.ndarray
    lexical_verdict: list[bool]
    window: np.ndarray
    similarity: np.ndarray
    sentence_similarity: np.ndarray

    def scores(self, rule: Rule) -> np.ndarray:
        return rule(self.window, self.similarity, self.sentence_similarity)


def best_threshold(scores: np.ndarray, human: np.ndarray) -> tuple[float, float]:
    """``(κ, threshold)``: the threshold among the scores with the best κ on these pairs."""
    best = (-1.0, 0.0)
    for threshold in np.unique(scores):
        kappa = cohen_kappa(list(human), list(scores >= threshold))
        if kappa is not None and kappa > best[0]:
            best = (kappa, float(threshold))
    return best


def kappa_at(scores: np.ndarray, human: np.ndarray, threshold: float) -> float:
    return float(cohen_kappa(list(human), list(scores >= threshold)) or 0.0)


def development_corpus(run: Path) -> str:
    """The collection the run's benchmark was synthesized from; exit 2 on a test-half corpus."""
    config = json.loads((run / "run.json").read_text(encoding="utf-8"))["config"]
    synthesized = run.parent / config["synthetic"] / "run.json"
    collection = json.loads(synthesized.read_text(encoding="utf-8"))["config"].get("collection", config["synthetic"])
    half = {corpus.name: corpus.half for corpus in CORPORA}.get(collection)
    if half == "test":
        print(
            f"{run}: {collection} is a test-half corpus (benchmarks/doc_corpora.py); no rule is tuned on it",
            file=sys.stderr,
        )
        sys.exit(2)
    return str(collection)


def judged_pairs(run: Path, workspace: Workspace) -> JudgedPairs:
    corpus = {row["_id"]: (row.get("title", ""), row["text"]) for row in load_jsonl(run / "human/corpus.jsonl")}
    questions = {row["_id"]: row["text"] for row in load_jsonl(run / "human/queries.jsonl")}
    statistics = exact_word_statistics(document_text(*document) for document in corpus.values())
    by_question: dict[str, list[dict]] = {}
    for pair in load_jsonl(run / PAIRS_FILE):
        by_question.setdefault(pair["query_id"], []).append(pair)
    question_of, human, lexical, windows, similarities, sentence_similarities = [], [], [], [], [], []
    for query_id, pairs in by_question.items():
        question = questions[query_id]
        documents = [corpus[pair["doc_id"]] for pair in pairs]
        weights, names = weighted_query_terms([], question, statistics), query_names([], question)
        whole, best = dense_evidence(workspace, question, documents)
        for start in range(0, len(pairs), JUDGE_BATCH):  # the lexical rule depends on its batch: validate's
            batch = documents[start : start + JUDGE_BATCH]
            verdicts = PoolJudge(len(batch)).baseline(
                history=[],
                question=question,
                passages=[document_text(*document) for document in batch],
                statistics=statistics,
            )
            lexical += [judgment.relevant for judgment in verdicts.judgments]
        for pair, (title, text) in zip(pairs, documents):
            windows.append(passage_support(weights, names, text, title).window)
            question_of.append(query_id)
            human.append(bool(pair["human"]))
        similarities += whole
        sentence_similarities += best
    return JudgedPairs(
        development_corpus(run),
        np.array(human),
        np.array(question_of),
        lexical,
        np.array(windows),
        np.array(similarities),
        np.array(sentence_similarities),
    )


def cross_validated(pairs: JudgedPairs, scores: np.ndarray) -> list[float]:
    """Held-out κ of a threshold chosen by k-fold cross-validation over questions, per fold draw."""
    held_out = []
    for draw in range(DRAWS):
        order = np.random.default_rng(draw).permutation(sorted(set(pairs.question)))
        fold = {query_id: position % FOLDS for position, query_id in enumerate(order)}
        folds = np.array([fold[query_id] for query_id in pairs.question])
        predicted = np.zeros(len(pairs.human), dtype=bool)
        for k in range(FOLDS):
            _, chosen = best_threshold(scores[folds != k], pairs.human[folds != k])
            predicted[folds == k] = scores[folds == k] >= chosen
        held_out.append(float(cohen_kappa(list(pairs.human), list(predicted)) or 0.0))
    return held_out


def report_corpus(pairs: JudgedPairs) -> None:
    shipped = pairs.scores(RULES[SHIPPED])
    kappa, threshold = best_threshold(shipped, pairs.human)
    held_out = cross_validated(pairs, shipped)
    print(
        f"\n{pairs.corpus}: {len(pairs.human)} pairs, {len(set(pairs.question))} questions, {pairs.human.sum()} gold\n"
        f"  lexical rule (PoolJudge.baseline): κ {cohen_kappa(list(pairs.human), pairs.lexical_verdict):.3f}\n"
        f"  shipped rule at {CALIBRATED_THRESHOLD}: κ {kappa_at(shipped, pairs.human, CALIBRATED_THRESHOLD):.3f} "
        f"({(shipped[pairs.human] >= CALIBRATED_THRESHOLD).sum()} of {pairs.human.sum()} gold, "
        f"{(shipped[~pairs.human] >= CALIBRATED_THRESHOLD).sum()} of {(~pairs.human).sum()} non-gold called relevant)\n"
        f"  best threshold on this corpus: {threshold:.3f} (κ {kappa:.3f}, in sample); held-out κ, {FOLDS}-fold "
        f"over questions, {DRAWS} draws: mean {np.mean(held_out):.3f}, range {min(held_out):.3f}-{max(held_out):.3f}"
    )


def leave_one_corpus_out(runs: list[JudgedPairs], rules: dict[str, Rule]) -> dict[str, list[tuple[float, float]]]:
    """Per rule, per corpus left out: ``(threshold, κ)``, the threshold best on the other corpora's
    pairs together and its κ on the corpus left out."""
    held_out: dict[str, list[tuple[float, float]]] = {}
    for rule_name, rule in rules.items():
        held_out[rule_name] = []
        for left_out, pairs in enumerate(runs):
            others = [other for position, other in enumerate(runs) if position != left_out]
            _, threshold = best_threshold(
                np.concatenate([other.scores(rule) for other in others]),
                np.concatenate([other.human for other in others]),
            )
            held_out[rule_name].append((threshold, kappa_at(pairs.scores(rule), pairs.human, threshold)))
    return held_out


def worst_held_out(cells: list[tuple[float, float]]) -> tuple[int, float]:
    """``(position, κ)`` of the corpus whose held-out κ is lowest."""
    position = min(range(len(cells)), key=lambda index: cells[index][1])
    return position, cells[position][1]


def transferring_rule(held_out: dict[str, list[tuple[float, float]]]) -> str:
    """The rule whose worse held-out κ is highest (the first of equals: the shipped rule leads)."""
    return max(held_out, key=lambda name: worst_held_out(held_out[name])[1])


def gain_interval(
    pairs: JudgedPairs, candidate: np.ndarray, shipped: np.ndarray, resamples: int = BOOTSTRAP, seed: int = 0
) -> tuple[float, float, float]:
    """``(gain, low, high)``: the candidate's κ minus the shipped rule's on these pairs (verdicts
    given), with a 95% paired bootstrap interval that resamples the corpus's questions."""
    asked = sorted(set(pairs.question))
    rows = {query_id: np.flatnonzero(pairs.question == query_id) for query_id in asked}
    generator = np.random.default_rng(seed)
    gains = []
    for _ in range(resamples):
        drawn = np.concatenate([rows[query_id] for query_id in generator.choice(asked, len(asked))])
        human = list(pairs.human[drawn])
        gains.append(
            (cohen_kappa(human, list(candidate[drawn])) or 0.0) - (cohen_kappa(human, list(shipped[drawn])) or 0.0)
        )
    human = list(pairs.human)
    gain = (cohen_kappa(human, list(candidate)) or 0.0) - (cohen_kappa(human, list(shipped)) or 0.0)
    low, high = np.percentile(gains, [2.5, 97.5])
    return gain, float(low), float(high)


def report_transfer(runs: list[JudgedPairs]) -> None:
    """The leave-one-corpus-out table, the rule it picks and whether it beats the shipped rule
    beyond noise on the worse held-out corpus; then the threshold best on all corpora together."""
    held_out = leave_one_corpus_out(runs, RULES)
    names = [pairs.corpus for pairs in runs]
    print("\nleave one corpus out: threshold chosen on the other corpora, κ on the one left out")
    print(f"| rule | {' | '.join(f'held out {name}: threshold, κ' for name in names)} | worse held-out κ |")
    print(f"|---|{'---|' * len(names)}---|")
    for rule_name, cells in held_out.items():
        shown = " | ".join(f"{threshold:.3f}, {kappa:.3f}" for threshold, kappa in cells)
        print(f"| {rule_name} | {shown} | {worst_held_out(cells)[1]:.3f} |")
    best = transferring_rule(held_out)
    kept = SHIPPED
    if best != SHIPPED:
        position, _ = worst_held_out(held_out[SHIPPED])
        pairs = runs[position]
        candidate = pairs.scores(RULES[best]) >= held_out[best][position][0]
        shipped = pairs.scores(RULES[SHIPPED]) >= held_out[SHIPPED][position][0]
        gain, low, high = gain_interval(pairs, candidate, shipped)
        beyond_noise = low > 0
        kept = best if beyond_noise else SHIPPED
        print(
            f"\nbest by the worse held-out κ: {best}; on {pairs.corpus} held out it gains {gain:+.3f} over the "
            f"shipped rule, 95% interval [{low:+.3f}, {high:+.3f}] over its questions: "
            f"{'beyond noise' if beyond_noise else 'within noise, so the shipped rule is kept'}"
        )
    else:
        print(f"\nbest by the worse held-out κ: the shipped rule {SHIPPED}")
    rule = RULES[kept]
    _, threshold = best_threshold(
        np.concatenate([pairs.scores(rule) for pairs in runs]), np.concatenate([pairs.human for pairs in runs])
    )
    pooled = np.concatenate([pairs.scores(rule) for pairs in runs])
    below = pooled[pooled < threshold]
    print(
        f"\n{kept}: the threshold best on all development pairs together is {threshold:.4f} (the same verdicts "
        f"from {below.max() if below.size else 0.0:.4f}, the closest score below it, exclusive)"
    )
    if kept != SHIPPED:
        return
    for pairs in runs:
        scores = pairs.scores(rule)
        gain, low, high = gain_interval(pairs, scores >= threshold, scores >= CALIBRATED_THRESHOLD)
        print(
            f"  {pairs.corpus}: κ {kappa_at(scores, pairs.human, threshold):.3f} there, "
            f"{kappa_at(scores, pairs.human, CALIBRATED_THRESHOLD):.3f} at the shipped {CALIBRATED_THRESHOLD}: "
            f"{gain:+.3f}, 95% interval [{low:+.3f}, {high:+.3f}] over its questions"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="validate run directories over development labels")
    parser.add_argument("--workspace", default=None, help="where the embedding cache is")
    arguments = parser.parse_args()
    workspace = Workspace.resolve(arguments.workspace)
    runs = [judged_pairs(run, workspace) for run in arguments.runs]
    for pairs in runs:
        report_corpus(pairs)
    if len(runs) > 1:
        report_transfer(runs)


if __name__ == "__main__":
    main()
