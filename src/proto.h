/* proto.h: the messages between aitune and its GPU worker process. A message
** is "key=value" lines ending with an empty line, then, if the header has
** blob=N, N bytes of payload (a cubin). Text, so that a test can play the
** worker (or the parent) with a few lines of code. Values are one line. */
#ifndef PROTO_H
#define PROTO_H
#include "util.h"

#define MSG_MAXKEYS 96

typedef struct msg {
    int n;
    char *key[MSG_MAXKEYS], *val[MSG_MAXKEYS];
    unsigned char *blob;
    size_t blob_len;
    strbuf raw;             /* owns the keys and values */
} msg;

/* A connection: a file descriptor with its read buffer. */
typedef struct conn {
    int fd;
    strbuf in;
} conn;

/* Read one message. timeout_s < 0: wait forever. Returns 0, -1 at end of
** file or error, -2 on timeout. */
int msg_read(conn *c, msg *m, double timeout_s);
void msg_free(msg *m);
const char *msg_get(const msg *m, const char *key);   /* NULL if absent */
long long msg_int(const msg *m, const char *key, long long dflt);
double msg_num(const msg *m, const char *key, double dflt);

/* Building a message: add lines to sb, then send it with an optional blob. */
void msg_kv(strbuf *sb, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int msg_send(int fd, const strbuf *header, const void *blob, size_t blob_len);

#endif
