/* emit.h: `aitune emit` writes a standalone .cu file that builds with plain
** nvcc and needs nothing from aitune at run time.
**
** With a shape: the kernel the registry chose for it (exact bucket, nearest,
** or the template default), its source as compiled and measured, and an
** extern "C" launch function aitune_<op>_<dtype>(args..., [ws,] stream)
** generated from the winner's launch plan (plan.h): parameters, tensor maps
** (encoded through cudaGetDriverEntryPoint, so nothing links libcuda),
** shared-memory opt-in and cluster launch. Without a shape: every tuned
** bucket of the op and dtype (and the default, when the registry has one),
** and a host dispatcher that picks the kernel for a shape exactly as
** aitune_lookup does, with aitune_<op>_<dtype>_workspace_bytes(dims...).
**
** Everything taken from the registry is validated before it reaches the
** file: plans through plan_check (identifiers, expressions by the one
** grammar), bucket edges as integers, and text for comments reduced to
** printable ASCII without backslashes. The kernel source itself is code
** the registry carries: see the README's threat model. */
#ifndef EMIT_H
#define EMIT_H

typedef struct emit_opts {
    const char *db_path, *root;
    const char *op, *arch, *dtype;
    const long long *shape;     /* NULL: the whole op */
    int ndims;
    const char *out_path;       /* "-": stdout; otherwise a regular file */
} emit_opts;

/* Returns the process exit code. */
int emit_run(const emit_opts *o);

#endif
