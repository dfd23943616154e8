"""The session's data source on its own: catalogue knobs, uploads with their label column,
served files and the upload limit — real files, no session."""

from __future__ import annotations

import pytest

from explorer.data import DataError
from explorer.ui._data_source import UPLOAD, DataSource, available_datasets, local_files


def test_a_catalogue_entry_is_built_with_its_knobs():
    source = DataSource(params={"n_samples": 300, "n_features": 120, "n_test": 50})
    assert {spec.name for spec in source.specs("fsa-correlated")} >= {"n_samples", "n_features"}
    ds = source.build("fsa-correlated")
    assert ds.n_features == 120
    assert source.specs(UPLOAD) == ()


def test_open_shares_a_catalogue_split_between_sources_and_splits_uploads_per_source():
    """Two sources with the same knobs open one shared split (held out once per server, its
    arrays read-only); other knobs give another; an upload is split for its source alone."""
    knobs = {"n_samples": 200, "n_features": 120, "n_test": 50}
    a, b = DataSource(params=dict(knobs)), DataSource(params=dict(knobs))
    first, second = a.open("fsa-correlated"), b.open("fsa-correlated")
    assert first is second and first.has_test and not first.X.flags.writeable
    assert DataSource(params={**knobs, "seed": 1}).open("fsa-correlated") is not first
    upload = DataSource()
    upload.read_upload(b"a,b,label\n1,2,x\n4,5,y\n7,8,x\n1,1,y\n3,3,x\n2,2,y\n",
                       "t.csv", "label")
    assert upload.open(UPLOAD) is not upload.open(UPLOAD)
    with pytest.raises(ValueError):
        DataSource(params={"n_samples": -3}).open("fsa-correlated")


def test_an_upload_reads_its_table_and_keeps_the_previous_one_on_a_bad_file():
    source = DataSource()
    with pytest.raises(DataError):
        source.build(UPLOAD)  # nothing uploaded yet
    good = b"a,b,c,label\n1,2,3,x\n4,5,6,y\n7,8,9,x\n1,1,1,y\n2,3,1,x\n"
    ds = source.read_upload(good, "good.csv", "label")
    assert ds.n_features == 3 and source.table_columns() == ["a", "b", "c", "label"]
    with pytest.raises(DataError):
        source.read_upload(b"\x00\x01 not a table", "bad.csv")
    assert source.upload_name == "good.csv"  # the good upload stays the source
    assert source.build(UPLOAD).n_samples == ds.n_samples


def test_served_files_and_the_upload_limit(tmp_path, monkeypatch):
    path = tmp_path / "mine.csv"
    path.write_text("x,y,label\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n9,1,a\n")
    monkeypatch.setenv("EXPLORER_DATA", str(path))
    monkeypatch.setenv("EXPLORER_MAX_UPLOAD_MB", "1")
    assert local_files() == {"mine.csv": str(path)} and "mine.csv" in available_datasets()
    assert DataSource(label_column="label").build("mine.csv").n_features == 2
    assert DataSource.too_large(2 * 2**20) and not DataSource.too_large(2**19)
    assert "explorer serve --data big.csv" in DataSource.refusal("big.csv", 2 * 2**20)


def test_the_session_codec_without_a_session():
    from explorer.ui import _session
    from explorer.ui._method_settings import MethodSettings

    source, settings = DataSource(params={"n_samples": 300}), MethodSettings("fgm", {"B": 5})
    query = _session.to_query("fgm-type1", source, settings)
    assert query == {"dataset": "fgm-type1", "data.n_samples": "300", "method": "fgm", "B": "5"}
    parsed = _session.parse_query({**query, "C": ["-1"], "nope": "2", "data.n_samples": "x"},
                                  available=["fgm-type1"], method="fsa", dataset="wine")
    assert (parsed.method, parsed.dataset, parsed.params) == ("fgm", "fgm-type1", {"B": 5})
    assert parsed.data_params == {}
    assert len(parsed.problems) == 3 and any("'nope'" in p for p in parsed.problems)
    unknown = _session.parse_query({"method": "magic", "dataset": "mine.csv"}, available=[],
                                   method="fsa", dataset="wine")
    assert unknown.method is None and unknown.dataset is None
    assert "unknown method 'magic'" in unknown.problems[0]
    assert "upload it again" in unknown.problems[1]
    session = _session.export_session("fgm-type1", source, settings, params={"B": 5},
                                       metric="f1", baselines=("abess",))
    assert session["dataset_params"] == {"n_samples": 300} and session["params"] == {"B": 5}
