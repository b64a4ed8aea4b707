"""Headless Chromium for the page checks: render a URL, return its DOM after scripts ran and its console."""

from __future__ import annotations

import shutil
import subprocess

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
         "--no-first-run", "--virtual-time-budget=4000"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium not found (Debian: apt-get install chromium; CI installs it in .ci/run)")


def render(url: str, tmp_path, screenshot=None, size=(1280, 2200)) -> tuple[str, list[str]]:
    """(DOM after load, console messages); with ``screenshot``, also a PNG of the page."""
    exe = chromium()
    profile = tmp_path / "chromium-profile"
    base = [exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}"]
    dom = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    if screenshot is not None:
        shot = subprocess.run([*base, f"--screenshot={screenshot}", url], capture_output=True, text=True,
                              timeout=120)
        console += [line for line in shot.stderr.splitlines() if ":CONSOLE" in line]
    return dom.stdout, console


# appended to a copy of a page: after load, writes every image's state into the DOM for --dump-dom
IMAGE_PROBE = """<script>window.addEventListener("load", () => {
  const imgs = Array.from(document.images).map(i => i.complete && i.naturalWidth > 0 ? "ok" : "broken:" + i.alt);
  const pre = document.createElement("pre"); pre.id = "image-probe"; pre.textContent = imgs.join(" ");
  document.body.appendChild(pre); });</script>"""
