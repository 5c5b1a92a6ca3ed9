/* Does where a buffer lies change Open MPI's broadcast? No libtorch: BERT's 199
 * tensor sizes (bert-base-uncased, 438 MB fp32), one MPI_Ibcast each with the
 * roots taking turns, then one MPI_Waitall (as zero_bench's mpi backend syncs
 * whole tensors), from four layouts of the same bytes, interleaved round by
 * round:
 *   mmap_each      one mapping per tensor at page offset 64 (where glibc puts a
 *                  large malloc, and so libtorch's 4 KiB-page tensors)
 *   one_mapping    every tensor in one mapping, each at page offset 64
 *   packed         every tensor in one mapping, packed at 64-byte alignment,
 *                  offsets differing between ranks (like a heap)
 *   huge           one 2 MiB-aligned mapping advised MADV_HUGEPAGE, packed
 * Each rank writes its own tensors before every broadcast, as the step does.
 * Usage: mpirun -np 2 bcast_layouts [rounds]. Prints each layout's median,
 * minimum and maximum seconds per sync (rank 0). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { kLayouts = 4, kMaxTensors = 256, kMaxRounds = 64 };
static const char* kNames[kLayouts] = {"mmap_each", "one_mapping", "packed", "huge"};

static int bert_sizes(long* n) {
  int t = 0;
  n[t++] = 30522L * 768; n[t++] = 512L * 768; n[t++] = 2L * 768; n[t++] = 768; n[t++] = 768;
  for (int layer = 0; layer < 12; ++layer) {
    for (int k = 0; k < 4; ++k) { n[t++] = 768L * 768; n[t++] = 768; }
    n[t++] = 768; n[t++] = 768;
    n[t++] = 3072L * 768; n[t++] = 3072; n[t++] = 768L * 3072; n[t++] = 768; n[t++] = 768; n[t++] = 768;
  }
  n[t++] = 768L * 768; n[t++] = 768;
  return t;
}

static char* mapping(size_t bytes, size_t align, int huge) {
  char* p = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); MPI_Abort(MPI_COMM_WORLD, 1); }
  p = (char*)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
  if (huge && madvise(p, bytes, MADV_HUGEPAGE) != 0) { perror("madvise"); MPI_Abort(MPI_COMM_WORLD, 1); }
  return p;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n[kMaxTensors];
  const int tensors = bert_sizes(n);
  const int rounds = argc > 1 ? atoi(argv[1]) : 15;
  if (rounds < 1 || rounds > kMaxRounds) { fprintf(stderr, "rounds: 1 to %d\n", kMaxRounds); MPI_Abort(MPI_COMM_WORLD, 2); }
  size_t total = 0, payload = 0;  /* total: room for every layout's padding */
  for (int i = 0; i < tensors; ++i) total += (size_t)n[i] * 4 + 8192, payload += (size_t)n[i] * 4;
  float* buf[kLayouts][kMaxTensors];
  for (int i = 0; i < tensors; ++i) buf[0][i] = (float*)(mapping((size_t)n[i] * 4 + 64, 4096, 0) + 64);
  char* one = mapping(total, 4096, 0);
  char* packed = mapping(total, 4096, 0) + 64 * (1 + 17 * rank);
  char* huge = mapping(total, 2u << 20, 1);
  for (int i = 0; i < tensors; ++i) {
    const size_t bytes = (size_t)n[i] * 4, rounded = (bytes + 63) / 64 * 64;
    buf[1][i] = (float*)(one + 64); one += (bytes + 64 + 4095) / 4096 * 4096;
    buf[2][i] = (float*)packed; packed += rounded + 64 * (3 + rank);
    buf[3][i] = (float*)huge; huge += rounded;
  }
  for (int l = 0; l < kLayouts; ++l)
    for (int i = 0; i < tensors; ++i) memset(buf[l][i], 0, (size_t)n[i] * 4);
  double seconds[kLayouts][kMaxRounds];
  for (int r = 0; r < rounds; ++r)
    for (int l = 0; l < kLayouts; ++l) {
      for (int i = rank; i < tensors; i += size)
        for (long j = 0; j < n[i]; ++j) buf[l][i][j] += 1.0f;
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      MPI_Request requests[kMaxTensors];
      for (int i = 0; i < tensors; ++i)
        MPI_Ibcast(buf[l][i], (int)n[i], MPI_FLOAT, i % size, MPI_COMM_WORLD, &requests[i]);
      MPI_Waitall(tensors, requests, MPI_STATUSES_IGNORE);
      MPI_Barrier(MPI_COMM_WORLD);
      seconds[l][r] = MPI_Wtime() - start;
    }
  if (rank == 0) {
    printf("%d ranks, %d tensors, %.0f MB per sync, %d rounds\n", size, tensors, payload / 1e6, rounds);
    for (int l = 0; l < kLayouts; ++l) {
      qsort(seconds[l], rounds, sizeof(double), by_value);
      printf("%-12s median %.4f s  min %.4f  max %.4f\n", kNames[l], seconds[l][rounds / 2], seconds[l][0],
             seconds[l][rounds - 1]);
    }
  }
  MPI_Finalize();
  return 0;
}
