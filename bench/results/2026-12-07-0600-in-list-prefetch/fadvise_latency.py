import os, random, time
p = "/var/tmp/fadv-test.bin"
sz = 2 << 30
if not os.path.exists(p) or os.path.getsize(p) < sz:
    with open(p, "wb") as f:
        blk = os.urandom(1 << 20)
        for i in range(sz >> 20):
            f.write(blk)
fd = os.open(p, os.O_RDONLY)
os.fsync(fd) if False else None
def drop():
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
random.seed(1)
for mode in ["serial", "willneed", "serial", "willneed"]:
    drop()
    t0 = time.time(); n = 0
    for q in range(300):
        offs = [random.randrange(0, sz - 8192) & ~4095 for _ in range(10)]
        if mode == "willneed":
            for o in offs:
                os.posix_fadvise(fd, o, 4096, os.POSIX_FADV_WILLNEED)
        for o in offs:
            os.pread(fd, 4096, o); n += 1
    el = time.time() - t0
    print(mode, "%.1f us per query of 10 reads" % (el / 300 * 1e6))
