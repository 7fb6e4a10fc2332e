#!/usr/bin/python3
"""gen_samples.py -- block contents like tidesam's, for zbench.c.

idx.bin: a tides_btree index on (productid, customerid, price) of 400,000
rows with the Insert Benchmark's uniform values, as a data block holds its
entries: sorted, each key prefix-compressed against the one before
(shared, unshared, value length, key suffix; no value).
rows.bin: 300,000 table rows of that benchmark, (tree, vid) keys in order
with a restart every 16, values = version meta + heap tuple header + the
row (bigint, timestamp, four ints, a 10-letter varchar).
"""
import random
import string
import struct

random.seed(1)
out = bytearray()
rows = sorted((random.randrange(10000), random.randrange(100000), random.randrange(500), 10**6 + i)
              for i in range(400000))
prev = b""
for r in rows:
    k = struct.pack(">QIII", 77, r[0], r[1], r[2]) + struct.pack(">Q", r[3])[2:] + \
        struct.pack("<Q", (r[3] << 8) | 1)
    s = 0
    while s < len(k) and s < len(prev) and k[s] == prev[s]:
        s += 1
    out += bytes([s, len(k) - s, 0]) + k[s:]
    prev = k
open("idx.bin", "wb").write(out)

random.seed(2)
out = bytearray()
ts = 1700000000000000
for i in range(300000):
    vid = 5000000 + i
    key = struct.pack(">QQ", 91, vid)
    meta = struct.pack("<HHQQI", 0, 0, 0, 0, 0)
    hdr = struct.pack("<IIIHHHHB", 777000 + i // 50, 0, 0, 0, 0, 0x0007, 0x0802, 24) + b"\0"
    data = struct.pack("<qqiiii", vid, ts + i * 37, random.randrange(1000), random.randrange(100000),
                       random.randrange(10000), random.randrange(500))
    txt = "".join(random.choice(string.ascii_letters) for _ in range(10)).encode()
    val = meta + hdr + data + bytes([len(txt) * 2 + 1]) + txt
    restart = i % 16 == 0
    out += bytes([0 if restart else 14, 16 if restart else 2, len(val)]) + \
        (key if restart else key[14:]) + val
open("rows.bin", "wb").write(out)
