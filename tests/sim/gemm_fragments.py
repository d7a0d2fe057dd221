#!/usr/bin/env python3
"""Index-level model of the gemv, rowdot and mma GEMM families (templates/gemm_nt/gemv.lua, gemm_nn/gemv.lua, gemm_nt/rowdot.lua,
templates/lib/mma.lua), run on the CPU with numpy.

The kernels' data movement is written here again, formula for formula:
global -> shared memory chunk maps and the XOR swizzle (16-byte fixed and
looped, 8- and 4-byte cp.async, register-staged pairs), ldmatrix (.trans)
and mma.sync m16n8k16 fragment layouts as the PTX ISA defines them, the
epilogue's masks, the grouped raster, and for gemv the k permutation into
mma fragments, row passes, split-K partials and their ordered sum. Each
case compares D with numpy's product on odd shapes. It checks the index
algebra, not the compiled code: keep it in step with the templates.
Exit 0 when every case matches.
"""
import sys
import numpy as np

rng = np.random.default_rng(0)

def swz(LEN, row, col):
    f = ((row >> 1) & 3) if LEN == 32 else (row & 7)
    return row * LEN + ((((col >> 3) ^ f)) << 3) + (col & 7)

def tile_async(s, g, ld, r0, c0, rmax, cmax, ROWS, COLS, BYTES, THREADS, FIXED):
    V = BYTES // 2; PER_ROW = COLS // V; CHUNKS = ROWS * PER_ROW
    written = np.zeros(ROWS * COLS, bool)
    def put(row, col, ok, src_row, src_col):
        for e in range(V):
            off = swz(COLS, row, col) + e
            assert not written[off], "double write"
            written[off] = True
            s[off] = g[src_row, src_col + e] if ok else 0.0
    for tid in range(THREADS):
        if THREADS % PER_ROW == 0:
            RSTEP = THREADS // PER_ROW; ITERS = (ROWS + RSTEP - 1) // RSTEP
            row0 = tid // PER_ROW; col = (tid % PER_ROW) * V
            colok = c0 + col < cmax
            gr = r0 + row0
            for i in range(ITERS):
                row = row0 + i * RSTEP
                ok = colok and gr < rmax
                if row < ROWS: put(row, col, ok, gr, c0 + col)
                gr += RSTEP
        else:
            for c in range(tid, CHUNKS, THREADS):
                row = c // PER_ROW; col = (c % PER_ROW) * V
                ok = r0 + row < rmax and c0 + col < cmax
                put(row, col, ok, r0 + row, c0 + col)
    assert written.all(), "holes"

def staged(s, g, ld, r0, c0, rmax, cmax, ROWS, COLS, THREADS):
    PR = COLS // 2; RSTEP = THREADS // PR; PER = (ROWS + RSTEP - 1) // RSTEP
    assert THREADS % PR == 0
    written = np.zeros(ROWS * COLS, bool)
    for tid in range(THREADS):
        row0 = tid // PR; col = (tid % PR) * 2
        gc = c0 + col
        gr = r0 + row0
        for i in range(PER):
            row = row0 + i * RSTEP
            lo = hi = 0.0
            if row < ROWS and gr < rmax:
                if gc < cmax: lo = g[gr, gc]
                if gc + 1 < cmax: hi = g[gr, gc + 1]
            if row < ROWS:
                off = swz(COLS, row, col)
                assert not written[off] and not written[off + 1]
                written[off] = written[off + 1] = True
                s[off] = lo; s[off + 1] = hi
            gr += RSTEP
    assert written.all()

def ldsm(s, addrs, trans):
    # addrs: 32 element offsets (row starts); returns regs[lane][j] = (x, y)
    out = [[None] * 4 for _ in range(32)]
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        for j in range(4):
            if not trans:
                a = addrs[8 * j + g]
                out[lane][j] = (s[a + 2 * t], s[a + 2 * t + 1])
            else:
                out[lane][j] = (s[addrs[8 * j + 2 * t] + g], s[addrs[8 * j + 2 * t + 1] + g])
    return out

def mma(acc, a, b0, b1):
    # acc[lane] 4 floats; a[lane] 4 pairs; b0/b1[lane] pairs
    A = np.zeros((16, 16)); B = np.zeros((16, 8))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        A[g, 2*t:2*t+2] = a[lane][0]; A[g+8, 2*t:2*t+2] = a[lane][1]
        A[g, 2*t+8:2*t+10] = a[lane][2]; A[g+8, 2*t+8:2*t+10] = a[lane][3]
        B[2*t:2*t+2, g] = b0[lane]; B[2*t+8:2*t+10, g] = b1[lane]
    Dm = A @ B
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        acc[lane][0] += Dm[g, 2*t]; acc[lane][1] += Dm[g, 2*t+1]
        acc[lane][2] += Dm[g+8, 2*t]; acc[lane][3] += Dm[g+8, 2*t+1]

