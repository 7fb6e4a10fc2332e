import sys, collections
# usage: fold.py stacks.txt ANCHOR [pid...]  -> self symbols of samples whose stack contains ANCHOR, and direct children of ANCHOR
path, anchor = sys.argv[1], sys.argv[2]
pids = set(sys.argv[3:])
samples = []
cur = None
for line in open(path):
    if not line.strip():
        if cur: samples.append(cur)
        cur = None
        continue
    if not line.startswith('\t'):
        cur = [line.split()[0], []]
    else:
        parts = line.split()
        cur[1].append(parts[1] if len(parts) > 1 else '?')
if cur: samples.append(cur)
tot = len(samples)
selfc = collections.Counter(); child = collections.Counter(); n = 0
for pid, st in samples:
    if pids and pid not in pids: continue
    if anchor not in st: continue
    n += 1
    selfc[st[0]] += 1
    i = st.index(anchor)
    child[st[i-1] if i > 0 else '(self)'] += 1
print("%s: %d samples of %d (%.1f%%)" % (anchor, n, tot, 100.0*n/tot))
print("-- direct callees"); [print("%6.2f%% %s" % (100.0*c/tot, s)) for s, c in child.most_common(25)]
print("-- self"); [print("%6.2f%% %s" % (100.0*c/tot, s)) for s, c in selfc.most_common(25)]
