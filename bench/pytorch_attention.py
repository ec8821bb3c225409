#!/usr/bin/env python3
"""pytorch_attention.py: PyTorch's time for one self-attention head on a GPU.

For each size: q, k, v of shape [n, d], float32, on cuda:0, and the forward
torch.softmax((q * scale) @ k.T, dim=-1) @ v with scale = 1 / sqrt(d): two
products and a softmax over the n x n scores, as bench_attention's kit side.
With --fused, also torch.nn.functional.scaled_dot_product_attention on the
same q, k and v, which never stores the scores (for float32 PyTorch picks its
memory-efficient kernel: its FlashAttention kernels take only 16-bit types),
against lab 07's attention in one pass. Each forward's peak memory too, from
the caching allocator's counters (torch.cuda.max_memory_allocated), beyond q,
k and v: the output, and the scores where they are stored.
TF32 is off, so the products are float32 like the kit's cuBLAS calls. Timed
with CUDA events around forwards queued back to back, as many as fill about
10 ms (at most 100), the fastest of --runs runs after a warm-up. Started by
bench_attention; by hand:

    python3 bench/pytorch_attention.py --sizes 1024,2048 --dims 64

Prints "pytorch: device=<name> torch=<version>", then one line per size,
"pytorch: n=<n> d=<d> ms=<milliseconds per forward> peak=<bytes>", and with
--fused a second, "pytorch: n=<n> d=<d> sdpa_ms=<milliseconds> peak=<bytes>".
Exits with 3 saying
"pytorch: absent (...)" when torch cannot be imported, and with 4 saying
"pytorch: no CUDA (...)" when torch sees no GPU.
"""
import argparse
import math
import sys


def numbers(text):
    return [int(part) for part in text.split(",") if part]


def forward_ms(torch, forward, runs):
    """The fastest of `runs` timings of forward(), in milliseconds per call."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def batch(repeat):
        start.record()
        for _ in range(repeat):
            forward()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / repeat

    for _ in range(3):  # warm-up: cuBLAS picks its kernels, the allocator its blocks
        forward()
    torch.cuda.synchronize()
    one = batch(1)
    repeat = 1 if one >= 10.0 else 100 if one <= 0.1 else int(10.0 / one)
    return min(batch(repeat) for _ in range(runs))


def peak_bytes(torch, forward):
    """The bytes one forward() allocates at its peak beyond what was allocated before."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = forward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    del out
    return peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=numbers, default=[1024, 2048, 4096, 8192], help="sequence lengths n, e.g. 1024,2048")
    parser.add_argument("--dims", type=numbers, default=[64, 128], help="head sizes d, e.g. 64,128")
    parser.add_argument("--runs", type=int, default=10, help="timed runs per size (the fastest counts)")
    parser.add_argument("--fused", action="store_true", help="also time scaled_dot_product_attention")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print(f"pytorch: absent (torch is not installed for {sys.executable})")
        return 3
    if not torch.cuda.is_available():
        print(f"pytorch: no CUDA (torch {torch.__version__} for {sys.executable} sees no GPU)")
        return 4

    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda:0")
    print(f"pytorch: device={torch.cuda.get_device_name(device)} torch={torch.__version__}", flush=True)
    generator = torch.Generator(device=device).manual_seed(1)
    with torch.no_grad():
        for d in args.dims:
            for n in args.sizes:
                q, k, v = (torch.rand(n, d, device=device, generator=generator) * 2 - 1 for _ in range(3))
                scale = 1.0 / math.sqrt(d)

                def forward():
                    return torch.softmax((q * scale) @ k.t(), dim=-1) @ v

                ms = forward_ms(torch, forward, args.runs)
                print(f"pytorch: n={n} d={d} ms={ms:.5f} peak={peak_bytes(torch, forward)}", flush=True)
                if args.fused:
                    # [batch, heads, n, d], as the function expects; its default scale is 1 / sqrt(d)
                    q4, k4, v4 = (t.view(1, 1, n, d) for t in (q, k, v))

                    def fused():
                        return torch.nn.functional.scaled_dot_product_attention(q4, k4, v4)

                    ms = forward_ms(torch, fused, args.runs)
                    print(f"pytorch: n={n} d={d} sdpa_ms={ms:.5f} peak={peak_bytes(torch, fused)}", flush=True)
                    del q4, k4, v4
                del q, k, v
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
