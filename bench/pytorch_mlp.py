#!/usr/bin/python3
"""pytorch_mlp.py: PyTorch's time per epoch and per step for the MLP of lab 05.

The same network (784-256-256-10, ReLU, softmax cross-entropy, SGD with
momentum 0.9), the same batch size and the same images (IDX files written by
bench_training_epoch) as the kit's epoch, so the times compare. The batches
reach the device as in lab 05: gathered in shuffled order into one of two
pinned staging buffers and copied with non_blocking=True, an event per buffer
saying when the GPU is done with it; the loss is summed on the device and read
once per epoch. Three ways:

    --device cpu            PyTorch on the CPU (--threads N: torch.set_num_threads)
    --device cuda           eagerly on the first GPU, kernel by kernel
    --device cuda --graph   the whole step (forward, loss, backward, SGD step,
                            the log) captured once as a CUDA graph
                            (torch.cuda.CUDAGraph) and replayed every step,
                            the batch copied into the graph's static input
                            tensors before each replay; the last, partial
                            batch is left out (a graph has fixed shapes)

Started by bench_training_epoch; by hand:

    /usr/bin/python3 bench/pytorch_mlp.py --data DIR [--device cuda [--graph]] [--epochs N]

Prints one line "pytorch: epoch_seconds=<median> step_us=<median> ..." that
the C bench reads. Exits with 3, saying so, when torch (or, for --device cuda,
a GPU that torch can use) is not there.
"""
import argparse
import statistics
import struct
import sys
import time


def read_idx(path, magic, ndims):
    with open(path, "rb") as f:
        header = f.read(4 + 4 * ndims)
        found = struct.unpack(">I", header[:4])[0]
        if found != magic:
            sys.exit(f"{path}: magic 0x{found:08X}, expected 0x{magic:08X}")
        dims = struct.unpack(">" + "I" * ndims, header[4:])
        count = 1
        for d in dims:
            count *= d
        data = f.read(count)
    if len(data) != count:
        sys.exit(f"{path}: {len(data)} bytes of data, its header announces {count}")
    return dims, data


class Staging:
    """Two pinned host buffers used in turn, as lab 05's train.c does: batch k
    is gathered into buffer k % 2 while the GPU may still copy from the other;
    an event recorded after the copy says when the buffer is free again."""

    def __init__(self, torch, batch, pixels, device):
        pin = device.type == "cuda"
        self.x = [torch.empty(batch, pixels).pin_memory() if pin else torch.empty(batch, pixels) for _ in range(2)]
        self.y = [torch.empty(batch, dtype=torch.long).pin_memory() if pin else torch.empty(batch, dtype=torch.long)
                  for _ in range(2)]
        self.events = [torch.cuda.Event() if pin else None for _ in range(2)]
        self.next = 0

    def fill(self, torch, x, y, index):
        """Gathers rows `index` into the next buffer; returns its views."""
        k = self.next
        self.next = 1 - k
        if self.events[k] is not None:
            self.events[k].synchronize()  # waits only when two steps ahead of the GPU
        n = len(index)
        torch.index_select(x, 0, index, out=self.x[k][:n])
        torch.index_select(y, 0, index, out=self.y[k][:n])
        return k, self.x[k][:n], self.y[k][:n]

    def release(self, k):
        if self.events[k] is not None:
            self.events[k].record()  # after the copies queued from buffer k


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="directory with train-images-idx3-ubyte and train-labels-idx1-ubyte")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--graph", action="store_true", help="capture the step as a CUDA graph (--device cuda)")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave PyTorch's default)")
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs after one warm-up epoch")
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args()
    if args.graph and args.device != "cuda":
        parser.error("--graph needs --device cuda")
    try:
        import torch
    except ImportError:
        print("pytorch: absent (torch is not installed for /usr/bin/python3; apt-get install python3-torch)")
        return 3
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"pytorch: absent (torch {torch.__version__} sees no CUDA GPU here)")
        return 3

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    (count, rows, cols), pixels = read_idx(f"{args.data}/train-images-idx3-ubyte", 0x803, 3)
    (_,), labels = read_idx(f"{args.data}/train-labels-idx1-ubyte", 0x801, 1)
    x = torch.frombuffer(bytearray(pixels), dtype=torch.uint8).reshape(count, rows * cols).float() / 255.0
    y = torch.frombuffer(bytearray(labels), dtype=torch.uint8).long()

    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(rows * cols, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    staging = Staging(torch, args.batch, rows * cols, device)
    log = torch.zeros((), device=device)
    # The device tensors a step reads: fixed, so that a captured graph finds its batch there.
    static_x = torch.zeros(args.batch, rows * cols, device=device)
    static_y = torch.zeros(args.batch, dtype=torch.long, device=device)

    def step(bx, by):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(net(bx), by)
        loss.backward()
        optimizer.step()
        log.add_(loss.detach())

    graph = None
    if args.graph:
        # PyTorch's recipe for capturing a whole training step: a few eager
        # steps on a side stream first (they create the momentum buffers and
        # let the libraries choose their kernels), then the capture.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step(static_x, static_y)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            loss = loss_fn(net(static_x), static_y)
            loss.backward()
            optimizer.step()
            log.add_(loss.detach())

    steps = count // args.batch if graph else (count + args.batch - 1) // args.batch

    def epoch(seed):
        """One shuffled pass; the log read once at the end."""
        order = torch.randperm(count, generator=torch.Generator().manual_seed(seed))
        log.zero_()
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for s in range(steps):
            k, bx, by = staging.fill(torch, x, y, order[s * args.batch:(s + 1) * args.batch])
            n = len(bx)
            if device.type == "cpu":
                step(bx, by)
                continue
            if n == args.batch:
                static_x.copy_(bx, non_blocking=True)
                static_y.copy_(by, non_blocking=True)
                staging.release(k)
                if graph:
                    graph.replay()
                else:
                    step(static_x, static_y)
            else:  # the last, partial batch, eagerly (never with --graph)
                step(bx.to(device, non_blocking=True), by.to(device, non_blocking=True))
                staging.release(k)
        mean_loss = log.item() / steps  # waits for the device
        return time.perf_counter() - start, mean_loss

    warm_up, _ = epoch(0)  # thread pools, allocator, cuBLAS handles
    # A configuration whose threads fight over the cores can take half a minute
    # per epoch; one timed epoch says that well enough.
    runs = [epoch(e + 1) for e in range(args.epochs if warm_up < 5.0 else 1)]
    seconds = statistics.median(t for t, _ in runs)
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu"
    print(f"pytorch: epoch_seconds={seconds:.4f} step_us={1e6 * seconds / steps:.1f} steps={steps} "
          f"device={args.device} graph={'yes' if graph else 'no'} threads={torch.get_num_threads()} "
          f"torch={torch.__version__} last_loss={runs[-1][1]:.4f} gpu={name.replace(' ', '_')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
