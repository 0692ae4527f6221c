"""An nccl-tests-style all-reduce anchor: one process per GPU, NCCL through torch.distributed, each size
run back to back and timed with CUDA events on every rank, the slowest rank's time the figure (not a
test; the harness's collectives are compared with it in docs/results_gpu.md).

    python bench/nccl_anchor.py N [--sizes-mib 32 128 1024] [--iters 20]

Per size (bytes per rank): algbw = size / time, busbw = algbw * 2 (N - 1) / N, as nccl-tests defines
them; a Markdown row per size.
"""

from __future__ import annotations

import argparse
import os

WARMUP = 5


def _rank(rank: int, n: int, sizes_mib: list[int], iters: int, port: int) -> None:
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n, device_id=torch.device("cuda", rank))
    rows = []
    for mib in sizes_mib:
        x = torch.ones(mib << 18, dtype=torch.float32, device="cuda")  # mib MiB of fp32
        for _ in range(WARMUP):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dist.all_reduce(x)
        stop.record()
        torch.cuda.synchronize()
        seconds = torch.tensor(start.elapsed_time(stop) / 1e3 / iters, device="cuda")
        dist.all_reduce(seconds, op=dist.ReduceOp.MAX)  # the slowest rank's
        algbw = (mib << 20) / seconds.item() / 1e9
        rows.append((mib, seconds.item() * 1e6, algbw, algbw * 2 * (n - 1) / n))
        del x
    if rank == 0:
        print("| GPUs | size MiB | time us | algbw GB/s | busbw GB/s |\n|---|---|---|---|---|")
        for mib, us, alg, bus in rows:
            print(f"| {n} | {mib} | {us:.1f} | {alg:.1f} | {bus:.1f} |")
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int, help="GPUs (one process each)")
    parser.add_argument(
        "--sizes-mib", type=int, nargs="+", default=[1, 4, 16, 32, 64, 128, 256, 1024]
    )
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--port", type=int, default=29533)
    args = parser.parse_args()
    import torch.multiprocessing as mp

    mp.spawn(_rank, args=(args.n, args.sizes_mib, args.iters, args.port), nprocs=args.n)


if __name__ == "__main__":
    main()
