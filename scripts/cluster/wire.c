// zbc-wire: the delay of one node's outgoing link in the rehearsal cluster
// (scripts/cluster/local_cluster.sh).
//
// This kernel has no netem (and no fq), so nothing in tc can hold a frame for a fixed time.
// Every frame the node sends on eth0 is redirected (tc mirred) to a TAP in the node, wire0; this
// process reads it there (GSO frames of up to 64 KiB whole, with their virtio-net header) and
// writes it, once the delay has passed, to a TAP on the switch's bridge.  Frames towards the
// node go from the bridge straight to its veth, so each frame crosses user space once.
// The rate is not shaped here: tbf on wire0 and on the switch's veth does that in the kernel.
//
// Waking up costs time on its own (about 20 us each in this VM): once to read the frame, once
// when its timer fires.  Both are measured when the wire starts (and on SIGHUP): how late a
// short timer wakes, and how long a write into a pipe takes to wake a poll on it; their sum is
// taken off each wait, so a 100 us link is about 100 us, not 150.  (Measured once, not as it
// goes: under load a running estimate of the timer's lateness chased its own tail and ate the
// whole delay.)
//
// usage: zbc-wire NODE_NETNS NODE_IF SWITCH_NETNS SWITCH_IF DELAY_FILE READY_FILE
//   DELAY_FILE holds the one-way delay in ns; it is read again on SIGHUP.
//   READY_FILE is created once both ends are attached.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

enum { kMaxFrame = 70000, kSmallFrame = 4096, kMaxQueuedBytes = 64 << 20 };

struct frame {
  struct frame* next;
  int64_t due_ns;
  size_t len;
  int big;  // kMaxFrame bytes of data, kept for reuse; else exactly len, freed
  unsigned char data[];
};

struct link {
  int in_fd, out_fd, drain_fd;
  int64_t delay_ns;
  int64_t wakeups_ns;  // what the two wake-ups of a frame cost (medians, measured at start)
  struct frame *head, *tail;
  size_t queued_bytes;
  uint64_t dropped;
};

static volatile sig_atomic_t reload = 0, stop = 0;
static void on_hup(int sig) { (void)sig; reload = 1; }
static void on_term(int sig) { (void)sig; stop = 1; }

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char* what, const char* arg) {
  fprintf(stderr, "zbc-wire: %s %s: %s\n", what, arg, strerror(errno));
  exit(1);
}

// Attaches to the persistent TAP `name` inside the network namespace at `netns_path`.
static int attach_tap(const char* netns_path, const char* name) {
  int ns = open(netns_path, O_RDONLY | O_CLOEXEC);
  if (ns < 0) die("cannot open", netns_path);
  if (setns(ns, CLONE_NEWNET) != 0) die("cannot enter", netns_path);
  close(ns);
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("cannot open", "/dev/net/tun");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) die("cannot attach to TAP", name);
  unsigned offload = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
  if (ioctl(fd, TUNSETOFFLOAD, offload) != 0) die("cannot set offloads on", name);
  return fd;
}

static int cmp_i64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

enum { kSamples = 63 };

static int64_t median(int64_t* v) {
  qsort(v, kSamples, sizeof v[0], cmp_i64);
  return v[kSamples / 2] > 0 ? v[kSamples / 2] : 0;
}

static int64_t timer_lateness_ns(void) {
  int64_t late[kSamples];
  for (int i = 0; i < kSamples; ++i) {
    struct timespec wait = {0, 50000};
    int64_t t0 = now_ns();
    ppoll(NULL, 0, &wait, NULL);
    late[i] = now_ns() - t0 - 50000;
  }
  return median(late);
}

static void* pipe_writer(void* arg) {  // writes its clock into the pipe every 200 us
  int fd = *(int*)arg;
  for (int i = 0; i < kSamples; ++i) {
    struct timespec wait = {0, 200000};
    nanosleep(&wait, NULL);
    int64_t t = now_ns();
    if (write(fd, &t, sizeof t) != sizeof t) break;
  }
  return NULL;
}

static int64_t fd_wakeup_ns(void) {
  int p[2];
  pthread_t writer;
  if (pipe(p) != 0) return 0;
  int64_t wake[kSamples];
  int n = 0;
  if (pthread_create(&writer, NULL, pipe_writer, &p[1]) == 0) {
    for (; n < kSamples; ++n) {
      struct pollfd pfd = {.fd = p[0], .events = POLLIN};
      int64_t sent;
      if (poll(&pfd, 1, 1000) != 1 || read(p[0], &sent, sizeof sent) != sizeof sent) break;
      wake[n] = now_ns() - sent;
    }
    pthread_join(writer, NULL);
  }
  close(p[0]);
  close(p[1]);
  return n == kSamples ? median(wake) : 0;
}

