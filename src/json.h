/* json.h: a small JSON reader for what aitune itself stores (launch plans).
** The text it reads comes from registries, which are untrusted: it bounds
** nesting depth and input size, rejects what RFC 8259 rejects (trailing
** commas, control characters in strings, leading zeros), and never
** aborts. It depends on nothing but libc, so libaitune can carry it.
**
**     json *doc;
**     if (json_parse(text, &doc, err, sizeof err)) ...    // err: one line
**     const json *v = json_get(doc, "grid");                // NULL if absent
**     json_free(doc);
*/
#ifndef JSON_H
#define JSON_H
#include <stddef.h>

#define JSON_MAXDEPTH 16
#define JSON_MAXLEN (1 << 20)   /* bytes of input */

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

typedef struct json {
    int type;               /* enum json_type */
    double num;             /* JSON_NUM */
    int is_int;             /* JSON_NUM written without '.', 'e' or a fraction */
    long long i;            /* JSON_NUM with is_int: its exact value */
    int b;                  /* JSON_BOOL */
    char *str;              /* JSON_STR: UTF-8, NUL-terminated (a "\u0000" is refused) */
    int n;                  /* JSON_ARR, JSON_OBJ: entries */
    char **keys;            /* JSON_OBJ: n keys */
    struct json *items;     /* JSON_ARR, JSON_OBJ: n values */
} json;

/* Parse text (NUL-terminated). Returns 0, or -1 with a message in err;
** on -1 *out is NULL. Out of memory is an error too. */
int json_parse(const char *text, json **out, char *err, int errcap);
void json_free(json *v);

/* The value under key in object o; NULL if o is not an object or lacks it.
** A duplicate key makes json_parse fail, so the answer is unambiguous. */
const json *json_get(const json *o, const char *key);

#endif
