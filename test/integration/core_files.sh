# File naming from launcher variables, rotation by NUM_TRACES_TO_KEEP, and the
# never-destroy rule without OVERWRITE.
. "$TP_TOP/test/lib/common.sh"
prog="$BUILD/test/prog_steps"

# torchrun variables and {run_name} from TORCHELASTIC_RUN_ID.
RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 TORCHELASTIC_RUN_ID=job42 \
	TRACEPROF_FOLDER='out/{run_name}/n{node_rank}' \
	TRACEPROF_FILENAME='r{rank}-l{local_rank}-of{world_size}-{local_world_size}.b{batch}.json' \
	traced "$prog" 2 >/dev/null
[ -f out/job42/n1/r3-l1-of8-2.b2.json ] || die "torchrun naming: $(find out -type f)"
"$PYTHON" -c "
import json; d = json.load(open('out/job42/n1/r3-l1-of8-2.b2.json'))
di = d['distributedInfo']; assert (di['rank'], di['world_size'], di['local_rank'], di['backend']) == (3, 8, 1, 'torchrun'), di"

# Open MPI, then Slurm, with TRACEPROF_RUN_NAME winning over SLURM_JOB_ID.
OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=6 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 \
	TRACEPROF_FOLDER=mpi traced "$prog" 1 >/dev/null
[ -f mpi/rank5.step1.trace.json ] || die "Open MPI naming: $(find mpi -type f)"
SLURM_PROCID=7 SLURM_LOCALID=0 SLURM_NTASKS=8 SLURM_NODEID=3 SLURM_JOB_ID=999 TRACEPROF_RUN_NAME=myrun \
	TRACEPROF_FOLDER='slurm/{run_name}' TRACEPROF_FILENAME='{rank}.{node_rank}.{pid}.{hostname}.json' \
	traced "$prog" 1 >/dev/null
ls slurm/myrun/7.3.*."$(hostname)".json >/dev/null || die "Slurm naming: $(find slurm -type f)"
# Default folder: traceprof_traces/{run_name} with the program's name.
(traced "$prog" 1 >/dev/null)
[ -f traceprof_traces/prog_steps/rank0.step1.trace.json ] || die "default folder: $(find traceprof_traces)"

# An unknown variable disables profiling with one message; the program runs.
out=$(TRACEPROF_FILENAME='{epoch}.json' TRACEPROF_FOLDER=bad traced "$prog" 1 2>err)
[ "$out" = done ] || die "program output changed"
[ "$(grep -c '^traceprof:' err)" = 1 ] && grep -q 'TRACEPROF_FILENAME' err && grep -q '{epoch}' err \
	|| die "unknown variable message: $(cat err)"
[ ! -e bad ] || die "files written despite a bad configuration"

# Rotation: active=1 saves every step; keep 2 of this process's files, and
# never touch a file it did not write.
mkdir rot && echo foreign > rot/rank0.step0.other.json
TRACEPROF_SCHEDULE=active=1 TRACEPROF_NUM_TRACES_TO_KEEP=2 TRACEPROF_FOLDER=rot traced "$prog" 6 >/dev/null
got=$(cd rot && ls | sort | tr '\n' ' ')
[ "$got" = "rank0.step0.other.json rank0.step5.trace.json rank0.step6.trace.json " ] || die "rotation kept: $got"

# Never destroy an existing file without OVERWRITE; replace it with it.
mkdir ow && echo precious > ow/rank0.step1.trace.json
TRACEPROF_FOLDER=ow traced "$prog" 1 >/dev/null 2>err
[ "$(cat ow/rank0.step1.trace.json)" = precious ] || die "existing file destroyed"
ls ow | grep -q 'rank0.step1.trace.1.json' || die "no unique name: $(ls ow)"
grep -q '^traceprof:.*exists' err || grep -q '^traceprof:' err || die "no warning: $(cat err)"
TRACEPROF_FOLDER=ow TRACEPROF_OVERWRITE=1 traced "$prog" 1 >/dev/null
"$PYTHON" -c "import json; json.load(open('ow/rank0.step1.trace.json'))" || die "OVERWRITE=1 did not replace"
[ -z "$(ls -A ow | grep '^\.')" ] || die "temporary files left: $(ls -A ow)"
echo ok
