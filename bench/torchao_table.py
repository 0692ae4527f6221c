"""The torchao suite's figures per recipe and shape, as Markdown tables (inference and training rows)."""

import csv
import sys


def cell(value, digits=3):
    return f"{float(value):.{digits}f}" if value not in ("", None) else ""


def ms(row, name):
    """A training time in ms, from the current `<name>_s` column or an older file's `<name>_ms`."""
    if row.get(f"{name}_s") not in ("", None):
        return cell(float(row[f"{name}_s"]) * 1e3)
    return cell(row.get(f"{name}_ms"))


def inference(rows):
    print(
        "| shape | model | recipe | sparsity | status | baseline ms | transformed ms | speedup | SQNR dB "
        "| weight MB q/base | top kernels (launches, share) | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        kind = "compile" if r.get("compile_mode") not in ("", "off") else "eager"
        wq = (
            f"{cell(int(r['weight_bytes_quantized']) / 2**20, 1)}/"
            f"{cell(int(r['weight_bytes_baseline']) / 2**20, 1)}"
            if r.get("weight_bytes_quantized")
            else ""
        )
        print(
            f"| {r['shape_name']} {r['m']}x{r['k']}x{r['n']} | {r['model_type']} | {r['recipe']} "
            f"| {r.get('sparsity', '')} | {r['status']} | {cell(r.get(f'baseline_{kind}_ms'))} "
            f"| {cell(r.get(f'quantized_{kind}_ms'))} | {cell(r.get(f'{kind}_speedup'), 2)} "
            f"| {cell(r.get('sqnr_db'), 1)} | {wq} | {r.get('top_kernels', '')} | {r['error'][:90]} |"
        )


def training(rows):
    print(
        "| shape | model | recipe | granularity | status | bf16 ms | float8 ms | speedup | TFLOP/s "
        "| grad SQNR dB | top kernels (launches, share) | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['m']}x{r['k']}x{r['n']} | {r['model_type']} | {r['recipe']} "
            f"| {r['scaling_granularity']} | {r['status']} | {ms(r, 'baseline')} "
            f"| {ms(r, 'float8')} | {cell(r.get('speedup'), 2)} | {cell(r.get('tflops'), 0)} "
            f"| {cell(r.get('grad_sqnr_db'), 1)} | {r.get('top_kernels', '')} | {r['error'][:90]} |"
        )


def main(path):
    rows = list(csv.DictReader(open(path)))
    (training if rows and rows[0]["op"] == "torchao_training" else inference)(rows)


if __name__ == "__main__":
    main(sys.argv[1])
