/* dbguard.h: what a registry file may hold, and how much work a query on it
** may do. A registry is untrusted input (a merged shard, a file someone
** sent): SQLite runs whatever its schema says, so a view named `winners`
** that recurses for ever, a trigger that rewrites what a sweep stores, or a
** virtual table would turn a read into a hang or a write into someone
** else's. Both the tool (registry.c) and libaitune (rt.c) open a registry
** through these three steps; they depend on SQLite alone.
**
**   char *name = dbguard_name(path);          // "./file:x" for "file:x"
**   sqlite3_open_v2(name, &db, flags, NULL);  // never with SQLITE_OPEN_URI
**   dbguard_bound(db, &budget, DBGUARD_TOOL_STEPS);
**   if (dbguard_check(db, ref, why, sizeof why)) ...refuse the file...
**   ... every statement from then on stops past the bound ...
**
** Nothing here prints or allocates beyond the names it returns (dbguard_name,
** dbguard_immutable_uri: a registry in a read-only folder). */
#ifndef DBGUARD_H
#define DBGUARD_H
#include <stddef.h>

typedef struct sqlite3 sqlite3;

/* The file name to hand SQLite for path, as a plain file: SQLite built with
** URI names on (Debian's is) reads "file:x?mode=memory" as a URI, which
** would open a memory database, or another file than path names. A
** relative path gets "./" before it, which no URI starts with; an absolute
** one is returned as it is. malloc'd (NULL out of memory). */
char *dbguard_name(const char *path);

/* The file at path as a read-only immutable database's URI ("file:" + its
** absolute path, percent-encoded, + "?immutable=1"), for a registry in a
** folder where its -shm file cannot be made: SQLite then reads the file as
** it is, which is safe there, since no writer can be active in such a
** folder. Open it with SQLITE_OPEN_URI. malloc'd; NULL with errno set
** (the path does not resolve, or ENOMEM). */
char *dbguard_immutable_uri(const char *path);

/* Whether db's main schema holds only what a registry may: the tables of
** db/schema.sql (meta, devices, runs, measurements, winners, defaults,
** cubins, misses, vendor_times, scans) and SQLite's own (sqlite_sequence, sqlite_stat1,
** sqlite_stat4), each an ordinary table without generated columns; indexes
** on those; and the schema's triggers, each one as the schema writes it.
** Refused: views, virtual tables, any other table or trigger. ref, when
** not NULL, is a database holding the reference schema (db/schema.sql,
** applied): a trigger must have the same name and text as one of ref's.
** With ref NULL (libaitune, which never writes where a trigger could fire)
** a trigger must have one of the schema's trigger names
** (dbguard_trigger_names) and be on that trigger's table. 0, or -1 with one line in why naming the object
** and what it is. */
int dbguard_check(sqlite3 *db, sqlite3 *ref, char *why, size_t cap);
/* The schema's triggers, NULL-terminated (a unit test checks the list
** against db/schema.sql). */
extern const char *const dbguard_trigger_names[];

/* A bound on the work of each statement: SQLite's virtual machine steps,
** counted by a progress handler every DBGUARD_TICK steps since the
** statement began running (a trace callback arms the budget then, so the
** owner need not). Past the bound the statement stops with
** SQLITE_INTERRUPT and hit is set, so the caller can say what happened
** instead of hanging. The steps of a statement that returns many rows add
** up; those spent in the caller between rows do not. b must outlive db. */
#define DBGUARD_TICK 1000
/* The tool's bound: far above the most a registry of a million measurements
** needs for one statement (about 10^8 steps), a few seconds to reach. */
#define DBGUARD_TOOL_STEPS (1LL << 32)
/* libaitune's: a set of 10k winners takes about 10^6. */
#define DBGUARD_RT_STEPS (1LL << 30)
typedef struct dbguard_budget {
    long long ticks, left;
    int hit;
} dbguard_budget;
void dbguard_bound(sqlite3 *db, dbguard_budget *b, long long steps);

#endif
