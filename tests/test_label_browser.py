"""`benchsmith label` driven in Debian's chromium as a person would, with the keyboard alone: three
questions labelled, the server killed (SIGKILL) between two judgments and started again (the page
opens where it stopped, nothing lost), the export accepted by `validate`; a chunk of HTML and
console markup shows as text. Selenium drives /usr/bin/chromium through /usr/bin/chromedriver
(never Selenium Manager, which would download a driver)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import benchsmith
from benchsmith.graphs.runtime.resources import register_embedder
from benchsmith.stores.persistence.jsonl import load_jsonl
from tests.embedders import HashingEmbedder
from tests.label_fixtures import MARKUP_FILE, RETRIEVERS, labelling_setup

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SCREENSHOTS = ROOT / "docs" / "images"

pytestmark = pytest.mark.slow


def browser(profile: Path):
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        pytest.skip(
            "Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        )
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # with the driver's path given too, Selenium Manager is never run
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--no-first-run",
        "--window-size=1100,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def start_server(setup, run_id: str, *arguments: str) -> tuple[subprocess.Popen, str]:
    """`benchsmith label` of the setup's questions, or the command ``arguments`` give."""
    arguments = arguments or ("label", str(setup["questions"]), "--collection", setup["collection"], "--depth", "2")
    command = [sys.executable, "-m", "tests.label_server", *arguments, "--port", "0", "--run-id", run_id]
    command += ["-w", str(setup["workspace"].root)]
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "400", "PYTHONPATH": str(ROOT)},
    )
    assert server.stdout is not None
    line = server.stdout.readline()  # "open http://127.0.0.1:PORT/ in a browser; ..."
    match = re.search(r"http://127\.0\.0\.1:\d+/", line)
    assert match, line + server.stdout.read()
    return server, match[0]


