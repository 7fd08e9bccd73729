/* A user program written for the Linux accel driver, as hl-thunk's are: it knows nothing of
 * podsim. shim_test.cpp runs it with libpodsim-accel.so preloaded. Exit 0 when every step
 * behaves as the kernel's driver would. */
#define _GNU_SOURCE
#include <drm/habanalabs_accel.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int failed(const char* what) {
  fprintf(stderr, "shim_client: %s: %s\n", what, strerror(errno));
  return 1;
}

/* Gaudi1's LIN_DMA packet: size, control (linear, opcode 9, register and message barriers),
 * source, destination. */
static void lin_dma(uint32_t* p, uint64_t src, uint64_t dst, uint32_t size) {
  p[0] = size;
  p[1] = (1u << 3) | (0x9u << 24) | (1u << 30) | (1u << 31);
  memcpy(&p[2], &src, 8);
  memcpy(&p[4], &dst, 8);
}

static uint64_t map_host(int fd, void* address, uint64_t size) {
  union hl_mem_args mem;
  memset(&mem, 0, sizeof mem);
  mem.in.op = HL_MEM_OP_MAP;
  mem.in.flags = HL_MEM_USERPTR;
  mem.in.map_host.host_virt_addr = (uintptr_t)address;
  mem.in.map_host.mem_size = size;
  return ioctl(fd, HL_IOCTL_MEMORY, &mem) == 0 ? mem.out.device_virt_addr : 0;
}

/* A 4 KiB CB of device `fd`'s, mapped: its handle in `handle`; NULL on failure. */
static uint32_t* mapped_cb(int fd, uint64_t* handle) {
  union hl_cb_args cb;
  void* buffer;
  memset(&cb, 0, sizeof cb);
  cb.in.op = HL_CB_OP_CREATE;
  cb.in.cb_size = 4096;
  if (ioctl(fd, HL_IOCTL_CB, &cb) != 0) return NULL;
  *handle = cb.out.cb_handle;
  buffer = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)cb.out.cb_handle);
  return buffer == MAP_FAILED ? NULL : buffer;
}

/* INFO `op` of device `fd` into `out`; 0 or -1. */
static int get_info(int fd, uint32_t op, void* out, uint32_t size) {
  struct hl_info_args info;
  memset(&info, 0, sizeof info);
  info.return_pointer = (uintptr_t)out;
  info.return_size = size;
  info.op = op;
  return ioctl(fd, HL_IOCTL_INFO, &info);
}

/* Submits one chunk (a CB of `bytes`, or a sync-stream CS when `flags` says so; `timeout` in
 * seconds with CUSTOM_TIMEOUT) without waiting; the ioctl's result, the CS in `cs`. */
static int submit(int fd, uint64_t handle, uint32_t queue, uint32_t bytes, uint32_t flags,
                  uint32_t timeout, uint64_t* signal_seq, union hl_cs_args* cs) {
  struct hl_cs_chunk chunk;
  memset(&chunk, 0, sizeof chunk);
  chunk.cb_handle = handle;
  chunk.queue_index = queue;
  chunk.cb_size = bytes;
  if (flags & HL_CS_FLAGS_WAIT) {
    chunk.signal_seq_arr = (uintptr_t)signal_seq;
    chunk.num_signal_seq_arr = 1;
  }
  memset(cs, 0, sizeof *cs);
  cs->in.chunks_execute = (uintptr_t)&chunk;
  cs->in.num_chunks_execute = 1;
  cs->in.cs_flags = flags;
  cs->in.timeout = timeout;
  return ioctl(fd, HL_IOCTL_CS, cs);
}

/* Submits one chunk as submit() does and waits for it. */
static int run(int fd, uint64_t handle, uint32_t queue, uint32_t bytes, uint32_t flags,
               uint64_t* signal_seq) {
  union hl_cs_args cs;
  union hl_wait_cs_args wait;
  if (submit(fd, handle, queue, bytes, flags, 0, signal_seq, &cs) != 0) return -1;
  if (flags & HL_CS_FLAGS_SIGNAL) {
    *signal_seq = cs.out.seq;
    return 0;
  }
  if (cs.out.seq == ~0ull) return 0; /* a wait with nothing to wait for */
  memset(&wait, 0, sizeof wait);
  wait.in.seq = cs.out.seq;
  wait.in.timeout_us = 1000000;
  if (ioctl(fd, HL_IOCTL_WAIT_CS, &wait) != 0) return -1;
  return wait.out.status == HL_WAIT_CS_STATUS_COMPLETED ? 0 : -1;
}

