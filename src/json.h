/* json.h: aitune's JSON, read and written. The reader is for what aitune
** itself stores (launch plans). The text it reads comes from registries,
** which are untrusted: it bounds nesting depth and input size, rejects what
** RFC 8259 rejects (trailing commas, control characters in strings, leading
** zeros), and never aborts. The writer (jw) is the one every JSON aitune
** writes goes through. Both depend on nothing but libc, so libaitune can
** carry them.
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

/* Whether s is one well-formed JSON value (RFC 8259, strings well-formed
** UTF-8, nesting at most 64 deep), surrounding white space allowed. */
int json_valid(const char *s);

/* The writer: values appended to a buffer of its own (malloc'd), commas
** placed between members and items, every string escaped (UTF-8 kept,
** control bytes and bytes that are not UTF-8 as \u00XX), a number that is
** not finite written as null. An object's members are a jw_key and then a
** value.
**
**     jw w = { 0 };
**     jw_obj(&w); jw_key(&w, "op"); jw_str(&w, op); jw_key(&w, "us"); jw_num(&w, us, 3); jw_end(&w);
**     puts(jw_text(&w));                                   // {"op":"axpy","us":12.500}
**     jw_free(&w);
**
** w.oom is set when memory ran out or the nesting went past JSON_MAXDEPTH
** (or jw_end had nothing to close): the text is then incomplete. */
typedef struct jw {
    char *buf;
    size_t len, cap;
    int oom;
    int depth;                          /* open objects and arrays */
    char open[JSON_MAXDEPTH + 1];       /* '{' or '[' at each level */
    int count[JSON_MAXDEPTH + 1];       /* values written at each level */
    int after_key;
    char pending[16];                   /* jw_space's, not written yet */
} jw;
void jw_obj(jw *w);                     /* { */
void jw_arr(jw *w);                     /* [ */
void jw_end(jw *w);                     /* } or ], closing the innermost */
void jw_key(jw *w, const char *key);
void jw_str(jw *w, const char *s);      /* NULL: null */
void jw_num(jw *w, double v, int decimals);
void jw_real(jw *w, double v);         /* every digit it has (%.17g) */
void jw_int(jw *w, long long v);
void jw_bool(jw *w, int b);
void jw_null(jw *w);
/* Text that should be JSON already (a config, a shape): copied when it is
** one well-formed value (json_valid), else written as a string; NULL: null. */
void jw_raw(jw *w, const char *json);
/* White space for output people read ("\n  "), written after the comma
** the next value brings (or before the bracket jw_end writes). */
void jw_space(jw *w, const char *ws);
const char *jw_text(jw *w);             /* "" when nothing was written */
void jw_free(jw *w);

#endif
