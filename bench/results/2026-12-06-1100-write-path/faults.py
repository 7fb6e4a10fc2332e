import sys, collections
c=collections.Counter(); n=0; stack=[]
def flush():
    global n
    if 'asm_exc_page_fault' in stack:
        i=stack.index('asm_exc_page_fault'); n+=1
        c[' < '.join(stack[i+1:i+4])]+=1
for line in open(sys.argv[1]):
    line=line.rstrip('\n')
    if not line.strip() or line[0] not in ' \t':
        flush(); stack=[]; continue
    p=line.strip().split(None,1); stack.append(p[1] if len(p)>1 else p[0])
flush()
print("fault samples", n)
for k,v in c.most_common(20): print(v,k)
