#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t chunk=atol(argv[1]); size_t size=64<<20; int rec=argc>2?atoi(argv[2]):130;
  int fd=open("seg.tmp",O_RDWR|O_CREAT|O_TRUNC,0600);
  posix_fallocate(fd,0,size);
  char*z=calloc(1,chunk);
  for(size_t o=0;o<size;o+=chunk) pwrite(fd,z,chunk,o);
  fsync(fd);
  char r[4096]; memset(r,7,sizeof r);
  double t=now(); size_t n=0;
  char*m=mmap(NULL,size,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0);
  for(size_t o=0;o+rec<=size;o+=rec,n++) memcpy(m+o,r,rec);
  double e=now()-t;
  printf("mmap chunk %zu rec %d: %.3f us/write\n",chunk,rec,e/n*1e6);
  t=now(); fsync(fd); printf("fsync %.3f s\n", now()-t);
  t=now(); n=0; for(size_t o=0;o+rec<=size;o+=rec,n++) memcpy(m+o,r,rec);
  printf("after fsync: %.3f us/write\n",(now()-t)/n*1e6);
  close(fd); unlink("seg.tmp"); return 0;}
