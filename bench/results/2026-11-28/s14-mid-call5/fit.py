import sqlite3, json, math, collections, itertools
def load_db(path):
    rows=collections.defaultdict(dict)
    con=sqlite3.connect(path)
    for sh,st,us,c in con.execute("select shape,status,median_us,config from measurements"):
        if st!="ok": continue
        s=json.loads(sh); c=json.loads(c); key=(s["n"],s["k"],s["m"])
        kk=(c["bm"],c["bn"],c["csplit"])
        if kk not in rows[key] or us<rows[key][kk]: rows[key][kk]=us
    return rows
def load_txt(path, cols):
    rows=collections.defaultdict(dict)
    for line in open(path):
        f=line.split()
        if f[0]!="new": continue
        if "pdl0" in line: continue
        n,k=map(int,f[1].split("x")); m=int(f[2][2:]); us=float(f[3])
        bm=int(f[4][2:]); bn=int(f[5][2:]); cs=int(f[cols][2:])
        kk=(bm,bn,cs)
        if kk not in rows[(n,k,m)] or us<rows[(n,k,m)][kk]: rows[(n,k,m)][kk]=us
    return rows
sets={"c5":load_db("/work/.device/5/m.db"),"c2":load_db("/work/.device/2/new.db"),
      "c1":load_txt("/work/.device/1/ab_all.txt",6),"s11":load_txt("bench/results/2026-11-28/s11-box-call3/ab_all.txt",7)}
W=[96,128,160,192,224,256]
def cost(n,k,m,bm,bn,cs,P,sms=132):
    bw,fl,bwr,zp=P
    z=math.ceil(m/bn)
    zr=min(bn,((m+z-1)//z+7)//8*8); ctas=(n+bm-1)//bm*cs*z; w=(ctas+sms-1)//sms; kk=k/cs
    c=(max(kk*(bm+zr)*2/bw, 2*bm*bn*kk/fl)+(cs-1)*bm*bn*4/bwr)*w
    return c*(1+zp*(z-1))
def score(P,verbose=False):
    tot=0;N=0;worst=1;miss=[]
    for name,rows in sets.items():
        for key in sorted(rows):
            n,k,m=key; r=rows[key]
            one=min([w for w in W if w>=m] or [256]); two=[w for w in W if w<m and 2*w>=m]; two=min(two) if two else None
            cands=[]
            for z,bn in ((1,one),(2,two)):
                if bn is None: continue
                for bm in (64,128,256):
                    for cs in (1,2,4):
                        if cs*z<=4 and (bm,bn,cs) in r: cands.append((cost(n,k,m,bm,bn,cs,P),cs*z,bm,bn,cs))
            if not cands: continue
            cands.sort(); pt=r[cands[0][2:]]
            b=min(v for kk,v in r.items() if any(kk==c[2:] for c in cands))
            ratio=pt/b; tot+=math.log(ratio); N+=1; worst=max(worst,ratio)
            if ratio>1.02: miss.append((name,key,round(ratio,3)))
    if verbose: print(miss)
    return math.exp(tot/N),worst,N
res=[]
for P in itertools.product((60e3,80e3,100e3,120e3),(4e6,5e6,5.5e6,6e6,7e6),(10e3,20e3,40e3,80e3),(0,0.05,0.1,0.15,0.2)):
    g,w,N=score(P); res.append((g,w,P))
res.sort()
for x in res[:10]: print("%.4f %.3f"%x[:2], x[2])
print("N",score(res[0][2])[2])
score(res[0][2],True)
print("current", score((100e3,5.5e6,20e3,0)))
score((100e3,5.5e6,20e3,0),True)
def old_score(verbose=False):
    tot=0;N=0;worst=1;miss=[]
    for name,rows in sets.items():
        for key in sorted(rows):
            n,k,m=key; r=rows[key]
            one=min([w for w in W if w>=m] or [256]); two=[w for w in W if w<m and 2*w>=m]; two=min(two) if two else None
            small = n*k*2*4 <= 60e6
            cands=[]; order=0
            for z,bn in ((1,one),(2,two)):
                if bn is None: continue
                order=0
                for bm in (64,128,256):
                    for cs in (1,2,4,8):
                        o=order; order+=1
                        if cs*z<=4 and (bm,bn,cs) in r:
                            ctas=(n+bm-1)//bm*cs*z
                            fill=ctas/(((ctas+131)//132)*132)
                            cands.append(((not ctas<=132), -fill, cs*z, not ((z==2)==small), o, bm,bn,cs))
            if not cands: continue
            cands.sort(); pt=r[cands[0][5:]]
            b=min(v for kk,v in r.items() if any(kk==c[5:] for c in cands))
            ratio=pt/b; tot+=math.log(ratio); N+=1; worst=max(worst,ratio)
            if ratio>1.02: miss.append((name,key,round(ratio,3)))
    if verbose: print(miss)
    return math.exp(tot/N),worst,N
print("old rule", old_score(True))
print("new rule", score((100e3,5.5e6,20e3,0.15)))
