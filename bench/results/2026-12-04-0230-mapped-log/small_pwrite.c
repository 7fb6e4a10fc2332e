#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t chunk=atol(argv[1]); size_t size=64<<20; int drop=argc>2;
  int fd=open("seg.tmp",O_RDWR|O_CREAT|O_TRUNC,0600);
  posix_fallocate(fd,0,size);
  char*z=calloc(1,chunk);
  for(size_t o=0;o<size;o+=chunk) pwrite(fd,z,chunk,o);
  fsync(fd);
  if(drop) posix_fadvise(fd,0,size,POSIX_FADV_DONTNEED);
  char rec[130]; memset(rec,7,sizeof rec);
  double t=now(); size_t n=0;
  for(size_t o=0;o+130<=size;o+=130,n++) pwrite(fd,rec,130,o);
  double e=now()-t;
  printf("chunk %zu drop %d: %zu writes, %.3f us/write\n",chunk,drop,n,e/n*1e6);
  close(fd); unlink("seg.tmp"); return 0;}
