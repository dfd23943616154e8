"""A user's own files: MATLAB .mat (v5 and v7.3, as the feature-selection benchmark
collections and the papers' code ship them), written here as MATLAB writes them; pixels drawn
as images once their shape is given, or guessed — and said so — when the columns look like
pixels."""

from __future__ import annotations

import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

from explorer.data import DataError, load, parse_shape, with_image_shape

rng = np.random.default_rng(0)
FACES = rng.random((60, 1024))  # 15 subjects × 4 images of 32 × 32 pixels
SUBJECTS = np.repeat(np.arange(1, 16), 4)


def write_v73(path, arrays: dict, sparse: dict = ()):
    """A MATLAB v7.3 file as MATLAB writes it: HDF5 behind a 512-byte text header, arrays
    stored column-major (transposed), a sparse matrix as a group of data, ir, jc."""
    with h5py.File(path, "w", userblock_size=512) as f:
        for name, value in arrays.items():
            f.create_dataset(name, data=np.asarray(value).T)
        for name, matrix in dict(sparse).items():
            csc = sp.csc_matrix(matrix)
            group = f.create_group(name)
            group.attrs["MATLAB_sparse"] = csc.shape[0]
            group.create_dataset("data", data=csc.data)
            group.create_dataset("ir", data=csc.indices.astype(np.uint64))
            group.create_dataset("jc", data=csc.indptr.astype(np.uint64))
    with open(path, "r+b") as f:
        f.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00 .")


def test_a_v5_mat_file_of_faces_loads_as_15_classes_drawn_as_32_by_32_images(tmp_path):
    path = tmp_path / "ORL_32x32.mat"
    scipy.io.savemat(path, {"X": FACES, "Y": SUBJECTS[:, None]})
    data = load(path)
    np.testing.assert_allclose(data.X, FACES)
    assert data.y.tolist() == SUBJECTS.tolist() and data.task == "classification"
    assert data.image_shape == (32, 32)
    assert "drawn as images: 32 × 32 guessed from 1,024 unnamed columns" in data.summary()


def test_a_v73_mat_file_loads_the_same_and_its_sparse_matrix_stays_sparse(tmp_path):
    path = tmp_path / "faces73.mat"
    write_v73(path, {"X": FACES, "Y": SUBJECTS[None, :].astype(float)})
    data = load(path)
    np.testing.assert_allclose(data.X, FACES)
    assert data.y.tolist() == SUBJECTS.tolist()
    words = sp.random(40, 500, density=0.02, format="csc", random_state=1)
    path = tmp_path / "text73.mat"
    write_v73(path, {"gnd": np.r_[np.ones(20), 2 * np.ones(20)]}, {"fea": words})
    text = load(path)
    assert sp.issparse(text.X) and text.X.nnz == words.nnz
    np.testing.assert_allclose(text.X.toarray(), words.toarray())
    assert text.image_shape is None  # 500 is no square, and text is not dense


def test_a_v5_sparse_text_file_by_deng_cais_names_stays_sparse(tmp_path):
    words = sp.random(50, 400, density=0.02, format="csc", random_state=0)
    path = tmp_path / "text.mat"
    scipy.io.savemat(path, {"fea": words, "gnd": np.r_[np.zeros(25), np.ones(25)]})
    data = load(path)
    assert sp.issparse(data.X) and data.X.nnz == words.nnz and data.image_shape is None
    # 400 = 20² but sparse text: not guessed to be pixels


def test_features_stored_as_columns_are_transposed(tmp_path):
    path = tmp_path / "columns.mat"
    scipy.io.savemat(path, {"X": FACES[:, :100].T, "Y": SUBJECTS})
    assert load(path).X.shape == (60, 100)


def test_a_mat_file_without_the_variables_names_what_it_holds(tmp_path):
    path = tmp_path / "odd.mat"
    scipy.io.savemat(path, {"images": FACES, "subject": SUBJECTS})
    with pytest.raises(DataError, match="no features variable .* its variables are: images, "
                                        "subject"):
        load(path)
    scipy.io.savemat(path, {"X": FACES, "subject": SUBJECTS})
    with pytest.raises(DataError, match="no labels variable .* variables are: X, subject"):
        load(path)
    data = load(path, label="subject")  # the labels' variable named
    assert data.y.size == 60
    (tmp_path / "broken.mat").write_bytes(b"MATLAB 5.0 MAT-file" + b"\0" * 40)
    with pytest.raises(DataError, match="broken.mat: is not a readable MATLAB file"):
        load(tmp_path / "broken.mat")


def test_mat_bytes_as_an_upload(tmp_path):
    path = tmp_path / "up.mat"
    scipy.io.savemat(path, {"X": FACES, "Y": SUBJECTS})
    data = load(path.read_bytes(), name="up.mat")
    assert data.X.shape == (60, 1024) and data.image_shape == (32, 32)


def test_pixels_of_a_csv_are_guessed_only_when_they_look_like_pixels(tmp_path):
    frame = pd.DataFrame(FACES, columns=[f"pixel{j}" for j in range(1024)])
    frame["subject"] = SUBJECTS
    frame.to_csv(tmp_path / "faces.csv", index=False)
    data = load(tmp_path / "faces.csv")
    assert data.image_shape == (32, 32)
    assert "guessed from 1,024 numbered columns" in data.summary()
    named = frame.rename(columns={"pixel7": "age"})
    named.to_csv(tmp_path / "named.csv", index=False)
    assert load(tmp_path / "named.csv").image_shape is None  # a name that is no pixel's
    assert load(tmp_path / "faces.csv", image_shape="64x16").image_shape == (64, 16)
    assert load(tmp_path / "faces.csv", image_shape="none").image_shape is None
    with pytest.raises(ValueError, match="30 × 30 has 900 pixels and the data have 1,024"):
        load(tmp_path / "faces.csv", image_shape=(30, 30))
    assert load("breast-cancer").image_shape is None


@pytest.mark.parametrize("text, shape", [("32x32", (32, 32)), ("32 × 32", (32, 32)),
                                         ("16,64", (16, 64)), ((8, 8), (8, 8)), ("", None),
                                         ("none", None)])
def test_image_shapes_as_users_write_them(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", ["32", "axb", "0x5", "3x4x5"])
def test_a_bad_image_shape_says_what_it_needs(text):
    with pytest.raises(ValueError, match="rows × columns"):
        parse_shape(text)


def test_an_image_shape_given_to_a_dataset():
    data = with_image_shape(load("breast-cancer"), "5x6")
    assert data.image_shape == (5, 6) and data.names()[0] == "mean radius"


@pytest.mark.parametrize("rows", [1, 2, 4])
def test_a_file_too_small_to_split_is_refused_at_load(tmp_path, rows):
    path = tmp_path / "tiny.csv"
    path.write_text("a,b,label\n" + "".join(f"{i},{i * 2},{i % 2}\n" for i in range(rows)))
    with pytest.raises(DataError, match=f"tiny.csv: has only {rows} data rows?: the explorer "
                                        "fits on some rows and tests on the others"):
        load(path)
    path.write_text("a,b,label\n" + "".join(f"{i},{i * 2},{i % 2}\n" for i in range(6)))
    assert load(path).n_samples == 6
