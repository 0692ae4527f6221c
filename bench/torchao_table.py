"""The torchao suite's figures per recipe and shape, as a Markdown table."""

import csv
import sys


def cell(value, digits=3):
    return f"{float(value):.{digits}f}" if value not in ("", None) else ""


def main(path):
    print(
        "| shape | model | recipe | status | baseline ms | quantized ms | speedup | SQNR dB | weight MB q/base | peak MB q/base | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in csv.DictReader(open(path)):
        compiled = r.get("compile_mode") not in ("", "off")
        kind = "compile" if compiled else "eager"
        wq = (
            f"{cell(int(r['weight_bytes_quantized']) / 2**20, 1)}/{cell(int(r['weight_bytes_baseline']) / 2**20, 1)}"
            if r.get("weight_bytes_quantized")
            else ""
        )
        mem = f"{cell(r.get('quantized_peak_memory_mb'), 0)}/{cell(r.get('baseline_peak_memory_mb'), 0)}"
        print(
            f"| {r['shape_name']} {r['m']}x{r['k']}x{r['n']} | {r['model_type']} | {r['recipe']} | {r['status']} | "
            f"{cell(r.get(f'baseline_{kind}_ms'))} | {cell(r.get(f'quantized_{kind}_ms'))} | "
            f"{cell(r.get(f'{kind}_speedup'), 2)} | {cell(r.get('sqnr_db'), 1)} | {wq} | {mem} | {r['error'][:80]} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
