/* The uAPI round trip as a client program sees it: N command submissions of one NOP on the
 * host-to-device queue, each waited for, through the accel uAPI; run under the LD_PRELOAD shim
 * (bench/single_chip does). Prints "N SECONDS": the wall time of the N pairs, without start-up.
 *
 *   LD_PRELOAD=libpodsim-accel.so uapi_round_trip N
 */
#define _GNU_SOURCE
#include <drm/habanalabs_accel.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int failed(const char* what) {
  fprintf(stderr, "uapi_round_trip: %s: %s\n", what, strerror(errno));
  return 1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  union hl_cb_args cb;
  union hl_cs_args cs;
  union hl_wait_cs_args wait;
  struct hl_cs_chunk chunk;
  uint32_t* buffer;
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  double start;
  int fd;
  long i;
  if (n < 1) {
    fprintf(stderr, "usage: uapi_round_trip N (N >= 1)\n");
    return 2;
  }
  fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
  if (fd < 0) return failed("open /dev/accel/accel0 (run under the podsim shim)");
  memset(&cb, 0, sizeof cb);
  cb.in.op = HL_CB_OP_CREATE;
  cb.in.cb_size = 4096;
  if (ioctl(fd, HL_IOCTL_CB, &cb) != 0) return failed("CB CREATE");
  buffer = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)cb.out.cb_handle);
  if (buffer == MAP_FAILED) return failed("mmap the CB");
  buffer[0] = 0;
  buffer[1] = 0xAu << 24; /* Gaudi1's NOP */
  memset(&chunk, 0, sizeof chunk);
  chunk.cb_handle = cb.out.cb_handle;
  chunk.queue_index = GAUDI_QUEUE_ID_DMA_0_0;
  chunk.cb_size = 8;
  start = now();
  for (i = 0; i < n; ++i) {
    memset(&cs, 0, sizeof cs);
    cs.in.chunks_execute = (uintptr_t)&chunk;
    cs.in.num_chunks_execute = 1;
    if (ioctl(fd, HL_IOCTL_CS, &cs) != 0) return failed("CS");
    memset(&wait, 0, sizeof wait);
    wait.in.seq = cs.out.seq;
    wait.in.timeout_us = 1000000;
    if (ioctl(fd, HL_IOCTL_WAIT_CS, &wait) != 0) return failed("WAIT_CS");
    if (wait.out.status != HL_WAIT_CS_STATUS_COMPLETED) {
      errno = EIO;
      return failed("a CS did not complete");
    }
  }
  printf("%ld %.6f\n", n, now() - start);
  return 0;
}
