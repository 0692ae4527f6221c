import sys, time
from microbench.measure import procedure
orig = procedure.pilot_size
def shown(run, per_call, session):
    n = orig(run, per_call, session)
    print(f"PILOT per_call={per_call} session={session} -> {n}", flush=True)
    return n
procedure.pilot_size = shown
orig_timed = procedure.timed
from microbench import cli
sys.exit(cli.main(sys.argv[1:]))
