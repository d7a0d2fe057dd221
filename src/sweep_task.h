/* sweep_task.h: the task a sweep measures: a spec's (op, dtype, bucket) as
** the op's resolved arguments at the bucket's representative shape (tmpl.h:
** op_task), the same task at other shapes of the bucket (a part's, a
** probe's), and the task message the worker sets its buffers up from. */
#ifndef SWEEP_TASK_H
#define SWEEP_TASK_H
#include "sweep_cand.h"

/* Spec task st's bucket b in the op's dim order: ob the bucket (edges,
** sizes and key), shape its representative sizes. -1 with tmpl_errmsg. */
int task_bucket(sw *S, const spec_task *st, const bucket *b, long long *shape, bucket *ob);
/* Task t at another shape, timed the same way. -1 with tmpl_errmsg. */
int task_at(sw *S, const op_task *t, const long long *shape, op_task *out);
/* Every task of the spec against the templates, before any work starts:
** -1 with the error said (spec file and line). */
int task_check_spec(sw *S);
/* Set the worker up for t: its reference compiled, its buffers filled and
** the reference run. -1: said. */
int task_send(sw *S, const op_task *t);
/* A shape on a line: "4096x1024". */
void task_shape_text(const long long *shape, int ndims, char *out, size_t cap);

#endif
