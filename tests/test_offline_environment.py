"""The offline environment, set in one place (tools/offline.py): defaults where unset, the user's
choice kept, and transformers following the hub's setting."""

import os
from pathlib import Path

from benchsmith.tools.offline import OFFLINE_ENVIRONMENT, offline_environment

NAMES = [*OFFLINE_ENVIRONMENT, "TRANSFORMERS_OFFLINE"]


def test_unset_variables_get_the_offline_defaults(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    offline_environment()
    assert {name: os.environ[name] for name in NAMES} == {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "ANONYMIZED_TELEMETRY": "False",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
    }


def test_a_user_who_allows_downloads_keeps_them_in_transformers_too(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "True")
    offline_environment()
    assert (os.environ["HF_HUB_OFFLINE"], os.environ["TRANSFORMERS_OFFLINE"]) == ("0", "0")
    assert os.environ["ANONYMIZED_TELEMETRY"] == "True"
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")  # set by the user: kept
    offline_environment()
    assert os.environ["TRANSFORMERS_OFFLINE"] == "1"


def test_the_makefile_exports_the_same_environment():
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text(encoding="utf-8")
    exported = dict(
        line.removeprefix("export ").split(" := ")
        for line in makefile.splitlines()
        if line.startswith("export ") and " := " in line
    )
    assert {name: exported.get(name) for name in NAMES} == {**OFFLINE_ENVIRONMENT, "TRANSFORMERS_OFFLINE": "1"}
