"""cap_height.py FILE.png|FILE.pgm: the height in pixels, scaled to a
1920-pixel-wide figure, of the dark ink in the image (figure_text.sh draws a
row of capitals alone on a white figure).
cap_height.py --rows FILE: the top of each row of ink, from the top, scaled
the same way (figure_text.sh draws lines of capitals: their pitch).
Pure Python: no PIL where the kit
runs; 8-bit grey, RGB or RGBA PNGs (what pngcairo writes) and binary PGMs
(what pdftoppm -gray writes)."""
import sys, zlib, struct
def png_gray(path):
    d=open(path,'rb').read(); pos=8; idat=b''; 
    while pos < len(d):
        n,=struct.unpack('>I',d[pos:pos+4]); t=d[pos+4:pos+8]; c=d[pos+8:pos+8+n]
        if t==b'IHDR': w,h,bd,ct=struct.unpack('>IIBB',c[:10])
        if t==b'IDAT': idat+=c
        pos+=12+n
    bpp={2:3,6:4,0:1}[ct]; raw=zlib.decompress(idat); stride=w*bpp; rows=[]; prev=bytearray(stride); i=0
    for y in range(h):
        f=raw[i]; line=bytearray(raw[i+1:i+1+stride]); i+=1+stride
        for x in range(stride):
            a=line[x-bpp] if x>=bpp else 0; b=prev[x]; c=prev[x-bpp] if x>=bpp else 0
            if f==1: line[x]=(line[x]+a)&255
            elif f==2: line[x]=(line[x]+b)&255
            elif f==3: line[x]=(line[x]+(a+b)//2)&255
            elif f==4:
                p=a+b-c; pa=abs(p-a); pb=abs(p-b); pc=abs(p-c)
                pr=a if pa<=pb and pa<=pc else (b if pb<=pc else c); line[x]=(line[x]+pr)&255
        rows.append([line[x*bpp] for x in range(w)]); prev=line
    return w,h,rows
def pgm_gray(path):
    d=open(path,'rb').read(); parts=d.split(maxsplit=4); w,h=int(parts[1]),int(parts[2]); px=parts[4]
    return w,h,[list(px[y*w:(y+1)*w]) for y in range(h)]
tops='--rows' in sys.argv[1:2]
path=sys.argv[2 if tops else 1]
w,h,rows=png_gray(path) if path.endswith('.png') else pgm_gray(path)
dark=[y for y in range(h) if min(rows[y])<128]; ink=set(dark)
if tops:
    print(' '.join('%.1f' % (y*1920.0/w) for y in dark if y-1 not in ink))
else:
    print('%.1f' % ((dark[-1]-dark[0]+1)*1920.0/w if dark else 0))
