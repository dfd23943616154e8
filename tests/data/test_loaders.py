"""Loaders on real files written by the tests, in every format, and every bad-input case."""

from __future__ import annotations

import gzip
import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from explorer.data import DataError, Dataset, load, save


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y = np.where(X[:, 0] > 0, 1, 0)
    return X, y


# ----------------------------------------------------------------------------- round trips
def test_csv_round_trip_with_named_label(tmp_path, table):
    X, y = table
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame.insert(1, "target", y)  # label not last: chosen by name
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    ds = load(path, label="target")
    np.testing.assert_allclose(ds.X, X)
    np.testing.assert_array_equal(ds.y, y)
    assert ds.feature_names == ["a", "b", "c", "d"]
    assert ds.task == "classification"
    assert ds.source.endswith("data.csv")


def test_csv_default_label_is_last_column_and_text_labels(tmp_path, table):
    X, y = table
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["kind"] = np.where(y == 1, "spam", "ham")
    path = tmp_path / "text_labels.csv"
    frame.to_csv(path, index=False)
    ds = load(path)
    assert set(ds.y) == {"spam", "ham"}
    np.testing.assert_allclose(ds.X, X)


def test_tsv_and_semicolon_csv(tmp_path, table):
    X, y = table
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["y"] = y
    frame.to_csv(tmp_path / "d.tsv", sep="\t", index=False)
    frame.to_csv(tmp_path / "semi.csv", sep=";", index=False)
    for name in ("d.tsv", "semi.csv"):
        ds = load(tmp_path / name)
        np.testing.assert_allclose(ds.X, X)


def test_csv_without_header(tmp_path, table):
    X, y = table
    np.savetxt(tmp_path / "nohead.csv", np.column_stack([X, y]), delimiter=",")
    ds = load(tmp_path / "nohead.csv")
    assert ds.X.shape == (30, 4)
    np.testing.assert_array_equal(ds.y, y)


def test_regression_target_detected(tmp_path, table):
    X, _ = table
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["price"] = X @ np.arange(4.0) + 0.123
    frame.to_csv(tmp_path / "reg.csv", index=False)
    assert load(tmp_path / "reg.csv").task == "regression"


def test_svmlight_round_trip_stays_sparse(tmp_path, table):
    X, y = table
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1, X, 0))
    path = tmp_path / "d.svm"
    dump_svmlight_file(Xs, y, str(path), zero_based=False)
    ds = load(path)
    assert sp.issparse(ds.X)
    np.testing.assert_allclose(ds.X.toarray()[:, : Xs.shape[1]], Xs.toarray())
    np.testing.assert_array_equal(ds.y, y)


def test_svmlight_gz_and_bytes_upload(tmp_path, table):
    X, y = table
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    raw = path.read_bytes()
    (tmp_path / "d.svm.gz").write_bytes(gzip.compress(raw))
    a = load(tmp_path / "d.svm.gz")
    b = load(raw, name="upload.svm")
    np.testing.assert_allclose(a.X.toarray(), b.X.toarray())
    assert b.source == "upload.svm"


def test_libsvm_file_without_extension_is_sniffed(tmp_path, table):
    X, y = table
    path = tmp_path / "news20.binary"
    dump_svmlight_file(X, np.where(y == 1, 1, -1), str(path), zero_based=False)
    assert sp.issparse(load(path).X)


def test_svmlight_with_query_ids_is_ranking(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 3))
    y = rng.integers(0, 3, 12)
    qid = np.repeat([1, 2, 3], 4)
    dump_svmlight_file(X, y, str(tmp_path / "rank.svm"), query_id=qid, zero_based=False)
    ds = load(tmp_path / "rank.svm")
    assert ds.task == "ranking"
    np.testing.assert_array_equal(ds.query, qid)


