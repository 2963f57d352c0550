"""Small Hugging Face models built from configs with random weights (nothing
is downloaded), across the architecture families a PyTorch user trains:
encoders (BERT), encoder-decoders (T5, Whisper), decoders with RoPE and
grouped-query attention (Llama, GPT-NeoX, Gemma 2 with sliding windows),
mixtures of experts (Mixtral, Qwen2-MoE), vision transformers (ViT, Swin),
convolutional networks (ResNet with batch norm, ConvNeXt) and speech (Wav2Vec2). Shared by the model tests on
the CPU (test/torch/test_model_zoo.py) and on a GPU
(test/gpu/test_model_zoo_cuda.py), which use the "test" size, and by the GPU
benchmark's zoo section (tools/bench/gpu.py), which uses "bench".

Each builder seeds the CPU generator, so the same name gives the same weights
and inputs in any process; dropout is off so that two devices compute the same
function."""

from __future__ import annotations

import copy

import torch

SEED = 0
VOCAB = 256

# Widths, depths and batch shapes: "test" is small enough for a CPU in CI;
# "bench" gives a GPU real work (a few GFLOP per step).
SIZES = {
    "test": {"hidden": 64, "layers": 2, "batch": 2, "seq": 32, "image": 32, "images": 4},
    "bench": {"hidden": 512, "layers": 4, "batch": 8, "seq": 256, "image": 128, "images": 32},
}


def _tokens(batch: int, length: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(SEED + 1))


def _language(model, d: dict):
    """`model` with a batch of tokens that are also its labels (masked or causal LM)."""
    ids = _tokens(d["batch"], d["seq"])
    return model, {"input_ids": ids, "labels": ids}


def _vision(model, d: dict):
    """`model` with a batch of images and their class labels (10 classes)."""
    pixels = torch.randn(d["images"], 3, d["image"], d["image"], generator=torch.Generator().manual_seed(SEED + 1))
    return model, {"pixel_values": pixels, "labels": torch.arange(d["images"]) % 10}


