/* cli.c: see cli.h. */
#define _GNU_SOURCE
#include "cli.h"
#include "registry.h"
#include "tmpl.h"
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_vusage_error(const char *cmd, const char *usage, const char *fmt, va_list ap)
{
    strbuf msg = STRBUF_INIT, line = STRBUF_INIT;
    sb_vprintf(&msg, fmt, ap);
    sb_printable(&line, sb_str(&msg));     /* arguments may hold newlines and escapes */
    fprintf(stderr, "aitune: error: %s\nusage: %s\n(see `aitune help %s`)\n", sb_str(&line), usage, cmd);
    sb_free(&msg);
    sb_free(&line);
    return EXIT_USAGE;
}

int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_vusage_error(cmd, usage, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_count(const char *cmd, const char *usage, const char *name, const char *s, long long lo, long long hi,
              long long *out)
{
    if (parse_size(s, strlen(s), lo, hi, out))
        return cli_usage_error(cmd, usage, "%s '%s' must be an integer in [%lld, %lld]", name, s, lo, hi);
    return 0;
}

int cli_duration(const char *cmd, const char *usage, const char *name, const char *s, const char *like, double *out)
{
    if ((*out = parse_duration(s)) <= 0) return cli_usage_error(cmd, usage, "%s '%s' is not a duration like %s", name, s, like);
    return 0;
}

int cli_shape(const char *cmd, const char *usage, const char *s, long long *shape, int *n)
{
    *n = 0;
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",x");
        if (*n == CLI_MAXDIMS) return cli_usage_error(cmd, usage, "--shape '%s' has more than %d dims", s, CLI_MAXDIMS);
        int rc = parse_size(p, len, 1, CLI_SHAPE_MAX, &shape[*n]);
        if (rc == -2) return cli_usage_error(cmd, usage, "--shape '%s': sizes must be >= 1 and at most 2^62", s);
        if (rc) return cli_usage_error(cmd, usage, "--shape '%s' is not like 4096 or 4096,1024 (sizes are integers >= 1)", s);
        (*n)++;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

void cli_command_line(int argc, char **argv, strbuf *out)
{
    sb_puts(out, "aitune");
    for (int i = 0; i < argc; i++) sb_printf(out, " %s", argv[i]);
}

const char *cli_shown(const char *s)
{
    static strbuf slot[16];
    static unsigned next;
    strbuf *sb = &slot[next++ % 16];
    sb_reset(sb);
    sb_printable(sb, s ? s : "");
    return sb_str(sb);
}

/* getopt_long's val for opts[i]: long options are numbered past every char. */
enum { LONG_BASE = 256, HELP = 255 };

int cli_parse(const char *cmd, const char *usage, const char *summary, int argc, char **argv, opt *opts,
              const char **pos, int maxpos, int *npos)
{
    int n = 0;
    while (opts[n].name) n++;
    struct option *lo = xcalloc((size_t)n + 2, sizeof *lo);
    char *shorts = xmalloc((size_t)n * 2 + 4);
    int nl = 0, ns = 0;
    shorts[ns++] = ':';     /* a missing value answers ':', not a message */
    for (int i = 0; i < n; i++) {
        const char *s = opts[i].name;
        if (s[0] == '-' && s[1] == '-') {
            lo[nl++] = (struct option){ s + 2, opts[i].takes_value ? required_argument : no_argument, NULL, LONG_BASE + i };
        } else {
            shorts[ns++] = s[1];
            if (opts[i].takes_value) shorts[ns++] = ':';
        }
    }
    lo[nl++] = (struct option){ "help", no_argument, NULL, HELP };
    shorts[ns++] = 'h';
    shorts[ns] = 0;
    /* getopt_long reorders what it parses: work on a copy, so the caller's
    ** argv still reads as typed (sweeps record their command line). */
    char **av = xmalloc(sizeof *av * ((size_t)argc + 1));
    memcpy(av, argv, sizeof *av * (size_t)argc);
    av[argc] = NULL;
    argv = av;
    int rc = 0, c, li;
    opterr = 0;
    optind = 0;             /* GNU: start over (main may parse more than once in tests) */
    while (!rc && (c = getopt_long(argc, argv, shorts, lo, &li)) != -1) {
        const char *arg = argv[optind - 1];
        if (c == HELP || c == 'h') {
            printf("usage: %s\n\n%s\n", usage, summary);
            exit(EXIT_OK);
        }
        if (c == '?') {
            if (optopt >= LONG_BASE) /* a flag given a value: --quiet=1 */
                rc = cli_usage_error(cmd, usage, "option '%s' takes no value", opts[optopt - LONG_BASE].name);
            else if (optopt)
                rc = cli_usage_error(cmd, usage, "unknown option '-%c'", optopt);
            else
                rc = cli_usage_error(cmd, usage, "unknown option '%.*s'", (int)strcspn(arg, "="), arg);
            break;
        }
        if (c == ':') {
            const char *name = arg;
            for (int i = 0; i < n; i++)
                if ((optopt >= LONG_BASE && i == optopt - LONG_BASE) ||
                    (optopt && optopt < LONG_BASE && opts[i].name[1] == optopt && opts[i].name[0] == '-' && !opts[i].name[2]))
                    name = opts[i].name;
            rc = cli_usage_error(cmd, usage, "option '%s' needs a value", name);
            break;
        }
        int i = -1;
        if (c >= LONG_BASE) i = c - LONG_BASE;
        else
            for (int k = 0; k < n; k++)
                if (opts[k].name[0] == '-' && opts[k].name[1] == c && !opts[k].name[2]) i = k;
        if (i < 0) { rc = cli_usage_error(cmd, usage, "unknown option '-%c'", c); break; }
        opts[i].set = 1;
        if (opts[i].takes_value) opts[i].value = optarg;
    }
    *npos = 0;
    for (int i = optind; i < argc && !rc; i++) {
        if (*npos == maxpos) rc = cli_usage_error(cmd, usage, "unexpected argument '%s'", argv[i]);
        else pos[(*npos)++] = argv[i];
    }
    free(lo);
    free(shorts);
    free(av);
    return rc;
}

/* dir/templates exists: dir holds what aitune needs. */
static int has_templates(const char *dir)
{
    char *t = xstrfmt("%s/templates", dir);
    int ok = file_exists(t);
    free(t);
    return ok;
}

const char *cli_root(void)
{
    static char root[PATH_MAX];
    if (root[0]) return root;
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = len > 0 ? (exe[len] = 0, strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = 0;         /* exe is now the binary's folder */
        snprintf(root, sizeof root, "%.4000s/../share/aitune", exe);
        char *real = realpath(root, NULL);
        if (real && has_templates(real)) {
            snprintf(root, sizeof root, "%s", real);
            free(real);
            return root;
        }
        free(real);
    }
    const char *env = getenv("AITUNE_HOME");
    if (env && *env) {
        snprintf(root, sizeof root, "%s", env);
        return root;
    }
    /* The build tree: build/aitune, or the folder itself. */
    for (int up = 0; slash && up < 2; up++) {
        if (has_templates(exe)) {
            snprintf(root, sizeof root, "%s", exe);
            return root;
        }
        char *s = strrchr(exe, '/');
        if (!s || s == exe) break;
        *s = 0;
    }
    snprintf(root, sizeof root, "%s", AITUNE_SOURCE_DIR);
    return root;
}

const char *cli_db_path(const char *flag)
{
    static char path[PATH_MAX];
    if (flag) return flag;
    const char *env = getenv("AITUNE_DB");
    if (env && *env) return env;
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg) snprintf(path, sizeof path, "%s/aitune/registry.db", xdg);
    else snprintf(path, sizeof path, "%s/.local/share/aitune/registry.db", home && *home ? home : ".");
    return path;
}

