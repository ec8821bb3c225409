#!/usr/bin/python3
"""safetensors_check.py: read a safetensors file that the kit wrote with
safetensors' own loader, and print what it holds; or write one with
safetensors' own writer, for the kit to read.

    /usr/bin/python3 bench/safetensors_check.py FILE
    /usr/bin/python3 bench/safetensors_check.py --write FILE

For each tensor, one line:

    tensor NAME DTYPE SHAPE sum=SUM bits=BITS

SHAPE is the dimensions joined by "x" (37x53); SUM is the values' sum in
float64; BITS is the sum of the values' 32-bit patterns read as signed
integers, exact, so that a reader that changed a single bit shows. Then one
line "metadata KEY=VALUE" per metadata entry. The kit's own test
(test_safetensors cpu pytorch) writes a file, runs this script and compares
every line with what it saved.

With --write, FILE gets three tensors whose values the kit's test knows:
w, float32 [3, 4], (i - 5) / 8 for i = 0..11; n, int32 [5], -2 -1 0 1
2000000000; b, float32 [4], 0.5 -0.25 0.125 3; and the metadata
writer=safetensors_check.py.

The loader is safetensors.torch (PyTorch) where torch is installed, else
safetensors.numpy. Exits with 3, saying so, when safetensors or both of them
are absent (Debian: apt-get install python3-torch; safetensors comes with pip).
"""
import sys


def load(path):
    """The tensors as NumPy arrays, the metadata, and which loader read them."""
    import safetensors
    try:
        import torch
        from safetensors.torch import load_file
        tensors = {name: t.numpy() for name, t in load_file(path).items()}
        loader = f"safetensors {safetensors.__version__} with torch {torch.__version__}"
    except ImportError:
        from safetensors.numpy import load_file
        tensors = load_file(path)
        loader = f"safetensors {safetensors.__version__} with numpy"
    with safetensors.safe_open(path, framework="numpy") as f:
        metadata = f.metadata() or {}
    return tensors, metadata, loader


def save(path):
    """The three known tensors, through safetensors' own writer."""
    import numpy as np
    import safetensors
    tensors = {
        "w": np.array([(i - 5) / 8 for i in range(12)], dtype=np.float32).reshape(3, 4),
        "n": np.array([-2, -1, 0, 1, 2000000000], dtype=np.int32),
        "b": np.array([0.5, -0.25, 0.125, 3.0], dtype=np.float32),
    }
    metadata = {"writer": "safetensors_check.py"}
    try:
        import torch
        from safetensors.torch import save_file
        save_file({k: torch.from_numpy(v) for k, v in tensors.items()}, path, metadata=metadata)
        return f"safetensors {safetensors.__version__} with torch {torch.__version__}"
    except ImportError:
        from safetensors.numpy import save_file
        save_file(tensors, path, metadata=metadata)
        return f"safetensors {safetensors.__version__} with numpy"


def main():
    args = sys.argv[1:]
    if len(args) not in (1, 2) or (len(args) == 2 and args[0] != "--write"):
        print("usage: safetensors_check.py FILE | --write FILE", file=sys.stderr)
        return 2
    try:
        import numpy as np
        if len(args) == 2:
            print(f"written by: {save(args[1])}")
            return 0
        tensors, metadata, loader = load(args[0])
    except ImportError as e:
        print(f"safetensors_check: absent ({e.name} is not installed for {sys.executable})")
        return 3
    print(f"loader: {loader}")
    names = {np.dtype(np.float32): "F32", np.dtype(np.int32): "I32"}
    for name, a in tensors.items():
        dtype = names.get(a.dtype, str(a.dtype))
        shape = "x".join(str(d) for d in a.shape)
        total = float(a.astype(np.float64).sum())
        bits = int(a.view(np.int32).astype(np.int64).sum()) if a.dtype.itemsize == 4 else 0
        print(f"tensor {name} {dtype} {shape} sum={total!r} bits={bits}")
    for key, value in sorted(metadata.items()):
        print(f"metadata {key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
