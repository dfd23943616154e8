"""A user's own data, as a new user brings it: face images as a MATLAB file and as a CSV of
1,024 pixel columns (15 subjects), a file the loaders cannot read, an image shape typed in the
sidebar or the URL, many classes on every method's page — each read from what the page
shows: the Bokeh models' glyphs, the message box, the status line, page errors."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import scipy.io
from playwright.sync_api import Page, expect

from explorer.data import make_faces
from explorer.methods import REGISTRY

from .test_browser import settled_status, status, text, wait_for, wait_text
from .test_truth import label

pytestmark = pytest.mark.ui

SUBJECTS, PER_SUBJECT, SIDE = 15, 6, 32
CLASSIFIERS = sorted(n for n, c in REGISTRY.items() if c()._task == "classification")
# the weight map of a pixel dataset, and a map's image glyph's grid
WEIGHTS = "w (red +, blue −)"
IMAGE_SHAPE = """title => {
  let found = null;  // the last drawn figure of that title (earlier ones stay in the document)
  for (const doc of Bokeh.documents) for (const m of doc.all_models) {
    if (!m.title || !m.title.text || !m.title.text.includes(title) || !m.renderers) continue;
    if (!Bokeh.index.find_one(m)) continue;
    for (const r of m.renderers) {
      if (!r.glyph || r.glyph.type !== 'Image') continue;
      const d = r.data_source.data, get = k => d instanceof Map ? d.get(k) : d[k];
      const img = get('image')[0];
      found = {shape: Array.from(img.shape || []), dw: get('dw')[0], dh: get('dh')[0],
               x: [m.x_range.start, m.x_range.end], y: [m.y_range.start, m.y_range.end]};
    }
  }
  return found; }"""


@pytest.fixture(scope="module")
def face_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faces")
    data = make_faces(SUBJECTS, PER_SUBJECT, SIDE)
    X, y = data.X, data.y
    scipy.io.savemat(folder / "faces.mat", {"X": X, "Y": y[:, None]})
    frame = pd.DataFrame(X, columns=[f"pixel{j}" for j in range(SIDE * SIDE)])
    frame["subject"] = y
    frame.to_csv(folder / "faces.csv", index=False)
    return folder / "faces.mat", folder / "faces.csv"


def _errors(page: Page) -> list[str]:
    found: list[str] = []
    page.on("pageerror", lambda e: found.append(str(e)))
    return found


def _image(page: Page, title: str):
    return wait_for(lambda: page.evaluate(IMAGE_SHAPE, title), 30)


@pytest.mark.parametrize("which", ["mat", "csv"])
def test_faces_upload_as_images_and_every_method_fits_them(page: Page, server, server_log,
                                                          shot, face_files, which):
    errors = _errors(page)
    path = face_files[0] if which == "mat" else face_files[1]
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=4")
    settled_status(page)
    page.locator(".upload-file input[type=file]").set_input_files(str(path))
    summary = wait_text(page, ".data-summary", path.name, timeout=60)
    assert "15 classes" in summary
    named = "unnamed" if which == "mat" else "numbered"
    assert f"drawn as images: 32 × 32 guessed from 1,024 {named} columns" in summary
    expect(page.locator(".input-image-shape input")).to_have_value("32x32")
    line = settled_status(page, timeout=60)
    for method in ("fgm", "fsa", "abess", "l1-svm", "fs-manifold", "grfl"):
        before = text(page, ".message").strip()
        page.locator(".select-method select").select_option(label(method))
        line = settled_status(page, timeout=120, differs_from=line)
        # the box of an earlier method's fit never stays above this one's
        after = text(page, ".message").strip()
        assert not after or after != before or after.startswith("Loaded"), (method, after)
        page.locator(".view-tabs").get_by_text("Sparsity map").click()
        image = _image(page, "")  # each method titles its map its own way
        assert image["shape"] == [SIDE, SIDE], (method, image)
        assert image["x"][0] <= 0 and image["x"][1] >= SIDE and image["y"][1] >= SIDE
    page.locator(".select-method select").select_option(label("fisher"))  # quick resamples
    settled_status(page, timeout=60, differs_from=line)
    page.locator(".view-tabs").get_by_text("Stability").click()
    page.locator(".btn-stability button").click()
    wait_text(page, ".stability-verdict", "Φ̂", timeout=180)
    grid = wait_for(lambda: page.evaluate(IMAGE_SHAPE, "selection frequency"), 60)
    assert grid["shape"] == [SIDE, SIDE]
    shot(page, which)
    assert errors == [], errors[:3]
    assert "Traceback" not in server_log()


def test_a_file_the_loaders_cannot_read_is_refused_in_words(page: Page, server, tmp_path):
    odd = tmp_path / "notes.xyz"
    odd.write_bytes(b"\x00\x01 not a table")
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=4")
    settled_status(page)
    page.locator(".upload-file input[type=file]").set_input_files(str(odd))
    message = wait_text(page, ".message", "notes.xyz", timeout=30)
    assert "cannot tell the file format" in message and ".mat" in message
    assert "invalid type" not in text(page, ".upload-file")
    assert "digits-3v8" in text(page, ".data-summary")


def test_an_image_shape_by_the_url_and_by_the_sidebar(page: Page, server, shot):
    errors = _errors(page)
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=4&image=4x16")
    settled_status(page)
    expect(page.locator(".input-image-shape input")).to_have_value("4x16")
    assert _image(page, WEIGHTS)["shape"] == [4, 16]
    box = page.locator(".input-image-shape input")
    box.fill("30x30")
    box.press("Enter")
    message = wait_text(page, ".message", "Image shape", timeout=20)
    assert "900 pixels and the data have 64 features" in message
    expect(box).to_have_value("4x16")  # what is drawn, not the refused text
    box.fill("8x8")
    box.press("Enter")
    wait_for(lambda: "image=8x8" in page.evaluate("location.search"), 20)
    assert _image(page, WEIGHTS)["shape"] == [8, 8]
    assert errors == []


def test_a_refused_fit_says_so_and_its_box_goes_with_the_next_fit(page: Page, server,
                                                                   server_log):
    page.goto(f"{server}/explorer?dataset=wine&method=lasso")
    message = wait_text(page, ".message", "regressor", timeout=30)
    assert "classifier" in message or "class labels" in message
    wait_for(lambda: "not fitted: the method refused" in status(page), 20)
    page.locator(".select-method select").select_option(label("fgm"))
    settled_status(page, timeout=60)
    expect(page.locator(".message")).to_be_hidden()
    assert "Traceback" not in server_log()


@pytest.mark.parametrize("method", [m for m in CLASSIFIERS if m not in ("random",)])
def test_every_multi_class_method_page_draws_without_a_page_error(page: Page, server, method):
    errors = _errors(page)
    query = f"dataset=digits&method={method}"
    if method in ("fs-manifold",):
        query += "&m=10"
    page.goto(f"{server}/explorer?{query}")
    settled_status(page, timeout=180)
    for tab in ("Sparsity map", "Selected features", "Accuracy vs #features"):
        page.locator(".view-tabs").get_by_text(tab).click()
        page.wait_for_timeout(600)
    assert errors == [], errors[:3]


def test_stop_is_red_only_while_a_fit_runs(page: Page, server):
    page.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=4")
    settled_status(page)
    stop = page.locator(".btn-stop button")
    expect(stop).to_be_disabled()
    assert not re.search(r"danger", stop.get_attribute("class") or "")


def test_closing_a_tab_during_a_stability_run_leaves_no_traceback(context, server,
                                                                   server_log):
    page = context.new_page()
    page.goto(f"{server}/explorer?dataset=breast-cancer&method=fsa&k=5")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Stability").click()
    page.locator(".btn-stability button").click()
    wait_text(page, ".stability-status", "resample", timeout=60)
    page.close()
    other = context.new_page()  # the server goes on serving
    other.goto(f"{server}/explorer?dataset=digits-3v8&method=fisher&k=3")
    settled_status(other, timeout=60)
    other.wait_for_timeout(3000)
    assert "Traceback" not in server_log()
