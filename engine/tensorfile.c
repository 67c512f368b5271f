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

/* A new tensor of f (its data allocated, uninitialized), or NULL when out of memory or
 * at the limits of tf_add. */
static tf_tensor *add_tensor(tf_file *f, const char *name, enum tf_dtype dtype, int ndim,
                             const uint32_t *dims)
{
    size_t len = strlen(name);
    if (ndim < 0 || ndim > 4 || len == 0 || len > TF_NAME_MAX || f->count >= TF_MAX_TENSORS)
        return NULL;
    if (f->count == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        tf_tensor *t = realloc(f->t, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
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
        return NULL;
    }
    f->count++;
    return t;
}

int tf_add(tf_file *f, const char *name, enum tf_dtype dtype, int ndim, const uint32_t *dims,
           const void *data)
{
    tf_tensor *t = add_tensor(f, name, dtype, ndim, dims);
    if (!t)
        return -1;
    memcpy(t->data, data, t->count * dtype_size(dtype));
    return 0;
}

uint64_t tf_max_bytes(int ntensors, uint64_t data_bytes)
{
    /* the magic, version and count; per tensor its name length, name, dtype, ndim, 4 dims */
    return 12 + (uint64_t)ntensors * (4 + TF_NAME_MAX + 4 + 4 + 16) + data_bytes;
}

static int put_u32(FILE *fp, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    return fwrite(b, 1, 4, fp) == 4 ? 0 : -1;
}

int tf_write(const tf_file *f, const char *path)
{
    return tf_write_vetted(f, path, NULL, NULL);
}

int tf_write_vetted(const tf_file *f, const char *path, tf_vet_fn vet, void *ud)
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
    if (vet) {
        /* the complete temporary file, by its path: PATH's folder and its name there */
        const char *slash = strrchr(path, '/');
        size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
        char *tmp_path = malloc(dlen + strlen(a.tmp) + 1);
        if (!tmp_path) {
            af_abort(&a);
            errno = ENOMEM;
            return -1;
        }
        memcpy(tmp_path, path, dlen);
        strcpy(tmp_path + dlen, a.tmp);
        int refused = vet(ud, tmp_path);
        free(tmp_path);
        if (refused) {
            af_abort(&a);
            errno = ECANCELED;
            return -1;
        }
    }
    return af_commit(&a, 0);
}

/* The bytes of a file read in order, never past the size fstat gave. */
typedef struct {
    FILE *fp;
    uint64_t pos, size;
} reader;

static int read_bytes(reader *r, void *buf, size_t n)
{
    if (n > r->size - r->pos || fread(buf, 1, n, r->fp) != n)
        return -1;
    r->pos += n;
    return 0;
}

