/* cli.h: what the command files share (main.c and the commands that live in
** their own files: list.c, why.c, export.c, gc.c, replay.c, ...): option
** parsing with getopt_long conventions, option values checked, usage errors,
** and where the templates and the registry are.
**
** Option names are spelled as typed: "--db" (long) or "-j" (short). Long
** options take --name VALUE or --name=VALUE, short ones -j 4 or -j4; options
** may follow positional arguments; "--" ends the options; -h and --help print
** the command's usage and exit 0. */
#ifndef CLI_H
#define CLI_H
#include "names.h"
#include "util.h"

typedef struct opt {
    const char *name;       /* "--db" or "-j" */
    int takes_value;
    const char *value;      /* the last one given */
    int set;
} opt;

/* Parse argv[1..argc) (argv[0] is the command's name) against opts (ended by
** a NULL name); positional arguments go to pos, at most maxpos of them.
** Returns 0, or EXIT_USAGE after one error line and the usage on stderr. */
int cli_parse(const char *cmd, const char *usage, const char *summary, int argc, char **argv, opt *opts,
              const char **pos, int maxpos, int *npos);

/* "aitune: error: <msg>" (control bytes escaped), then the command's usage
** and where its help is; returns EXIT_USAGE. The one writer of usage errors. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cli_vusage_error(const char *cmd, const char *usage, const char *fmt, va_list ap);

/* An option's value checked (name: the option, s: its value), a usage
** error naming both when it is malformed: cli_count, an integer in [lo, hi]
** written as plain decimal digits; cli_duration, a duration like 90s, 30m
** or 2h (parse_duration), above 0 (like: the example the message gives);
** cli_shape, --shape's 1 to CLI_MAXDIMS sizes in [1, 2^62], separated by
** ',' or 'x' ("50000000", "4096,1024"). 0, or EXIT_USAGE. */
#define CLI_MAXDIMS MAXDIMS
#define CLI_SHAPE_MAX (1LL << 62)
int cli_count(const char *cmd, const char *usage, const char *name, const char *s, long long lo, long long hi,
              long long *out);
int cli_duration(const char *cmd, const char *usage, const char *name, const char *s, const char *like, double *out);
int cli_shape(const char *cmd, const char *usage, const char *s, long long *shape, int *n);

/* The command as typed, "aitune CMD ARGS...", appended to out: what a run
** records (argv[0] is the command's name). */
void cli_command_line(int argc, char **argv, strbuf *out);

/* Text from a registry, a file or the command line, fit for one terminal
** line: control bytes escaped (sb_printable). Up to 16 at a time; each stays
** valid until 16 more calls. */
const char *cli_shown(const char *s);

/* The folder holding templates/ and search/: next to an installed binary
** (BINDIR/../share/aitune), else $AITUNE_HOME, else the build tree the binary
** sits in (build/aitune -> .), else the source tree it was built from. */
const char *cli_root(void);

/* The registry: flag (--db), else $AITUNE_DB, else
** $XDG_DATA_HOME/aitune/registry.db (~/.local/share/aitune/registry.db). */
const char *cli_db_path(const char *flag);

/* Whether op and dtype name something: the templates know them, or the
** registry at db has rows for them (a registry tuned elsewhere). If not,
** one error line names the unknown one and what there is; returns
** EXIT_USAGE then, else 0. dtype NULL: the op alone. */
int cli_check_op(const char *root, const char *db, const char *op, const char *dtype);

/* Commands that live in their own files: their run function, summary and
** usage line, for main.c's command table. */
#define CLI_COMMAND(name) \
    int cmd_##name(int argc, char **argv); \
    extern const char name##_summary[], name##_usage[]
CLI_COMMAND(list);
CLI_COMMAND(why);
CLI_COMMAND(export);
CLI_COMMAND(gc);
CLI_COMMAND(import);
CLI_COMMAND(report);
CLI_COMMAND(status);
CLI_COMMAND(merge);
CLI_COMMAND(retune);
CLI_COMMAND(check);
CLI_COMMAND(window);
CLI_COMMAND(scan);
CLI_COMMAND(pin);

#endif