def bert(tf, d):
    cfg = tf.BertConfig(vocab_size=VOCAB, hidden_size=d["hidden"], num_hidden_layers=d["layers"],
                        num_attention_heads=4, intermediate_size=2 * d["hidden"],
                        max_position_embeddings=d["seq"], hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return _language(tf.BertForMaskedLM(cfg), d)


def t5(tf, d):
    cfg = tf.T5Config(vocab_size=VOCAB, d_model=d["hidden"], d_kv=d["hidden"] // 4, d_ff=2 * d["hidden"],
                      num_layers=d["layers"], num_heads=4, dropout_rate=0.0, decoder_start_token_id=0,
                      pad_token_id=0)
    ids = _tokens(d["batch"], d["seq"] * 3 // 4)
    return tf.T5ForConditionalGeneration(cfg), {"input_ids": ids, "labels": ids.flip(1)}


def llama(tf, d):
    cfg = tf.LlamaConfig(vocab_size=VOCAB, hidden_size=d["hidden"], intermediate_size=2 * d["hidden"],
                         num_hidden_layers=d["layers"], num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=d["seq"])
    return _language(tf.LlamaForCausalLM(cfg), d)


def mixtral(tf, d):
    cfg = tf.MixtralConfig(vocab_size=VOCAB, hidden_size=d["hidden"], intermediate_size=3 * d["hidden"] // 2,
                           num_hidden_layers=d["layers"], num_attention_heads=4, num_key_value_heads=2,
                           num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=d["seq"])
    return _language(tf.MixtralForCausalLM(cfg), d)


def vit(tf, d):
    cfg = tf.ViTConfig(image_size=d["image"], patch_size=8, hidden_size=d["hidden"], num_hidden_layers=d["layers"],
                       num_attention_heads=4, intermediate_size=2 * d["hidden"], num_labels=10,
                       hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return _vision(tf.ViTForImageClassification(cfg), d)


def resnet(tf, d):
    width = d["hidden"] // 4
    cfg = tf.ResNetConfig(embedding_size=width, hidden_sizes=[width, 2 * width], depths=[1, d["layers"] // 2],
                          layer_type="basic", num_labels=10)
    return _vision(tf.ResNetForImageClassification(cfg), d)


def gpt_neox(tf, d):
    cfg = tf.GPTNeoXConfig(vocab_size=VOCAB, hidden_size=d["hidden"], num_hidden_layers=d["layers"],
                           num_attention_heads=4, intermediate_size=2 * d["hidden"],
                           max_position_embeddings=d["seq"], bos_token_id=0, eos_token_id=0)
    return _language(tf.GPTNeoXForCausalLM(cfg), d)


def gemma2(tf, d):
    cfg = tf.Gemma2Config(vocab_size=VOCAB, hidden_size=d["hidden"], num_hidden_layers=d["layers"],
                          num_attention_heads=4, num_key_value_heads=2, head_dim=d["hidden"] // 4,
                          intermediate_size=2 * d["hidden"], sliding_window=d["seq"] // 4,
                          max_position_embeddings=d["seq"])
    return _language(tf.Gemma2ForCausalLM(cfg), d)


def qwen2_moe(tf, d):
    cfg = tf.Qwen2MoeConfig(vocab_size=VOCAB, hidden_size=d["hidden"], num_hidden_layers=d["layers"],
                            num_attention_heads=4, num_key_value_heads=2, intermediate_size=2 * d["hidden"],
                            moe_intermediate_size=d["hidden"] // 2, shared_expert_intermediate_size=d["hidden"],
                            num_experts=4, num_experts_per_tok=2, max_position_embeddings=d["seq"])
    return _language(tf.Qwen2MoeForCausalLM(cfg), d)


def whisper(tf, d):
    cfg = tf.WhisperConfig(vocab_size=VOCAB, d_model=d["hidden"], encoder_layers=d["layers"] // 2,
                           decoder_layers=d["layers"] // 2, encoder_attention_heads=4, decoder_attention_heads=4,
                           encoder_ffn_dim=2 * d["hidden"], decoder_ffn_dim=2 * d["hidden"], num_mel_bins=16,
                           max_source_positions=d["seq"], max_target_positions=d["seq"],
                           decoder_start_token_id=1, pad_token_id=0)
    frames = torch.randn(d["batch"], 16, 2 * d["seq"], generator=torch.Generator().manual_seed(SEED + 1))
    return tf.WhisperForConditionalGeneration(cfg), {"input_features": frames,
                                                     "labels": _tokens(d["batch"], d["seq"] // 4)}


def wav2vec2(tf, d):
    cfg = tf.Wav2Vec2Config(hidden_size=d["hidden"], num_hidden_layers=d["layers"] // 2, num_attention_heads=4,
                            intermediate_size=2 * d["hidden"], conv_dim=(32, 32), conv_stride=(5, 2),
                            conv_kernel=(10, 3), num_labels=3, num_conv_pos_embeddings=16,
                            num_conv_pos_embedding_groups=4, hidden_dropout=0.0, activation_dropout=0.0,
                            attention_dropout=0.0, final_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0)
    audio = torch.randn(d["batch"], 50 * d["seq"], generator=torch.Generator().manual_seed(SEED + 1))
    return tf.Wav2Vec2ForSequenceClassification(cfg), {"input_values": audio,
                                                       "labels": torch.arange(d["batch"]) % 3}


def swin(tf, d):
    cfg = tf.SwinConfig(image_size=d["image"], patch_size=4, embed_dim=d["hidden"] // 4, depths=[1, 1],
                        num_heads=[2, 4], window_size=4, num_labels=10, drop_path_rate=0.0,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return _vision(tf.SwinForImageClassification(cfg), d)


def convnext(tf, d):
    width = d["hidden"] // 4
    cfg = tf.ConvNextConfig(num_stages=2, hidden_sizes=[width, 2 * width], depths=[1, d["layers"] // 2],
                            num_labels=10, drop_path_rate=0.0)
    return _vision(tf.ConvNextForImageClassification(cfg), d)


# The six the GPU benchmark's zoo section times, then the rest: other
# attention shapes (sliding window, windowed vision attention), a second MoE,
# speech (1-D convolutions, group norm, an encoder-decoder over features).
TIMED = (bert, t5, llama, mixtral, vit, resnet)
MODELS = {f.__name__: f for f in TIMED + (gpt_neox, gemma2, qwen2_moe, whisper, wav2vec2, swin, convnext)}


def build(name: str, size: str = "test"):
    """(model in training mode, its inputs), on the CPU, from SEED."""
    import transformers

    torch.manual_seed(SEED)
    model, inputs = MODELS[name](transformers, SIZES[size])
    return model.train(), inputs


def step(model: torch.nn.Module, inputs: dict, device: str, compiled: bool = False):
    """One training step's forward and backward on `device` (a copy of the
    model, through torch.compile if `compiled`): (loss, {parameter name:
    gradient}), both on the CPU."""
    model = copy.deepcopy(model).to(device)
    if hasattr(model, "tie_weights"):
        model.tie_weights()  # Module.to() unties shared parameters on a PrivateUse1 device
    run = torch.compile(model) if compiled else model
    out = run(**{k: v.to(device) for k, v in inputs.items()})
    out.loss.backward()
    grads = {n: p.grad.cpu() for n, p in model.named_parameters() if p.grad is not None}
    return out.loss.detach().cpu(), grads


def assert_same_step(got, want, rtol: float = 1e-4) -> None:
    """Loss and every gradient agree; each gradient's tolerance is relative to
    its largest entry (gradients span orders of magnitude across parameters),
    and never below 1e-7: some are zero in exact arithmetic (the attention
    key's bias, which softmax cancels) and rounding noise in practice."""
    (loss, grads), (ref_loss, ref_grads) = got, want
    torch.testing.assert_close(loss, ref_loss, rtol=rtol, atol=rtol)
    assert grads.keys() == ref_grads.keys(), sorted(set(grads) ^ set(ref_grads))
    for name, g in ref_grads.items():
        torch.testing.assert_close(grads[name], g, rtol=rtol, atol=max(rtol * g.abs().max().item(), 1e-7),
                                   msg=lambda m, name=name: f"gradient of {name}: {m}")
