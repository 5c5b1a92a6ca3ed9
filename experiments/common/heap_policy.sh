# shellcheck shell=bash
# Sourced by the experiments that time optimizer steps on the CPU: one glibc
# allocator policy for every process they launch. Under glibc's defaults, and
# under any fixed mmap threshold, whether a step's large temporaries map fresh
# pages (and fault them in, most of a for-loop Adam step's time) depends on
# whether the process's heap holds a free chunk that large when the step asks,
# which the process's history decides, not its step (experiments/peer's
# bert_w4_faults.md; experiments/predict_validation's step_allocator.md). So
# zb_heap_policy exports MALLOC_MMAP_MAX_=0 (glibc serves allocations from its
# heaps instead of mapping them) and a trim threshold of 16 GiB (it never gives
# them back): once the warm-up has grown the heap, a step's temporaries reuse
# pages already there (a step may still grow it now and then). A threshold,
# mmap count or malloc tunables of the user's own are kept as they are; the
# caller decides when to leave glibc's default instead.
zb_heap_policy() {
  [[ "${GLIBC_TUNABLES:-}" != *glibc.malloc.* ]] || return 0
  [ -n "${MALLOC_MMAP_THRESHOLD_:-}" ] || export MALLOC_MMAP_MAX_="${MALLOC_MMAP_MAX_:-0}"
  export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-17179869184}"
}

zb_allocator_vars=(MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_ MALLOC_MMAP_MAX_ GLIBC_TUNABLES)

# zb_allocator_env [VAR...]: glibc's allocator settings in the environment (and
# the named switches, where set), as "VAR=value " for each one (a record's
# Regenerate prefix).
zb_allocator_env() {
  local var settings=""
  for var in "$@" "${zb_allocator_vars[@]}"; do
    [ -z "${!var:-}" ] || settings+="$var=${!var} "
  done
  printf '%s' "$settings"
}

# zb_allocator_forward: mpirun's "-x VAR" for each allocator setting in the
# environment, one word a line, for ranks that do not inherit it (another
# node's, started by mpirun's daemons with a fresh environment).
zb_allocator_forward() {
  local var
  for var in "${zb_allocator_vars[@]}"; do
    [ -z "${!var:-}" ] || printf -- '-x\n%s\n' "$var"
  done
}

# zb_allocator_lines [WHO]: a record's sentence per allocator setting, WHO
# ("Both sides", the default) having run under it.
zb_allocator_lines() {
  local who="${1:-Both sides}" var tunables
  for var in "${zb_allocator_vars[@]}"; do
    [ -z "${!var:-}" ] || echo "$who ran with $var=${!var} (glibc's allocator, one policy for every process)."
  done
  # glibc keeps its threshold dynamic only while none of these is set
  tunables=""
  [[ "${GLIBC_TUNABLES:-}" != *glibc.malloc.* ]] || tunables=set
  [ -n "${MALLOC_MMAP_THRESHOLD_:-}${MALLOC_MMAP_MAX_:-}${MALLOC_TRIM_THRESHOLD_:-}$tunables" ] ||
    echo "$who ran with glibc's dynamic mmap threshold (its default)."
}
