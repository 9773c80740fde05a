#!/usr/bin/env python3
# gen_backtrack_store.py ROOT SESSIONS BYTES LINE_LEN BS_PER_LINE LINES_PER_MESSAGE:
# a store of long lines with few b, where (.*b){20} backtracks at length
# and [a-z ]*[#%] is quadratic in the line (t_bounds.sh).
import json, os, sys, random
root=sys.argv[1]; n=int(sys.argv[2]); size=int(sys.argv[3]); linelen=int(sys.argv[4])
random.seed(1)
words="alpha cat dog eel fox gnu hen ant owl yak emu".split()
for k in range(n):
    proj=os.path.join(root,"--w-p%d--"%(k%3)); os.makedirs(proj,exist_ok=True)
    stem="2026-01-%02dT00-00-00-000Z_s%03d"%(k%28+1,k)
    with open(os.path.join(proj,stem+".jsonl"),"w") as f:
        f.write(json.dumps({"type":"session","version":3,"id":"01900000-0000-7000-8000-%012d"%k,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/p%d"%(k%3)})+"\n")
        parent=None; i=0; total=0
        while total<size:
            i+=1
            lines=[]
            for _ in range(int(sys.argv[6])):
                l=""
                while len(l)<linelen: l+=random.choice(words)+" "
                l=list(l); 
                for j in range(int(sys.argv[5])): l[random.randrange(len(l))]="b"
                lines.append("".join(l))
            text="\n".join(lines)
            e={"type":"message","id":"m%d"%i,"parentId":parent,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":text,"timestamp":1767225600000+k*1000+i}}
            line=json.dumps(e)+"\n"; f.write(line); total+=len(line); parent="m%d"%i
