"""The torchao suite's figures per recipe and shape, as Markdown tables (inference and training rows)."""

import sys

from accelbench.ops.torchao import TorchaoExtras, TorchaoTrainingExtras
from accelbench.results.reading import read_rows
from accelbench.results.records import Row


def cell(value, digits=3):
    return f"{float(value):.{digits}f}" if value not in ("", None) else ""


def ms(seconds):
    return cell(seconds * 1e3) if seconds is not None else ""


def inference(rows: list[Row]) -> None:
    print(
        "| shape | model | recipe | sparsity | status | baseline ms | transformed ms | speedup | SQNR dB "
        "| weight MB q/base | top kernels (launches, share) | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        p, x = r.params.as_dict(), r.extras if isinstance(r.extras, TorchaoExtras) else None
        compiled = p.get("compile_mode") not in (None, "", "off")
        base = (x.baseline_compiled_s if compiled else x.baseline_eager_s) if x else None
        quant = (x.quantized_compiled_s if compiled else x.quantized_eager_s) if x else None
        wq = (
            f"{cell(x.quantized_weight_bytes / 2**20, 1)}/{cell(x.baseline_weight_bytes / 2**20, 1)}"
            if x and x.quantized_weight_bytes
            else ""
        )
        shape_name = x.shape_name if x else p.get("shape_name", "")
        print(
            f"| {shape_name} {p['m']}x{p['k']}x{p['n']} | {p['model_type']} | {p['recipe']} "
            f"| {p.get('sparsity', '')} | {r.status.value} | {ms(base)} "
            f"| {ms(quant)} | {cell(x.speedup if x else None, 2)} "
            f"| {cell(x.sqnr_db if x else None, 1)} | {wq} | {r.timing.top_kernels or ''} | {r.identity.error[:90]} |"
        )


def training(rows: list[Row]) -> None:
    print(
        "| shape | model | recipe | granularity | status | bf16 ms | float8 ms | speedup | TFLOP/s "
        "| grad SQNR dB | top kernels (launches, share) | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        p, x = r.params.as_dict(), r.extras if isinstance(r.extras, TorchaoTrainingExtras) else None
        print(
            f"| {p['m']}x{p['k']}x{p['n']} | {p['model_type']} | {p['recipe']} "
            f"| {p['scaling_granularity']} | {r.status.value} | {ms(x.baseline_s if x else None)} "
            f"| {ms(x.float8_s if x else None)} | {cell(x.speedup_ratio if x else None, 2)} | {cell(r.derived.tflop_per_s, 0)} "
            f"| {cell(x.grad_sqnr_db if x else None, 1)} | {r.timing.top_kernels or ''} | {r.identity.error[:90]} |"
        )


def main(path):
    rows = read_rows(path)
    (training if rows and rows[0].identity.op == "torchao_training" else inference)(rows)


if __name__ == "__main__":
    main(sys.argv[1])
