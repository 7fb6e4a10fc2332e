#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){
  size_t sz=64<<20, chunk=(argc>1?atol(argv[1]):256)<<10; long pg=4096;
  char *m=mmap(NULL,sz,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  /* 1: first touch (allocate) by write faults */
  double t=now(); for(size_t o=0;o<sz;o+=pg) m[o]=1; double a=now()-t;
  /* 2: another process maps existing pages by write faults */
  if(fork()==0){ t=now(); for(size_t o=0;o<sz;o+=pg) m[o]=2; printf("child write-fault existing: %.2f us/page\n",(now()-t)/(sz/pg)); fflush(stdout); _exit(0);} wait(NULL);
  if(fork()==0){ t=now(); for(size_t o=0;o<sz;o+=chunk){ if(madvise(m+o,chunk,MADV_POPULATE_WRITE)) {perror("madvise");_exit(1);} for(size_t p=o;p<o+chunk;p+=pg) m[p]=3;} printf("child populate existing (chunk %zu KB): %.2f us/page\n",chunk>>10,(now()-t)/(sz/pg)); fflush(stdout); _exit(0);} wait(NULL);
  printf("first-touch alloc write faults: %.2f us/page\n",a/(sz/pg));
  madvise(m,sz,MADV_REMOVE);
  t=now(); for(size_t o=0;o<sz;o+=chunk){ madvise(m+o,chunk,MADV_POPULATE_WRITE); for(size_t p=o;p<o+chunk;p+=pg) m[p]=1;} printf("populate alloc (chunk): %.2f us/page\n",(now()-t)/(sz/pg));
  madvise(m,sz,MADV_REMOVE);
  t=now(); madvise(m,sz,MADV_POPULATE_WRITE); printf("populate alloc whole 64MB: %.2f us/page\n",(now()-t)/(sz/pg)); t=now(); for(size_t o=0;o<sz;o+=pg) m[o]=5; printf("then touch: %.2f us/page\n",(now()-t)/(sz/pg)); t=now(); for(size_t o=0;o<sz;o+=pg) m[o]=6; printf("touch again: %.2f us/page\n",(now()-t)/(sz/pg));
  return 0;}
