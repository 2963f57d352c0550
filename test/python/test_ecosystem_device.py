"""Hugging Face picks flagos where it is the process's accelerator: the
libraries ask torch.cuda and build "cuda" devices, which the torch.cuda shim
and FLAGOS_ALIAS_CUDA answer with flagos (docs/compat.md)."""

from __future__ import annotations

import pytest
import torch

import torch_fl  # noqa: F401

transformers = pytest.importorskip("transformers")
accelerate = pytest.importorskip("accelerate")


def test_training_arguments_pick_flagos(tmp_path):
    args = transformers.TrainingArguments(output_dir=str(tmp_path), report_to=[])
    assert args.device.type == "flagos"
    assert args.n_gpu == torch.flagos.device_count()


def test_accelerator_picks_flagos_and_prepares_a_model():
    acc = accelerate.Accelerator()
    assert acc.device.type == "flagos"
    model = torch.nn.Linear(4, 2)
    model, opt = acc.prepare(model, torch.optim.SGD(model.parameters(), lr=0.1))
    assert next(model.parameters()).device.type == "flagos"
    loss = model(torch.ones(3, 4, device=acc.device)).sum()
    acc.backward(loss)
    opt.step()
    assert next(model.parameters()).grad.device.type == "flagos"