/* A NOP on device `fd`'s host-to-device queue, submitted and waited for. */
static int nop(int fd) {
  uint64_t handle = 0, seq = 0;
  uint32_t* buffer = mapped_cb(fd, &handle);
  if (buffer == NULL) return -1;
  buffer[0] = 0;
  buffer[1] = 0xAu << 24;
  return run(fd, handle, GAUDI_QUEUE_ID_DMA_0_0, 8, 0, &seq);
}

static int two_devices(void) {
  char text[64];
  struct stat st;
  int a, b;
  FILE* f;
  a = open("/dev/accel/accel0", O_RDWR);
  b = open("/dev/accel/accel1", O_RDWR);
  if (a < 0 || b < 0) return failed("open two devices");
  if (fstat(b, &st) != 0 || minor(st.st_rdev) != 2) return failed("device 1's minor");
  if (open("/dev/accel/accel2", O_RDWR) >= 0 || errno != ENOENT) return failed("a third device");
  f = fopen("/sys/class/accel/accel1/pci_addr", "r");
  if (f == NULL || fgets(text, sizeof text, f) == NULL) return failed("device 1's pci_addr");
  fclose(f);
  if (nop(a) != 0 || nop(b) != 0) return failed("a NOP on each device");
  printf("device 1 at %s", text);
  return 0;
}

/* --retry-storm: a long DMA holds the host-to-device queue while many threads submit NOPs
 * behind it, retrying each CS the driver refuses with EAGAIN (queue full) at once, as hl-thunk's
 * submission helper does; every CS must end. */
enum { kStormThreads = 32, kStormCs = 16 };
struct storm {
  int fd;
  uint64_t handle;
  int failed;
};

static void* storm_thread(void* arg) {
  struct storm* s = arg;
  union hl_cs_args cs;
  union hl_wait_cs_args wait;
  uint64_t last = 0;
  long retries = 0;
  int i;
  for (i = 0; i < kStormCs; ++i) {
    for (;;) {
      if (submit(s->fd, s->handle, GAUDI_QUEUE_ID_DMA_0_0, 8, 0, 0, NULL, &cs) == 0) break;
      if (errno != EAGAIN || ++retries > 50000000L) {
        s->failed = 1;
        return NULL;
      }
    }
    last = cs.out.seq;
  }
  memset(&wait, 0, sizeof wait);
  wait.in.seq = last;
  wait.in.timeout_us = 100000000;
  if (ioctl(s->fd, HL_IOCTL_WAIT_CS, &wait) != 0 ||
      wait.out.status != HL_WAIT_CS_STATUS_COMPLETED) {
    s->failed = 1;
  }
  return NULL;
}

static int retry_storm(void) {
  struct hl_info_hw_ip_info ip;
  union hl_cs_args cs;
  struct storm storms[kStormThreads];
  pthread_t threads[kStormThreads];
  uint32_t *nop, *copy;
  uint64_t copy_handle = 0, nop_handle = 0;
  int fd = open("/dev/accel/accel0", O_RDWR), i, storm_failed = 0;
  if (fd < 0) return failed("open");
  if (get_info(fd, HL_INFO_HW_IP_INFO, &ip, sizeof ip) != 0) return failed("INFO");
  copy = mapped_cb(fd, &copy_handle);
  nop = mapped_cb(fd, &nop_handle);
  if (copy == NULL || nop == NULL) return failed("the CBs");
  nop[0] = 0;
  nop[1] = 0xAu << 24;
  /* 256 MiB from DRAM to DRAM: long enough for the queue to fill behind it. */
  lin_dma(copy, ip.dram_base_address, ip.dram_base_address + (256u << 20), 256u << 20);
  if (submit(fd, copy_handle, GAUDI_QUEUE_ID_DMA_0_0, 24, 0, 0, NULL, &cs) != 0) {
    return failed("the long DMA");
  }
  for (i = 0; i < kStormThreads; ++i) {
    storms[i].fd = fd;
    storms[i].handle = nop_handle;
    storms[i].failed = 0;
    if (pthread_create(&threads[i], NULL, storm_thread, &storms[i]) != 0) return failed("thread");
  }
  for (i = 0; i < kStormThreads; ++i) {
    pthread_join(threads[i], NULL);
    storm_failed |= storms[i].failed;
  }
  if (storm_failed) {
    errno = 0;
    return failed("a submission of the storm");
  }
  printf("%d CSs submitted behind a full queue\n", kStormThreads * kStormCs);
  return 0;
}

