#!/usr/bin/python3
"""Exports the model corpus: torchvision models and a TransformerEncoder, as a
user would export them, to ONNX (opset 13 with a dynamic batch axis, opset 17
with static shapes) and to TorchScript (traced), with one input and the
framework's output for it.

    export_corpus.py [--out DIR] [--models a,b,...] [--list]

DIR defaults to $TESSEL_CORPUS_DIR, else ~/.cache/tessel/corpus. Each model
gets DIR/<name>/{opset13.onnx, opset17.onnx, model.pt, input.npz, input.npy,
expected.npz, meta.json}; a model whose meta.json records the same script
version and torch version is not exported again. Weights are random (seeded),
since the build machines cannot download torchvision's.
"""
import argparse
import json
import os
import sys
import time

VERSION = 2  # bump when an export changes, so caches rebuild

# name -> (input shape, dynamic axes of the opset-13 export)
IMAGE = (1, 3, 224, 224)
MODELS = {
    "resnet18": IMAGE,
    "resnet50": IMAGE,
    "mobilenet_v2": IMAGE,
    "mobilenet_v3_small": IMAGE,
    "squeezenet1_1": IMAGE,
    "shufflenet_v2_x1_0": IMAGE,
    "efficientnet_b0": IMAGE,
    "densenet121": IMAGE,
    "regnet_y_400mf": IMAGE,
    "convnext_tiny": IMAGE,
    "vit_b_16": IMAGE,
    "swin_t": IMAGE,
    "transformer_encoder": (1, 32, 256),
}


def build(name):
    import torch
    import torchvision

    if name == "transformer_encoder":
        layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, batch_first=True)
        return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    return getattr(torchvision.models, name)(weights=None)


def calibrate(model, shape):
    """Random weights as a trained model has them in scale: parameters left at
    zero by the initialiser (ViT's head) drawn small, and batch-norm statistics
    measured on random inputs, so that outputs are neither zero nor vanishing
    and a comparison within 1e-3 of the largest output means something."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0, 0.02)
        norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        if norms:
            for m in norms:
                m.reset_running_stats()
                m.momentum = None  # a cumulative average over the passes below
            model.train()
            for _ in range(3):
                model(torch.randn(4, *shape[1:]))
    model.eval()


def export(name, out, torch_version):
    import numpy as np
    import torch

    folder = os.path.join(out, name)
    meta_path = os.path.join(folder, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("version") == VERSION and meta.get("torch") == torch_version:
            return meta, False
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    shape = MODELS[name]
    model = build(name)
    calibrate(model, shape)
    x = torch.randn(*shape)
    with torch.no_grad():
        y = model(x)
    inputs, outputs = ["input"], ["output"]
    started = time.time()
    torch.onnx.export(model, (x,), os.path.join(folder, "opset17.onnx"), opset_version=17,
                      input_names=inputs, output_names=outputs)
    torch.onnx.export(model, (x,), os.path.join(folder, "opset13.onnx"), opset_version=13,
                      input_names=inputs, output_names=outputs,
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    with torch.no_grad():
        traced = torch.jit.trace(model, (x,), check_trace=False)
    traced.save(os.path.join(folder, "model.pt"))
    np.savez(os.path.join(folder, "input.npz"), input=x.numpy())
    np.save(os.path.join(folder, "input.npy"), x.numpy())
    np.savez(os.path.join(folder, "expected.npz"), output=y.numpy())
    meta = {
        "version": VERSION,
        "torch": torch_version,
        "name": name,
        "input_shape": list(shape),
        "output_shape": list(y.shape),
        "params": int(sum(p.numel() for p in model.parameters())),
        "export_s": round(time.time() - started, 1),
    }
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta, True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_out = os.environ.get("TESSEL_CORPUS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tessel", "corpus")
    parser.add_argument("--out", default=default_out)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--list", action="store_true", help="print the corpus's model names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"export_corpus: Python's torch, torchvision and numpy are needed ({e})", file=sys.stderr)
        return 3
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        print(f"export_corpus: unknown model(s) {', '.join(unknown)}; the corpus: {', '.join(MODELS)}",
              file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
    for name in names:
        meta, fresh = export(name, args.out, torch.__version__)
        print(f"{name}: {'exported in ' + str(meta['export_s']) + ' s' if fresh else 'cached'}"
              f" ({meta['params']} parameters)", flush=True)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
