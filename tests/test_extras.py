"""The optional extras: a missing one is named with the command that installs it."""

import importlib
import sys

import pytest


@pytest.mark.parametrize("module", ["dcol.geom.torch", "dcol.dynamics.torch"])
def test_missing_torch_gives_install_hint(module, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    monkeypatch.delitem(sys.modules, module, raising=False)  # imported afresh
    with pytest.raises(ImportError, match=rf'{module} needs PyTorch, .*pip install "dcol\[torch\]"'):
        importlib.import_module(module)


def test_missing_ray_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    monkeypatch.delitem(sys.modules, "dcol.dynamics.distributed", raising=False)  # imported afresh
    with pytest.raises(ImportError, match=r'dcol.dynamics.distributed needs Ray, .*pip install "dcol\[distributed\]"'):
        importlib.import_module("dcol.dynamics.distributed")