/* --reset-poll: a CS that never ends (a FENCE nothing satisfies) times out after its own 1 s and
 * the driver resets the device; the program does not wait for it but polls the reset count and
 * the device's status between short sleeps, as hl-thunk does before each test, until the device
 * has been reset and works again. */
static int reset_poll(void) {
  struct hl_info_device_status status;
  struct hl_info_reset_count resets;
  union hl_cs_args cs;
  union hl_wait_cs_args wait;
  uint32_t* buffer;
  uint64_t handle = 0, seq = 0;
  int polls = 0, fd = open("/dev/accel/accel0", O_RDWR);
  if (fd < 0) return failed("open");
  buffer = mapped_cb(fd, &handle);
  if (buffer == NULL) return failed("the CB");
  buffer[0] = 1u | (1u << 16); /* FENCE on counter 0 for 1: nothing adds to it */
  buffer[1] = 0x8u << 24;
  if (submit(fd, handle, GAUDI_QUEUE_ID_DMA_0_0, 8, HL_CS_FLAGS_CUSTOM_TIMEOUT, 1, NULL, &cs) != 0)
    return failed("the endless CS");
  for (;;) {
    if (get_info(fd, HL_INFO_RESET_COUNT, &resets, sizeof resets) != 0 ||
        get_info(fd, HL_INFO_DEVICE_STATUS, &status, sizeof status) != 0) {
      return failed("INFO");
    }
    if (resets.hard_reset_cnt > 0 && status.status == HL_DEVICE_STATUS_OPERATIONAL) break;
    if (++polls > 500) {
      errno = 0;
      return failed("no reset after 500 polls 10 ms apart");
    }
    usleep(10000);
  }
  memset(&wait, 0, sizeof wait);
  wait.in.seq = cs.out.seq;
  wait.in.timeout_us = 1000;
  if (ioctl(fd, HL_IOCTL_WAIT_CS, &wait) == 0 || errno != ETIMEDOUT) return failed("its timeout");
  buffer[0] = 0;
  buffer[1] = 0xAu << 24; /* a NOP */
  if (run(fd, handle, GAUDI_QUEUE_ID_DMA_0_0, 8, 0, &seq) != 0) return failed("a NOP");
  printf("operational again after the reset\n");
  return 0;
}

/* --shared-page: two small buffers on one page, each mapped for the device on its own (as buffers
 * from malloc are); the first written only after both are mapped, then copied by DMA through
 * SRAM into the second: the device and the program must see the same page. */
