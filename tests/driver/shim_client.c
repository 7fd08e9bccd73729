/* A user program written for the Linux accel driver, as hl-thunk's are: it knows nothing of
 * podsim. shim_test.cpp runs it with libpodsim-accel.so preloaded. Exit 0 when every step
 * behaves as the kernel's driver would. */
#define _GNU_SOURCE
#include <drm/habanalabs_accel.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
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

int main(void) {
  struct hl_info_hw_ip_info ip;
  struct hl_info_args info;
  union hl_cb_args cb;
  union hl_cs_args cs;
  union hl_wait_cs_args wait;
  struct hl_cs_chunk chunk;
  struct stat st;
  uint32_t* buffer;
  int control, compute;

  control = open("/dev/hl_controlD0", O_RDWR | O_CLOEXEC);
  if (control < 0) return failed("open the control node");
  memset(&ip, 0, sizeof ip);
  memset(&info, 0, sizeof info);
  info.return_pointer = (uintptr_t)&ip;
  info.return_size = sizeof ip;
  info.op = HL_INFO_HW_IP_INFO;
  if (ioctl(control, HL_IOCTL_INFO, &info) != 0) return failed("INFO HW_IP_INFO");
  printf("device id %#x, %s, sram %u bytes\n", ip.device_id, (const char*)ip.card_name,
         ip.sram_size);

  compute = open("/dev/hl0", O_RDWR | O_CLOEXEC);
  if (compute < 0) return failed("open the compute node");
  if (open("/dev/hl0", O_RDWR) >= 0 || errno != EBUSY) return failed("a second open");
  if (fstat(compute, &st) != 0 || !S_ISCHR(st.st_mode) || minor(st.st_rdev) != 0) {
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

  memset(&cb, 0, sizeof cb);
  cb.in.op = 7;
  if (ioctl(compute, HL_IOCTL_CB, &cb) == 0 || errno != EINVAL) return failed("a bad CB op");
  if (munmap(buffer, 4096) != 0) return failed("munmap");
  if (close(compute) != 0 || close(control) != 0) return failed("close");
  puts("ok");
  return 0;
}
