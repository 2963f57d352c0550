"""A CUDA training script as users write it: `import torch` only, "cuda"
everywhere, torch.cuda calls, fp16 autocast with a GradScaler, a checkpoint
round trip. test_dropin_script.py (host plugin) and
test/gpu/test_dropin_cuda.py (H200, against native CUDA) run it unchanged;
with torch_fl installed it runs on flagos (torch's backend autoload and
FLAGOS_ALIAS_CUDA). Prints one JSON line: the losses and what it ran on.
"""

import io
import json

import torch

assert torch.cuda.is_available(), "this script needs a GPU"
device = torch.device("cuda")
torch.manual_seed(0)
torch.cuda.manual_seed(0)

model = torch.nn.Sequential(
    torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.LayerNorm(256), torch.nn.Linear(256, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
g = torch.Generator(device="cpu").manual_seed(1)
x = torch.randn(128, 64, generator=g).to(device)
y = torch.randint(0, 10, (128,), generator=g).to(device, non_blocking=True)

stream = torch.cuda.Stream()
losses = []
for step in range(8):
    with torch.cuda.stream(stream):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    torch.cuda.current_stream().wait_stream(stream)
    losses.append(loss.item())
torch.cuda.synchronize()

saved = io.BytesIO()
torch.save(model.state_dict(), saved)
saved.seek(0)
restored = torch.load(saved, map_location="cuda")
same = all(torch.equal(restored[k], v) for k, v in model.state_dict().items())

print(json.dumps({
    "losses": losses,
    "device": str(next(model.parameters()).device),
    "scale": scaler.get_scale(),
    "restored": same,
    "device_name": torch.cuda.get_device_name(),
    "max_memory_allocated": torch.cuda.max_memory_allocated(),
    "accelerator": str(torch.accelerator.current_accelerator()),
}))
