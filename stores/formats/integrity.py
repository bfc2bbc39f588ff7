"""What the readers found wrong with ids, without deciding what to do about it.

A qrels line naming a query the benchmark does not have, or a document its corpus does not
have, and a corpus naming one document id twice: each is reported as an :class:`IdProblem`
(the file, how many ids, the first few, and what happens to them). The job that reads the
files decides: a warning it streams and records, or, when strict, an error.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.stores.errors import InputError

EXAMPLES = 5


@dataclass(frozen=True)
class IdProblem:
    file: str
    problem: str  # e.g. "query ids not in queries.jsonl"
    count: int
    examples: tuple[str, ...]  # the first few ids, in file order
    consequence: str  # what is done with them

    def message(self) -> str:
        more = ", …" if self.count > len(self.examples) else ""
        return (
            f"{self.file}: {self.count:,} {self.problem} ({', '.join(map(repr, self.examples))}{more}): "
            f"{self.consequence}"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "problem": self.problem,
            "count": self.count,
            "examples": list(self.examples),
            "consequence": self.consequence,
            "message": self.message(),
        }


@dataclass
class DuplicateIds:
    """Ids seen more than once while reading a file: ``{id: extra occurrences}``, in file order."""

    file: str
    extra: dict[str, int] = field(default_factory=dict)

    def add(self, identifier: str) -> None:
        self.extra[identifier] = self.extra.get(identifier, 0) + 1

    def problem(self, what: str, consequence: str) -> IdProblem | None:
        if not self.extra:
            return None
        examples = tuple(f"{identifier} ×{count + 1}" for identifier, count in list(self.extra.items())[:EXAMPLES])
        return IdProblem(self.file, f"duplicate {what}", len(self.extra), examples, consequence)


def unknown_ids(
    file: str | Path, ids: Iterable[str], known: Collection[str], what: str, consequence: str
) -> IdProblem | None:
    """The ids (in order, each once) that ``known`` lacks, as a problem of ``file``."""
    missing = [identifier for identifier in dict.fromkeys(ids) if identifier not in known]
    if not missing:
        return None
    return IdProblem(str(file), what, len(missing), tuple(missing[:EXAMPLES]), consequence)


def unknown_qrels_ids(
    file: str | Path, qrels: Mapping[str, Mapping[str, int]], query_ids: Collection[str], doc_ids: Collection[str]
) -> list[IdProblem]:
    """Judged queries the benchmark lacks, and judged documents the corpus lacks."""
    problems = [
        unknown_ids(
            file,
            qrels,
            query_ids,
            "judged query ids not among the benchmark's queries",
            "no retriever can answer them; they count as 0 on every measure",
        ),
        unknown_ids(
            file,
            (doc_id for judged in qrels.values() for doc_id in judged),
            doc_ids,
            "judged document ids not in the corpus (or without text)",
            "no retriever can find them; recall cannot reach 1 where they are relevant",
        ),
    ]
    return [problem for problem in problems if problem is not None]


def raise_if_strict(problems: Iterable[IdProblem], strict: bool) -> None:
    """Strict: the first problem stops the job, naming the file and the ids."""
    if strict:
        for problem in problems:
            raise InputError(f"{problem.message()} (--strict makes this an error)")
