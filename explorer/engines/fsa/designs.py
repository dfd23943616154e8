"""The two designs FSA's annealing loop (Barbu et al., Algorithm 1) steps over, with the same
methods, so that :class:`~explorer.engines.fsa.annealing.AnnealingRun` never asks which one it
has:

* :class:`LinearDesign` — X standardised implicitly (sparse stays sparse), one coefficient per
  variable; its working matrix physically shrinks as variables are killed (a compacted copy
  once 10 % of it is dead, 75 % of a column-major or CSC copy, whose compiled steps skip dead
  columns; a sparse working set is copied as CSC; a dask working set is persisted, then
  pulled into memory);
* :class:`PiecewiseLinearDesign` — the piecewise-linear responses of §2.5.1 (B + 1
  coefficients per variable, a smoothness prior), killed per variable by the norm of its
  group.

Each counts the cells its products read (``cells``), from which the run reports its passes
over X.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from ...features import PiecewiseLinearBasis, negligible, second_difference
from ...kernels import column_moments, xts
from ._compiled import COLUMN_MAJOR, CSC, ROW_MAJOR, WorkingDesign

_NO_MATRIX = np.zeros((1, 1), order="F")  # the placeholders of WorkingDesign's unused parts
_NO_VALUES = np.zeros(0)
_NO_INDEX = np.zeros(1, dtype=np.int32)
LOCAL_BYTES = 512 * 2**20   # a dask working set this small is pulled into memory
PERSIST_SHARE = 0.25        # … and persisted on the workers below this share of their memory


def standard_moments(X):
    """Column means and standard deviations (sparse-safe); columns without variance get 1. A
    column holding a NaN or an infinity, or whose sums overflow, has a mean or a standard
    deviation that is not finite."""
    if getattr(X, "is_chunked", False):
        total, sq = X.column_moments()
        mean = total / X.shape[0]
        std = np.sqrt(np.maximum(sq / X.shape[0] - mean**2, 0.0))
    else:
        mean, std = column_moments(X)
    return mean, _unit_if_constant(std)


def _unit_if_constant(std):
    """1 for the columns without variance — none, or of :func:`~explorer.features.negligible`
    size — so that they are never standardised up."""
    return np.where(~negligible(std) | np.isnan(std), std, 1.0)


class LinearDesign:
    """X standardised implicitly: β_j / sd_j weighs column j, its mean taken off the outputs."""

    grouped = False  # one coefficient per variable

    def __init__(self, X, config, moments=None, first_product=None):
        self.X = X
        self.n, self.m = X.shape
        if config.standardize:
            self.mean, self.scale = moments if moments is not None else standard_moments(X)
        else:
            self.mean, self.scale = np.zeros(self.m), np.ones(self.m)
        self.work = X  # compacted copy of the surviving columns
        self.first_product = first_product  # Xᵀr of the first step, from the first pass
        self.cells = 0.0

    def zeros(self) -> np.ndarray:
        return np.zeros(self.m)

    def start(self, alive) -> None:
        """The run starts: every column of X is a working column."""
        self.work_orig = np.arange(self.m)
        self.index(alive)

    # ------------------------------------------------------------ products
    def outputs(self, beta, b, alive=None):
        """X's outputs at β (over the alive variables) and intercept b."""
        if not beta.any():  # β = 0 (the first step): no pass over X needed
            return np.full(self.n, float(b))
        w = np.zeros(self.work_orig.size)
        on = self.work_pos >= 0
        w[on] = beta[self.work_pos[on]] / self.scale_work[on]
        self.read(self.work)
        f = np.asarray(self.work @ w.astype(self.work.dtype, copy=False)).ravel()
        return f.astype(np.float64) + (b - float(self.mean_work @ w))

    def gradient(self, r, alive):
        """Xᵀr over the alive variables, in standardised units."""
        if self.first_product is not None:
            g, self.first_product = self.first_product, None
        else:
            self.read(self.work)
            g = xts(self.work, r)
        g = (g - self.mean_work * r.sum()) / self.scale_work
        on = self.work_pos >= 0
        full = np.zeros(alive.size)
        full[self.work_pos[on]] = g[on]
        return full

    def read(self, matrix) -> None:
        """Count one product over ``matrix`` (its stored values when sparse)."""
        if getattr(matrix, "is_chunked", False):
            return  # a dask X counts its own passes
        self.cells += float(matrix.nnz) if sp.issparse(matrix) else \
            float(matrix.shape[0]) * float(matrix.shape[1])

    # ------------------------------------------------------------ prior
    def prior_step(self, beta, eta: float, config):
        """(I + ηP)⁻¹β for the ridge prior P = 2·ridge·I."""
        return beta / (1.0 + 2.0 * eta * config.ridge)

    def prior_value(self, beta, config) -> float:
        return float(config.ridge * np.sum(beta * beta))

    # ------------------------------------------------------------ variables
    def size(self, beta):
        """What the kill ranks each variable by: |β_j|."""
        return np.abs(beta)

    def values(self, beta):
        return beta.copy()

    def weights(self, values, alive):
        """The records' weights, in X's units."""
        return values / self.scale[alive]

    def kill(self, keep, alive) -> None:
        """The variables ``keep`` (positions among the alive before) survive; ``alive`` are
        their ids."""
        self.compact(alive)

    def compact(self, alive, keep_fraction: float = 0.9) -> None:
        """Drop dead columns from the working data once they are more than ``1 −
        keep_fraction`` of it. Dense copies are Fortran-ordered and sparse ones CSC: the
        compiled steps then skip dead columns and can compact less often."""
        if alive.size > keep_fraction * self.work.shape[1]:
            self.index(alive)
            return
        pos_in_work = np.searchsorted(self.work_orig, alive)
        if getattr(self.work, "is_chunked", False):
            self.work = _shrink_chunked(self.work, pos_in_work)
        else:
            self.work = self.work[:, pos_in_work].tocsc() if sp.issparse(self.work) else \
                np.asfortranarray(self.work[:, pos_in_work])
            self.read(self.work)  # the copy read the kept columns
        self.work_orig = alive.copy()
        self.index(alive)

    def index(self, alive) -> None:
        """Which of the work's columns are alive, and where their β lives (dead columns stay
        in place until compaction but contribute zero)."""
        alive_mask = np.zeros(self.m, dtype=bool)
        alive_mask[alive] = True
        alive_mask = alive_mask[self.work_orig]
        self.work_pos = np.full(self.work_orig.size, -1)
        self.work_pos[alive_mask] = np.searchsorted(alive, self.work_orig[alive_mask])
        self.mean_work = np.where(alive_mask, self.mean[self.work_orig], 0.0)
        self.scale_work = np.where(alive_mask, self.scale[self.work_orig], 1.0)

    @property
    def work_columns(self) -> int:
        return int(self.work.shape[1])

    def compiled_form(self, alive) -> tuple[WorkingDesign, int]:
        """(the in-memory working matrix as the compiled steps take it, the cells one product
        over its ``alive`` columns reads — every column of a row-major matrix). A dense
        matrix in neither order is copied Fortran-ordered once."""
        work = self.work
        n = self.n
        if sp.issparse(work):  # CSC (AnnealingRun._compiled)
            data, indices, indptr = work.data, work.indices, work.indptr
            touched = int(np.diff(indptr)[alive].sum())
            return WorkingDesign(_NO_MATRIX, CSC, self.mean_work, self.scale_work, data,
                                 indices, indptr), touched
        if not (work.flags.c_contiguous or work.flags.f_contiguous):
            self.work = work = np.asfortranarray(work)
        row_major = bool(work.flags.c_contiguous) and not work.flags.f_contiguous
        touched = n * (work.shape[1] if row_major else int(alive.sum()))
        return WorkingDesign(work, ROW_MAJOR if row_major else COLUMN_MAJOR, self.mean_work,
                             self.scale_work, _NO_VALUES, _NO_INDEX, _NO_INDEX), touched

    def model(self, alive, beta, b) -> tuple[np.ndarray, float]:
        """(weights over every column in X's units, intercept) of the model."""
        coef = np.zeros(self.m)
        coef[alive] = beta / self.scale[alive]
        return coef, float(b - self.mean[alive] @ coef[alive])


