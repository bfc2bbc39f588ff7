"""Questions and their accepted answers from a Stack Exchange data dump's ``Posts.xml``.

The dump has one ``<row .../>`` per post: questions (``PostTypeId="1"``, with ``Title``,
``Tags`` and, once the asker accepted one, ``AcceptedAnswerId``) and answers
(``PostTypeId="2"``, with ``ParentId``). Bodies are HTML. Tags are written ``<a><b>`` in older
dumps and ``|a|b|`` in newer ones; both are read.

The file is streamed twice with expat (dumps run to gigabytes): once for the questions that
have an accepted answer and carry one of the wanted tags, once for those answers. A question
whose accepted answer is not in the file is skipped and listed. Malformed XML and rows
without an id stop with an :class:`~stores.errors.InputError` naming the file and line. A
document type declaration is refused, so no entity defined in the file is ever expanded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from benchsmith.stores.errors import InputError
from benchsmith.stores.persistence.jsonl import open_user_file

QUESTION, ANSWER = "1", "2"
READ_BLOCK = 1 << 20
TAG_TOKEN = re.compile(r"<([^<>]+)>|([^|<>]+)")


@dataclass(frozen=True)
class StackExchangeQuestion:
    id: str
    title: str
    body_html: str
    answer_id: str
    answer_html: str
    tags: list[str]
    line: int  # where the question's row is, for messages


@dataclass
class PostsImport:
    questions: list[StackExchangeQuestion] = field(default_factory=list)
    # (question id, why it was left out) for questions with an accepted answer the file lacks
    skipped: list[tuple[str, str]] = field(default_factory=list)
    questions_read: int = 0  # question rows in the file, before any filter


def parse_tags(value: str) -> list[str]:
    """``<python><json>`` or ``|python|json|`` → ``["python", "json"]``."""
    return [
        (match.group(1) or match.group(2)).strip()
        for match in TAG_TOKEN.finditer(value or "")
        if (match.group(1) or match.group(2)).strip()
    ]


def read_posts_xml(path: str | Path, tags: Iterable[str] = ()) -> PostsImport:
    """Questions with an accepted answer (and at least one of ``tags`` when given), with the
    accepted answer's HTML, in the file's order."""
    path = Path(path)
    open_user_file(path, "rb").close()  # a missing file or a directory stops here, named
    wanted_tags = {tag.lower() for tag in tags}
    result = PostsImport()
    pending: dict[str, dict[str, str | int]] = {}  # accepted answer id → its question's fields
    question_lines: dict[str, int] = {}

    def on_question(attributes: dict[str, str], line: int) -> None:
        if attributes.get("PostTypeId") != QUESTION:
            return
        if attributes["Id"] in question_lines:  # two questions of one id would mix up their answers
            raise InputError(
                f"{path}:{line}: question Id {attributes['Id']} repeats line {question_lines[attributes['Id']]}"
            )
        question_lines[attributes["Id"]] = line
        result.questions_read += 1
        accepted = attributes.get("AcceptedAnswerId")
        post_tags = parse_tags(attributes.get("Tags", ""))
        if not accepted or (wanted_tags and not wanted_tags & {tag.lower() for tag in post_tags}):
            return
        pending[accepted] = {
            "id": attributes["Id"],
            "title": attributes.get("Title", ""),
            "body": attributes.get("Body", ""),
            "tags": "\x1f".join(post_tags),
            "line": line,
        }

    answers: dict[str, str] = {}

    def on_answer(attributes: dict[str, str], line: int) -> None:
        if attributes.get("PostTypeId") == ANSWER and attributes["Id"] in pending:
            question = pending[attributes["Id"]]
            if attributes.get("ParentId") not in (None, question["id"]):
                raise InputError(
                    f"{path}:{line}: answer {attributes['Id']} is accepted by question {question['id']} "
                    f"but answers question {attributes.get('ParentId')}"
                )
            answers[attributes["Id"]] = attributes.get("Body", "")

    _stream_rows(path, on_question)
    if pending:
        _stream_rows(path, on_answer)
    for answer_id, question in sorted(pending.items(), key=lambda item: int(item[1]["line"])):
        if answer_id not in answers:
            result.skipped.append((str(question["id"]), f"accepted answer {answer_id} is not in {path.name}"))
            continue
        result.questions.append(
            StackExchangeQuestion(
                id=str(question["id"]),
                title=str(question["title"]),
                body_html=str(question["body"]),
                answer_id=answer_id,
                answer_html=answers[answer_id],
                tags=[tag for tag in str(question["tags"]).split("\x1f") if tag],
                line=int(question["line"]),
            )
        )
    return result


def _stream_rows(path: Path, on_row: Callable[[dict[str, str], int], None]) -> None:
    """Call ``on_row(attributes, line)`` for every ``<row>`` element, streaming the file."""
    parser = expat.ParserCreate()

    def start(name: str, attributes: dict[str, str]) -> None:
        if name != "row":
            return
        line = parser.CurrentLineNumber
        post_id = attributes.get("Id", "")
        if not post_id.strip() or any(character.isspace() for character in post_id):
            raise InputError(f"{path}:{line}: a row without a valid Id")
        on_row(attributes, line)

    def refuse_doctype(*_: object) -> None:
        raise InputError(
            f"{path}:{parser.CurrentLineNumber}: a document type declaration is not allowed in "
            "Posts.xml (it could define entities)"
        )

    parser.StartElementHandler = start
    parser.StartDoctypeDeclHandler = refuse_doctype
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(READ_BLOCK), b""):
                parser.Parse(block, False)
            parser.Parse(b"", True)
    except expat.ExpatError as error:
        raise InputError(f"{path}:{error.lineno}: malformed XML ({expat.errors.messages[error.code]})") from None
