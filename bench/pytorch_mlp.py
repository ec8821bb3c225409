#!/usr/bin/python3
"""pytorch_mlp.py: PyTorch's CPU time per epoch for the MLP of lab 05.

The same network (784-256-256-10, ReLU, softmax cross-entropy, SGD with
momentum 0.9), the same batch size and the same images (IDX files written by
bench_training_epoch) as the kit's epoch, so the two times compare. Started by
bench_training_epoch; by hand:

    /usr/bin/python3 bench/pytorch_mlp.py --data DIR [--threads N] [--epochs N]

Prints one line "pytorch: epoch_seconds=<median> ..." that the C bench reads.
Exits with 3, saying so, when torch is not installed.
"""
import argparse
import statistics
import struct
import sys
import time


def read_idx(path, magic, ndims):
    with open(path, "rb") as f:
        data = f.read()
    found = struct.unpack(">I", data[:4])[0]
    if found != magic:
        sys.exit(f"{path}: magic 0x{found:08X}, expected 0x{magic:08X}")
    dims = struct.unpack(">" + "I" * ndims, data[4:4 + 4 * ndims])
    return dims, data[4 + 4 * ndims:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="directory with train-images-idx3-ubyte and train-labels-idx1-ubyte")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave PyTorch's default)")
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs after one warm-up epoch")
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("pytorch: absent (torch is not installed for /usr/bin/python3; apt-get install python3-torch)")
        return 3

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    (count, rows, cols), pixels = read_idx(f"{args.data}/train-images-idx3-ubyte", 0x803, 3)
    (_,), labels = read_idx(f"{args.data}/train-labels-idx1-ubyte", 0x801, 1)
    x = torch.frombuffer(bytearray(pixels), dtype=torch.uint8).reshape(count, rows * cols).float() / 255.0
    y = torch.frombuffer(bytearray(labels), dtype=torch.uint8).long()

    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(rows * cols, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def epoch(seed):
        """One shuffled pass, the log kept as a tensor and read once at the end."""
        order = torch.randperm(count, generator=torch.Generator().manual_seed(seed))
        log = torch.zeros(())
        start = time.perf_counter()
        for first in range(0, count, args.batch):
            index = order[first:first + args.batch]
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(net(x[index]), y[index])
            loss.backward()
            optimizer.step()
            log += loss.detach()
        mean_loss = log.item() / ((count + args.batch - 1) // args.batch)
        return time.perf_counter() - start, mean_loss

    warm_up, _ = epoch(0)  # thread pools, allocator
    # A configuration whose threads fight over the cores can take half a minute
    # per epoch; one timed epoch says that well enough.
    runs = [epoch(e + 1) for e in range(args.epochs if warm_up < 5.0 else 1)]
    seconds = statistics.median(t for t, _ in runs)
    print(f"pytorch: epoch_seconds={seconds:.4f} threads={torch.get_num_threads()} "
          f"torch={torch.__version__} last_loss={runs[-1][1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
