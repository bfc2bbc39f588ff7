"""A documentation passage as the statements a question can be about, each with its API entry.

A chunk of an API reference holds several entries, each a signature line and the sentences
under it ("requests.Session.mount(prefix, adapter)" / "Registers a connection adapter to a
prefix."); most of those sentences never name their entry, so each statement carries the entry
it documents. A configuration reference has a key alone on a line ("SECRET_KEY") and its
description; a parameter list has one item per parameter ("timeout (float) – How long to wait
..."). Prose outside any entry is about the page's topic.

Only prose and list items hold statements (agents/text.py ``units``): code, tables, headings and
markup never become a question.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Literal

from benchsmith.language import parse
from benchsmith.passages import (
    HEADING_SEPARATOR,
    SIGNATURE,
    is_complete,
    is_informative,
    plain_text,
    split_sentences,
    units,
)
from benchsmith.words import ARTICLES, content_words

Role = Literal["prose", "first", "parameter", "returns"]

# An API entry's line: "class requests.Session", "requests.Session.mount(prefix, adapter)",
# "property requests.Response.content", "exception requests.HTTPError(*args, **kwargs)".
ENTRY_KINDS = (
    "class",
    "exception",
    "property",
    "attribute",
    "data",
    "method",
    "classmethod",
    "staticmethod",
    "async",
    "abstractmethod",
    "abstract",  # Sphinx 4+ writes an abstract method's line "abstract cliff.show.ShowOne.take_action(parsed_args)"
    "function",
    "decorator",
    "module",
    "final",
    "coroutine",
)
ENTRY_LINE = re.compile(
    rf"^(?:(?P<kind>(?:{'|'.join(ENTRY_KINDS)})(?:\s+(?:{'|'.join(ENTRY_KINDS)}))*)\s+)?@?"
    r"(?P<name>[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?P<call>\(.*\))?(?:\s*(?:->|:)\s*[\w.\[\], |'\"]+)?"
    r"(?P<value>\s*=\s*\S.{0,80})?\s*$"
)
# A class statement of Python source, as an example shows it: Sphinx writes an entry's line without the colon
# ("BuildStatus.FirstApp", the second class of an example read as a member of the first: cmd2, development round 17).
CLASS_STATEMENT = re.compile(r"^class\s+[A-Za-z_]\w*\s*(?:\([^()]*\))?\s*:$")
# A custom Sphinx domain writes an object's type before its name ("jinja-jinja-filters.wordwrap(s, width)"):
# no Python name has a hyphen, so the qualifier is the domain's, not the entry's.
# (after a kind word too: "class jinja-jinja-globals.joiner(sep=', ')" was no entry, and its description ran
# into the reply of the entry above: jinja2, development round 14 ungated readings)
DOMAIN_QUALIFIER = re.compile(r"^(?P<kind>(?:[a-z]+\s+)*)(?:[A-Za-z]\w*-(?:[\w-]*-)?(?P<type>[a-z]+)\.)(?=[A-Za-z_])")
# The kinds of entry Python's own documentation has; any other kind is a custom domain's ("filter", "test").
PYTHON_KINDS = frozenset((*ENTRY_KINDS, "setting", "option", "attribute", "name"))
TRAILING_KIND = re.compile(
    r"(?<=\))(?:\s*->\s*[\w.\[\], |]+?)?\s+(property|classmethod|staticmethod|abstractmethod|async)$"
)
# Sphinx's version notes ("New in version 6.1.", "Changed in version 3.2: ..."): when, not what
VERSION_NOTE = re.compile(r"(?i)^\W*(?:new|changed|added) in (?:version )?v?\d")
# A quotation's attribution on its own line: an em dash (or a horizontal bar), then a name in capitals.
ATTRIBUTION = re.compile(r"^\s*[\u2014\u2015]\s*[A-Z][^\n]{0,120}$")
SETTING_LINE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")  # SECRET_KEY, MAX_CONTENT_LENGTH
# A command-line option's line: "--ff-only", "-q, --quiet", "--depth <depth>", "--[no-]verify", "-o <file>".
# (a value of alternatives too: "--[no-]recurse-submodules[=yes|on-demand|no]", "--exclude-hidden=[receive|uploadpack]":
# unread, their descriptions were the option's above them; git, development round 14)
# argparse's metavar in capitals too: "-c COLUMN, --column COLUMN" (unread, its description was the option's above it:
# cliff, development, twenty-fifth session)
_OPTION_VALUE = r"(?:[ =]?<[\w.|-]+>|\[=<?[\w|-]+>?\]|=\[?[\w<>|-]+\]?| [A-Z][A-Z0-9_]*)"
OPTION_LINE = re.compile(
    rf"^-{{1,2}}\[?[\w-]+\]?[\w-]*{_OPTION_VALUE}?(?:,\s*-{{1,2}}\[?[\w-]+\]?[\w-]*{_OPTION_VALUE}?)*$"
)
ATTRIBUTE_LINE = re.compile(  # no article after the colon: "Regressions: a big problem" is a heading, no type
    r"^(?P<name>[A-Za-z_]\w*)\s*:(?!\s*(?:[Aa]n?|[Tt]he)\b)\s*[\w.\[\], |]+(?:\s*=\s*\S.{0,60})?"
    r"(?:\s+(?:class-attribute|instance-attribute|property|attribute))?$"
)
# A table cell that holds a name or a value ("task_default_exchange", "1.0", "none"), not a word of prose.
VALUE_CELL = re.compile(r"[\w:/-]*[_.\d][\w.:/-]*(?<!\.)|true|false|none")
EXAMPLE_ARGUMENT = re.compile(r"[(,]\s*(?:\d|[\"'(\[{]|True\b|False\b)")  # a positional value: (2, 2), ("hello")
# A keyword's default value, which a signature has and an example's call need not: "qop=('auth',)" (read as a
# positional value, set_digest's line was no entry and its description ran into set_basic's reply: werkzeug,
# development round 14 ungated readings)
KEYWORD_DEFAULT = re.compile(r"=\s*(?:\([^()]*\)|\[[^\]]*\]|\{[^}]*\}|'[^']*'|\"[^\"]*\"|[^,()]+)")
PARENTHETICAL = re.compile(r"^\([^()]+\)\.?$")  # "(1 indexed)", "(optional)."
CROSS_REFERENCE = re.compile(r"(?i)^see\s+\S+\.?$")  # "see kwargs.", "See is_due()."
SNAKE_NAME = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
PARAMETER_ITEM = re.compile(
    r"^\**(?P<name>\*{0,2}[A-Za-z_]\w*)\**(?:\s*\((?P<type>[^()]{1,60})\))?\s*(?:[–—]|--?|:)\s+"
    r"(?P<text>\S.*)$"
)
# A placeholder of a command's synopsis ("older than <time>", "exec <cmd>"): text, not an HTML tag (a man
# page's option read without its first sentence answered with the next option's; git, development round 11).
PLACEHOLDER = re.compile(r"<([a-z][\w.-]*)>(?![^<]*</)")
LABEL = re.compile(r"^(?:[A-Z][\w-]*(?: [A-Z][\w-]*)?):\s+(?=[A-Z])")  # a release note's "Bugfix: ", "Windows: "
PARAMETER_HEADINGS = frozenset(
    {
        "parameters",
        "arguments",
        "keyword arguments",
        "args",
        "kwargs",
        "params",
        "other parameters",
        "attributes",
        "options",
    }
)
RETURNS_HEADINGS = frozenset({"returns", "return", "return value", "yields"})
FIELD_HEADINGS = PARAMETER_HEADINGS | RETURNS_HEADINGS | frozenset({"return type", "raises", "type"})
# A name, a colon, then what follows it: "highlightjs: Enables highlighting of source code ...".
NAMED_DESCRIPTION = re.compile(r"^[A-Za-z_][\w.]*\s*:\s+(?P<description>\S.*)$")
# A configuration line that sets a scalar ("use_directory_urls: false", "port: 8000"), not a type annotation.
YAML_SCALAR = re.compile(r"^[A-Za-z_]\w*\s*:\s*(?:true|false|yes|no|null|on|off|~|-?\d[\d.]*|[\"'].*)\s*$")
# The labels API generators put before a value on an entry's line ("Bases: ClickException").
FIELD_LABELS = FIELD_HEADINGS | frozenset({"bases", "default", "example", "examples", "note", "warning", "source"})


@dataclass(frozen=True)
class Statement:
    text: str  # as a reader sees it (roles, inline code and links reduced to their text)
    position: int  # its order in the passage
    entry: str | None  # the qualified name of the entry it documents ("requests.Session.mount"), or a setting
    entry_kind: str | None  # "class", "function", "method", "property", "exception", "setting"...; None outside
    role: Role  # "first": an entry's first sentence; "parameter": a parameter's description; "returns"
    parameter: str | None = None  # the parameter a "parameter" statement describes
    whole: bool = True  # a complete sentence (not cut by the chunk boundary, not a label, no line left open)
    owner: str | None = None  # what an option belongs to: the page's command ("git merge" of "--ff-only")
    heading: str = ""  # the heading the statement stands under (in the passage, else its title's last part)


@dataclass(frozen=True)
class Entry:
    name: str  # qualified ("requests.Session.mount")
    kind: str  # "function", "class", "method", "property", "exception", "setting", ...


def entry_of_line(line: str, *, heading: bool = False) -> Entry | None:
    """The entry a signature line, entry line, option line or setting line documents; None for other
    lines. A ``heading`` may also name an entry by a lone snake_case name ("site_name", "on_files")."""
    if CLASS_STATEMENT.match(plain_text(line).strip()):
        return None  # "class FirstApp(cmd2.Cmd):" is an example's source, whose docstring documents no API entry
    stripped = plain_text(line).strip().rstrip(":")
    if SETTING_LINE.match(stripped):
        return Entry(stripped, "setting")
    if stripped == "--":  # a man page's end-of-options marker documents itself, not the option above it
        return Entry("--", "option")
    if option := OPTION_LINE.match(stripped):
        names = [
            name.replace("[no-]", "").replace("[", "").replace("]", "")
            for name in re.findall(r"--?\[?[\w-]+\]?[\w-]*", option.group(0))
        ]
        # the option the text describes: "--edit, -e, --no-edit" documents --edit (its negation only
        # turns it off), "--[no-]verify" --verify; a short option's long name when it has one
        long = [name for name in names if name.startswith("--")]
        return Entry(next((name for name in long if not name.startswith("--no-")), (long or names)[0]), "option")
    if attribute := ATTRIBUTE_LINE.match(stripped):  # mkdocstrings: "is_link: bool = False class-attribute"
        # "Bases: ClickException" under a class is the generator's label line, no attribute (mkdocs,
        # development readings round 5)
        if attribute["name"].lower() in FIELD_LABELS or YAML_SCALAR.match(stripped):
            return None  # "use_directory_urls: false" in a configuration example sets a value (mkdocs, round 5)
        return Entry(attribute["name"], "attribute")
    if heading and SNAKE_NAME.match(stripped):
        return Entry(stripped, "name")
    stripped = stripped.replace("\u2192", "->")  # Sphinx's HTML writes "->" as "→"
    if domain := DOMAIN_QUALIFIER.match(stripped):
        stripped = domain["kind"] + stripped[domain.end() :]
    trailing = TRAILING_KIND.search(stripped)  # "url() -> str property": a property, whatever it returns
    found = ENTRY_LINE.match(stripped[: trailing.start()] if trailing else stripped)
    if not found or len(stripped) > 300:
        return None
    if found["call"] and EXAMPLE_ARGUMENT.search(KEYWORD_DEFAULT.sub("=", found["call"])) and not found["kind"]:
        # "add.apply_async((2, 2), link=add.s(16))" calls with values: an example's line, whose sentences explain
        # the example, not an entry (celery, development round 12); a signature names its parameters
        return None
    if found["value"] and not (found["kind"] or class_member(found["name"])):
        # "celery.beat.ScheduleEntry.kwargs = None" is Sphinx's line of a class attribute with its value (its
        # description was read as the entry above's: celery, development round 12); "app.conf.timezone = 'UTC'"
        # in running text is an example's assignment
        return None
    name, kind, call = (
        found["name"],
        (found["kind"] or "").split() or ([trailing[1]] if trailing else []),
        found["call"],
    )
    if not kind and not call and "." not in name:
        return None  # a lone word is a label, not an entry
    # "pytest.python.FunctionDefinition.name: str": a member with its type, as Sphinx writes an attribute
    annotated = "." in name and ":" in stripped and len(stripped.split()) <= 4
    if not kind and not call and not found["value"] and not annotated and not SIGNATURE.match(stripped):
        return None
    last = name.rsplit(".", 1)[-1]
    kind_word = (
        kind[-1] if kind else ("function" if call else "class" if last[:1].isupper() and not last.isupper() else "name")
    )  # "name": a constant, attribute or lower-case class
    if kind_word == "function" and "." in name and name.split(".")[-2][:1].isupper():
        kind_word = "method"  # Session.mount(...)
    if domain and not kind:
        # the domain's object type names what the entry is: "jinja-jinja-filters.abs" is the abs filter
        kind_word = domain["type"].rstrip("s") or kind_word
    return Entry(name, kind_word)


def class_member(name: str) -> bool:
    """A dotted name whose owner is a class ("ScheduleEntry.kwargs", "celery.beat.ScheduleEntry.args")."""
    parts = name.split(".")
    return len(parts) > 1 and parts[-2][:1].isupper() and not parts[-2].isupper()


COMMAND_HEADING = re.compile(r"[a-z][\w.-]*(?: [a-z][\w.-]*)*")  # "celery", "worker", "git merge": a command as typed
MAN_PAGE = re.compile(r"^(?P<name>[\w.+-]+)\(\d\w*\)(?: Manual Page)?$")


def page_subject(title: str) -> str:
    """What a page documents, as a user names it: a man page by its command ("git-submodule(1) Manual
    Page" → "git submodule"); other pages by their title."""
    page = page_topic(title)
    if found := MAN_PAGE.match(page):
        return found["name"].replace("-", " ", 1)
    return page


def command_of_page(title: str) -> str | None:
    """The command whose options a page lists: a man page's ("git merge"), else the headings that are a command
    as typed ("Command Line Interface › celery › worker" → "celery worker"); None where no heading is one
    ("Usage › Verbosity Levels": "What does the -vvv option of Usage do?" was asked of cleo, development round 18)."""
    if MAN_PAGE.match(page_topic(title)):
        return page_subject(title)
    typed = [
        piece.strip() for piece in HEADING_SEPARATOR.split(title or "") if COMMAND_HEADING.fullmatch(piece.strip())
    ]
    return " ".join(typed) or None


def page_topic(title: str) -> str:
    """The page a heading path starts with: "Quickstart › Sessions" → "Quickstart"."""
    return HEADING_SEPARATOR.split((title or "").strip(), maxsplit=1)[0].strip()


def section_heading(title: str) -> str:
    """The last heading of a path ("Sessions" of "Advanced Usage › Sessions"); the page without one."""
    pieces = HEADING_SEPARATOR.split((title or "").strip())
    return pieces[-1].strip()


@functools.lru_cache(maxsize=8192)
def statements(text: str, title: str = "") -> tuple[Statement, ...]:
    """The passage's statements in order (see the module docstring). A chunk cut inside an entry
    opens with the rest of it: its heading path's last part names that entry when it is one."""
    found: list[Statement] = []
    heading_entry = heading_entry_of(title)
    entry: Entry | None = heading_entry
    first_pending = False
    field: str | None = None  # the field list being read: "parameters", "returns"
    heading = section_heading(title)
    paragraph_start = 0  # where the statements of the unit being read begin
    listed: list[str] = []  # the names of the entry lines read in a row, none described yet
    before_list: Entry | None = entry  # the entry being read before them
    bulleted: list[str] = []  # the names of a bulleted list's items that are each an entry's line alone
    before_bullets: Entry | None = entry

    def add(said: str, role: Role, whole: bool, parameter: str | None = None, owner: str | None = None) -> None:
        """A statement of the entry and under the heading being read."""
        documented = entry
        if role in ("parameter", "returns") and entry is heading_entry and entry and entry.kind in ("name", "module"):
            # a chunk that opens in a function's field list under its module's title ("celery.utils.objects"): the
            # fields are the function's, which the chunk does not name, not the module's (celery, round 12)
            documented = None
        name, kind = (documented.name, documented.kind) if documented else (None, None)
        found.append(Statement(said, len(found), name, kind, role, parameter, whole, owner, heading=heading))

    section_start = 0  # where the statements under the heading being read begin
    last_name: str | None = None  # the unit before, when it is one lower-case name on its line ("quit")
    section_name: str | None = None  # the last such name: a subcommand's heading the page's text kept as a line
    usage_command: str | None = None  # the command a usage synopsis under that heading types ("cliffdemo file")
    continued = False  # the unit before was a line left open ("Inspired Typer to"): this one ends its sentence
    for unit in units(text):
        opens_here, continued = continued, False
        line_name, last_name = last_name, None
        if unit.kind in ("prose", "item") and LOWER_IDENTIFIER.fullmatch(lone := plain_text(unit.text).strip()):
            last_name = section_name = lone  # a heading the page's text kept as a line, perhaps
            if usage_command and usage_command.rsplit(" ", 1)[-1] != lone:
                usage_command = None  # another subcommand's section: its own usage names it, else the title does
        if unit.kind == "heading":
            entry, field, first_pending = None, None, False
            section_name = usage_command = None
            heading = plain_text(unit.text).strip()
            section_start = len(found)
            continue
        if ATTRIBUTION.match(unit.text):
            # "— Alfred North Whitehead, ...": the paragraph above is an epigraph, someone's words, not the
            # documentation's ("The precise opposite is the case." asked as a definition: drf, development round 13)
            del found[paragraph_start:]
            continue
        paragraph_start = len(found)
        line_entry = entry_of_line(unit.text) if "\n" not in unit.text and not unit.fenced else None
        if unit.kind == "item" and line_entry and not is_complete(unit.text):
            if not bulleted:
                before_bullets = entry
            bulleted.append(line_entry.name)
        else:
            if len(set(bulleted)) > 1:
                # "* @app.post()", "* @app.put()", "* @app.delete()": a bulleted list enumerates names, it documents
                # none; the prose after it is the section's, not the last item's ("Notice that status_code is a
                # parameter ..." answered what app.delete is for: FastAPI's sources, development round 25)
                entry, first_pending = before_bullets, False
            bulleted = []
        if unit.kind == "code" and (typed := _usage_of(unit.text, section_name)):
            usage_command = typed
        if unit.kind in ("code", "markup"):  # "--", the end-of-options marker, reads as markup
            if line_entry:
                if not (first_pending and listed):
                    listed, before_list = [], entry
                listed.append(line_entry.name)
                entry, field, first_pending = _qualified(line_entry, entry), None, True
            continue
        if len(set(listed)) > 1 and about_the_list(plain_text(unit.text), entry):
            # "cmd2.Cmd.perror()", "cmd2.Cmd.ppaged()", then "These methods all honor the allow_style setting": names
            # listed, not entries described; what follows is the section's ("Never - all ANSI escape sequences
            # ..." answered what Cmd.ppaged is for: cmd2, development round 16). An API page's undocumented members
            # run into the next one's description ("Sends a DELETE request."), which is that entry's: kept.
            entry, first_pending = before_list, False
        listed = []
        if unit.kind not in ("prose", "item"):
            continue
        body = unit.text
        if line_entry and not is_complete(unit.text):
            entry, field, first_pending = _qualified(line_entry, entry), None, True
            described = _named_description(unit.text)
            if described is None:
                continue
            body = described  # "name: its description." (below)
        label = plain_text(unit.text).strip().rstrip(":").lower()
        if label in FIELD_HEADINGS:
            field = label
            continue
        if first_pending and entry and VALUE_CELL.fullmatch(label):
            # a table read row by row: the key's row ends with its value cell ("CELERY_AMQP_EXCHANGE" /
            # "task_default_exchange"); the prose after it is the next row's or the page's, not the key's
            # description (celery, development round 12)
            entry, first_pending = None, False
            continue
        if field in PARAMETER_HEADINGS and (item := PARAMETER_ITEM.match(plain_text(unit.text))):
            description = item["text"].removeprefix("(optional)").strip()
            # "kwargs (Dict) – see kwargs.": a pointer to the attribute's own entry, no description
            describes = is_complete(description) and not CROSS_REFERENCE.match(description)
            add(description, "parameter", describes, parameter=item["name"].lstrip("*"))
            continue
        if field in RETURNS_HEADINGS:
            said = plain_text(unit.text).strip(" –-")
            add(said, "returns", len(content_words(said)) >= 3)  # a bare type says little
            field = None
            continue
        field = None
        unit_start = len(found)
        continued = left_open(body)
        for number, sentence in enumerate(split_sentences(body)):
            if (inline_entry := entry_of_line(sentence)) and not is_complete(sentence):
                # a member's line run into the paragraph before its description ("pytest.python.FunctionDefinition.name:
                # str A unique name ..."): the description is the member's (pytest, development round 12)
                entry, first_pending = _qualified(inline_entry, entry), True
                described = _named_description(sentence)
                if described is None:
                    continue
                # a list of options, each "name: its description." ("highlightjs: Enables highlighting of source
                # code ... Default: True."): the sentence after the name is its first, not a type (its description
                # was lost, and "True." answered what highlightjs is for: mkdocs, development round 15)
                sentence = described
            if PARENTHETICAL.match(sentence) and len(found) > unit_start:
                # "The current iteration of the loop. (1 indexed)": the aside completes the sentence before it
                # (without it loop.index and loop.index0 read alike: jinja2, development round 12)
                found[-1] = replace(found[-1], text=f"{found[-1].text} {plain_text(sentence)}")
                continue
            plain = LABEL.sub("", plain_text(sentence))  # "Bugfix: Use README.md as ..." → "Use README.md as ..."
            if len(plain.split()) == 1:
                plain = plain_text(sentence)  # a field and its value ("Default: True."), no label before a sentence
            if plain != plain_text(sentence) and not is_complete(plain):
                continue  # what followed the label was no sentence ("response: The response generated ...")
            if not is_informative(
                PLACEHOLDER.sub(r"\1", sentence), require_complete=False, minimum_content_words=2, max_words=70
            ):
                if first_pending and is_complete(sentence):
                    # the entry's first sentence, unread (a list of options), leaves no first sentence: the next
                    # one is a detail ("Repetitions of this option accumulate ..." asked when to use --exclude:
                    # git, development round 14)
                    first_pending = False
                continue
            # "set" › "This command sets a setting's value"; and the next section's name kept as a line of text
            # before its own "This command ..." ("quit", ..., "run_pyscript", "This command runs a Python script":
            # read as the quit command's, its description answered what quit is for; cmd2, development round 17)
            named_by = line_name
            if named_by is None and entry is None and len(found) == section_start:
                named_by = heading
            if named_by and (named := _entry_of_section(named_by, plain)) and entry != named:
                entry, first_pending = named, True
            role: Role = "first" if first_pending and entry else "prose"
            first_pending = False
            owner = (usage_command or command_of_page(title)) if entry and entry.kind == "option" else None
            # the first sentence after a line left open is that line's second half: "Inspired Typer to", then "Use
            # function parameters to declare CLI arguments ..." says what Hug inspired, not what to do (typer's
            # sources, test half; FastAPI's sources, development half, write the same admonition eleven times)
            add(plain, role, is_complete(sentence) and not (opens_here and number == 0), owner=owner)
    return tuple(found)


def left_open(text: str) -> bool:
    """A line that stops where its sentence cannot: no closing punctuation, and its last word one that needs more
    after it ("Inspired Typer to", "Use this with the"): "to" however it is tagged (the tagger reads it as a
    preposition as often, with nothing after it), an article or a conjunction. Not any determiner: "Try this"
    ends its sentence."""
    plain = plain_text(text).strip()
    if not plain or plain.endswith((".", "!", "?", ":", ";", ")", '"', "'")):
        return False
    last = parse(plain).tokens[-1]
    return last.tag == "CC" or last.text.lower() in {"to", *ARTICLES}


# A usage synopsis's first line: the program, the subcommand, then its arguments ("cliffdemo file [-f {json,...}]").
USAGE_LINE = re.compile(r"^\$?\s*(?P<program>[\w.-]+)\s+(?P<command>[a-z][\w-]*)(?:\s|$)")


def _usage_of(code: str, section_name: str | None) -> str | None:
    """The command a usage synopsis types when it names the subcommand whose heading the page's text kept as a line:
    "file", then "cliffdemo file [-f ...] [--max-width <integer>]": the options listed after it are that
    command's, not the one the chunk's heading path ends with ("Why would I pass --max-width to error?" of cliff's
    autogenerated command pages, where "error" has no option: development, twenty-fifth session)."""
    lines = code.strip().splitlines()
    found = USAGE_LINE.match(lines[0].strip()) if lines else None
    if found is None or section_name is None or found["command"] != section_name:
        return None
    return f"{found['program']} {found['command']}"


# A section's first sentence that names what its heading is: "This command lists available shortcuts."
SELF_DESCRIPTION = re.compile(
    r"^This (?P<kind>command|subcommand|setting|option|flag|hook|event|filter|plugin|variable|key|field)\b"
)
LOWER_IDENTIFIER = re.compile(r"[a-z][a-z0-9_-]*")


def _entry_of_section(heading: str, sentence: str) -> Entry | None:
    """A heading that is one name in lower case ("shortcuts", "run_script", "allow_style") whose section opens by
    saying what kind of thing it is ("This command ...", "This setting ..."): the section documents that entry,
    and "This command" in it is the entry, not a thing before it (cmd2's built-in commands and settings: their
    descriptions were read as leaning on context, and none was asked; development round 17)."""
    opening = SELF_DESCRIPTION.match(sentence.strip())
    if opening is None or not LOWER_IDENTIFIER.fullmatch(heading) or heading in MANUAL_HEADING_WORDS:
        return None
    return Entry(heading, opening["kind"])


# Lower-case headings that name a part of a manual, not an entry.
MANUAL_HEADING_WORDS = frozenset("usage overview introduction example examples notes summary description".split())


# What opens a sentence about several names listed before it, or about the section they are listed in.
GROUP_OPENING = re.compile(r"^(?:These|Those|Both|All (?:of )?these|Each of these|This (?P<noun>[a-z]+))\b")


def about_the_list(text: str, last: Entry | None) -> bool:
    """Whether a sentence after a list of entry lines is about the list ("These functions differ ...") or about
    its section ("This setting can be one of three values:" after a list of methods), not the last entry."""
    opening = GROUP_OPENING.match(text.strip())
    if opening is None:
        return False
    noun = opening["noun"]
    if noun is None:
        return True
    if parse(opening[0]).tokens[1].pos != "NOUN":
        return False  # "This means that ...": what the last entry does, said again
    return last is None or noun not in (*ENTRY_KINDS, last.kind or "")


def _named_description(line: str) -> str | None:
    """What follows "name: " when it is a description that says something (its first sentence has a verb):
    "Enables highlighting of source code ...", not a type ("bool = False") nor a list of values ("One of
    bottom, top, both, or none.", whose sentences after it lean on the name: "Displays ... accordingly")."""
    described = NAMED_DESCRIPTION.match(plain_text(line))
    if described is None or not is_complete(described["description"]):
        return None
    first = split_sentences(described["description"])[0]
    opening = first[:1].lower() + first[1:]  # "Enables ..." read as a verb, not a plural noun
    if not any(token.tag.startswith("VB") or token.tag == "MD" for token in parse(opening).tokens):
        return None
    return described["description"]


def heading_entry_of(title: str) -> Entry | None:
    """The entry a heading path ends with, named under its page when the page is a module
    ("asyncio.transports › WriteTransport.write" → "asyncio.transports.WriteTransport.write")."""
    if not title:
        return None
    entry = entry_of_line(section_heading(title), heading=True)
    page = page_topic(title)
    if entry is None or entry.kind in ("setting", "option", "name", "attribute") or page == section_heading(title):
        return entry
    if re.fullmatch(r"[a-z_][\w]*(\.[a-z_]\w*)*", page) and not entry.name.startswith(f"{page}."):
        return Entry(f"{page}.{entry.name}", entry.kind)
    return entry


def same_entry(first: str, second: str) -> bool:
    """Two names of one entry: equal, or one the other's qualified form ("WriteTransport.write" and
    "asyncio.transports.WriteTransport.write")."""
    return first == second or first.endswith(f".{second}") or second.endswith(f".{first}")


def _qualified(entry: Entry, enclosing: Entry | None) -> Entry:
    """A member's line under its class ("close()" after "class requests.Response"), or after another
    member of it ("children" after "Page.parent": "What does children hold?" names no owner; mkdocs,
    development readings round 5), named in full."""
    if "." in entry.name or enclosing is None:
        return entry
    parts = enclosing.name.split(".")
    owner = (
        enclosing.name
        if enclosing.kind in ("class", "exception")
        else ".".join(parts[:-1])
        if len(parts) > 1 and parts[-2][:1].isupper() and entry.kind not in ("option", "setting")
        else None
    )
    if owner is None:
        return entry
    return Entry(f"{owner}.{entry.name}", "method" if entry.kind == "function" else entry.kind)


def spoken_name(entry: str, kind: str | None) -> str:
    """An entry as a question names it: its short name, and a custom domain's entry with its kind ("the
    wordwrap filter": "What does wordwrap return?" names no thing a reader knows; jinja2, round 12)."""
    name = short_name(entry)
    return f"the {name} {kind}" if kind and kind not in PYTHON_KINDS and "." not in name else name


def short_name(entry: str) -> str:
    """How a user names an entry: from its class on ("Session.mount" of "requests.Session.mount",
    "JSONDecoder.decode" of "json.decoder.JSONDecoder.decode"); a name without a class in full up to
    three parts ("os.path.join", "color.advice.hint", "distutils.command.config"), else its last two."""
    parts = entry.split(".")
    classes = [index for index, part in enumerate(parts[:-1]) if part[:1].isupper() and not part.isupper()]
    if classes:
        return ".".join(parts[classes[-1] :])
    return entry if len(parts) <= 3 else ".".join(parts[-2:])
