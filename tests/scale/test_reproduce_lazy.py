"""A fit on a lazily opened (Zarr, dask) dataset is reproduced by ``explorer run`` on the
exported session: the same selection and objective as in the app, and as in memory."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import zarr

from explorer.cli import main
from explorer.data import make
from explorer.ui import ExplorerState


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reproduce")
    ds = make("fgm-type1", n_samples=240, n_features=300, n_informative=12, n_test=80,
              seed=3)
    group = zarr.open_group(str(folder / "wide.zarr"), mode="w")
    # chunk boundaries that split FGM's blocks and FSA's working columns
    group.create_array("X", data=ds.X.astype(np.float64), chunks=(70, 45))
    group.create_array("y", data=ds.y)
    group.create_array("X_test", data=ds.X_test.astype(np.float64), chunks=(70, 45))
    group.create_array("y_test", data=ds.y_test)
    return folder / "wide.zarr", ds


@pytest.mark.parametrize("method, params", [("fgm", {"B": 3, "C": 1.0}),
                                            ("fsa", {"k": 8})])
def test_explorer_run_on_a_zarr_store_reproduces_the_app(tmp_path, monkeypatch, store, method,
                                                         params):
    path, in_memory = store
    monkeypatch.setenv("EXPLORER_DATA", str(path))
    state = ExplorerState(dataset=path.name, live=False)
    try:
        assert state.data.is_lazy
        state.method = method
        for knob, value in params.items():
            state.set_param(knob, value)
        assert state.fit()
        state.wait(120)
        app_model = state.estimator
        session = json.loads(json.dumps(state.export_session(), indent=2))
    finally:
        state.close()
    assert session["dataset"] == path.name and session["method"] == method
    session_path = tmp_path / "session.json"
    session_path.write_text(json.dumps(session))
    out = tmp_path / "selected.csv"
    assert main(["run", str(session_path), "--data", str(path), "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert sorted(table["feature"]) == sorted(app_model.selected_features_.tolist())

    from explorer.methods import REGISTRY

    reference = REGISTRY[method](**params).fit(in_memory.X.astype(np.float64), in_memory.y)
    np.testing.assert_array_equal(np.sort(reference.selected_features_),
                                  np.sort(app_model.selected_features_))
    np.testing.assert_allclose(app_model.history_[-1].objective,
                               reference.history_[-1].objective, rtol=1e-8)