static void read_delay(const char* path, struct link* l) {
  FILE* f = fopen(path, "r");
  long long d = 0;
  if (!f || fscanf(f, "%lld", &d) != 1 || d < 0) {
    fprintf(stderr, "zbc-wire: cannot read a delay (ns) from %s; keeping %lld\n", path,
            (long long)l->delay_ns);
  } else {
    l->delay_ns = d;
  }
  if (f) fclose(f);
}

static void calibrate(struct link* l) {
  int64_t timer = timer_lateness_ns(), fd = fd_wakeup_ns();
  l->wakeups_ns = timer + fd;
  fprintf(stderr,
          "zbc-wire: delay %lld ns; a timer wakes %lld ns late, a write wakes a poll in %lld ns,"
          " so frames wait %lld ns\n",
          (long long)l->delay_ns, (long long)timer, (long long)fd,
          (long long)(l->delay_ns > l->wakeups_ns ? l->delay_ns - l->wakeups_ns : 0));
}

// When a frame read now should leave: the delay, less the two wake-ups it costs.
static int64_t due_time(const struct link* l, int64_t now) {
  int64_t wait = l->delay_ns - l->wakeups_ns;
  return now + (wait > 0 ? wait : 0);
}

// Frames are read in place into big buffers kept for reuse (a 64 KiB GSO frame is not copied);
// small ones are then copied out, so that thousands in flight on a slow link stay cheap.
static struct frame* free_frames = NULL;

static struct frame* new_frame(void) {
  struct frame* f = free_frames;
  if (f) { free_frames = f->next; return f; }
  f = malloc(sizeof *f + kMaxFrame);
  if (f) f->big = 1;
  return f;
}

static void release(struct frame* f) {
  if (!f->big) { free(f); return; }
  f->next = free_frames;
  free_frames = f;
}

static void take_in(struct link* l) {
  for (int i = 0; i < 64; ++i) {
    struct frame* f = new_frame();
    if (!f) { ++l->dropped; return; }
    ssize_t n = read(l->in_fd, f->data, kMaxFrame);
    if (n <= 0 || l->queued_bytes + (size_t)n > kMaxQueuedBytes) {
      release(f);
      if (n <= 0) return;  // EAGAIN, or the device went down: nothing to take now
      ++l->dropped;
      continue;
    }
    if (n <= kSmallFrame) {
      struct frame* small = malloc(sizeof *small + (size_t)n);
      if (small) {
        memcpy(small->data, f->data, (size_t)n);
        small->big = 0;
        release(f);
        f = small;
      }
    }
    f->next = NULL;
    f->due_ns = due_time(l, now_ns());
    f->len = (size_t)n;
    if (l->tail) l->tail->next = f; else l->head = f;
    l->tail = f;
    l->queued_bytes += (size_t)n;
  }
}

static void drain(int fd, unsigned char* buf) {  // frames the bridge floods to the switch port
  for (int i = 0; i < 64 && read(fd, buf, kMaxFrame) > 0; ++i) {}
}

static void send_due(struct link* l) {
  int64_t now = now_ns();
  while (l->head && l->head->due_ns <= now) {
    struct frame* f = l->head;
    if (write(l->out_fd, f->data, f->len) < 0) ++l->dropped;  // the port is down: the frame is lost
    l->head = f->next;
    if (!l->head) l->tail = NULL;
    l->queued_bytes -= f->len;
    release(f);
  }
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: zbc-wire NODE_NETNS NODE_IF SWITCH_NETNS SWITCH_IF DELAY_FILE READY_FILE\n");
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1UL);  // the default 50 us slack would be half of a 100 us link
  int node_fd = attach_tap(argv[1], argv[2]);
  int switch_fd = attach_tap(argv[3], argv[4]);
  struct link l = {.in_fd = node_fd, .out_fd = switch_fd};
  read_delay(argv[5], &l);
  calibrate(&l);
  signal(SIGHUP, on_hup);
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  int ready = open(argv[6], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (ready < 0) die("cannot create", argv[6]);
  close(ready);

  unsigned char* buf = malloc(kMaxFrame);
  if (!buf) die("cannot allocate", "a frame buffer");
  struct pollfd fds[2] = {{.fd = node_fd, .events = POLLIN}, {.fd = switch_fd, .events = POLLIN}};
  while (!stop) {
    if (reload) {
      reload = 0;
      read_delay(argv[5], &l);
      calibrate(&l);
    }
    struct timespec timeout, *tp = NULL;
    if (l.head) {
      int64_t wait = l.head->due_ns - now_ns();
      if (wait < 0) wait = 0;
      timeout.tv_sec = wait / 1000000000;
      timeout.tv_nsec = wait % 1000000000;
      tp = &timeout;
    }
    int n = ppoll(fds, 2, tp, NULL);
    if (n < 0 && errno != EINTR) die("poll failed on", argv[2]);
    if (n > 0) {
      if (fds[0].revents) take_in(&l);
      if (fds[1].revents) drain(switch_fd, buf);
    }
    send_due(&l);
  }
  return 0;
}