class PiecewiseLinearDesign:
    """The piecewise-linear responses of §2.5.1: B + 1 coefficients per variable on its bins,
    a ridge and second-difference smoothness prior P, killed by the group's norm."""

    grouped = True  # a group of coefficients per variable

    def __init__(self, X, config, eta: float):
        self.n, self.m = X.shape
        self.basis = PiecewiseLinearBasis(config.bins).fit(X)
        self.bins, self.frac = self.basis.encode(X)
        nb = self.basis.n_basis
        D = second_difference(nb)
        self.prior = 2.0 * config.ridge * np.eye(nb) + 2.0 * config.smoothness * (D.T @ D)
        self.prior_prox = np.linalg.inv(np.eye(nb) + eta * self.prior)  # symmetric
        self._prox_eta = eta
        self.first_product = None
        self.cells = 0.0

    def zeros(self) -> np.ndarray:
        return np.zeros((self.m, self.basis.n_basis))

    def start(self, alive) -> None:
        pass

    def outputs(self, beta, b, alive=None):
        self.cells += float(self.n) * float(self.bins.shape[1])
        return self.basis.forward(self.bins, self.frac, beta) + b

    def gradient(self, r, alive):
        self.cells += float(self.n) * float(self.bins.shape[1])
        return self.basis.gradient(self.bins, self.frac, r)

    def prior_step(self, beta, eta: float, config):
        """(I + ηP)⁻¹β: the exact prox of the quadratic prior (first-order equal to the
        paper's gradient step, and stable whatever η·c)."""
        if self._prox_eta != eta:
            nb = self.prior.shape[0]
            self.prior_prox = np.linalg.inv(np.eye(nb) + eta * self.prior)
            self._prox_eta = eta
        return beta @ self.prior_prox

    def prior_value(self, beta, config) -> float:
        return float(np.einsum("jk,kl,jl->", beta, self.prior, beta) / 2.0)

    def size(self, beta):
        """What the kill ranks each variable by: the norm of its group."""
        return np.linalg.norm(beta, axis=1)

    def values(self, beta):
        return np.linalg.norm(beta, axis=1)

    def weights(self, values, alive):
        return values

    def kill(self, keep, alive) -> None:
        self.bins = np.asfortranarray(self.bins[:, keep])
        self.frac = np.asfortranarray(self.frac[:, keep])

    @property
    def work_columns(self) -> int:
        return int(self.bins.shape[1])

    def model(self, alive, beta, b) -> tuple[np.ndarray, float]:
        """(each variable's group norm, intercept): the responses are in :attr:`basis`."""
        coef = np.zeros(self.m)
        coef[alive] = np.linalg.norm(beta, axis=1)
        return coef, float(b)


