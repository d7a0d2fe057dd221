/* proto.c: see proto.h. */
#define _GNU_SOURCE
#include "proto.h"
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fill c->in until it holds at least `want` bytes, or a full header when
** want is 0. */
static int fill(conn *c, size_t want, double deadline)
{
    for (;;) {
        if (want ? c->in.len >= want : (c->in.buf && strstr(c->in.buf, "\n\n") != NULL)) return 0;
        if (deadline >= 0) {
            double left = deadline - now_s();
            if (left <= 0) return -2;
            struct pollfd p = { c->fd, POLLIN, 0 };
            int rc = poll(&p, 1, (int)(left * 1000) + 1);
            if (rc < 0 && errno == EINTR) continue;
            if (rc == 0) return -2;
        }
        char chunk[65536];
        ssize_t n = read(c->fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        sb_add(&c->in, chunk, (size_t)n);
    }
}

int msg_read(conn *c, msg *m, double timeout_s)
{
    memset(m, 0, sizeof *m);
    double deadline = timeout_s < 0 ? -1 : now_s() + timeout_s;
    int rc = fill(c, 0, deadline);
    if (rc) return rc;
    char *end = strstr(c->in.buf, "\n\n");
    size_t hlen = (size_t)(end - c->in.buf) + 2;
    sb_add(&m->raw, c->in.buf, hlen - 1);
    /* Split the header into key=value lines, in place in m->raw. */
    char *save = NULL;
    for (char *line = strtok_r(m->raw.buf, "\n", &save); line && m->n < MSG_MAXKEYS;
         line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        m->key[m->n] = line;
        m->val[m->n++] = eq + 1;
    }
    long long blob = msg_int(m, "blob", 0);
    if (blob > 0) {
        rc = fill(c, hlen + (size_t)blob, deadline);
        if (rc) { msg_free(m); return rc; }
        m->blob_len = (size_t)blob;
        m->blob = xmalloc(m->blob_len);
        memcpy(m->blob, c->in.buf + hlen, m->blob_len);
        hlen += m->blob_len;
    }
    memmove(c->in.buf, c->in.buf + hlen, c->in.len - hlen);
    c->in.len -= hlen;
    c->in.buf[c->in.len] = 0;
    return 0;
}

void msg_free(msg *m)
{
    sb_free(&m->raw);
    free(m->blob);
    memset(m, 0, sizeof *m);
}

const char *msg_get(const msg *m, const char *key)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->key[i], key)) return m->val[i];
    return NULL;
}

long long msg_int(const msg *m, const char *key, long long dflt)
{
    const char *v = msg_get(m, key);
    return v ? strtoll(v, NULL, 10) : dflt;
}

double msg_num(const msg *m, const char *key, double dflt)
{
    const char *v = msg_get(m, key);
    return v ? strtod(v, NULL) : dflt;
}

void msg_kv(strbuf *sb, const char *key, const char *fmt, ...)
{
    sb_printf(sb, "%s=", key);
    size_t start = sb->len;
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
    for (size_t i = start; i < sb->len; i++)
        if (sb->buf[i] == '\n' || sb->buf[i] == '\r') sb->buf[i] = ' ';
    sb_puts(sb, "\n");
}

static int write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int msg_send(int fd, const strbuf *header, const void *blob, size_t blob_len)
{
    strbuf sb = STRBUF_INIT;
    sb_add(&sb, sb_str(header), header->len);
    if (blob_len) sb_printf(&sb, "blob=%zu\n", blob_len);
    sb_puts(&sb, "\n");
    int rc = write_all(fd, sb.buf, sb.len);
    if (!rc && blob_len) rc = write_all(fd, blob, blob_len);
    sb_free(&sb);
    return rc;
}
