/* align.h: the alignment class of a size, a part of a bucket's identity
** beside its log2 edges (spec.h: bucket_key).
**
** A config tuned at a size of one class may not run at a size of a lower
** class: a TMA tensor map needs 16-byte row strides (8 bf16 elements),
** vector loads need rows that start aligned. So sizes of one log2 range but
** of different classes are tuned into buckets of their own, and the runtime
** (rt.c, and the dispatcher emit.c writes) hands a shape a winner tuned at a
** class its sizes meet before one tuned at a class they do not.
**
** The class of a size v >= 1 is the largest power of two, up to 8, that
** divides it: 1, 2, 4 or 8 (8: a multiple of 8, "aligned"). Above 8 nothing
** changes for any kernel aitune knows: 8 elements are 16 bytes of bf16.
**
** One owner for the rule: spec.c (bucket keys, split parts), sweep_probe.c (the
** sizes a hold race measures), rt.c (libaitune) and emit.c read it here.
** libaitune links align.o, which needs only json.o. */
#ifndef ALIGN_H
#define ALIGN_H

#define ALIGN_FULL 8            /* the highest class */

/* The class of v (>= 1): 1, 2, 4 or 8. */
static inline int align_class(long long v)
{
    return v % ALIGN_FULL == 0 ? ALIGN_FULL : (int)(v & -v);
}

/* The class a bucket key names (spec.h: bucket_key) for size v of the log2
** bucket [lo, 2 lo): v's class when it is below lo's (a power of two, its
** own class, up to 8), else 0: none. From lo = 8 up that is every class but
** 8 (4097: 1, 4100: 4, 4096 and 4104: none); in the buckets below 8, which
** hold no multiple of 8, the sizes as aligned as the lower edge name none
** either ([4, 8): 4 none, 6 2, 5 1), so a log2 spec's keys from 2^0 up
** stay what they were before classes were keyed. */
static inline int align_key_class(long long v, long long lo)
{
    int c = align_class(v), top = lo >= ALIGN_FULL ? ALIGN_FULL : (int)lo;
    return c < top ? c : 0;
}

/* log2 of the class of v: 0, 1, 2 or 3. What the runtime stores and
** compares: one step per halving of the alignment. */
static inline int align_log2(long long v)
{
    int c = align_class(v);
    return c == 1 ? 0 : c == 2 ? 1 : c == 4 ? 2 : 3;
}

/* How a winner tuned at sizes of log2 classes have[0, n) suits a shape of
** sizes shape[0, n), as one number, larger is better: whether it fits
** (every size of the shape is of the winner's class or a higher one: a
** config tuned at 4097 runs at 4096, one tuned at 4096 may not run at
** 4097), then how close the classes are (the sum over dims of their
** distance in log2 steps; 0: tuned at the shape's own classes). Winners all
** tuned at aligned sizes score alike. libaitune (rt.c) and `why --shape`
** rank with it; the dispatcher emit.c writes spells it out in the file. */
static inline long long align_score(const unsigned char *have, const long long *shape, int n)
{
    int fit = 1;
    long long gap = 0;   /* at most 3 per dim */
    for (int i = 0; i < n; i++) {
        int q = align_log2(shape[i]);
        fit &= have[i] <= q;
        gap += have[i] > q ? have[i] - q : q - have[i];
    }
    return (fit ? 1LL << 40 : 0) - gap;
}

/* How a winner's bucket suits a shape, as one number, larger is better:
** align_score's fit first (a config runs at its own class and higher ones,
** so fitting is what a winner must do), then how many dims its bucket
** names exactly (nexact; names.h: an exact dim is one size, a spec's
** `exact: true`): a config tuned at the shape's very n and k beats one
** tuned at another size of their log2 buckets, as a weight's n and k are
** what a model fixes; then align_score's closeness of classes. Buckets
** that name no dim exactly (every registry written before exact dims)
** score as align_score does. libaitune (rt.c) ranks with it; the
** dispatcher emit.c writes spells it out in the file. */
static inline long long bucket_score(const unsigned char *have, int nexact, const long long *shape, int n)
{
    return align_score(have, shape, n) + ((long long)nexact << 16);   /* above any gap (3 per dim) */
}

/* The smallest size >= v (>= 1) of class cls (1, 2, 4 or 8): a multiple of
** 8 for 8, else an odd multiple of cls. */
static inline long long align_up(long long v, int cls)
{
    long long step = cls == ALIGN_FULL ? ALIGN_FULL : 2LL * cls, want = cls == ALIGN_FULL ? 0 : cls;
    long long r = (want - v % step) % step;   /* in (-step, step) */
    return v + (r < 0 ? r + step : r);
}

/* The log2 class (align_log2) of each dim's size in shape, a JSON object of
** dim -> size (winners.shape), into lg[0, ndims): dims names them, comma
** separated, in order ("m,n,k"). The text is untrusted (a registry): 0, or
** -1 with one line in err saying what is wrong (not JSON, not an object, a
** dim missing, a size that is not an integer >= 1). */
int align_shape(const char *shape, const char *dims, int ndims, unsigned char *lg, char *err, int errcap);

#endif
