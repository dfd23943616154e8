"""Uploads above the server's limit are refused with a message and leave the session working;
an accepted upload is named in the URL, and a link naming an uploaded file says so."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from .test_browser import settled_status, text, wait_text
from .test_truth import label

pytestmark = pytest.mark.ui


@pytest.mark.parametrize("megabytes", [60, 200])
def test_upload_over_the_limit_is_refused_and_the_session_keeps_working(
        page: Page, server, tmp_path, megabytes):
    console = []
    page.on("console", lambda m: console.append(m.text))
    big = tmp_path / f"wide{megabytes}.csv"
    with open(big, "wb") as f:  # a CSV header, then the bulk (refused before it is parsed)
        f.write(b"a,b,label\n")
        f.truncate(megabytes * 1024 * 1024)
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=3")
    before = settled_status(page)
    page.locator(".upload-file input[type=file]").set_input_files(str(big))
    message = wait_text(page, ".message", big.name, timeout=60)
    assert "above this server's upload limit of 50 MB" in message
    assert "explorer serve --data" in message
    # once the browser has sent the file, its drop zone is emptied rather than saying
    # "Upload complete" beside the refusal
    expect(page.locator(".upload-file .filepond--item")).to_have_count(0, timeout=60_000)
    assert "Upload complete" not in page.locator(".upload-file").inner_text()
    assert "digits-3v8" in text(page, ".data-summary")  # the data in use stays
    # the session still answers: another method refits on the same data
    page.locator(".select-method select").select_option(label("fgm"))
    line = settled_status(page, timeout=60, differs_from=before)
    assert "passes over X" in line or "iteration" in line
    assert "method=fgm" in page.url
    assert not any("not connected" in m for m in console), console


def test_an_uploaded_file_is_named_in_the_url_and_a_link_to_it_says_what_to_do(
        page: Page, server, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 4))
    good = tmp_path / "my-measurements.csv"
    good.write_text("p,q,r,s,outcome\n" + "\n".join(
        ",".join(f"{v:.4f}" for v in row) + f",{int(row[0] > 0)}" for row in X))
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=2")
    settled_status(page)
    page.locator(".upload-file input[type=file]").set_input_files(str(good))
    wait_text(page, ".data-summary", "my-measurements.csv")
    settled_status(page)
    assert re.search(r"dataset=my-measurements\.csv", page.url), page.url
    # the link, opened elsewhere, does not silently show other data
    other = page.context.new_page()
    other.goto(page.url)
    message = wait_text(other, ".message", "my-measurements.csv")
    assert "upload it again" in message
