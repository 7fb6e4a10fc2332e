import collections, sys
# stackagg.py SCRIPT FILTER [N]: inclusive shares of frames within samples whose stack has FILTER
path, filt = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 50
samples=[];cur=None
for line in open(path):
    line=line.rstrip('\n')
    if not line.strip():
        if cur: samples.append(cur); cur=None
        continue
    if line[0] not in ' \t': cur=[line]
    else:
        p=line.split(None,1); cur.append(p[1].split('+')[0] if len(p)>1 else '?')
if cur: samples.append(cur)
tot=len(samples)
sub=[s for s in samples if filt=='-' or any(filt==f for f in s[1:])]
print("samples %d, with %s %d (%.1f%%)"%(tot,filt,len(sub),100*len(sub)/max(tot,1)))
inc=collections.Counter(); selfc=collections.Counter()
for s in sub:
    seen=set()
    if len(s)>1: selfc[s[1]]+=1
    for f in s[1:]:
        if f not in seen: inc[f]+=1; seen.add(f)
for k,v in inc.most_common(n): print("%5.1f%% %5.1f%%  %s"%(100*v/tot, 100*selfc[k]/tot, k))