static int shared_page(void) {
  struct hl_info_hw_ip_info ip;
  uint8_t* page = aligned_alloc(4096, 4096);
  uint8_t *a = page + 64, *b = page + 1024;
  uint64_t handle = 0, a_va, b_va;
  uint32_t* buffer;
  unsigned i;
  int fd = open("/dev/accel/accel0", O_RDWR);
  if (fd < 0 || page == NULL) return failed("open");
  if (get_info(fd, HL_INFO_HW_IP_INFO, &ip, sizeof ip) != 0) return failed("INFO");
  memset(page, 0, 4096);
  a_va = map_host(fd, a, 256);
  b_va = map_host(fd, b, 256);
  if (a_va == 0 || b_va == 0) return failed("MEMORY MAP USERPTR");
  for (i = 0; i < 256; ++i) a[i] = (uint8_t)(i * 13 + 5);
  buffer = mapped_cb(fd, &handle);
  if (buffer == NULL) return failed("the CB");
  lin_dma(buffer, a_va, ip.sram_base_address + 0x20000, 256);
  if (run(fd, handle, GAUDI_QUEUE_ID_DMA_0_0, 24, 0, NULL) != 0) return failed("DMA down");
  lin_dma(buffer, ip.sram_base_address + 0x20000, b_va, 256);
  if (run(fd, handle, GAUDI_QUEUE_ID_DMA_1_0, 24, 0, NULL) != 0) return failed("DMA up");
  if (memcmp(a, b, 256) != 0) {
    errno = 0;
    return failed("the second buffer does not hold the first's bytes");
  }
  puts("shared page ok");
  return 0;
}