def wait_ready(driver, index: int | None = None, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = driver.find_element("tag name", "body")
        if body.get_attribute("data-ready") == "yes" and (
            index is None or body.get_attribute("data-index") == str(index)
        ):
            return
        time.sleep(0.05)
    raise AssertionError(f"the page is not ready at item {index}: {driver.find_element('id', 'message').text}")


def press(driver, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def keep_screenshot(driver, tmp_path: Path, name: str) -> None:
    """The page as it looks, for the README: written to docs/images when missing (or asked for with
    BENCHSMITH_UPDATE_SCREENSHOTS=1), so a test run leaves the checkout as it found it."""
    driver.save_screenshot(str(tmp_path / name))
    if not (SCREENSHOTS / name).is_file() or os.environ.get("BENCHSMITH_UPDATE_SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tmp_path / name, SCREENSHOTS / name)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return labelling_setup(tmp_path_factory.mktemp("label-browser"))


def test_three_questions_labelled_with_the_keyboard_through_a_killed_server(setup, tmp_path):
    from selenium.webdriver.common.keys import Keys

    driver = browser(tmp_path / "profile")
    server, url = start_server(setup, "browser")
    try:
        driver.get(url)
        wait_ready(driver, 0)
        total = int(re.search(r"left of (\d+)", driver.find_element("id", "progress").text)[1])
        graded: dict[int, int] = {}
        index = 0
        markup_seen = False
        while index < total:
            body = driver.find_element("tag name", "body")
            doc_id = body.get_attribute("data-doc-id")
            question_id = driver.find_element("id", "question-id").text
            if doc_id.startswith(MARKUP_FILE):
                markup_seen = True
                passage = driver.find_element("id", "passage")
                press(driver, "o")  # the whole chunk
                assert "<script>window.injected = 1</script>" in passage.text
                assert "[bold]console markup[/bold]" in passage.text and "<b>bold tags</b>" in passage.text
                assert passage.find_elements("css selector", "script, b") == []
                assert driver.execute_script("return window.injected === undefined")
                keep_screenshot(driver, tmp_path, "label-page.png")
            if index == 1:  # a note, typed and left with the keyboard, saved with the grade
                press(driver, "n")
                press(driver, "checked the whole table")
                press(driver, Keys.ESCAPE)
            grade = 3 if setup["origins"][question_id] == doc_id else 0
            press(driver, str(grade))
            graded[index] = grade
            index += 1
            wait_ready(driver, min(index, total - 1))  # the judgment is saved
            if index == 3:  # between two judgments: the server dies outright, then starts again
                server.send_signal(signal.SIGKILL)
                server.wait(10)
                server, url = start_server(setup, "browser")
                driver.get(url)
                wait_ready(driver, index)  # where it stopped
        assert markup_seen
        press(driver, Keys.ARROW_LEFT)  # back, with the arrows: the grade given is shown
        wait_ready(driver, total - 2)
        assert driver.find_element("id", "current-grade").text.startswith(f"graded {graded[total - 2]}")
        progress = driver.find_element("id", "progress").text
        assert f"{total} done, 0 left" in progress and "s per judgment" in progress
    finally:
        driver.quit()
        server.send_signal(signal.SIGTERM)  # stops the server, which writes the export
        output = server.communicate(timeout=60)[0]
    assert server.returncode == 0, output
    assert f"{total} of {total} pairs judged" in " ".join(output.split())

    run_dir = setup["workspace"].run_dir("browser")
    judgments = load_jsonl(run_dir / "judgments.jsonl")
    assert [(row["grade"]) for row in judgments] == [graded[i] for i in range(total)]  # none lost, none twice
    assert judgments[1]["note"] == "checked the whole table" and all(row["seconds"] > 0 for row in judgments)
    validated = benchsmith.validate(
        setup["bench"],
        human=run_dir / "beir",
        retrievers=RETRIEVERS,
        embedder=register_embedder(HashingEmbedder()),
        depth=20,
        bootstrap=20,
        workspace=setup["workspace"].root,
        run_id="validate-browser",
    )
    assert validated.results()["human"]["queries"] == 3


def test_a_review_rejects_one_turn_edits_another_and_publish_leaves_the_rejected_one_out(setup, tmp_path):
    from selenium.webdriver.common.keys import Keys

    driver = browser(tmp_path / "profile")
    server, url = start_server(setup, "review-browser", "review", "bench", "--reviewer", "rita")
    try:
        driver.get(url)
        wait_ready(driver, 0)
        assert driver.find_element("id", "passages").text  # the gold (or held-out) passage is shown
        rejected = driver.find_element("tag name", "body").get_attribute("data-turn-id")
        press(driver, "r")
        press(driver, "1")  # the rubric's first class: unaskable
        wait_ready(driver, 1)
        original = driver.find_element("id", "question").text
        edited = driver.find_element("tag name", "body").get_attribute("data-turn-id")
        press(driver, "e")
        edit = driver.find_element("id", "edit")
        edit.send_keys(Keys.CONTROL, "a")
        press(driver, "Which table does the <b>journal</b> file fill?")
        press(driver, Keys.ENTER)
        wait_ready(driver, 2)
        press(driver, "a")
        wait_ready(driver, 3)
        press(driver, "k")
        wait_ready(driver, 2)
        press(driver, "k")
        wait_ready(driver, 1)
        assert driver.find_element("id", "edited").text == "Which table does the <b>journal</b> file fill?"
        assert driver.find_element("id", "question").text == original  # kept beside the edit
        assert "1 accepted, 1 rejected, 1 edited" in driver.find_element("id", "progress").text
        driver.get(f"{url}?turn={rejected}")  # a report's link to a turn it lists
        wait_ready(driver, 0)
        assert driver.find_element("id", "current-verdict").text == "rejected: unaskable"
        driver.get(f"{url}?turn={edited}")
        wait_ready(driver, 1)
        driver.execute_script("window.scrollTo(0, 0)")
        keep_screenshot(driver, tmp_path, "review-page.png")
    finally:
        driver.quit()
        server.send_signal(signal.SIGTERM)
        output = server.communicate(timeout=60)[0]
    assert server.returncode == 0, output
    assert "1 accepted, 1 rejected" in " ".join(output.split())

    verdicts = load_jsonl(setup["workspace"].run_dir("review-browser") / "verdicts.jsonl")
    assert [(row["verdict"], row["rubric_class"]) for row in verdicts] == [
        ("reject", "unaskable"),
        ("edit", None),
        ("accept", None),
    ]
    published = benchsmith.publish("bench", format="hf", out=tmp_path / "hf", workspace=setup["workspace"].root)
    assert published.rejected == 1
    queries = load_jsonl(setup["workspace"].run_dir("review-browser") / "beir" / "queries.jsonl")
    assert rejected not in {row["_id"] for row in queries} and len(queries) == published.turns
