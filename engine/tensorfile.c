#include "tensorfile.h"

#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t dtype_size(enum tf_dtype d)
{
    return d == TF_F64 ? 8 : 4;
}

tf_file *tf_new(void)
{
    return calloc(1, sizeof(tf_file));
}

void tf_free(tf_file *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->count; i++) {
        free(f->t[i].name);
        free(f->t[i].data);
    }
    free(f->t);
    free(f);
}

int tf_add(tf_file *f, const char *name, enum tf_dtype dtype, int ndim, const uint32_t *dims,
           const void *data)
{
    if (ndim < 0 || ndim > 4)
        return -1;
    if (f->count == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        tf_tensor *t = realloc(f->t, (size_t)cap * sizeof *t);
        if (!t)
            return -1;
        f->t = t;
        f->cap = cap;
    }
    tf_tensor *t = &f->t[f->count];
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->ndim = ndim;
    t->count = 1;
    for (int i = 0; i < ndim; i++) {
        t->dims[i] = dims[i];
        t->count *= dims[i];
    }
    t->name = strdup(name);
    t->data = malloc(t->count * dtype_size(dtype) + 1);
    if (!t->name || !t->data) {
        free(t->name);
        free(t->data);
        return -1;
    }
    memcpy(t->data, data, t->count * dtype_size(dtype));
    f->count++;
    return 0;
}

static int put_u32(FILE *fp, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    return fwrite(b, 1, 4, fp) == 4 ? 0 : -1;
}

static int get_u32(FILE *fp, uint32_t *v)
{
    unsigned char b[4];
    if (fread(b, 1, 4, fp) != 4)
        return -1;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

int tf_write(const tf_file *f, const char *path)
{
    af_file a;
    if (af_open(&a, path) != 0)
        return -1;
    FILE *fp = fdopen(a.fd, "wb");
    if (!fp) {
        int e = errno;
        af_abort(&a);
        errno = e;
        return -1;
    }
    a.fd = -1; /* fp owns the descriptor now */
    int bad = fwrite("RPTF", 1, 4, fp) != 4 || put_u32(fp, 1) || put_u32(fp, (uint32_t)f->count);
    for (int i = 0; i < f->count && !bad; i++) {
        const tf_tensor *t = &f->t[i];
        uint32_t len = (uint32_t)strlen(t->name);
        bad = put_u32(fp, len) || fwrite(t->name, 1, len, fp) != len ||
              put_u32(fp, (uint32_t)t->dtype) || put_u32(fp, (uint32_t)t->ndim);
        for (int d = 0; d < t->ndim && !bad; d++)
            bad = put_u32(fp, t->dims[d]);
        if (!bad)
            bad = fwrite(t->data, dtype_size(t->dtype), t->count, fp) != t->count;
    }
    if (fflush(fp) != 0 || fsync(fileno(fp)) != 0)
        bad = 1;
    int e = errno;
    if (fclose(fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        af_abort(&a);
        errno = e;
        return -1;
    }
    return af_commit(&a, 0);
}

tf_file *tf_read(const char *path, char *err, size_t errlen)
{
    /* A file of a records tree: never through a link, never a FIFO or a device (opened
     * non-blocking, so a FIFO cannot hang the open). */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path,
                 errno == ELOOP ? "a symbolic link (not followed)" : strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    uintmax_t left = (uintmax_t)st.st_size;
    tf_file *f = tf_new();
    char magic[4];
    uint32_t version, count;
    const char *why = NULL;
    if (!f || fread(magic, 1, 4, fp) != 4 || memcmp(magic, "RPTF", 4) != 0)
        why = "not a tensor file (bad magic)";
    else if (get_u32(fp, &version) || version != 1 || get_u32(fp, &count))
        why = "unsupported version";
    for (uint32_t i = 0; !why && i < count; i++) {
        uint32_t len, dtype, ndim, dims[4];
        char name[256];
        if (get_u32(fp, &len) || len >= sizeof name || fread(name, 1, len, fp) != len) {
            why = "truncated or corrupt record name";
            break;
        }
        name[len] = '\0';
        if (get_u32(fp, &dtype) || dtype > TF_F64 || get_u32(fp, &ndim) || ndim > 4) {
            why = "corrupt record header";
            break;
        }
        size_t total = 1;
        for (uint32_t d = 0; d < ndim && !why; d++) {
            if (get_u32(fp, &dims[d]))
                why = "truncated dims";
            total *= dims[d];
        }
        if (why || total > ((size_t)1 << 32)) {
            why = why ? why : "tensor too large";
            break;
        }
        size_t sz = dtype_size((enum tf_dtype)dtype);
        if ((uintmax_t)total * sz > left) { /* a header claiming more than the file holds */
            why = "truncated data";
            break;
        }
        left -= (uintmax_t)total * sz;
        void *buf = malloc(total * sz + 1);
        if (!buf || fread(buf, sz, total, fp) != total) {
            free(buf);
            why = "truncated data";
            break;
        }
        int rc = tf_add(f, name, (enum tf_dtype)dtype, (int)ndim, dims, buf);
        free(buf);
        if (rc)
            why = "out of memory";
    }
    fclose(fp);
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        tf_free(f);
        return NULL;
    }
    return f;
}

const tf_tensor *tf_find(const tf_file *f, const char *name)
{
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->t[i].name, name) == 0)
            return &f->t[i];
    return NULL;
}
