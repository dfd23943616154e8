"""The masters' protocol (explorer/optim/master.py): every engine's master speaks it, and a
warm start is one type for every method."""

from __future__ import annotations

import numpy as np

from explorer.engines.fgm import L12Master
from explorer.engines.fs_multi import BundleMaster
from explorer.engines.grfl import GroupMaster
from explorer.optim import Master, WarmStart, WeightedMaster
from tests.optim.test_cutting_plane import ScriptedMaster


def test_every_engines_master_speaks_the_declared_protocol():
    """The loop's seam is declared (``Master``, ``WeightedMaster`` for a path grown to k):
    FGM's and FS-multi's masters hold weights per column, GrFL's group master the rest."""
    for master in (L12Master, BundleMaster, GroupMaster):
        assert issubclass(master, Master), master
    assert issubclass(L12Master, WeightedMaster) and issubclass(BundleMaster, WeightedMaster)
    assert not issubclass(GroupMaster, WeightedMaster)
    assert issubclass(ScriptedMaster, WeightedMaster)  # the scripted one of the loop's tests


def test_warm_starts_do_not_share_their_extras():
    """Each warm start owns its ``extra``: a method writing into one leaves the next alone."""
    first, second = WarmStart(key=(1,), support=np.arange(2)), WarmStart(key=(1,), support=[])
    first.extra["ws"] = np.ones(2)
    assert second.extra == {} and first.coef is None and first.step is None
