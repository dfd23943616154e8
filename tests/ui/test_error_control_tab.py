"""The Error control tab and the chance baseline, as a user sees them: the stability path
with its threshold and stable set, the bound in words, knockoffs in words, the coefficient
path and the redundancy heatmap — for FGM, FSA and abess on a real set — and the random
columns' curve on the accuracy view, read from the Bokeh models."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .test_browser import settled_status, wait_for, wait_text
from .test_truth import FIGURE

LEGEND = """title => {
  for (const doc of Bokeh.documents) for (const m of doc.all_models)
    if (m.title && m.title.text && m.title.text.startsWith(title))
      return (m.center || []).concat(m.right || []).filter(a => a.type === 'Legend')
        .flatMap(l => l.items.map(i => i.label && i.label.value));
  return null; }"""

pytestmark = pytest.mark.ui


@pytest.mark.parametrize("method", ["fgm", "fsa", "abess"])
def test_error_control_draws_its_four_views(page: Page, server, server_log, shot, method):
    page.goto(f"{server}/explorer?dataset=breast-cancer&method={method}&k=5")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Error control").click()
    # before a run: nothing to stop, no empty path, nothing to download
    # the tab's content is built when first shown: seconds on a loaded machine
    expect(page.locator(".btn-error-control-stop button")).to_be_disabled(timeout=30_000)
    expect(page.locator(".view-stability-path")).to_be_hidden()
    expect(page.locator(".download-stability-path")).to_be_hidden()
    page.locator(".btn-error-control button").click()
    wait_text(page, ".error-control-status", "pairs", timeout=30)
    verdict = wait_text(page, ".error-control-verdict", "stable feature", timeout=120)
    # breast cancer's 30 features at PFER 1 and cutoff 0.75 with 20 pairs: q = 5
    match = re.search(r"(\d+) stable features?(?:: [^(]+)? \(selected in at least 75% of 40 "
                      r"half-samples, each fit keeping the first 5 features to enter along "
                      r"k = 1–5\)\. Expected false selections among them: at most ([\d.]+), "
                      r"within the PFER of 1 you chose", verdict)
    assert match and float(match.group(2)) <= 1.0, verdict
    assert "exchangeable" in verdict and "standardised for the selection" in verdict
    names = re.search(r"stable features?: ([^(]+) \(", verdict)
    if int(match.group(1)):  # each stable feature named, in the verdict and on the path
        named = [n.strip() for n in names.group(1).split(",")]
        legend = page.evaluate(LEGEND, "stability path")
        assert set(named) <= set(legend), (named, legend)

    path = wait_for(lambda: page.evaluate(FIGURE, "stability path"), 20)
    curves = [g for g in path["glyphs"] if "probability" in g["cols"]]
    assert curves and all(0 <= p <= 1 for g in curves for p in g["cols"]["probability"])
    ks = sorted({k for g in curves for k in g["cols"]["k"]})
    assert ks[0] == 1 and ks[-1] == 5 and path["x"][0] <= 1 and path["x"][1] >= 5
    assert path["y"] == [0, 1.02]
    knockoffs = wait_text(page, ".knockoff-verdict", "Knockoffs", timeout=120)
    assert "false discovery rate of 0.1" in knockoffs or "not used" in knockoffs
    coefficients = wait_for(lambda: page.evaluate(FIGURE, "coefficient path"), 60)
    weights = [w for g in coefficients["glyphs"] for w in g["cols"].get("weight_per_sd", [])]
    assert weights and coefficients["y"][0] <= min(weights) <= max(weights) <= \
        coefficients["y"][1]
    heat = wait_for(lambda: page.evaluate(FIGURE, "redundancy of the chosen features"), 60)
    names = {n for g in heat["glyphs"] for n in g["cols"].get("feature", [])}
    assert len(names) == 5 and any(n.startswith(("mean ", "worst ")) for n in names)
    expect(page.locator(".download-stability-path")).to_be_visible()
    expect(page.locator(".btn-error-control-stop button")).to_be_disabled(timeout=60_000)
    # one click away: the same selection on permuted labels, said beside the bound
    page.locator(".btn-error-control-permute button").click()
    checked = wait_text(page, ".error-control-verdict", "On permuted labels", timeout=120)
    assert re.search(r"On permuted labels this run keeps \d+\.\d stable features? \(mean "
                     r"of 1 permutation", checked), checked
    expect(page.locator(".btn-error-control-permute button")).to_be_enabled(timeout=30_000)
    shot(page)
    assert "Traceback" not in server_log()


def test_the_accuracy_view_draws_the_chance_baseline(page: Page, server):
    page.goto(f"{server}/explorer?dataset=breast-cancer&method=fisher&k=5")
    settled_status(page)
    page.locator(".view-tabs").get_by_text("Accuracy vs #features").click()
    wait_text(page, ".sweep-status", "finished", timeout=180)

    def chance():
        fig = page.evaluate(FIGURE, "cross-validated measure vs #features")
        labels = page.evaluate("""title => {
          for (const doc of Bokeh.documents) for (const m of doc.all_models)
            if (m.title && m.title.text && m.title.text.startsWith(title))
              return (m.center || []).filter(a => a.type === 'Legend')
                .flatMap(l => l.items.map(i => i.label && i.label.value));
          return null; }""", "cross-validated measure vs #features")
        return (fig, labels) if labels and "random" in labels else None

    fig, labels = wait_for(chance, 20)
    words = wait_text(page, ".sweep-verdicts", "fisher against random", timeout=10)
    assert re.search(r"fisher against random: .*k = \d", words)
