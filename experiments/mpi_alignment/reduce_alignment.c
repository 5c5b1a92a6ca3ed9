/* Does where a buffer starts within its page change Open MPI's collectives?
 * No libtorch: one collective of ResNet50's gradient bytes (25,557,032 fp32,
 * 102 MB), on buffers in one 2 MiB-aligned mapping advised MADV_HUGEPAGE (as
 * libtorch places a host tensor of 2 MiB or more under THP_MEM_ALLOC_ENABLE),
 * the input starting at three offsets into it:
 *   0        on a page (and 2 MiB) boundary, where libtorch puts it
 *   64       one cache line further
 *   4096+64  one page and a cache line further
 * and, for the collectives with a separate output, the output at offset 0.
 * Collectives: reduce to rank 0 (in place at the root, as the mpi backend
 * reduces), all-reduce (in place), reduce-scatter (MPI_Reduce_scatter_block),
 * broadcast from rank 0 and all-gather. Every (collective, offset) case runs
 * once a round, interleaved, after a barrier; a call's time is the slowest
 * rank's. Usage: mpirun -np W reduce_alignment [rounds]. Prints each case's
 * median, minimum and maximum seconds (rank 0). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { kCollectives = 5, kOffsets = 3, kMaxRounds = 64 };
static const char* kCollectiveNames[kCollectives] = {"reduce", "all-reduce", "reduce-scatter", "broadcast",
                                                     "all-gather"};
static const long kOffsetBytes[kOffsets] = {0, 64, 4096 + 64};
static const long kElements = 25557032L; /* ResNet50's parameters */

static float* huge_mapping(size_t bytes) {
  const size_t align = 2UL << 20;
  char* p = mmap(NULL, bytes + 2 * align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); MPI_Abort(MPI_COMM_WORLD, 1); }
  char* start = (char*)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
  madvise(start, bytes + align, MADV_HUGEPAGE);
  memset(start, 0, bytes + align);
  return (float*)start;
}

/* One call of collective `c`; `in` holds n * W elements, `out` n (W = world). */
static void run(int c, float* in, float* out, long n, int world) {
  const int rank0 = 0;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  switch (c) {
    case 0: MPI_Reduce(rank == rank0 ? MPI_IN_PLACE : in, in, (int)(n * world), MPI_FLOAT, MPI_SUM, rank0,
                       MPI_COMM_WORLD); break;
    case 1: MPI_Allreduce(MPI_IN_PLACE, in, (int)(n * world), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case 2: MPI_Reduce_scatter_block(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case 3: MPI_Bcast(in, (int)(n * world), MPI_FLOAT, rank0, MPI_COMM_WORLD); break;
    case 4: MPI_Allgather(out, (int)n, MPI_FLOAT, in, (int)n, MPI_FLOAT, MPI_COMM_WORLD); break;
  }
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, world;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const int rounds = argc > 1 ? atoi(argv[1]) : 7;
  if (rounds < 1 || rounds > kMaxRounds) {
    if (rank == 0) fprintf(stderr, "rounds: %s; give 1 to %d\n", argv[1], kMaxRounds);
    MPI_Finalize();
    return 2;
  }
  const long n = kElements / world;
  char* in_base = (char*)huge_mapping((size_t)(n * world) * sizeof(float) + 8192);
  float* out = huge_mapping((size_t)n * sizeof(float));
  static double seconds[kCollectives][kOffsets][kMaxRounds];
  for (int r = -1; r < rounds; ++r) /* round -1: warm-up, not kept */
    for (int c = 0; c < kCollectives; ++c)
      for (int o = 0; o < kOffsets; ++o) {
        float* in = (float*)(in_base + kOffsetBytes[o]);
        for (long i = 0; i < n * world; i += 1024) in[i] = (float)(rank + 1); /* the rank writes its input */
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        run(c, in, out, n, world);
        double mine = MPI_Wtime() - start, slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0) seconds[c][o][r] = slowest;
      }
  if (rank == 0) {
    printf("%d ranks, %ld fp32 elements (%.0f MB) a call, %d rounds\n", world, n * world, n * world * 4 / 1e6, rounds);
    for (int c = 0; c < kCollectives; ++c)
      for (int o = 0; o < kOffsets; ++o) {
        qsort(seconds[c][o], rounds, sizeof(double), by_value);
        printf("%-15s input at +%4ld B (page offset %2ld)  median %.4f s  min %.4f  max %.4f\n", kCollectiveNames[c],
               kOffsetBytes[o], kOffsetBytes[o] % 4096, seconds[c][o][rounds / 2], seconds[c][o][0],
               seconds[c][o][rounds - 1]);
      }
  }
  MPI_Finalize();
  return 0;
}