int main(int argc, char** argv) {
  struct hl_info_hw_ip_info ip;
  struct hl_info_args info;
  union hl_cb_args cb;
  union hl_cs_args cs;
  union hl_wait_cs_args wait;
  struct hl_cs_chunk chunk;
  struct stat st;
  uint32_t* buffer;
  int control, compute, device = 0;
  char control_node[64], legacy_node[64], accel_node[64];

  /* --devices: run with PODSIM_DEVICES=2: two devices open at once, each with its own minor,
   * PCI address and completions; a third does not exist. */
  if (argc > 1 && strcmp(argv[1], "--devices") == 0) return two_devices();
  if (argc > 1 && strcmp(argv[1], "--retry-storm") == 0) return retry_storm();
  if (argc > 1 && strcmp(argv[1], "--reset-poll") == 0) return reset_poll();
  if (argc > 1 && strcmp(argv[1], "--shared-page") == 0) return shared_page();
  /* --exit-open: open the accel class's node, create a CB and exit holding both, as a program
   * that never closes its files does. */
  if (argc > 1 && strcmp(argv[1], "--exit-open") == 0) {
    compute = open("/dev/accel/accel0", O_RDWR);
    if (compute < 0) return failed("open /dev/accel/accel0");
    memset(&cb, 0, sizeof cb);
    cb.in.op = HL_CB_OP_CREATE;
    cb.in.cb_size = 4096;
    if (ioctl(compute, HL_IOCTL_CB, &cb) != 0) return failed("CB CREATE");
    printf("exiting with the node open\n");
    return 0;
  }

  /* --device N: the steps below on device N. */
  if (argc > 2 && strcmp(argv[1], "--device") == 0) device = atoi(argv[2]);
  snprintf(control_node, sizeof control_node, "/dev/hl_controlD%d", device);
  snprintf(legacy_node, sizeof legacy_node, "/dev/hl%d", device);
  snprintf(accel_node, sizeof accel_node, "/dev/accel/accel%d", device);
  control = open(control_node, O_RDWR | O_CLOEXEC);
  if (control < 0) return failed("open the control node");
  memset(&ip, 0, sizeof ip);
  memset(&info, 0, sizeof info);
  info.return_pointer = (uintptr_t)&ip;
  info.return_size = sizeof ip;
  info.op = HL_INFO_HW_IP_INFO;
  if (ioctl(control, HL_IOCTL_INFO, &info) != 0) return failed("INFO HW_IP_INFO");
  printf("device id %#x, %s, sram %u bytes\n", ip.device_id, (const char*)ip.card_name,
         ip.sram_size);

  compute = open(legacy_node, O_RDWR | O_CLOEXEC);
  if (compute < 0) return failed("open the compute node");
  if (open(accel_node, O_RDWR) >= 0 || errno != EBUSY) return failed("a second open");
  if (fstat(compute, &st) != 0 || !S_ISCHR(st.st_mode) || minor(st.st_rdev) != 2u * device) {
    return failed("fstat");
  }

  memset(&cb, 0, sizeof cb);
  cb.in.op = HL_CB_OP_CREATE;
  cb.in.cb_size = 4096;
  if (ioctl(compute, HL_IOCTL_CB, &cb) != 0) return failed("CB CREATE");
  buffer = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, compute, (off_t)cb.out.cb_handle);
  if (buffer == MAP_FAILED) return failed("mmap the CB");
  buffer[0] = 0;
  buffer[1] = 0xAu << 24; /* a Gaudi NOP */

  memset(&chunk, 0, sizeof chunk);
  chunk.cb_handle = cb.out.cb_handle;
  chunk.queue_index = GAUDI_QUEUE_ID_DMA_0_0;
  chunk.cb_size = 8;
  memset(&cs, 0, sizeof cs);
  cs.in.chunks_execute = (uintptr_t)&chunk;
  cs.in.num_chunks_execute = 1;
  if (ioctl(compute, HL_IOCTL_CS, &cs) != 0) return failed("CS");
  memset(&wait, 0, sizeof wait);
  wait.in.seq = cs.out.seq;
  wait.in.timeout_us = 1000000;
  if (ioctl(compute, HL_IOCTL_WAIT_CS, &wait) != 0) return failed("WAIT_CS");
  if (wait.out.status != HL_WAIT_CS_STATUS_COMPLETED) {
    errno = 0;
    return failed("the CS did not complete");
  }
  printf("CS %llu completed\n", (unsigned long long)cs.out.seq);

  /* The program's own memory, mapped for the device: down into SRAM on DMA 0, back up into
   * another buffer on DMA 1 once a signal from DMA 0's stream has been seen. */
  {
    static uint8_t from[8192], to[8192];
    uint64_t source, destination, signal_seq = 0;
    for (unsigned i = 0; i < sizeof from; ++i) from[i] = (uint8_t)(i * 7 + 1);
    source = map_host(compute, from, sizeof from);
    destination = map_host(compute, to, sizeof to);
    if (source == 0 || destination == 0) return failed("MEMORY MAP USERPTR");
    lin_dma(buffer, source, ip.sram_base_address + 0x10000, sizeof from);
    if (run(compute, cb.out.cb_handle, GAUDI_QUEUE_ID_DMA_0_0, 24, 0, NULL) != 0) {
      return failed("DMA down");
    }
    if (run(compute, 0, GAUDI_QUEUE_ID_DMA_0_0, 0, HL_CS_FLAGS_SIGNAL, &signal_seq) != 0 ||
        run(compute, 0, GAUDI_QUEUE_ID_DMA_1_0, 0, HL_CS_FLAGS_WAIT, &signal_seq) != 0) {
      return failed("signal and wait");
    }
    lin_dma(buffer, ip.sram_base_address + 0x10000, destination, sizeof to);
    if (run(compute, cb.out.cb_handle, GAUDI_QUEUE_ID_DMA_1_0, 24, 0, NULL) != 0) {
      return failed("DMA up");
    }
    if (memcmp(from, to, sizeof to) != 0) {
      errno = 0;
      return failed("the round trip through SRAM changed the data");
    }
    puts("host memory round trip ok");
  }

  memset(&cb, 0, sizeof cb);
  cb.in.op = 7;
  if (ioctl(compute, HL_IOCTL_CB, &cb) == 0 || errno != EINVAL) return failed("a bad CB op");
  if (munmap(buffer, 4096) != 0) return failed("munmap");
  /* A duplicate shares the open file: it works after the original closes, and the node is
   * free again only when both have closed. */
  {
    int copy = dup(compute);
    if (copy < 0 || close(compute) != 0) return failed("dup");
    memset(&info, 0, sizeof info);
    info.return_pointer = (uintptr_t)&ip;
    info.return_size = sizeof ip;
    info.op = HL_INFO_HW_IP_INFO;
    if (ioctl(copy, HL_IOCTL_INFO, &info) != 0) return failed("INFO through a duplicate");
    if (open(legacy_node, O_RDWR) >= 0 || errno != EBUSY)
      return failed("open while a dup holds it");
    if (close(copy) != 0) return failed("close the duplicate");
    compute = open(legacy_node, O_RDWR);
    if (compute < 0) return failed("open after the last close");
  }
  if (close(compute) != 0 || close(control) != 0) return failed("close");
  puts("ok");
  return 0;
}
