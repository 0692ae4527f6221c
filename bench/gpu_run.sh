#!/usr/bin/env bash
# The batched GPU checks (device tool), one part per issue's figures (jax, parity, v2, v2_gemm, ...).
# Usage on the GPU machine, from the repo root: bash bench/gpu_run.sh [jax|parity|oom|torchao|fusion ...]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
RUN="python3 -m accelbench.cli run --no-progress"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -c "import jax, torch; print('jax', jax.__version__, jax.devices(), 'torch', torch.__version__)" | tee -a "$OUT/gpu.txt"
for part in "${@:-jax parity oom}"; do for p in $part; do case $p in
  copy) python3 bench/copy_bandwidth.py | tee "$OUT/copy.json" ;;
  collectives_headline)
    NCCL_DEBUG=VERSION timeout 300 $RUN --config configs/gpu/collectives_headline.yaml --output-dir "$OUT" 2>&1 | grep -v Warning | tail -4
    python3 -c "
import json
for l in open('$OUT/collectives_headline.jsonl'):
    r = json.loads(l)
    k = [(x['name'][:50], round(x['per_iter'], 2), round(x['mean_s'] * 1e6, 1)) for x in r.get('kernels') or []]
    print(r['op'], r['backend'], r['group_device_count'], r['message_bytes'], r['status'], round((r['time_median_s'] or 0) * 1e6, 1), r.get('busbw_gb_per_s'), r.get('launch_median_s'), r.get('device_span_median_s'), k[:3])
