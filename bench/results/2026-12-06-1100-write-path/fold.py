import sys, collections
# usage: fold.py script ROOT [depth]: samples whose stack has ROOT; counts of the chain of `depth` frames below ROOT, and leaves
root=sys.argv[2]; depth=int(sys.argv[3]) if len(sys.argv)>3 else 1
below=collections.Counter(); leaf=collections.Counter(); n=0; tot=0
stack=[]
def flush():
    global n,tot
    if not stack: return
    tot+=1
    syms=[s for s in stack]  # leaf first
    if root in syms:
        n+=1
        i=syms.index(root)
        ch=syms[max(0,i-depth):i][::-1]
        below[' > '.join(ch) or '(self)']+=1
        leaf[syms[0]]+=1
for line in open(sys.argv[1]):
    line=line.rstrip('\n')
    if not line.strip():
        flush(); stack=[]; continue
    if line[0] not in ' \t':
        flush(); stack=[]; continue
    parts=line.strip().split(None,1)
    stack.append(parts[1] if len(parts)>1 else parts[0])
flush()
print("samples with %s: %d of %d" % (root,n,tot))
for k,v in below.most_common(25): print("%6d %5.1f%%  %s" % (v,100*v/n,k))
print("-- leaves")
for k,v in leaf.most_common(25): print("%6d %5.1f%%  %s" % (v,100*v/n,k))
