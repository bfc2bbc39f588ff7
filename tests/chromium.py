"""A headless Chromium for the tests of the HTML reports: does a real browser load every
image of a page, and what does the page look like."""

import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# Written into the page once every image has loaded or failed, for --dump-dom to show.
IMAGE_CHECK_SCRIPT = """<script>
window.onload = () => {
  const images = Array.from(document.images);
  const loaded = images.filter((image) => image.complete && image.naturalWidth > 0).length;
  const check = document.createElement("div");
  check.id = "image-check";
  check.textContent = `loaded=${loaded} total=${images.length}`;
  document.body.appendChild(check);
};
</script>
"""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chromium_or_skip() -> str:
    """The chromium executable, installed first where possible; skips the test where not."""
    executable = shutil.which("chromium") or install_chromium()
    if executable is None:
        pytest.skip("chromium is not installed and could not be installed with apt-get")
    return executable


def install_chromium() -> str | None:
    """Debian's chromium, when this process may install packages; None when that fails (offline)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None
    import fcntl

    # pytest-xdist workers may both get here: one installs, the other waits and finds it installed
    # (two apt-get at once: the second fails on dpkg's lock and its test would be skipped).
    with open(Path(tempfile.gettempdir()) / "benchsmith-tests-chromium-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if executable := shutil.which("chromium"):
            return executable
        try:
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", "chromium"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                timeout=600,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
        return shutil.which("chromium")


def run_chromium(executable: str, profile_parent: Path, *arguments: str) -> subprocess.CompletedProcess:
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=profile_parent)  # fresh: no state between runs
    return subprocess.run(
        [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded_images(executable: str, page: Path, work_dir: Path) -> tuple[int, int]:
    """How many images of ``page`` a browser has loaded once the page is done, and how many it has."""
    before, body_end, after = page.read_text(encoding="utf-8").rpartition("</body>")
    checked = work_dir / f"{page.stem}-with-image-check.html"
    checked.write_text(before + IMAGE_CHECK_SCRIPT + body_end + after, encoding="utf-8")
    dom = run_chromium(executable, work_dir, "--virtual-time-budget=5000", "--dump-dom", checked.as_uri())
    match = re.search(r'id="image-check">loaded=(\d+) total=(\d+)<', dom.stdout)
    assert match, f"no image check in the DOM (exit {dom.returncode}): {dom.stderr[-2000:]}"
    return int(match[1]), int(match[2])


def take_screenshot(executable: str, page: Path, screenshot: Path, size: tuple[int, int]) -> Path:
    """A PNG of ``page`` in a window of ``size`` (width, height) pixels, written to ``screenshot``."""
    shot = run_chromium(
        executable,
        screenshot.parent,
        "--hide-scrollbars",
        f"--window-size={size[0]},{size[1]}",
        f"--screenshot={screenshot}",
        page.as_uri(),
    )
    assert screenshot.is_file(), f"no screenshot (exit {shot.returncode}): {shot.stderr[-2000:]}"
    return screenshot


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which a valid PNG has right after its signature."""
    assert data[:8] == PNG_SIGNATURE
    _, chunk_type = struct.unpack(">I4s", data[8:16])
    assert chunk_type == b"IHDR"
    return struct.unpack(">II", data[16:24])


# Written into the page once laid out: the widest table's overflow past its box, and the page's width.
WIDTH_CHECK_SCRIPT = """<script>
window.onload = () => {
  const boxes = Array.from(document.querySelectorAll(".table-scroll"));
  const overflow = Math.max(0, ...boxes.map((box) => box.scrollWidth - box.clientWidth));
  const check = document.createElement("div");
  check.id = "width-check";
  check.textContent = `overflow=${overflow} page=${document.documentElement.scrollWidth} tables=${boxes.length}`;
  document.body.appendChild(check);
};
</script>
"""


def table_widths(executable: str, page: Path, work_dir: Path, window_width: int) -> tuple[int, int, int]:
    """In a window ``window_width`` pixels wide: how far the widest table runs past its box (0 when
    every table fits), the page's width, and how many tables it has."""
    before, body_end, after = page.read_text(encoding="utf-8").rpartition("</body>")
    checked = work_dir / f"{page.stem}-with-width-check.html"
    checked.write_text(before + WIDTH_CHECK_SCRIPT + body_end + after, encoding="utf-8")
    dom = run_chromium(
        executable,
        work_dir,
        f"--window-size={window_width},900",
        "--virtual-time-budget=5000",
        "--dump-dom",
        checked.as_uri(),
    )
    match = re.search(r'id="width-check">overflow=(\d+) page=(\d+) tables=(\d+)<', dom.stdout)
    assert match, f"no width check in the DOM (exit {dom.returncode}): {dom.stderr[-2000:]}"
    return int(match[1]), int(match[2]), int(match[3])