static int read_u32(reader *r, uint32_t *v)
{
    unsigned char b[4];
    if (read_bytes(r, b, 4))
        return -1;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

/* name (len bytes) as a message shows it: printable ASCII as is, other bytes as \xNN,
 * cut with "..." where out (at least 8 bytes) is full. */
static void shown_name(const char *name, size_t len, char *out, size_t outlen)
{
    size_t o = 0, i = 0;
    for (; i < len && o + 8 < outlen; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c >= 32 && c < 127 && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
    }
    if (i < len)
        o += (size_t)snprintf(out + o, outlen - o, "...");
    out[o] = '\0';
}

/* The tensors of an open file of size bytes; NULL with what is wrong in why. */
static tf_file *parse(reader *r, char *why, size_t whylen)
{
    static const size_t min_tensor = 4 + 1 + 4 + 4; /* a one-byte name and no dims */
    tf_file *f = tf_new();
    if (!f) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    char magic[4];
    uint32_t version, count;
    if (r->size < 12) {
        snprintf(why, whylen, "truncated header: %ju bytes, and a tensor file starts with 12",
                 (uintmax_t)r->size);
        goto fail;
    }
    if (read_bytes(r, magic, 4) || read_u32(r, &version) || read_u32(r, &count)) {
        snprintf(why, whylen, "cannot read its header (changed while read?)");
        goto fail;
    }
    if (memcmp(magic, "RPTF", 4) != 0) {
        snprintf(why, whylen, "not a tensor file (no RPTF magic)");
        goto fail;
    }
    if (version != 1) {
        snprintf(why, whylen, "version %u (this reader knows version 1)", version);
        goto fail;
    }
    if (count > TF_MAX_TENSORS || count > (r->size - 12) / min_tensor) {
        snprintf(why, whylen, "claims %u tensor%s, more than %s", count, count == 1 ? "" : "s",
                 count > TF_MAX_TENSORS ? "a tensor file holds (4096)"
                                        : "its bytes can hold");
        goto fail;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = r->pos;
        uint32_t len, dtype, ndim, dims[4];
        char name[TF_NAME_MAX + 1], shown[80];
        if (read_u32(r, &len)) {
            snprintf(why, whylen, "truncated: tensor %u of %u starts at byte %ju, past the end",
                     i + 1, count, (uintmax_t)at);
            goto fail;
        }
        if (len == 0 || len > TF_NAME_MAX) {
            snprintf(why, whylen, "tensor %u (at byte %ju): name length %u, not 1..%d", i + 1,
                     (uintmax_t)at, len, TF_NAME_MAX);
            goto fail;
        }
        if (read_bytes(r, name, len)) {
            snprintf(why, whylen, "truncated: the name of tensor %u (at byte %ju) runs past the "
                     "end",
                     i + 1, (uintmax_t)at);
            goto fail;
        }
        name[len] = '\0';
        shown_name(name, len, shown, sizeof shown);
        if (strlen(name) != len) {
            snprintf(why, whylen, "tensor %u (at byte %ju): a NUL byte in its name '%s'", i + 1,
                     (uintmax_t)at, shown);
            goto fail;
        }
        for (int k = 0; k < f->count; k++)
            if (strcmp(f->t[k].name, name) == 0) {
                snprintf(why, whylen, "tensor '%s' appears twice (tensors %d and %u): refused, "
                         "since readers could take either", shown, k + 1, i + 1);
                goto fail;
            }
        if (read_u32(r, &dtype) || read_u32(r, &ndim)) {
            snprintf(why, whylen, "truncated: the header of tensor '%s' (at byte %ju) runs "
                     "past the end", shown, (uintmax_t)at);
            goto fail;
        }
        if (dtype > TF_F64) {
            snprintf(why, whylen, "tensor '%s' (at byte %ju): unknown dtype %u", shown,
                     (uintmax_t)at, dtype);
            goto fail;
        }
        if (ndim > 4) {
            snprintf(why, whylen, "tensor '%s' (at byte %ju): %u dims, more than 4", shown,
                     (uintmax_t)at, ndim);
            goto fail;
        }
        /* elements and bytes in 64 bits, checked before each product */
        uint64_t n = 1, size = dtype_size((enum tf_dtype)dtype), left;
        int over = 0;
        for (uint32_t d = 0; d < ndim; d++) {
            if (read_u32(r, &dims[d])) {
                snprintf(why, whylen, "truncated: the dims of tensor '%s' (at byte %ju) run past "
                         "the end", shown, (uintmax_t)at);
                goto fail;
            }
            if (dims[d] != 0 && n > UINT64_MAX / dims[d])
                over = 1;
            else
                n *= dims[d];
        }
        left = r->size - r->pos;
        if (over || n > left / size || n > SIZE_MAX / size - 1) {
            snprintf(why, whylen, "tensor '%s' (at byte %ju) claims more data than the %ju "
                     "bytes left in the file", shown, (uintmax_t)at, (uintmax_t)left);
            goto fail;
        }
        tf_tensor *t = add_tensor(f, name, (enum tf_dtype)dtype, (int)ndim, dims);
        if (!t) {
            snprintf(why, whylen, "out of memory for tensor '%s' (%ju bytes)", shown,
                     (uintmax_t)(n * size));
            goto fail;
        }
        if (read_bytes(r, t->data, (size_t)(n * size))) {
            snprintf(why, whylen, "truncated: the data of tensor '%s' (at byte %ju) runs past "
                     "the end (changed while read?)", shown, (uintmax_t)at);
            goto fail;
        }
    }
    if (r->pos != r->size || fgetc(r->fp) != EOF) {
        uintmax_t extra = r->size > r->pos ? r->size - r->pos : 1;
        snprintf(why, whylen, "%ju trailing byte%s after the last tensor (a tensor file ends "
                 "with it)", extra, extra == 1 ? "" : "s");
        goto fail;
    }
    return f;
fail:
    tf_free(f);
    return NULL;
}

tf_file *tf_read(const char *path, uint64_t max_bytes, char *err, size_t errlen)
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
    /* the size is checked before a byte is read: a sparse file of any apparent size costs
     * nothing */
    if ((uint64_t)st.st_size > max_bytes) {
        snprintf(err, errlen, "%s: %ju bytes, more than the %ju this file may have", path,
                 (uintmax_t)st.st_size, (uintmax_t)max_bytes);
        close(fd);
        return NULL;
    }
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    reader r = {fp, 0, (uint64_t)st.st_size};
    char why[1024];
    tf_file *f = parse(&r, why, sizeof why);
    fclose(fp);
    if (!f)
        snprintf(err, errlen, "%s: %s", path, why);
    return f;
}

const tf_tensor *tf_find(const tf_file *f, const char *name)
{
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->t[i].name, name) == 0)
            return &f->t[i];
    return NULL;
}
