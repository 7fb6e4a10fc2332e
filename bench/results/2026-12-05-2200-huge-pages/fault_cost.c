/*
 * fault_cost.c -- what a process pays the first time it touches a page of shared memory
 * another process already populated (as a backend touching the engine's region), on this VM:
 * 256 MB of MAP_SHARED|MAP_ANONYMOUS memory, populated by the parent, then in a fresh child
 * (1) touched page by page, (2) prefaulted with MADV_POPULATE_WRITE in 2 MB chunks, then
 * touched, (3) prefaulted in 256 kB chunks.  gcc -O2 -o fault_cost fault_cost.c && ./fault_cost
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec/1e9;}
int main(void){
  size_t sz = 256ul<<20; char *p = mmap(NULL, sz, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0);
  for (size_t i=0;i<sz;i+=4096) p[i]=1;   /* pages exist in shmem */
  if (fork()==0){ double t=now(); for (size_t i=0;i<sz;i+=4096) p[i]++; t=now()-t; printf("touch: %.2f us/page\n", t*1e6/(sz/4096)); fflush(stdout); _exit(0);} wait(NULL);
  if (fork()==0){ double t=now(); for (size_t o=0;o<sz;o+=2u<<20) if (madvise(p+o, 2u<<20, MADV_POPULATE_WRITE)) {perror("madvise"); _exit(1);} double t2=now(); for (size_t i=0;i<sz;i+=4096) p[i]++; printf("populate 2MB chunks: %.2f us/page, then touch %.3f us/page\n", (t2-t)*1e6/(sz/4096), (now()-t2)*1e6/(sz/4096)); fflush(stdout); _exit(0);} wait(NULL);
  if (fork()==0){ double t=now(); for (size_t o=0;o<sz;o+=256u<<10) madvise(p+o, 256u<<10, MADV_POPULATE_WRITE); printf("populate 256KB chunks: %.2f us/page\n", (now()-t)*1e6/(sz/4096)); fflush(stdout); _exit(0);} wait(NULL);
  return 0;}
