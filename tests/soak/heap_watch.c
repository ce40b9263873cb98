/* Logs a process's heap every 10 s, for the soak's memory figures
 * (docs/reliability.md, "Soak"): glibc's mallinfo2() (bytes in use in the
 * heap, in large mapped blocks, in free chunks) and the kernel's RssAnon.
 *
 *   gcc -O2 -shared -fPIC -o heap_watch.so tests/soak/heap_watch.c -lpthread
 *   HEAP_WATCH_OUT=heap.log LD_PRELOAD=$PWD/heap_watch.so build/bin/tessel tune resnet18 ...
 *
 * One line per sample: PID TIME inuse=B mmapped=B arena=B free=B rssanon_kib=K.
 * Only the process started with HEAP_WATCH_OUT watches: the variable is
 * removed at once, so the workers and compilers it starts do not. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void* watch(void* path) {
  FILE* out = fopen((const char*)path, "a");
  if (!out) return NULL;
  for (;;) {
    struct mallinfo2 m = mallinfo2();
    long anonKib = 0;
    char line[256];
    FILE* status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
      if (!strncmp(line, "RssAnon:", 8)) anonKib = atol(line + 8);
    if (status) fclose(status);
    fprintf(out, "%d %ld inuse=%zu mmapped=%zu arena=%zu free=%zu rssanon_kib=%ld\n", (int)getpid(), (long)time(NULL),
            m.uordblks, m.hblkhd, m.arena, m.fordblks, anonKib);
    fflush(out);
    sleep(10);
  }
  return NULL;
}

__attribute__((constructor)) static void start(void) {
  const char* path = getenv("HEAP_WATCH_OUT");
  if (!path || !*path) return;
  char* copy = strdup(path);
  unsetenv("HEAP_WATCH_OUT");
  pthread_t thread;
  if (copy && pthread_create(&thread, NULL, watch, copy) == 0) pthread_detach(thread);
}
