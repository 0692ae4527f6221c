"""The torchao suite's figures per recipe and shape, as Markdown tables (inference and training rows)."""

import sys

from microbench.results.writer import read_rows


def cell(value, digits=3):
    return f"{float(value):.{digits}f}" if value not in ("", None) else ""


def ms(row, column):
    """A seconds column in milliseconds."""
    value = row.get(column)
    return cell(float(value) * 1e3) if value not in ("", None) else ""


def inference(rows):
    print(
        "| shape | model | recipe | sparsity | status | baseline ms | transformed ms | speedup | SQNR dB "
        "| weight MB q/base | top kernels (launches, share) | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        kind = "compiled" if r.get("compile_mode") not in ("", "off") else "eager"
        wq = (
            f"{cell(int(r['quantized_weight_bytes']) / 2**20, 1)}/"
            f"{cell(int(r['baseline_weight_bytes']) / 2**20, 1)}"
            if r.get("quantized_weight_bytes")
            else ""
        )
        print(
            f"| {r['shape_name']} {r['m']}x{r['k']}x{r['n']} | {r['model_type']} | {r['recipe']} "
            f"| {r.get('sparsity', '')} | {r['status']} | {ms(r, f'baseline_{kind}_s')} "
            f"| {ms(r, f'quantized_{kind}_s')} | {cell(r.get(f'{kind}_speedup_ratio'), 2)} "
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
            f"| {r['scaling_granularity']} | {r['status']} | {ms(r, 'baseline_s')} "
            f"| {ms(r, 'float8_s')} | {cell(r.get('speedup_ratio'), 2)} | {cell(r.get('tflop_per_s'), 0)} "
            f"| {cell(r.get('grad_sqnr_db'), 1)} | {r.get('top_kernels', '')} | {r['error'][:90]} |"
        )


def main(path):
    rows = list(read_rows(path))
    (training if rows and rows[0]["op"] == "torchao_training" else inference)(rows)


if __name__ == "__main__":
    main(sys.argv[1])