def test_wide_svmlight_is_not_densified(tmp_path):
    n, m = 200, 150_000
    rng = np.random.default_rng(2)
    X = sp.random(n, m, density=20 / m, format="lil", random_state=3)
    X[0, m - 1] = 1.0  # the last column exists in the file
    X = X.tocsr()
    y = rng.integers(0, 2, n) * 2 - 1
    path = tmp_path / "wide.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    tracemalloc.start()
    ds = load(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert sp.issparse(ds.X) and ds.X.shape == (n, m)
    assert ds.X.nnz == X.nnz
    assert peak < 0.05 * n * m * 8, f"peak {peak / 2**20:.1f} MiB: was the matrix densified?"


def test_npz_dense_and_sparse(tmp_path, table):
    X, y = table
    np.savez(tmp_path / "dense.npz", X=X, y=y, feature_names=np.array(list("abcd")))
    ds = load(tmp_path / "dense.npz")
    np.testing.assert_allclose(ds.X, X)
    assert ds.feature_names == list("abcd")
    Xs = sp.csr_matrix(np.where(X > 0.5, X, 0))
    np.savez(tmp_path / "sparse.npz", data=Xs.data, indices=Xs.indices, indptr=Xs.indptr,
             shape=np.array(Xs.shape), format="csr", y=y)
    ds = load(tmp_path / "sparse.npz")
    assert sp.issparse(ds.X)
    np.testing.assert_allclose(ds.X.toarray(), Xs.toarray())


def test_parquet_round_trip(tmp_path, table):
    X, y = table
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["label"] = y
    frame.to_parquet(tmp_path / "d.parquet")
    ds = load(tmp_path / "d.parquet", label="label")
    np.testing.assert_allclose(ds.X, X)
    np.testing.assert_array_equal(ds.y, y)


@pytest.mark.parametrize("suffix", [".csv", ".svm", ".npz", ".parquet"])
def test_save_then_load(tmp_path, table, suffix):
    X, y = table
    ds = Dataset(X=X, y=y, name="t")
    path = save(ds, tmp_path / f"out{suffix}")
    back = load(path)
    dense = back.X.toarray() if sp.issparse(back.X) else back.X
    np.testing.assert_allclose(dense[:, :4], X)
    np.testing.assert_array_equal(back.y, y)


def test_catalogue_name_with_overrides():
    ds = load("fsa-correlated", n_samples=120, n_features=100, k_star=3)
    assert ds.X.shape == (120, 100)
    np.testing.assert_array_equal(ds.truth, [9, 19, 29])


# ----------------------------------------------------------------------------- bad input
def _expect(path_or_bytes, fragment, *, name=None, **kw):
    with pytest.raises(DataError) as info:
        load(path_or_bytes, name=name, **kw)
    message = str(info.value)
    file_name = name or path_or_bytes.name
    assert file_name in message, message
    assert fragment in message, message
    return message


def test_empty_files(tmp_path):
    for name in ("empty.csv", "empty.svm", "empty.npz", "empty.parquet"):
        (tmp_path / name).write_bytes(b"")
        _expect(tmp_path / name, "empty")
    (tmp_path / "comments.svm").write_text("# nothing here\n\n")
    _expect(tmp_path / "comments.svm", "empty")
    (tmp_path / "header_only.csv").write_text("a,b,label\n")
    _expect(tmp_path / "header_only.csv", "no data rows")


def test_ragged_rows(tmp_path):
    (tmp_path / "long.csv").write_text("a,b,y\n1,2,0\n3,4,1\n5,6,7,1\n")
    msg = _expect(tmp_path / "long.csv", "ragged")
    assert "line 4" in msg
    (tmp_path / "short.csv").write_text("a,b,y\n1,2,0\n3,1\n5,6,1\n")
    msg = _expect(tmp_path / "short.csv", "ragged")
    assert "line 3" in msg


def test_non_numeric_values(tmp_path):
    (tmp_path / "text.csv").write_text("a,b,y\n1,2,0\n3,abc,1\n5,6,1\n")
    msg = _expect(tmp_path / "text.csv", "non-numeric value 'abc'")
    assert "column 'b'" in msg and "line 3" in msg
    (tmp_path / "bad.svm").write_text("1 1:2 2:3\n-1 1:0.5 2:x\n")
    msg = _expect(tmp_path / "bad.svm", "not a number")
    assert "line 2" in msg


def test_nan_and_inf(tmp_path):
    (tmp_path / "nan.csv").write_text("a,b,y\n1,2,0\n3,,1\n5,6,1\n")
    msg = _expect(tmp_path / "nan.csv", "missing value")
    assert "column 'b'" in msg and "line 3" in msg
    (tmp_path / "inf.csv").write_text("a,b,y\n1,2,0\n3,4,1\ninf,6,1\n")
    msg = _expect(tmp_path / "inf.csv", "infinite value")
    assert "column 'a'" in msg and "line 4" in msg
    (tmp_path / "nan.svm").write_text("# header comment\n1 1:2 2:3\n-1 1:nan 2:1\n")
    msg = _expect(tmp_path / "nan.svm", "NaN")
    assert "line 3" in msg and "column 1" in msg
    np.savez(tmp_path / "inf.npz", X=np.array([[1.0, np.inf], [0.0, 1.0]]), y=np.array([0, 1]))
    _expect(tmp_path / "inf.npz", "infinite value at row 1, column 2")


def test_label_column_with_one_class(tmp_path):
    rows = "".join(f"{i},{i + 1},1\n" for i in range(6))  # enough rows, one class
    (tmp_path / "one.csv").write_text("a,b,y\n" + rows)
    _expect(tmp_path / "one.csv", "single class (1)")  # the value, not np.int64(1)
    (tmp_path / "one.svm").write_text("".join(f"1 1:{i}\n" for i in range(2, 8)))
    _expect(tmp_path / "one.svm", "single class")


def test_missing_label_column(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,y\n1,2,1\n3,4,0\n")
    msg = _expect(tmp_path / "d.csv", "no label column named 'target'", label="target")
    assert "a, b, y" in msg
    np.savez(tmp_path / "nolabels.npz", X=np.eye(3))
    _expect(tmp_path / "nolabels.npz", "no labels")


def test_rows_with_an_empty_label_are_the_unlabeled_rows(tmp_path):
    """A file whose target is empty for most rows (semi-supervised data): those rows are kept
    as X_unlabeled, in the file's order, and the summary says how many of each there are."""
    rows = ["a,b,y"] + [f"{i},{2 * i},{'' if i % 4 else i % 8 // 4}" for i in range(40)]
    (tmp_path / "semi.csv").write_text("\n".join(rows) + "\n")
    ds = load(str(tmp_path / "semi.csv"))
    assert ds.X.shape == (10, 2) and ds.X_unlabeled.shape == (30, 2)
    assert ds.X[:, 0].tolist() == list(range(0, 40, 4))
    assert ds.X_unlabeled[:3, 0].tolist() == [1, 2, 3]
    assert "unlabeled 30" in ds.summary()
    text = ["a,b,y"] + [f"{i},{i % 3},{'' if i % 2 else 'ab'[i % 4 // 2]}" for i in range(20)]
    (tmp_path / "words.csv").write_text("\n".join(text) + "\n")
    words = load(str(tmp_path / "words.csv"))
    assert sorted(set(words.y)) == ["a", "b"] and words.X_unlabeled.shape == (10, 2)
    (tmp_path / "none.csv").write_text("a,b,y\n1,2,\n3,4,\n5,6,\n7,8,\n9,9,\n")
    _expect(tmp_path / "none.csv", "no labeled row")


def test_corrupt_files(tmp_path):
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 this is not a zip archive at all")
    _expect(tmp_path / "bad.npz", "not a readable .npz")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1garbagegarbagePAR1")
    _expect(tmp_path / "bad.parquet", "not a readable Parquet")
    (tmp_path / "bad.svm.gz").write_bytes(b"\x1f\x8b\x08\x00 truncated")
    _expect(tmp_path / "bad.svm.gz", "compressed")
    (tmp_path / "what.xyz").write_bytes(b"\x00\x01\x02\x03")
    _expect(tmp_path / "what.xyz", "file format")


def test_bytes_upload_errors_name_the_upload():
    with pytest.raises(DataError, match="upload.csv.*ragged"):
        load(b"a,b,y\n1,2,0\n3,4,5,6\n", name="upload.csv")


def test_missing_file_and_unknown_name(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load(tmp_path / "absent.csv")
    with pytest.raises(DataError, match="no dataset named 'nope'"):
        load("nope")


@pytest.mark.parametrize("field, value, why", [
    (8, 99, "compression method"),      # unknown compression method
    (4, 99, "version"),                 # "needs zip version 9.9 to extract"
])
def test_npz_with_an_unknown_zip_header_names_the_file(tmp_path, field, value, why):
    """A zip header naming an unknown version or compression method raised
    NotImplementedError from deep inside zipfile; it is a DataError naming the file."""
    import struct

    path = tmp_path / "strange.npz"
    np.savez(path, X=np.eye(3), y=np.array([0, 1, 0]))
    raw = bytearray(path.read_bytes())
    # patch the field in every local header (PK\3\4) and central directory entry (PK\1\2)
    for sig, offset in ((b"PK\x03\x04", field), (b"PK\x01\x02", field + 2)):
        at = raw.find(sig)
        while at != -1:
            struct.pack_into("<H", raw, at + offset, value)
            at = raw.find(sig, at + 4)
    path.write_bytes(bytes(raw))
    with pytest.raises(DataError, match="strange.npz"):
        load(path)


def test_an_unlabeled_file_gives_its_rows_to_fit(tmp_path):
    """fit(X, y, X_unlabeled="file") takes a file whose label column is empty in every row, an
    .npz without y, or a labeled file (labels ignored); a file with other columns is refused
    naming both counts."""
    from explorer import FSManifold
    from explorer.data import load_unlabeled, make

    semi = make("digits-3v8-semi")
    U = semi.X_unlabeled
    header = ",".join(f"p{j}" for j in range(64)) + ",digit"
    (tmp_path / "unlabeled.csv").write_text(
        header + "\n" + "\n".join(",".join(f"{v:g}" for v in row) + "," for row in U) + "\n")
    np.savez(tmp_path / "unlabeled.npz", X=U)
    for name in ("unlabeled.csv", "unlabeled.npz"):
        np.testing.assert_array_equal(load_unlabeled(tmp_path / name, n_features=64), U)
    from_file = FSManifold(m=8).fit(semi.X, semi.y, X_unlabeled=str(tmp_path / "unlabeled.csv"))
    given = FSManifold(m=8).fit(semi.X, semi.y, X_unlabeled=U)
    assert from_file.n_unlabeled_ == U.shape[0]
    np.testing.assert_array_equal(from_file.selected_features_, given.selected_features_)
    np.savez(tmp_path / "narrow.npz", X=U[:, :10])
    with pytest.raises(DataError, match="has 10 feature columns; the labeled rows have 64"):
        FSManifold(m=8).fit(semi.X, semi.y, X_unlabeled=tmp_path / "narrow.npz")
