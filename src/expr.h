/* expr.h: launch-geometry expressions. Templates give grid and block sizes as
** integer expressions over the op's dims, in the subset C and Lua share:
** integers, names, + - *, parentheses and cdiv(a,b), min(a,b), max(a,b).
** The sweep evaluates them here; `aitune emit` pastes them into C. */
#ifndef EXPR_H
#define EXPR_H

/* Evaluate s with names[i] = values[i]. Returns 0, or -1 with a message in
** err ("unknown name 'm' at column 7"). */
int expr_eval(const char *s, int n, const char *const *names, const long long *values,
              long long *out, char *err, int errcap);

/* Check s against the grammar and the names without a value: what a launch
** plan read from an untrusted registry must pass before anyone evaluates it
** or pastes it into C. Returns 0, or -1 with a message in err. Evaluation
** also refuses overflow and nesting deeper than 64. */
int expr_check(const char *s, int n, const char *const *names, char *err, int errcap);

#endif
