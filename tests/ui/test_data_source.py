"""The session's data source on its own: catalogue knobs, uploads with their label column,
served files and the upload limit — real files, no session."""

from __future__ import annotations

import pytest

from explorer.data import DataError
from explorer.ui._data_source import DataSource, available_datasets, local_files
from explorer.ui._session import UPLOAD


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
    good = b"a,b,c,label\n1,2,3,x\n4,5,6,y\n7,8,9,x\n1,1,1,y\n"
    ds = source.read_upload(good, "good.csv", "label")
    assert ds.n_features == 3 and source.table_columns() == ["a", "b", "c", "label"]
    with pytest.raises(DataError):
        source.read_upload(b"\x00\x01 not a table", "bad.csv")
    assert source.upload_name == "good.csv"  # the good upload stays the source
    assert source.build(UPLOAD).n_samples == ds.n_samples


def test_served_files_and_the_upload_limit(tmp_path, monkeypatch):
    path = tmp_path / "mine.csv"
    path.write_text("x,y,label\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n")
    monkeypatch.setenv("EXPLORER_DATA", str(path))
    monkeypatch.setenv("EXPLORER_MAX_UPLOAD_MB", "1")
    assert local_files() == {"mine.csv": str(path)} and "mine.csv" in available_datasets()
    assert DataSource(label_column="label").build("mine.csv").n_features == 2
    assert DataSource.too_large(2 * 2**20) and not DataSource.too_large(2**19)
    assert "explorer serve --data big.csv" in DataSource.refusal("big.csv", 2 * 2**20)
