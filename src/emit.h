/* emit.h: `aitune emit` writes a standalone .cu file: the kernel the registry
** chose for a shape (its exact source, as compiled and measured, with the
** config in a comment) and an extern "C" host launch function. It compiles
** with plain `nvcc -c` and needs nothing from aitune at run time. */
#ifndef EMIT_H
#define EMIT_H

typedef struct emit_opts {
    const char *db_path, *root;
    const char *op, *arch, *dtype;
    const long long *shape;
    int ndims;
    const char *out_path;       /* "-": stdout */
} emit_opts;

/* Returns the process exit code. */
int emit_run(const emit_opts *o);

#endif
