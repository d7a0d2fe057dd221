/* peers.h: peer figures, what another library reached at a shape (cuBLAS,
** PyTorch, torch.compile), so that `sweep --peers FILE` and `show --peers
** FILE` can print each winner's ratio to its peer. FILE holds the JSON
** lines bench/peers_*.py print, one per case:
**
**     {"case": "gemm_nt:bf16:4096x14336x4096", "cublas_tflops": 688.9, "compile_tflops": 696.3}
**
** Every "<name>_tflops" and "<name>_gbps" number on a line is a figure of
** peer <name>; other keys are ignored. A winner is compared with the first
** line, in file order, whose op and dtype are the winner's and whose shape
** lies in the winner's bucket, on the same metric the winner is judged by.
** Calls return 0, or -1 with one line in err naming the file and line. The
** file must be a regular file of at most PEERS_MAXBYTES. */
#ifndef PEERS_H
#define PEERS_H
#include "names.h"

#define PEERS_MAXDIMS MAXDIMS
#define PEERS_MAXBYTES ((size_t)16 << 20)

typedef struct peer {
    char op[32], dtype[16], name[24];
    int ndims;
    long long shape[PEERS_MAXDIMS];
    int tflops;             /* 1: the value is TFLOP/s, 0: GB/s */
    double value;
} peer;

typedef struct peers {
    int n;
    peer *p;
} peers;

int peers_load(const char *path, peers *out, char *err, int errcap);
void peers_free(peers *ps);

/* The first figure of op/dtype on the metric (tflops 1 or 0) whose shape lies
** within [lo, hi) in every dim; lo and hi are "4096,4096,4096" as the
** registry stores bucket edges. NULL if none. */
const peer *peers_find(const peers *ps, const char *op, const char *dtype, const char *lo, const char *hi, int tflops);

#endif