def make_design(X, config, eta: float, moments=None, first_product=None, warm=None):
    """The design ``config`` asks for (``bins``: piecewise-linear) over X."""
    if config.bins is not None:
        return PiecewiseLinearDesign(X, config, eta)
    return LinearDesign(X, config, moments, None if warm is not None else first_product)


def _shrink_chunked(work, cols):
    """The surviving columns of a dask working set: kept lazy while large, persisted (on
    the workers, or here without a distributed client) once they fit a share of that memory,
    pulled into this process once small (the rest of the run is then the in-memory one).
    Pass counters carry over."""
    sub = work.subset(cols)
    size = sub.memory_bytes
    if size <= LOCAL_BYTES:
        return sub.to_memory()
    if work.persisted:  # slice the persisted chunks once, not on every pass
        return sub.persist()
    budget = _cluster_memory()
    if budget and size <= PERSIST_SHARE * budget:
        return sub.persist()
    return sub


def _cluster_memory() -> int:
    """Memory the working set may be persisted into: the total memory limit of the active
    dask.distributed client's workers, or this machine's physical memory when dask runs
    here (threaded scheduler)."""
    try:
        from distributed import default_client

        info = default_client().scheduler_info()
    except (ImportError, ValueError):
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    return int(sum(w.get("memory_limit", 0) or 0 for w in info.get("workers", {}).values()))
