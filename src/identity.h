/* identity.h: what a measurement depends on, in two parts. The hardware
** identity (GPU name, compute capability, SMs, memory, L2) says which
** winners belong to a GPU; the toolchain identity (driver, CUDA driver API,
** NVRTC, aitune version, the template sources) says whether they are still
** fresh on it. Both are built from content, never from a registry's local
** ids, so they compare equal across registries (merge) and machines. */
#ifndef IDENTITY_H
#define IDENTITY_H
#include "device.h"

/* The hardware identity, the same text db/migrations/010-identity.sql writes
** into devices.hw. */
void identity_hw(const device *d, char *out, int cap);

/* The toolchain of a device row: devices.toolchain's text. */
void identity_toolchain(const device *d, char *out, int cap);

/* A hash (16 hex digits) of the sources that produce op's kernels: every
** file of templates/<op>/ and templates/lib/ under root, by name and
** content, in name order. Returns 0, or -1 when the op's folder does not
** open (out is then ""). */
int identity_sources(const char *root, const char *op, char out[17]);

/* Why a winner is stale on dev (NULL: no GPU at hand, so only NVRTC, the
** aitune version and the template sources under root are compared; nvrtc is
** the NVRTC in use): "; "-separated reasons into out ("" when fresh).
** Returns how many. */
struct reg_winner_identity;
int identity_stale(const struct reg_winner_identity *w, const device *dev, const char *nvrtc, const char *root,
                   char *out, int cap);

/* Winners' identities kept past reg_winner_identities' callback (retune,
** check and window read them once, then ask per bucket). */
typedef struct winner_stamp {
    char op[32], arch[16], dtype[16], bucket[96], hw[256], driver[32], nvrtc[16], version[32];
    char *sources;
    int cuda_driver, exhaustive;
} winner_stamp;
typedef struct winner_stamps {
    winner_stamp *w;
    int n, cap;
} winner_stamps;
/* A reg_winner_identities callback: appends a copy to the stamps at ctx. */
int winner_stamps_add(const struct reg_winner_identity *w, void *ctx);
void winner_stamps_free(winner_stamps *s);
/* The bucket's stamps, its parts' when it is split (spec.h: bucket_split):
** *any says whether it has a winner at all; returns the index of one
** measured on hardware hw, or -1 (a split bucket's parts are written by one
** run, so any of them stands for all). */
int winner_stamps_find(const winner_stamps *s, const char *op, const char *arch, const char *dtype,
                       const char *bucket, const char *hw, int *any);
/* identity_stale for a stamp, with why discarded: whether it is stale on dev. */
int winner_stamp_stale(const winner_stamp *s, const device *dev, const char *root);

#endif
