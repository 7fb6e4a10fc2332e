import collections,sys
stacks=[];cur=[]
for line in open(sys.argv[1]):
    line=line.rstrip()
    if not line:
        if cur: stacks.append(cur)
        cur=[];continue
    cur.append(line.strip())
if cur: stacks.append(cur)
tot=len(stacks)
roles=collections.Counter(); lf=collections.defaultdict(collections.Counter); inc=collections.defaultdict(collections.Counter)
for s in stacks:
    syms=[x.split()[1] if len(x.split())>1 else '?' for x in s[1:]]
    role='other'
    for r in ('do_autovacuum','trt_worker_main','PostgresMain','WalWriterMain','BackgroundWriterMain','CheckpointerMain'):
        if r in syms: role=r;break
    if role=='other': role=s[0].split()[0]
    roles[role]+=1
    lf[role][syms[0] if syms else '?']+=1
    for f in set(syms): inc[role][f]+=1
for k,v in roles.most_common(8): print("%5.1f%% %s"%(100*v/tot,k))
for r in sys.argv[2:]:
    print(r, "leaf:")
    for k,v in lf[r].most_common(15): print("   %5.1f%% %s"%(100*v/tot,k))
    print(r, "inclusive:")
    for k,v in inc[r].most_common(45): print("   %5.1f%% %s"%(100*v/tot,k))
