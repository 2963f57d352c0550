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
    # One device per process: n_gpu > 1 would make the Trainer use
    # nn.DataParallel, whose replication is CUDA-only.
    assert args.n_gpu == 1


def test_the_trainer_trains_on_flagos(tmp_path):
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=16)
    ids = torch.randint(0, 50, (8, 8))
    data = [{"input_ids": row, "labels": row} for row in ids]
    args = transformers.TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=2,
                                          report_to=[], save_strategy="no")
    trainer = transformers.Trainer(model=transformers.GPT2LMHeadModel(config), args=args, train_dataset=data)
    result = trainer.train()
    assert next(trainer.model.parameters()).device.type == "flagos"
    assert result.global_step == 2 and result.training_loss > 0


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


@pytest.fixture(scope="module")
def saved_gpt2(tmp_path_factory):
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    folder = tmp_path_factory.mktemp("gpt2")
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("device_map", [None, "flagos", "auto"])
def test_a_loaded_model_trains_on_flagos_as_on_the_cpu(saved_gpt2, device_map):
    # transformers kernelizes a loaded model on .train() and on device_map
    # through Hugging Face kernels, whose device check knows no flagos
    # (the hub_kernels shim); device_map="auto" asks torch.accelerator.
    pytest.importorskip("kernels")
    load = transformers.AutoModelForCausalLM.from_pretrained
    model = load(saved_gpt2, device_map=device_map) if device_map else load(saved_gpt2).to("flagos")
    assert model.device.type == "flagos"
    reference = load(saved_gpt2)
    ids = torch.randint(0, 100, (2, 8))
    losses = []
    for m, x in ((model, ids.to("flagos")), (reference, ids)):
        m.train()
        loss = m(x, labels=x).loss
        loss.backward()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)
