"""Lazy loaders on real small files: a dask X equal to the data written, located errors."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import zarr
from sklearn.datasets import dump_svmlight_file

import explorer
from explorer import FGM
from explorer.data import DataError


@pytest.fixture()
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 25)).astype(np.float32)
    return X, (X[:, 0] + X[:, 3] > 0).astype(np.int64)


def test_zarr_group_with_a_test_part(tmp_path, data):
    X, y = data
    group = zarr.open_group(str(tmp_path / "d.zarr"), mode="w")
    group.create_array("X", data=X[:60], chunks=(25, 7))
    group.create_array("y", data=y[:60])
    group.create_array("X_test", data=X[60:], chunks=(25, 7))
    group.create_array("y_test", data=y[60:])
    ds = explorer.load(tmp_path / "d.zarr")
    assert ds.is_lazy and isinstance(ds.X, da.Array) and ds.X.chunksize == (25, 7)
    np.testing.assert_array_equal(ds.X.compute(), X[:60])
    np.testing.assert_array_equal(ds.y_test, y[60:])
    assert "lazy (dask" in ds.summary() and "test 30" in ds.summary()
    model = FGM(B=2).fit(ds.X, ds.y)
    assert model.score(ds.X_test, ds.y_test) > 0.7


def test_zarr_group_without_labels(tmp_path, data):
    group = zarr.open_group(str(tmp_path / "d.zarr"), mode="w")
    group.create_array("X", data=data[0])
    with pytest.raises(DataError, match="d.zarr.*no array y"):
        explorer.load(tmp_path / "d.zarr")


def test_npy_memory_mapped(tmp_path, data):
    X, y = data
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    for source in (tmp_path / "X.npy", tmp_path):
        ds = explorer.load(source)
        assert ds.is_lazy
        np.testing.assert_array_equal(ds.X.compute(), X)
        np.testing.assert_array_equal(ds.y, y)
    np.save(tmp_path / "wide.npy", X)
    with pytest.raises(DataError, match="wide.npy.*wide.y.npy beside it"):
        explorer.load(tmp_path / "wide.npy")
    np.save(tmp_path / "wide.y.npy", y[:10])
    with pytest.raises(DataError, match="90 rows but y has 10 labels"):
        explorer.load(tmp_path / "wide.npy")


def test_parquet_directory(tmp_path, data):
    X, y = data
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(25)])
    frame.insert(0, "cls", y)
    folder = tmp_path / "shards"
    folder.mkdir()
    for i, start in enumerate(range(0, 90, 40)):
        frame.iloc[start:start + 40].to_parquet(folder / f"part{i}.parquet")
    ds = explorer.load(folder, label="cls")
    assert ds.is_lazy and ds.X.numblocks == (3, 1)
    np.testing.assert_array_equal(ds.X.compute(), X.astype(np.float64))
    np.testing.assert_array_equal(ds.y, y)
    assert ds.feature_names[:2] == ["g0", "g1"]
    frame.iloc[85, 5] = np.nan  # g4 of the last shard's 6th row
    frame.iloc[80:].to_parquet(folder / "part2.parquet")
    bad = explorer.load(folder, label="cls")
    with pytest.raises(DataError, match=r"part2.parquet: row 6 \(row 86 of the dataset\), "
                                        r"column 'g4'"):
        FGM(B=2).fit(bad.X, bad.y)
    frame.iloc[:3, :-1].to_parquet(folder / "part3.parquet")
    with pytest.raises(DataError, match="part3.parquet.*same columns"):
        explorer.load(folder, label="cls")


def test_svmlight_shards(tmp_path, data):
    _, y = data
    X = sp.random(90, 25, density=0.2, format="lil", random_state=3)
    X[:, 0] = 0.0  # no shard uses feature index 1 (one-based): still one indexing for all
    X = sp.csr_matrix(X)
    folder = tmp_path / "svm"
    folder.mkdir()
    for i, start in enumerate(range(0, 90, 30)):
        dump_svmlight_file(X[start:start + 30], y[start:start + 30],
                           str(folder / f"s{i}.svm"), zero_based=False)
    ds = explorer.load(folder)
    assert ds.is_lazy and ds.is_sparse and ds.X.numblocks == (3, 1)
    assert ds.n_features == 25
    np.testing.assert_allclose(ds.X.compute().toarray(), X.toarray(), rtol=1e-15)
    np.testing.assert_array_equal(ds.y, y)
    with open(folder / "s1.svm", "a") as handle:
        handle.write("1 3:0.5 2:0.1\n")
    with pytest.raises(DataError, match="s1.svm: line 31: feature indices must increase"):
        explorer.load(folder)


def test_summary_reads_no_data():
    from dask import delayed

    def unreadable():
        raise AssertionError("X was read")

    X = da.from_delayed(delayed(unreadable)(), shape=(1000, 50), dtype=np.float64)
    ds = explorer.data.Dataset(X=X, y=np.arange(1000) % 2)
    assert ds.summary().startswith("1,000 × 50 · lazy (dask, 400 kB float64")
    train = ds.split(seed=0)
    assert train.X.shape == (700, 50) and train.is_lazy


def test_a_directory_of_other_files(tmp_path):
    (tmp_path / "notes.md").write_text("hello")
    with pytest.raises(DataError, match="neither a Zarr group"):
        explorer.load(tmp_path)
