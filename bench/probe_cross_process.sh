export PYTHONPATH=/tmp/site:$PWD/src:$PWD PYTHONUNBUFFERED=1
W=$(mktemp -d)
printf 'num_runs: 5\nwarmup: 1\nbenchmarks:\n- benchmark_name: add\n  backend: torch\n  csv_path: %s/t.csv\n  benchmark_params: [{m: 1024, n: 1024}]\n' $W > $W/t.yaml
printf 'num_runs: 5\nwarmup: 1\nbenchmarks:\n- benchmark_name: add\n  backend: jax\n  csv_path: %s/j.csv\n  benchmark_params: [{m: 1024, n: 1024}]\n' $W > $W/j.yaml
python3 -m microbench.cli run --config $W/j.yaml --no-progress >/dev/null 2>&1; echo "jax first:"; cut -d, -f4,5 $W/j.csv | tail -1
python3 -m microbench.cli run --config $W/t.yaml --no-progress >/dev/null 2>&1; echo "torch:"; cut -d, -f4,5 $W/t.csv | tail -2
echo "lingering:"; ps aux | grep -c "[p]ython3"; ps aux | grep "[p]ython" | head -5 | cut -c1-150
python3 -m microbench.cli run --config $W/j.yaml --no-progress >/dev/null 2>&1; echo "jax after torch:"; cut -d, -f4,5 $W/j.csv | tail -1
pkill -f compile_worker; pkill -f "torch._inductor"; sleep 2
python3 -m microbench.cli run --config $W/j.yaml --no-progress >/dev/null 2>&1; echo "jax after killing workers:"; cut -d, -f4,5 $W/j.csv | tail -1