def run(NN, BM, BN, BK, WM, WN, m, n, k, path, bm0=0, bn0=0):
    THREADS = 32 * WM * WN; WTM, WTN = BM // WM, BN // WN; MI, NI = WTM // 16, WTN // 8
    A = rng.standard_normal((m, k)).round(2)
    B = rng.standard_normal((k, n) if NN else (n, k)).round(2)
    ref = A @ (B if NN else B.T)
    D = np.full((m, n), np.nan)
    kt = (k + BK - 1) // BK
    accs = {w: [[[ [0.0]*4 for _ in range(32)] for j in range(NI)] for i in range(MI)] for w in range(WM*WN)}
    for kb in range(kt):
        k0 = kb * BK
        sA = np.full(BM * BK, np.nan); sB = np.full(BK * BN, np.nan)
        if path == "staged":
            staged(sA, A, k, bm0, k0, m, k, BM, BK, THREADS)
            if NN: staged(sB, B, n, k0, bn0, k, n, BK, BN, THREADS)
            else: staged(sB, B, k, bn0, k0, n, k, BN, BK, THREADS)
        else:
            BY, FIX = path
            tile_async(sA, A, k, bm0, k0, m, k, BM, BK, BY, THREADS, FIX)
            if NN: tile_async(sB, B, n, k0, bn0, k, n, BK, BN, BY, THREADS, FIX)
            else: tile_async(sB, B, k, bn0, k0, n, k, BN, BK, BY, THREADS, FIX)
        for warp in range(WM * WN):
            wm0 = (warp // WN) * WTM; wn0 = (warp % WN) * WTN
            for kk in range(BK // 16):
                af = []
                for i in range(MI):
                    addrs = [swz(BK, wm0 + i*16 + (l & 15), kk*16 + (l >> 4)*8) for l in range(32)]
                    af.append(ldsm(sA, addrs, False))
                bf = [None] * NI
                for j in range(NI // 2):
                    if NN:
                        addrs = [swz(BN, kk*16 + (l & 7) + ((l >> 3) & 1)*8, wn0 + j*16 + (l >> 4)*8) for l in range(32)]
                        r = ldsm(sB, addrs, True)
                    else:
                        addrs = [swz(BK, wn0 + j*16 + (l & 7) + (l >> 4)*8, kk*16 + ((l >> 3) & 1)*8) for l in range(32)]
                        r = ldsm(sB, addrs, False)
                    bf[2*j] = ([r[l][0] for l in range(32)], [r[l][1] for l in range(32)])
                    bf[2*j+1] = ([r[l][2] for l in range(32)], [r[l][3] for l in range(32)])
                for i in range(MI):
                    for j in range(NI):
                        mma(accs[warp][i][j], af[i], bf[j][0], bf[j][1])
    for warp in range(WM * WN):
        wm0 = (warp // WN) * WTM; wn0 = (warp % WN) * WTN
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            for i in range(MI):
                for h in range(2):
                    row = bm0 + wm0 + i*16 + g + 8*h
                    if row >= m: continue
                    for j in range(NI):
                        col = bn0 + wn0 + j*8 + 2*t
                        x, y = accs[warp][i][j][lane][2*h], accs[warp][i][j][lane][2*h+1]
                        if col < n: D[row, col] = x
                        if col + 1 < n: D[row, col + 1] = y
    rows = slice(bm0, min(m, bm0 + BM)); cols = slice(bn0, min(n, bn0 + BN))
    err = np.abs(D[rows, cols] - ref[rows, cols]).max()
    return err


def check_mma():
    cases = [
  (0, 64, 64, 32, 2, 2, 50, 70, 40, (16, True)),
  (1, 64, 64, 32, 2, 2, 50, 70, 40, (16, True)),
  (1, 64, 128, 64, 2, 2, 64, 104, 72, (16, True)),
  (0, 64, 64, 32, 2, 2, 64, 64, 64, (16, False)),
  (0, 64, 64, 64, 1, 2, 33, 64, 100, (8, False)),
  (1, 64, 64, 32, 2, 1, 64, 36, 36, (4, False)),
  (0, 64, 64, 32, 2, 2, 61, 63, 37, "staged"),
  (1, 64, 64, 32, 2, 2, 61, 63, 37, "staged"),
  (1, 64, 256, 32, 2, 4, 40, 250, 33, "staged"),
  (0, 128, 64, 64, 4, 2, 100, 64, 64, "staged"),
]
    for c in cases:
        NN, BM, BN, BK, WM, WN, m, n, k, path = c
        e = run(NN, BM, BN, BK, WM, WN, m, n, k, path)
        assert e < 1e-9, (c, e)
    # Edge tiles away from the origin.
    for c in [(0, 64, 64, 32, 2, 2, 100, 90, 40, "staged", 64, 64), (1, 64, 64, 64, 2, 2, 70, 72, 24, (16, True), 64, 64)]:
        e = run(*c)
        assert e < 1e-9, (c, e)
    print("ok   mma family: %d tile cases match numpy" % (len(cases) + 2))

def check_banks_and_raster():
    # ldmatrix bank groups: each 8-lane phase should touch 8 distinct 16-byte groups of a 128-byte line
    def groups(addrs): return len({(a * 2 // 16) % 8 for a in addrs})
    bad = 0
    for BK in (32, 64):
        for wm0 in range(0, 256, 16):
            for kk in range(BK // 16):
                addrs = [swz(BK, wm0 + (l & 15), kk*16 + (l >> 4)*8) for l in range(32)]
                for ph in range(4):
                    if groups(addrs[8*ph:8*ph+8]) != 8: bad += 1
        for wn0 in range(0, 256, 16):
            for kk in range(BK // 16):
                addrs = [swz(BK, wn0 + (l & 7) + (l >> 4)*8, kk*16 + ((l >> 3) & 1)*8) for l in range(32)]
                for ph in range(4):
                    if groups(addrs[8*ph:8*ph+8]) != 8: bad += 1
    for BN in (64, 128, 256):
        for kk in range(4):
            for wn0 in range(0, BN, 16):
                addrs = [swz(BN, kk*16 + (l & 7) + ((l >> 3) & 1)*8, wn0 + (l >> 4)*8) for l in range(32)]
                for ph in range(4):
                    if groups(addrs[8*ph:8*ph+8]) != 8: bad += 1
    assert bad == 0, "%d ldmatrix phases with bank conflicts" % bad
    print("ok   ldmatrix addresses: every 8-lane phase hits 8 bank groups")
    # grouped raster: a bijection of tiles
    for tm_, tn_ in [(1,1),(3,5),(17,9),(32,17),(9,8),(8,1)]:
        for G in (1, 8):
            seen = set()
            for tile in range(tm_ * tn_):
                per = G * tn_; grp = tile // per; first = grp * G
                rows = min(tm_ - first, G); r = tile - grp * per
                tm = first + r % rows; tn = r // rows
                assert 0 <= tm < tm_ and 0 <= tn < tn_
                seen.add((tm, tn))
            assert len(seen) == tm_ * tn_, (tm_, tn_, G)
    print("ok   grouped raster: a bijection of tiles")

def mma_words(acc, a, b):   # a[lane] = 4 words (each pair), b[lane] = 2 words
    A = np.zeros((16, 16)); B = np.zeros((16, 8))
    for l in range(32):
        g, t = l >> 2, l & 3
        A[g, 2*t:2*t+2] = a[l][0]; A[g+8, 2*t:2*t+2] = a[l][1]
        A[g, 2*t+8:2*t+10] = a[l][2]; A[g+8, 2*t+8:2*t+10] = a[l][3]
        B[2*t:2*t+2, g] = b[l][0]; B[2*t+8:2*t+10, g] = b[l][1]
    Dm = A @ B
    for l in range(32):
        g, t = l >> 2, l & 3
        acc[l] += np.array([Dm[g, 2*t], Dm[g, 2*t+1], Dm[g+8, 2*t], Dm[g+8, 2*t+1]])

def piece(row_vals, kk, ke, ok, VEC):
    # NW words, each a pair (lo, hi); elementwise predicate (the vector path
    # gives the same values when the piece is wholly in or out)
    w = []
    for i in range(VEC // 2):
        lo = row_vals[kk + 2*i] if ok and kk + 2*i < ke else 0.0
        hi = row_vals[kk + 2*i + 1] if ok and kk + 2*i + 1 < ke else 0.0
        w.append((lo, hi))
    return w

def gemv_nt(A, B, WARPS, CPW, VEC, UNROLL, SPLITK):
    m, k = A.shape; n = B.shape[0]
    CHUNK = 4 * VEC; COLS = WARPS * 8 * CPW
    D = np.full((m, n), np.nan)
    part = np.full((SPLITK, m, n), np.nan)
    nblk = (n + COLS - 1) // COLS
    for bx in range(nblk):
        for by in range(SPLITK):
            nch = (k + CHUNK - 1) // CHUNK; per = (nch + SPLITK - 1) // SPLITK
            kb = min(k, by * per * CHUNK); ke = min(k, kb + per * CHUNK)
            for warp in range(WARPS):
                col0 = bx * COLS + warp * 8 * CPW
                for r0 in range(0, m, 16):
                    acc = [[np.zeros(4) for _ in range(32)] for c in range(CPW)]
                    if col0 < n:
                        k0 = kb
                        while k0 < ke:
                            for u in range(UNROLL):
                                bw = [[None]*32 for c in range(CPW)]; alo = [None]*32; ahi = [None]*32
                                for l in range(32):
                                    g, t = l >> 2, l & 3
                                    kk = k0 + u * CHUNK + VEC * t
                                    for c in range(CPW):
                                        col = col0 + 8*c + g
                                        ok = col < n
                                        bw[c][l] = piece(B[col] if ok else B[0], kk, ke, ok, VEC)
                                    oklo = r0 + g < m; okhi = r0 + g + 8 < m
                                    alo[l] = piece(A[r0+g] if oklo else A[0], kk, ke, oklo, VEC)
                                    ahi[l] = piece(A[r0+g+8] if okhi else A[0], kk, ke, okhi, VEC) if m - r0 > 8 else [(0.0, 0.0)] * (VEC // 2)
                                for s in range(VEC // 4):
                                    for c in range(CPW):
                                        a = [(alo[l][2*s], ahi[l][2*s], alo[l][2*s+1], ahi[l][2*s+1]) for l in range(32)]
                                        b = [(bw[c][l][2*s], bw[c][l][2*s+1]) for l in range(32)]
                                        mma_words(acc[c], a, b)
                            k0 += UNROLL * CHUNK
                    for l in range(32):
                        g, t = l >> 2, l & 3
                        for c in range(CPW):
                            col = col0 + 8*c + 2*t
                            for h in range(2):
                                row = r0 + g + 8*h
                                if row < m:
                                    for e in range(2):
                                        if col + e < n:
                                            if SPLITK == 1: D[row, col + e] = acc[c][l][2*h + e]
                                            else: part[by, row, col + e] = acc[c][l][2*h + e]
        if SPLITK > 1:
            cb = bx * COLS
            for i in range(m * COLS):
                row = i // COLS; col = cb + i % COLS
                if col >= n: continue
                s = 0.0
                for sp in range(SPLITK): s += part[sp, row, col]
                D[row, col] = s
    return D


def check_gemv_nt():
    for m, n, k, W, C, V, U, S in [(1, 40, 100, 2, 1, 8, 2, 1), (16, 24, 64, 2, 2, 4, 1, 4), (5, 9, 37, 2, 1, 8, 1, 2),
         (20, 17, 70, 4, 1, 4, 2, 2), (16, 8, 33, 2, 4, 8, 1, 8), (3, 70, 130, 2, 1, 8, 4, 4)]:
        A = rng.standard_normal((m, k)); B = rng.standard_normal((n, k))
        err = np.abs(gemv_nt(A, B, W, C, V, U, S) - A @ B.T).max()
        assert err < 1e-9, ((m, n, k, W, C, V, U, S), err)
    print("ok   gemv nt: k permutation, row passes and split-K match numpy")

def gemv_nn(A, B, WARPS, VEC, MMAX, U, SPLITK, fast):
    m, k = A.shape; n = B.shape[1]
    COLS = 32 * VEC
    if not fast: U = 1
    D = np.full((m, n), np.nan); part = np.full((SPLITK, m, n), np.nan)
    for bx in range((n + COLS - 1) // COLS):
        cb = bx * COLS
        for by in range(SPLITK):
            ng = (k + 7) // 8; per = (ng + SPLITK - 1) // SPLITK
            kb = min(k, by * per * 8); ke = min(k, kb + per * 8)
            for r0 in range(0, m, MMAX):
                mr = min(MMAX, m - r0)
                red = np.zeros((WARPS, COLS))
                for warp in range(WARPS):
                    for lane in range(32):
                        col = cb + lane * VEC
                        acc = np.zeros((MMAX, VEC))
                        k0 = kb + warp * 8 * U
                        while k0 < ke:
                            bw = np.zeros((8 * U, VEC))
                            for j in range(8 * U):
                                for e in range(VEC):
                                    if k0 + j < ke and col + e < n: bw[j, e] = B[k0 + j, col + e]
                            for r in range(MMAX):
                                if r < mr:
                                    for u in range(U):
                                        for j in range(8):
                                            kk = k0 + 8*u + j
                                            a = A[r0 + r, kk] if kk < ke else 0.0
                                            acc[r] += a * bw[8*u + j]
                            k0 += WARPS * 8 * U
                        accs[(warp, lane)] = acc
                for r in range(mr):
                    for warp in range(WARPS):
                        for lane in range(32):
                            red[warp, lane*VEC:(lane+1)*VEC] = accs[(warp, lane)][r]
                    for i in range(COLS):
                        s = red[0, i]
                        for w in range(1, WARPS): s += red[w, i]
                        c = cb + i
                        if c < n:
                            if SPLITK == 1: D[r0 + r, c] = s
                            else: part[by, r0 + r, c] = s
        if SPLITK > 1:
            for i in range(m * COLS):
                row = i // COLS; col = cb + i % COLS
                if col >= n: continue
                D[row, col] = sum(part[sp, row, col] for sp in range(SPLITK))
    return D

accs = {}
def check_gemv_nn():
    for m, n, k, W, V, MM, U, S, fast in [(1, 70, 100, 2, 2, 1, 2, 4, True), (16, 100, 37, 4, 4, 8, 1, 2, False),
                                       (3, 9, 300, 1, 8, 4, 2, 8, True), (9, 300, 64, 2, 2, 8, 2, 1, True),
                                       (12, 64, 17, 8, 2, 4, 1, 4, False)]:
        A = rng.standard_normal((m, k)); B = rng.standard_normal((k, n))
        err = np.abs(gemv_nn(A, B, W, V, MM, U, S, fast) - A @ B).max()
        assert err < 1e-9, ((m, n, k, W, V, MM, U, S, fast), err)
    print("ok   gemv nn: warp k-interleave, row passes and split-K match numpy")

def rowdot(A, B, WARPS, KW, R, MR, U, vec):
    # templates/gemm_nt/rowdot.lua: sets of KW warps take R weight rows, the KW
    # warps contiguous k slices (multiples of 8); lane l reads [8l, 8l + 8)
    # of each 256-element piece; passes of MR rows of A; a warp's lanes and
    # then the set's warps added in order.
    m, k = A.shape; n = B.shape[0]
    if not vec: U = 1
    SETS = WARPS // KW; RB = SETS * R
    D = np.full((m, n), np.nan)
    per = ((k + KW - 1) // KW + 7) // 8 * 8
    for bx in range((n + RB - 1) // RB):
        for r0 in range(0, m, MR):
            mr = min(MR, m - r0)
            red = np.zeros((WARPS, MR * R))
            for warp in range(WARPS):
                st, wk = warp // KW, warp % KW
                row0 = bx * RB + st * R
                kb = min(k, wk * per); ke = min(k, kb + per)
                lanes = np.zeros((32, MR, R))
                if row0 < n:
                    for lane in range(32):
                        k0 = kb + 8 * lane
                        while k0 < ke:
                            for u in range(U):
                                for e in range(8):
                                    kk = k0 + 256 * u + e
                                    if kk >= ke: continue
                                    for q in range(mr):
                                        for r in range(R):
                                            if row0 + r < n: lanes[lane, q, r] += A[r0 + q, kk] * B[row0 + r, kk]
                            k0 += 256 * U
                red[warp] = lanes.sum(axis=0).reshape(-1)
            for i in range(SETS * MR * R):
                st, q, r = i // (MR * R), (i // R) % MR, i % R
                col = bx * RB + st * R + r
                if q < mr and col < n:
                    D[r0 + q, col] = sum(red[st * KW + j, q * R + r] for j in range(KW))
    return D

def check_rowdot():
    for m, n, k, W, KW, R, MR, U, vec in [(1, 40, 4096, 8, 8, 1, 1, 2, True), (1, 9, 1001, 4, 2, 2, 1, 1, False),
                                          (3, 13, 600, 8, 4, 2, 2, 2, True), (2, 5, 37, 4, 4, 4, 2, 1, False),
                                          (7, 6, 520, 4, 1, 4, 4, 4, True)]:
        A = rng.standard_normal((m, k)); B = rng.standard_normal((n, k))
        err = np.abs(rowdot(A, B, W, KW, R, MR, U, vec) - A @ B.T).max()
        assert err < 1e-9, ((m, n, k, W, KW, R, MR, U, vec), err)
    print("ok   rowdot: k slices, row sets, passes and tails match numpy")

if __name__ == "__main__":
    check_mma()
    check_banks_and_raster()
    check_gemv_nt()
    check_gemv_nn()
    check_rowdot()