int cli_check_op(const char *root, const char *db, const char *op, const char *dtype)
{
    tmpl *T = tmpl_open(root);
    int nd = 0, ndt = 0, op_t = 0, dt_t = 0, op_r = 0, dt_r = 0;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    op_t = !tmpl_op_info(T, op, &nd, dims, &ndt, dts, 32);
    for (int i = 0; op_t && dtype && i < ndt; i++) dt_t |= !strcmp(dts[i], dtype);
    if (!dtype) dt_t = 1;
    if (op_t && dt_t) { tmpl_close(T); return 0; }
    reg *r = NULL;
    if (file_exists(db) && !reg_open(db, 1, &r)) reg_knows(r, op, dtype ? dtype : "", &op_r, &dt_r);
    reg_close(r);
    int rc = 0;
    strbuf have = STRBUF_INIT;
    if (!op_t && !op_r) {
        char **ops = NULL;
        int nops = 0;
        if (!tmpl_ops(T, &ops, &nops))
            for (int i = 0; i < nops; i++) sb_printf(&have, "%s%s", i ? ", " : "", ops[i]);
        for (int i = 0; i < nops; i++) free(ops[i]);
        free(ops);
        rc = error("unknown op '%s' (ops: %s)", cli_shown(op), have.len ? sb_str(&have) : "none");
    } else if (!dt_t && !dt_r) {
        for (int i = 0; op_t && i < ndt; i++) sb_printf(&have, "%s%s", i ? ", " : "", dts[i]);
        if (have.len) rc = error("unknown dtype '%s' for op '%s' (it has %s)", cli_shown(dtype), cli_shown(op), sb_str(&have));
        else rc = error("unknown dtype '%s' for op '%s'", cli_shown(dtype), cli_shown(op));
    }
    sb_free(&have);
    tmpl_close(T);
    return rc ? EXIT_USAGE : 0;
}