" ;;
  collectives2|collectives4|collectives8)
    n=${p#collectives}
    python3 bench/collectives_scaling.py config "$n" "/tmp/collectives_${n}gpu.yaml"
    timeout 570 $RUN --config "/tmp/collectives_${n}gpu.yaml" --output-dir "$OUT" 2>&1 | grep -v Warning | tail -4 ;;
  jax)
    python3 bench/copy_bandwidth.py | tee "$OUT/copy.json"
    $RUN --config configs/gpu/jax_targets.yaml --output-dir "$OUT/run1" 2>&1 | tail -3
    $RUN --config configs/gpu/jax_targets.yaml --output-dir "$OUT/run2" 2>&1 | tail -3
    cp "$OUT/run1/jax_targets.csv" "$OUT/jax_run1.csv"; cp "$OUT/run2/jax_targets.csv" "$OUT/jax_run2.csv"
    cp "$OUT/run1/jax_targets.jsonl" "$OUT/jax_run1.jsonl"
    python3 bench/summarize.py "$OUT/jax_run1.csv" "$OUT/jax_run2.csv" ;;
  parity)
    timeout 300 $RUN --config configs/parity/gpu_parity.yaml --output-dir "$OUT" 2>&1 | tail -3
    python3 bench/summarize.py "$OUT/gpu_parity.csv" ;;
  torchao)
    timeout 420 $RUN --config configs/gpu/torchao_eager.yaml --output-dir "$OUT" 2>&1 | tail -3
    cp results/torchao_gpu/results.csv "$OUT/torchao_eager.csv"
    python3 bench/summarize.py "$OUT/torchao_eager.csv"
    python3 bench/torchao_table.py "$OUT/torchao_eager.csv" ;;
  torchao_sparsity|torchao_sparsity_compiled|torchao_int8dq_small|torchao_training|torchao_training_models)
    timeout 560 $RUN --config configs/gpu/$p.yaml --output-dir "$OUT" --torchao-csv 2>&1 | grep -v Warn | tail -3
    cp results/$p/results.csv "$OUT/$p.csv"; cp results/$p/results.jsonl "$OUT/$p.jsonl"
    cp -r results/$p/inference results/$p/training "$OUT/" 2>/dev/null
    python3 bench/torchao_table.py "$OUT/$p.csv" ;;
  transformer)
    timeout 300 $RUN --config configs/gpu/torchao_transformer.yaml --output-dir "$OUT" 2>&1 | tail -2
    cp results/torchao_gpu_transformer/results.csv "$OUT/torchao_transformer.csv"
    python3 bench/summarize.py "$OUT/torchao_transformer.csv"
    python3 bench/torchao_table.py "$OUT/torchao_transformer.csv" ;;
  triton_configs)
    python3 bench/copy_bandwidth.py | tee "$OUT/copy4.json"
    python3 bench/triton_configs.py | tee "$OUT/triton_configs.txt" ;;
  profilers)
    timeout 200 $RUN --config configs/gpu/torchao_profilers.yaml --output-dir "$OUT" 2>&1 | tail -2
    cp results/torchao_profilers/results.csv "$OUT/torchao_profilers.csv"
    python3 -c "import csv; [print(r['recipe'], r['status'], r['error'], r['profiler_trace_path'], r['memory_profile_path'], r['memory_profile_note']) for r in csv.DictReader(open('$OUT/torchao_profilers.csv'))]"
    find results/torchao_profilers -type f -printf '%s %p\n' ;;
  autotune)
    timeout 540 $RUN --config configs/gpu/torchao_autotune.yaml --output-dir "$OUT" 2>&1 | tail -3
    cp results/torchao_gpu_autotune/results.csv "$OUT/torchao_autotune.csv"
    python3 bench/torchao_table.py "$OUT/torchao_autotune.csv" ;;
  fusion)
    python3 bench/copy_bandwidth.py | tee "$OUT/copy2.json"
    timeout 280 $RUN --config configs/gpu/fusion.yaml --output-dir "$OUT" 2>&1 | tail -2
    python3 bench/fusion_table.py "$OUT/fusion.csv" ;;
  elementwise)
    timeout 300 $RUN --config configs/gpu/elementwise.yaml --output-dir "$OUT" 2>&1 | tail -2
    python3 bench/elementwise_table.py "$OUT/elementwise.csv" "$OUT/copy2.json" ;;
  target)
    python3 bench/copy_bandwidth.py | tee "$OUT/copy3.json"
    timeout 200 $RUN --config configs/gpu/elementwise_target.yaml --output-dir "$OUT" 2>&1 | tail -2
    python3 bench/elementwise_table.py "$OUT/elementwise_target.csv" "$OUT/copy3.json" ;;
  ironwood_transfers|ironwood_attention|ironwood_throttling)
    timeout 570 $RUN --config configs/gpu/$p.yaml --output-dir "$OUT" 2>&1 | tail -2
    cp $p.csv $p.jsonl "$OUT/" 2>/dev/null
    python3 bench/ironwood_system_table.py "$OUT/$p.csv" ;;
  ironwood_gemms|ironwood_memory)
    timeout 570 $RUN --config configs/gpu/$p.yaml --output-dir "$OUT" 2>&1 | tail -2
    cp $p.csv $p.jsonl "$OUT/" 2>/dev/null
    python3 bench/ironwood_table.py "$OUT/$p.csv" ;;
  units)  # one case or two of each suite whose figures are CUDA-only (peak memory), in today's units
    printf '%s\n' 'backend: torch' 'num_runs: 20' 'benchmarks:' '- benchmark_name: fusion_linear' \
      '  benchmark_sweep_params: [{pattern: [linear_bias, linear_bias_gelu], m: 512, k: 1024, n: 1024, dtype: bfloat16}]' \
      '- benchmark_name: elementwise' \
      '  benchmark_sweep_params: [{operation: [layernorm, gelu], implementation: eager, batch: 32, seq: 512, hidden: 768}]' > /tmp/units.yaml
    timeout 200 $RUN --config /tmp/units.yaml -o "$OUT/units.csv" --seed-json "$OUT/units_seed.json" 2>&1 | tail -1
    python3 bench/fusion_table.py "$OUT/units.csv"
    python3 bench/elementwise_table.py "$OUT/units.csv" <(python3 bench/copy_bandwidth.py)
    python3 -m json.tool "$OUT/units_seed.json" | head -60
    printf '%s\n' 'quantization_config_recipe_names: [baseline, float8dq-row]' 'output_dir: /tmp/units_ao' 'model_params:' \
      '  - {name: a, matrix_shapes: [{name: custom, shapes: [[1024, 1024, 1024]]}], use_torch_compile: false, device: cuda, num_runs: 20}' > /tmp/units_ao.yaml
    timeout 200 $RUN --config /tmp/units_ao.yaml -o "$OUT/units_ao.csv" --torchao-csv 2>&1 | tail -1
    python3 bench/torchao_table.py "$OUT/units_ao.csv"; cat /tmp/units_ao/inference/results_*.csv
    python3 -c "import csv; [print({k: v for k, v in r.items() if 'peak_memory' in k or k.endswith(('_s', '_pct'))}) for r in csv.DictReader(open('$OUT/units_ao.csv'))]" ;;
  v2)  # issue 26: upstream jax-bench configs unchanged, then the STREAM copy against the copy ceiling
    python3 bench/copy_bandwidth.py | tee "$OUT/copy_v2.json"
    for c in 7x/2x2x1/gemm_generalized 7x/2x2x1/hbm_bandwidth 7x/host_device; do
      timeout 200 $RUN --config configs/jax_bench/$c.yaml --output-dir "$OUT/v2/$(basename $c)" 2>&1 | grep -v Warn | tail -2
    done
    python3 bench/summarize.py "$OUT"/v2/gemm_generalized/*.csv | cut -c1-200
    python3 bench/jax_bench_check.py "$OUT"
    tar czf "$OUT/v2.tgz" -C "$OUT" v2 && rm -rf "$OUT/v2" ;;  # the device tool brings back 8 files
  v2_conditions)  # issue 34: upstream's GEMM, HBM and host-transfer configs under both conditions
    for c in 7x/2x2x1/gemm_generalized 7x/2x2x1/hbm_bandwidth 7x/host_device; do
      for cond in upstream strict; do
        timeout 240 python3 -m accelbench jax-bench --config configs/jax_bench/$c.yaml --conditions $cond \
          --output "$OUT/cond/$cond/$(basename $c)" 2>&1 | grep -v Warn | tail -1
      done
    done
    python3 bench/jax_bench_conditions.py "$OUT/cond" | tee "$OUT/conditions.md"
    tar czf "$OUT/cond.tgz" -C "$OUT" cond && rm -rf "$OUT/cond" ;;
  v2_beside)  # issue 34: upstream's own package (an ignored checkout in .upstream, carried) beside ours
    timeout 560 python3 bench/jax_bench_beside.py --upstream .upstream --gpu --rounds 2 | tee "$OUT/beside_gpu.md" ;;
  adaptive)  # issue 39: adaptive sampling per backend and implementation, start to first row
    # cached bytecode, as on a machine that has imported its packages before (this one ships without:
    # compile_path alone compiles no package below site-packages' top level)
    python3 -m compileall -q -j 0 src torch_backend $(python3 -c "import site; print(*site.getsitepackages())") /tmp/site >/dev/null 2>&1
    python3 -c "import torch, os; print('torch bytecode cached:', os.path.isdir(os.path.join(os.path.dirname(torch.__file__), '__pycache__')), 'PYTHONDONTWRITEBYTECODE', os.environ.get('PYTHONDONTWRITEBYTECODE'))"
    for i in 1 2; do /usr/bin/time -f "import torch: %e s" python3 -c "import torch"; /usr/bin/time -f "import jax: %e s" python3 -c "import jax"; done
    timeout 560 python3 bench/adaptive_speed.py | tee "$OUT/adaptive.md" ;;
  costs)  # issue 39: what a profiler session costs once started, and the compiler stack's import
    python3 -c "
import time; t = time.perf_counter()
import torch; a = time.perf_counter()
import torch._dynamo, torch._inductor.compile_fx; b = time.perf_counter()
print(f'import torch {a - t:.2f} s, then dynamo + inductor {b - a:.2f} s')
from torch_backend import profiling
s = time.perf_counter(); c = profiling.warm(torch.device('cuda', 0))
print(f'torch profiler warm-up {time.perf_counter() - s:.3f} s, a session after it {c * 1e3:.1f} ms')
" 2>&1 | grep -v Warn | tee "$OUT/costs.txt"
    python3 -c "
import time
from accelbench.jax_backend import timers
s = time.perf_counter(); c = timers.session_cost()
print(f'jax profiler warm-up {time.perf_counter() - s:.3f} s, a session after it {c * 1e3:.1f} ms (mean)')
import jax
probe, x = jax.jit(timers._probe), jax.numpy.ones(8)
each = []
for _ in range(10):
    s = time.perf_counter(); timers.profiled(lambda: [float(probe(x)[0])], None); each.append(time.perf_counter() - s)
print('ten later sessions, ms:', ' '.join(f'{e * 1e3:.1f}' for e in each))
" 2>&1 | grep -v Warn | tee -a "$OUT/costs.txt" ;;
  startup)  # issue 39: a one-off compiled case's start to first row, and where its seconds go
    timeout 300 python3 bench/adaptive_speed.py --startup | tee "$OUT/startup.md"
    rm -rf /tmp/sc; TORCHINDUCTOR_CACHE_DIR=/tmp/sc/i TRITON_CACHE_DIR=/tmp/sc/t timeout 120 python3 -m cProfile -o /tmp/compile.prof \
      -m accelbench.cli run --run add --m 2048 --n 4096 --dtype bfloat16 --backend torch --implementation compile \
      --target_precision 0.002 --num_runs 20 -o /tmp/sc.csv -q --no-progress
    python3 -c "import pstats; pstats.Stats('/tmp/compile.prof').sort_stats('cumulative').print_stats(60)" > "$OUT/compile_profile.txt"
    grep -A70 "cumulative" "$OUT/compile_profile.txt" | cut -c1-160 | head -75 ;;
  sessions)  # issue 39: one profiler session's start, stop and parse beside its loop
    timeout 300 python3 bench/trace_overhead.py ${SESSIONS:-jax torch} 2>&1 | grep -v "^USDT\|Warning" | tee "$OUT/sessions.txt" ;;
  tpums)  # issue 38: upstream's tpu7x gemm and hbm TPUMS files, unchanged, through the tpums command
    for c in tpu7x/2x2x1/gemm tpu7x/2x2x1/hbm; do
      timeout 280 python3 -m accelbench tpums benchmark run-config configs/tpums/$c.yaml \
        --output_dir "$OUT/tpums/$(basename $c)" 2>&1 | grep -v Warn | tail -2
    done
    # the sample soak, shortened from 120 s to 20 s of untraced chunks (everything else as shipped)
    sed 's/min_duration_s: 120.0/min_duration_s: 20.0/' configs/tpums/sample/gemm_throttling.yaml > /tmp/soak20.yaml
    timeout 200 python3 -m accelbench tpums benchmark run-config /tmp/soak20.yaml \
      --output_dir "$OUT/tpums/soak" 2>&1 | grep -v Warn | tail -2
    python3 bench/tpums_table.py "$OUT"/tpums/*/summary.csv | tee "$OUT/tpums.md"
    tar czf "$OUT/tpums.tgz" -C "$OUT" tpums && rm -rf "$OUT/tpums" ;;
  anchor2|anchor4|anchor8)  # issue 52: nccl-tests-style all-reduce, one process per GPU
    timeout 200 python3 bench/nccl_anchor.py "${p#anchor}" 2>&1 | grep -v Warn | tee "$OUT/anchor_${p#anchor}.md" ;;
  psum2|psum4|psum8)  # issue 52: the harness's all-reduce (JAX and torch.distributed) from 1 MiB, beside the anchor
    n=${p#psum}
    python3 bench/collectives_scaling.py config "$n" "/tmp/psum_${n}gpu.yaml" psum --from-kib 1024
    timeout 400 $RUN --config "/tmp/psum_${n}gpu.yaml" --output-dir "$OUT" 2>&1 | grep -v Warning | tail -3 ;;
  coord2|coord4|coord8)  # issues 51/52: the DCN files, one process per GPU joined by the coordinator form
    n=${p#coord}
    for name in ppermute_uni ppermute_bidi all_reduce; do
      sed "s/mesh_shape: \"2x8\"/mesh_shape: \"${n}x1\"/; s/\[8192, 16384, 24576, 32768\]/[8192, 32768]/" \
        configs/tpums/dcn/7x_2x2x1_$name.yaml > /tmp/dcn_$name.yaml
      for i in $(seq 0 $((n - 1))); do
        CUDA_VISIBLE_DEVICES=$i timeout 280 $RUN --config /tmp/dcn_$name.yaml --output-dir "$OUT/coord$n" \
          --coordinator 127.0.0.1:12$((n))77 --num-processes "$n" --process-id "$i" > "/tmp/coord_${name}_$i.log" 2>&1 &
      done
      wait
      tail -3 "/tmp/coord_${name}_0.log"; grep -c "UNAVAILABLE\|CANCELLED" /tmp/coord_${name}_*.log
    done
    python3 bench/tpums_table.py "$OUT"/coord$n/*.summary.csv | tee "$OUT/coord$n.md" ;;
  ab59)  # issue 59: ab of two kernels 3% apart (and A/A) beside compare of separately taken runs
    timeout 300 python3 bench/ab_gpu.py ab 2>&1 | grep -v Warning | tee "$OUT/ab59.txt"
    rm -rf /tmp/ab59 && for k in base base plus3; do timeout 120 python3 bench/ab_gpu.py one $k /tmp/ab59/add.csv 2>&1 | grep -v Warning | tee -a "$OUT/ab59_runs.txt"; done
    for pair in "add.csv add.2.csv" "add.csv add.3.csv"; do set -- $pair
      (cd /tmp/ab59 && python3 -m accelbench compare "$1" "$2" --threshold 0.01; python3 -m accelbench compare "$1" "$2" --threshold 0.01 --format json) 2>&1 | tee -a "$OUT/ab59_compare.txt"
    done
    cp -r /tmp/ab59 "$OUT/ab59_runs" ;;
  library48)  # issue 48: bench() beside do_bench, do_bench_cudagraph, blocked_autorange, CUDA events, a host clock
    timeout 500 python3 bench/library_vs_peers.py --out "$OUT/library48.json" 2>&1 | grep -v Warning | tee "$OUT/library48.md"
    mkdir -p /tmp/plug && printf '%s\n' 'import torch' 'def test_gemm(microbench):' \
      '    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)' \
      '    r = microbench(torch.matmul, a, a, flops=2 * 4096**3, cache="warm")' \
      '    print(r); assert r.ok and r.time_definition == "cupti"' > /tmp/plug/test_gpu.py
    (cd /tmp/plug && python3 -m pytest -q -s -p accelbench.pytest_plugin test_gpu.py 2>&1 | tail -15) | tee "$OUT/plugin48.txt" ;;
  today49)  # issue 49: torchao 0.18's recipes on the llama shapes and a transformer block, eager and compiled
    timeout 540 $RUN --config configs/gpu/torchao_today.yaml -o "$OUT/today49.csv" ${RESUME49:-} 2>&1 | grep -v Warning | tail -5
    python3 bench/torchao_table.py "$OUT/today49.csv" 2>&1 | tee "$OUT/today49.md" | tail -60 ;;
  training49)  # issue 49: float8 training's rowwise beside blockwise and MXFP8
    timeout 400 $RUN --config configs/gpu/torchao_training_today.yaml -o "$OUT/training49.csv" 2>&1 | grep -v Warning | tail -5
    python3 bench/torchao_table.py "$OUT/training49.csv" 2>&1 | tee "$OUT/training49.md" | tail -20 ;;
  throttle50)  # issue 50: the sampling's cost (off and flag taking turns), then a 20 s-a-case soak, flag and discard
    sed 's/^throttle: flag/throttle: "off"/' configs/gpu/throttle_cost.yaml > /tmp/throttle_off.yaml
    for i in 1 2 3; do
      $RUN --config /tmp/throttle_off.yaml -o "$OUT/cost_off_$i.csv" -q 2>&1 | tail -1
      $RUN --config configs/gpu/throttle_cost.yaml -o "$OUT/cost_flag_$i.csv" -q 2>&1 | tail -1
    done
    python3 bench/throttle_table.py cost "$OUT"/cost_off_*.csv -- "$OUT"/cost_flag_*.csv | tee "$OUT/cost50.md"
    sed 's/^throttle: flag/throttle: discard/' configs/gpu/throttle_soak.yaml > /tmp/throttle_discard.yaml
    timeout 200 $RUN --config configs/gpu/throttle_soak.yaml -o "$OUT/soak_flag.csv" 2>&1 | tail -2
    timeout 200 $RUN --config /tmp/throttle_discard.yaml -o "$OUT/soak_discard.csv" 2>&1 | tail -2
    python3 bench/throttle_table.py rows "$OUT/soak_flag.csv" "$OUT/soak_discard.csv" | tee "$OUT/soak50.md" ;;
  audit63)  # issue 63: each finding of the audit on a case built for it, the held-out kernels' audits, its cost, the device state
    for step in cold_flush side_stream launch_bound recompile heldout; do  # a process each: one CUPTI owner
      timeout 300 python3 bench/audit_check.py --only $step --out "$OUT/audit63_$step.json" 2>&1 \
        | grep -Ev "Warning|_warn_once|^[EWI][0-9]{4} |Source Location|^external/|^$" | tee -a "$OUT/audit63.md"
    done
    nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,ECC > "$OUT/audit63_nvidia_smi.txt" 2>&1 ;;
  cupti63)  # issue 63 follow-up: JAX after PyTorch's profiler in one process (as the harness leaves it:
    # the refusal; STEP:1 runs STEP with TEARDOWN_CUPTI=1, Kineto's teardown), what the teardown costs a
    # session, and where the cold flush's kernels are placed; each step a process of its own (140 s
    # at most), none started after 390 s: under 9 minutes
    start=$SECONDS
    for step in ${CUPTI_STEPS:-order config foreign teardown teardown:1 flush flush:1 cost cost:1 gaps}; do
      name=${step/:/_}; value=${step#*:}
      [ $((SECONDS - start)) -gt 390 ] && { echo "## $step: skipped, the part's time is up" | tee -a "$OUT/cupti63.md"; continue; }
      [ "$value" = "$step" ] && unset TEARDOWN_CUPTI || export TEARDOWN_CUPTI=$value
      timeout 140 python3 bench/cupti_check.py "${step%%:*}" > "$OUT/cupti63_$name.log" 2>&1
      echo "exit $?; XLA CUPTI lines on stderr: $(grep -c 'cuptiSubscribe\|CUPTI call error\|due to a previous error' "$OUT/cupti63_$name.log"); $((SECONDS - start)) s into the part" \
        >> "$OUT/cupti63_$name.log"
      grep -Ev "Warning|_warn_once|^[EWI][0-9]{4} |Source Location|^external/|^$" "$OUT/cupti63_$name.log" | tee -a "$OUT/cupti63.md"
    done
    unset TEARDOWN_CUPTI
    for step in side_stream cold_flush; do  # audit63's two kernels_vary cases again, with the fix
      [ $((SECONDS - start)) -gt 390 ] && { echo "## audit $step: skipped, the part's time is up" | tee -a "$OUT/cupti63.md"; continue; }
      timeout 140 python3 bench/audit_check.py --only $step --out "$OUT/cupti63_audit_$step.json" 2>&1 \
        | grep -Ev "Warning|_warn_once|^[EWI][0-9]{4} |Source Location|^external/|^$" | tee -a "$OUT/cupti63.md"
    done ;;
  startup53)  # issue 53: a compiled one-off beside a bare torch.compile script, eager, JAX, a compiled sweep
    timeout 560 python3 bench/startup_compile.py --repeat 3 2>&1 | tee "$OUT/startup53.md" ;;
  host46)  # issue 46: where jax-bench's host-clock time goes, upstream's package beside ours, on GPU 0
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/simple_parsing*.whl .whl/docstring_parser*.whl 2>/dev/null
    CUDA_VISIBLE_DEVICES=0 timeout 200 python3 bench/host_overhead.py --upstream .upstream --rounds 5 2>&1 | grep -v Warn | tee "$OUT/host_overhead.md" ;;
  beside46)  # issue 46: upstream's package and ours, the same one-off cases, taking turns, on GPU 0
    CUDA_VISIBLE_DEVICES=0 timeout 380 python3 bench/jax_bench_beside.py --upstream .upstream --gpu --rounds 3 \
      --only quantization gemm_generalized hbm_bandwidth simple_add | tee "$OUT/beside46.md" ;;
  proc2|proc4|proc8)  # issues 51/52: the DCN files and the all-reduce through --processes N, one process per GPU
    n=${p#proc}
    for name in ppermute_uni all_reduce; do
      sed "s/mesh_shape: \"2x8\"/mesh_shape: \"${n}x1\"/; s/\[8192, 16384, 24576, 32768\]/[8192, 32768]/" \
        configs/tpums/dcn/7x_2x2x1_$name.yaml > /tmp/dcn_$name.yaml
      timeout 240 $RUN --config /tmp/dcn_$name.yaml --output-dir "$OUT/proc$n" --processes "$n" > "/tmp/proc_$name.log" 2>&1
      echo "exit $? $name"; tail -2 "/tmp/proc_$name.log"; echo "gRPC traces: $(grep -c 'UNAVAILABLE\|CANCELLED' /tmp/proc_$name.log)"
    done
    python3 bench/tpums_table.py "$OUT"/proc$n/*.summary.csv | tee "$OUT/proc$n.md"
    python3 bench/collectives_scaling.py config "$n" "/tmp/psum_p${n}.yaml" psum --from-kib 16384
    timeout 240 $RUN --config "/tmp/psum_p${n}.yaml" -o "$OUT/psum_proc$n.csv" --backend jax --processes "$n" 2>&1 | grep -v Warning | tail -3
    python3 -c "
import csv
for r in csv.DictReader(open('$OUT/psum_proc$n.csv')):
    print(r['op'], r['backend'], r['message_bytes'], r['status'], r.get('busbw_gb_per_s'), r['error'][:120])" | tee "$OUT/psum_proc$n.md" ;;
  rel57)  # issue 57 (2 GPUs): a clean --processes 2 exit holds no coordination-service notes (with -v they
    # show), stdout is the CSV alone, a SIGKILLed launcher leaves no worker, and the resume command runs
    sed 's/mesh_shape: "2x8"/mesh_shape: "2x1"/; s/\[8192, 16384, 24576, 32768\]/[8192, 16384, 32768]/' \
      configs/tpums/dcn/7x_2x2x1_all_reduce.yaml > /tmp/rel57.yaml
    for v in "" -v; do
      timeout 150 $RUN --config /tmp/rel57.yaml -o "/tmp/rel57$v.csv" --processes 2 --format csv $v \
        > "$OUT/rel57$v.stdout" 2> "$OUT/rel57$v.stderr"
      echo "exit $? ${v:-quiet}: stdout's first line: $(head -1 "$OUT/rel57$v.stdout" | cut -c1-60);" \
        "service notes on stderr: $(grep -c 'WatchTasksAsync\|CANCELLED\|Source Location Trace' "$OUT/rel57$v.stderr")" \
        | tee -a "$OUT/rel57.md"
    done
    sed 's/num_runs: 5/num_runs: 5000/' /tmp/rel57.yaml > /tmp/rel57_long.yaml
    $RUN --config /tmp/rel57_long.yaml -o /tmp/rel57_long.csv --processes 2 > "$OUT/rel57_kill.log" 2>&1 &
    sleep 45; kill -KILL $!; sleep 15
    echo "workers left 15 s after the launcher's SIGKILL: $(pgrep -fc 'rel57_long.yaml')" | tee -a "$OUT/rel57.md"
    resume=$(grep -o 'to finish the sweep run: .*' "$OUT/rel57_kill.log" | sed 's/to finish the sweep run: //')
    echo "resume command: $resume" | tee -a "$OUT/rel57.md"
    [ -n "$resume" ] && timeout 150 bash -c "$resume" > "$OUT/rel57_resume.log" 2>&1; echo "resume exit $?" | tee -a "$OUT/rel57.md"
    tail -3 "$OUT/rel57_resume.log" ;;
  dcn)  # issue 38: upstream's DCN files on two GPUs, one process each (the dcn axis spans them)
    for name in ppermute_uni ppermute_bidi all_reduce; do
      sed 's/mesh_shape: "2x8"/mesh_shape: "2x1"/; s/\[8192, 16384, 24576, 32768\]/[8192, 16384, 32768]/' \
        configs/tpums/dcn/7x_2x2x1_$name.yaml > /tmp/dcn_$name.yaml
      timeout 280 $RUN --config /tmp/dcn_$name.yaml --output-dir "$OUT/dcn" --processes 2 2>&1 | grep -v "Warn\|Gloo" | tail -2
    done
    python3 bench/tpums_table.py "$OUT"/dcn/*.summary.csv | tee "$OUT/dcn.md" ;;
  v2_attention)
    timeout 560 $RUN --config configs/jax_bench/7x/attention_jax_flash.yaml --output-dir "$OUT/v2/attention" 2>&1 | grep -v Warn | tail -2
    python3 bench/summarize.py "$OUT/v2/attention/"*.csv | grep -v "^op |" | cut -c1-220
    tar czf "$OUT/v2_attention.tgz" -C "$OUT" v2 && rm -rf "$OUT/v2" ;;
  v2_gemm)  # gemm_generalized against the existing GEMM rows of the same shapes
    timeout 280 $RUN --config configs/gpu/jax_bench_gemm_pair.yaml -o "$OUT/jax_bench_gemm_pair.csv" 2>&1 | tail -1
    timeout 280 $RUN --config configs/gpu/jax_bench_gemm_reference.yaml -o "$OUT/jax_bench_gemm_reference.csv" 2>&1 | tail -1
    python3 bench/jax_bench_check.py "$OUT" | sed -n '/^gemm_generalized/,$p' ;;
  overhead)  # issue 27: per-case harness cost on the GPU, per backend and implementation
    python3 bench/overhead.py --device cuda | tee "$OUT/overhead.txt"
    python3 bench/overhead.py --device cuda --profile "$OUT/overhead.prof" > /dev/null
    python3 -c "import pstats; s = pstats.Stats('$OUT/overhead.prof'); s.sort_stats('tottime').print_stats(15); s.print_callers('builtins.compile')" 2>&1 | cut -c1-160 | tail -45 ;;
  heldout)  # issue 27: held-out shapes, the harness against JAX-profiler and CUPTI kernel times outside it
    rm -rf /tmp/heldout; python3 bench/heldout_check.py --out /tmp/heldout --rounds "${ROUNDS:-3}" 2>&1 | grep -v "Warn\|_warn_once" | tee "$OUT/heldout.md"
    cp /tmp/heldout/o0/outside.json "$OUT/" ;;
  smoke)  # issue 28: the entry module, typed reading (msgspec), compare and report on this machine
    timeout 300 python3 -m accelbench run --no-progress --run add --m 4096 --n 4096 -o "$OUT/smoke.csv" 2>&1 | tail -2
    timeout 300 python3 -m accelbench run --no-progress --run add --m 4096 --n 4096 -o "$OUT/smoke_b.csv" 2>&1 | tail -1
    python3 -m accelbench compare "$OUT/smoke.csv" "$OUT/smoke_b.csv" --json | python3 -c "import json, sys; print([(p['verdict'], p['p_value']) for p in json.load(sys.stdin)['pairs']])"
    python3 -m accelbench report "$OUT/smoke.csv" --output-dir "$OUT/smoke_report" | tail -2
    printf 'benchmarks:\n  - name: gemm_generalized\n    num_runz: 3\n' > /tmp/bad.yaml
    /usr/bin/time -f "bad config answered in %e s" python3 -m accelbench run --config /tmp/bad.yaml ;;
  history60)  # issue 60: a kernel repository whose commit 12 of 20 adds ~3% device time, timed at every commit
    # but two, then history (JSON, --bisect, Markdown) and report over the store
    timeout 580 python3 bench/history_gpu.py "$OUT/history60" 2>&1 | grep -v Warning | tee "$OUT/history60.txt" | tail -40 ;;
  upstream62)  # issue 62: the CUDA kernels built alone (their build's own words), then every configs/gpu
    # file with small shapes and few runs, four at a time, the slowest first (an error check, not
    # figures), every error row and every run that stopped early; under 9 minutes in all. Each config
    # has 200 s and its cases 60 s, but those whose compiles took longer (400 s, 300 s a case:
    # torchao_autotune's max-autotune, torchao_training_today's blockwise Triton kernels, which stopped
    # that run); torchao_today's four llama layers, one shape at --max-dim 512, run as one (its 126
    # cases did not fit 200 s; 72 do)
    start=$SECONDS
    (nvcc --version | tail -2; python3 -c "import torch, torch.utils.cpp_extension as c; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'CUDA_HOME', c.CUDA_HOME, 'ninja', c.is_ninja_available())") 2>&1 | tee "$OUT/toolchain62.txt"
    timeout 120 python3 -c "from torch_backend.kernels import cuda_kernels as k; k._load(); print('CUDA kernels built')" 2>&1 | tail -25 | tee -a "$OUT/toolchain62.txt"
    mkdir -p "$OUT/up62" /tmp/up62
    sed 's/matrix_shapes: \[{name: llama}\]/matrix_shapes: [{name: custom, shapes: [[512, 512, 512]]}]/' \
      configs/gpu/torchao_today.yaml > /tmp/up62/torchao_today.yaml
    slow="/tmp/up62/torchao_today.yaml $(printf 'configs/gpu/torchao_%s.yaml ' autotune training_today training_models training)"
    { printf '%s\n' $slow; ls configs/gpu/*.yaml | grep -v 'torchao_\(today\|autotune\|training\(_today\|_models\)\?\)\.yaml'; } \
      | timeout $((530 - (SECONDS - start))) xargs -P 4 -I{} sh -c 'n=$(basename {} .yaml); cap=200 case_s=60
      case $n in torchao_autotune|torchao_training_today) cap=400 case_s=300 ;; esac
      timeout $cap '"$RUN"' --config {} --max-dim 512 --num-runs 3 --timeout $case_s -o "'"$OUT"'/up62/$n.csv" -q \
        > "'"$OUT"'/up62/$n.log" 2>&1; echo $? > "'"$OUT"'/up62/$n.rc"'
    echo "upstream62: $((SECONDS - start)) s"
    python3 bench/config_errors.py "$OUT/up62" | tee "$OUT/upstream62.md" ;;
  today62)  # issue 62 §4: torchao_today (one 512 shape, as upstream62) alone, its cases given 300 s each,
    # so the whole file finishes inside one call (upstream62's caps ended it after 58 of 72 cases)
    mkdir -p "$OUT/up62"
    sed 's/matrix_shapes: \[{name: llama}\]/matrix_shapes: [{name: custom, shapes: [[512, 512, 512]]}]/' \
      configs/gpu/torchao_today.yaml > /tmp/torchao_today.yaml
    timeout 560 $RUN --config /tmp/torchao_today.yaml --max-dim 512 --num-runs 3 --timeout 300 \
      -o "$OUT/up62/torchao_today.csv" -q > "$OUT/up62/torchao_today.log" 2>&1; echo $? > "$OUT/up62/torchao_today.rc"
    python3 bench/config_errors.py "$OUT/up62" | tee "$OUT/today62.md" ;;
  float8grad62)  # issue 62 §4: the float8 rowwise transformer block's gradients against float64, eager,
    # through AOTAutograd alone and through Inductor (upstream62's one wrong_result row, -2.2 dB)
    timeout 500 python3 bench/float8_grads.py 2>&1 | grep -v "Warn\|warn" | tee "$OUT/float8grad62.md" ;;
  oom)
    $RUN --config configs/gpu/oom_sweep.yaml --output-dir "$OUT" 2>&1 | tail -3
    python3 bench/summarize.py "$OUT/oom_sweep.csv" ;;
esac; done; done
