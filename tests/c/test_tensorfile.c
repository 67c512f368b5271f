/* The engine's tensor writer and reader at the edge of a records tree:
 *   - a symbolic link planted at the writer's old temporary name (PATH.tmp.<pid>) is never
 *     written through: the file it points to keeps its bytes, PATH gets the tensors
 *   - the temporary name is unguessable (PATH.tmp.<pid>.<16 hex>) and no temporary file
 *     stays behind
 *   - a folder that is a symbolic link is refused (ELOOP), nothing written through it
 *   - the reader refuses a link, a FIFO (without hanging) and a header that claims more
 *     data than the file holds (without allocating it)
 *   - the reader is strict, each refusal naming the file and what is wrong: a name met
 *     twice (readers taking the first and the last would see other weights), dims whose
 *     product wraps 64 bits (a 32-byte file), a file above the caller's cap (a sparse file
 *     of 1 GiB refused before a byte is read), trailing bytes, a truncated header, a name
 *     that is empty or holds a NUL, more tensors than the file can hold
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../engine/atomicfile.h"
#include "../../engine/tensorfile.h"
#include "check.h"

static char dir[] = "/tmp/test_tensorfile.XXXXXX";

/* A vet that records the size of the file it is shown and refuses it when *ud says so. */
static long vetted_size;
static int vet(void *ud, const char *tmp_path)
{
    struct stat st;
    vetted_size = stat(tmp_path, &st) == 0 ? (long)st.st_size : -1;
    return *(int *)ud;
}

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int text_is(const char *path, const char *want)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(want) && memcmp(buf, want, n) == 0;
}

/* Entries of dir whose name holds ".tmp." */
static int temporaries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp."))
            n++;
    closedir(d);
    return n;
}

static void put_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(bytes, 1, n, f);
        fclose(f);
    }
}

/* Appends v (little endian) to b at *n. */
static void u32_at(unsigned char *b, size_t *n, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[(*n)++] = (unsigned char)(v >> (8 * i));
}

/* A file's header, then one f32 tensor of 1 dim named name (len bytes) holding k floats
 * of zero; returns the bytes written into b. */
static size_t one_tensor(unsigned char *b, uint32_t count, const char *name, uint32_t len,
                         uint32_t k)
{
    size_t n = 0;
    memcpy(b, "RPTF", 4);
    n = 4;
    u32_at(b, &n, 1);
    u32_at(b, &n, count);
    u32_at(b, &n, len);
    memcpy(b + n, name, len);
    n += len;
    u32_at(b, &n, TF_F32);
    u32_at(b, &n, 1);
    u32_at(b, &n, k);
    memset(b + n, 0, 4 * (size_t)k);
    return n + 4 * (size_t)k;
}

/* Whether tf_read refuses path with a message naming it and holding want. */
static int refused(const char *path, uint64_t max_bytes, const char *want, char *err,
                   size_t errlen)
{
    tf_file *f = tf_read(path, max_bytes, err, errlen);
    tf_free(f);
    return f == NULL && strstr(err, path) == err && strstr(err, want) != NULL;
}

static tf_file *sample(void)
{
    tf_file *f = tf_new();
    float x[3] = {1.5f, -2.0f, 0.25f};
    uint32_t three = 3;
    if (f && tf_add(f, "x", TF_F32, 1, &three, x) != 0) {
        tf_free(f);
        return NULL;
    }
    return f;
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char outside[512], target[512], link[600], linkdir[512], real[512], p[600];
    path_of(outside, sizeof outside, "outside.txt");
    path_of(target, sizeof target, "model.rptf");
    put_text(outside, "keep");
    /* the old writer's name for this process, planted as a link to a file outside */
    snprintf(link, sizeof link, "%s.tmp.%ld", target, (long)getpid());
    CHECK(symlink(outside, link) == 0, "symlink: %s", strerror(errno));

    tf_file *f = sample();
    CHECK(f != NULL, "sample tensors");
    CHECK(f && tf_write(f, target) == 0, "tf_write beside a planted link: %s", strerror(errno));
    CHECK(text_is(outside, "keep"), "the link's target keeps its bytes (not written through)");
    char err[256];
    tf_file *back = tf_read(target, TF_ANY_SIZE, err, sizeof err);
    CHECK(back && back->count == 1 && back->t[0].count == 3 &&
              ((float *)back->t[0].data)[1] == -2.0f,
          "the tensors read back: %s", back ? "" : err);
    tf_free(back);
    unlink(link);
    CHECK(temporaries() == 0, "no temporary file left (%d)", temporaries());

    /* tf_write_vetted shows the complete file before the rename; a refusal renames nothing */
    struct stat before;
    CHECK(stat(target, &before) == 0, "the written file");
    int refuse = 1;
    CHECK(f && tf_write_vetted(f, target, vet, &refuse) != 0 && errno == ECANCELED,
          "a refused write fails (errno %d)", errno);
    CHECK(vetted_size == (long)before.st_size, "vet saw the complete file (%ld bytes)",
          vetted_size);
    CHECK(temporaries() == 0, "a refused write leaves no temporary file");
    refuse = 0;
    vetted_size = -1;
    CHECK(f && tf_write_vetted(f, target, vet, &refuse) == 0 && vetted_size == before.st_size,
          "an accepted write is renamed into place after vet saw it");

    /* the temporary name: <name>.tmp.<pid>.<16 hex>, a new one each time, created once */
    af_file a, b;
    CHECK(af_open(&a, target) == 0 && af_open(&b, target) == 0, "two writers at once");
    char want[64];
    snprintf(want, sizeof want, "model.rptf.tmp.%ld.", (long)getpid());
    CHECK(strncmp(a.tmp, want, strlen(want)) == 0 && strlen(a.tmp) == strlen(want) + 16,
          "temporary name %s", a.tmp);
    CHECK(strcmp(a.tmp, b.tmp) != 0, "two writers, two names");
    CHECK(af_write(&a, "AB", 2) == 0 && af_commit(&a, 1) == 0, "commit");
    af_abort(&b);
    af_abort(&b); /* twice is harmless */
    CHECK(text_is(target, "AB"), "the committed bytes");
    CHECK(temporaries() == 0, "abort removes its temporary file");

    /* a folder that is a link: refused, nothing written in the folder it points to */
    path_of(real, sizeof real, "real");
    path_of(linkdir, sizeof linkdir, "linkdir");
    CHECK(mkdir(real, 0700) == 0 && symlink(real, linkdir) == 0, "linked folder");
    snprintf(p, sizeof p, "%s/model.rptf", linkdir);
    errno = 0;
    CHECK(f && tf_write(f, p) != 0 && errno == ELOOP, "a linked folder is refused (errno %d)",
          errno);
    snprintf(p, sizeof p, "%s/model.rptf", real);
    CHECK(access(p, F_OK) != 0, "nothing written through the linked folder");

    /* the reader: a link, a FIFO, a header claiming 4 GiB of data in a tiny file */
    snprintf(p, sizeof p, "%s/link.rptf", dir);
    CHECK(symlink(target, p) == 0 && tf_read(p, TF_ANY_SIZE, err, sizeof err) == NULL &&
              strstr(err, "symbolic link") != NULL,
          "a link is refused: %s", err);
    snprintf(p, sizeof p, "%s/fifo.rptf", dir);
    CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    alarm(20); /* a hang fails the test instead of blocking it */
    CHECK(tf_read(p, TF_ANY_SIZE, err, sizeof err) == NULL &&
              strstr(err, "not a regular file") != NULL,
          "a FIFO is refused without hanging: %s", err);
    alarm(0);
    snprintf(p, sizeof p, "%s/big.rptf", dir);
    FILE *fp = fopen(p, "wb");
    if (fp) {
        /* RPTF v1, 1 tensor "x", f32, 1 dim of 2^30 elements, and 4 bytes of data */
        const unsigned char h[] = {'R', 'P', 'T', 'F', 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
                                   'x', 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0};
        fwrite(h, 1, sizeof h, fp);
        fclose(fp);
    }
    CHECK(refused(p, TF_ANY_SIZE, "claims more data than the 5 bytes left", err, sizeof err),
          "a header claiming more than the file holds: %s", err);

    /* the same name twice: the first and the last "x" hold other values */
    unsigned char raw[256];
    size_t n = one_tensor(raw, 2, "x", 1, 1);
    size_t n2 = one_tensor(raw + n, 0, "x", 1, 1) - 12;
    memmove(raw + n, raw + n + 12, n2);
    raw[n + n2 - 1] = 0x3f;
    snprintf(p, sizeof p, "%s/dup.rptf", dir);
    put_bytes(p, raw, n + n2);
    CHECK(refused(p, TF_ANY_SIZE, "tensor 'x' appears twice (tensors 1 and 2)", err, sizeof err),
          "a name met twice: %s", err);

    /* 32 bytes: an empty name and 2 dims of 2^32 - 1; 33 bytes: the same named "w", whose
     * byte count wraps 64 bits */
    for (int named = 0; named <= 1; named++) {
        size_t m = 4;
        memcpy(raw, "RPTF", 4);
        u32_at(raw, &m, 1);
        u32_at(raw, &m, 1);
        u32_at(raw, &m, (uint32_t)named);
        if (named)
            raw[m++] = 'w';
        u32_at(raw, &m, TF_F32);
        u32_at(raw, &m, 2);
        u32_at(raw, &m, UINT32_MAX);
        u32_at(raw, &m, UINT32_MAX);
        snprintf(p, sizeof p, "%s/wrap%d.rptf", dir, named);
        put_bytes(p, raw, m);
        CHECK(m == (size_t)(32 + named) &&
                  refused(p, TF_ANY_SIZE,
                          named ? "tensor 'w' (at byte 12) claims more data than the 0 bytes"
                                : "tensor 1 (at byte 12): name length 0",
                          err, sizeof err),
              "a %zu-byte file of 2^64 - 2^33 + 1 elements: %s", m, err);
    }

    /* a sparse file of 1 GiB: refused above the caller's cap before a byte is read, and
     * without a cap its first tensor is read and the rest are trailing bytes, never read */
    n = one_tensor(raw, 1, "x", 1, 3);
    snprintf(p, sizeof p, "%s/sparse.rptf", dir);
    put_bytes(p, raw, n);
    CHECK(truncate(p, (off_t)1 << 30) == 0, "truncate: %s", strerror(errno));
    clock_t c0 = clock();
    CHECK(refused(p, 1 << 20, "1073741824 bytes, more than the 1048576 this file may have", err,
                  sizeof err),
          "a sparse file of 1 GiB above the cap: %s", err);
    CHECK(refused(p, TF_ANY_SIZE, "1073741783 trailing bytes after the last tensor", err,
                  sizeof err),
          "a sparse file of 1 GiB without a cap: %s", err);
    CHECK((double)(clock() - c0) / CLOCKS_PER_SEC < 1.0, "neither read the file (%.2f s CPU)",
          (double)(clock() - c0) / CLOCKS_PER_SEC);

    /* trailing bytes after a whole file */
    n = one_tensor(raw, 1, "x", 1, 2);
    memcpy(raw + n, "junk", 4);
    snprintf(p, sizeof p, "%s/trailing.rptf", dir);
    put_bytes(p, raw, n + 4);
    CHECK(refused(p, TF_ANY_SIZE, "4 trailing bytes after the last tensor", err, sizeof err),
          "trailing bytes: %s", err);
    put_bytes(p, raw, n);
    tf_file *whole = tf_read(p, TF_ANY_SIZE, err, sizeof err);
    CHECK(whole && whole->count == 1, "without them, the file reads: %s", whole ? "" : err);
    tf_free(whole);

    /* headers cut short, bad names, counts */
    snprintf(p, sizeof p, "%s/short.rptf", dir);
    put_bytes(p, raw, 10);
    CHECK(refused(p, TF_ANY_SIZE, "truncated header: 10 bytes", err, sizeof err),
          "a truncated file header: %s", err);
    n = one_tensor(raw, 1, "xyzw", 4, 1);
    put_bytes(p, raw, 26);
    CHECK(refused(p, TF_ANY_SIZE, "truncated: the header of tensor 'xyzw' (at byte 12)", err,
                  sizeof err),
          "a truncated tensor header: %s", err);
    put_bytes(p, raw, 30);
    CHECK(refused(p, TF_ANY_SIZE, "truncated: the dims of tensor 'xyzw'", err, sizeof err),
          "truncated dims: %s", err);
    put_bytes(p, raw, n - 1);
    CHECK(refused(p, TF_ANY_SIZE, "tensor 'xyzw' (at byte 12) claims more data than the 3 bytes",
                  err, sizeof err),
          "truncated data: %s", err);
    n = one_tensor(raw, 1, "x\0y", 3, 1);
    put_bytes(p, raw, n);
    CHECK(refused(p, TF_ANY_SIZE, "a NUL byte in its name 'x\\x00y'", err, sizeof err),
          "a NUL in a name: %s", err);
    n = one_tensor(raw, 1, "", 0, 1);
    put_bytes(p, raw, n);
    CHECK(refused(p, TF_ANY_SIZE, "name length 0", err, sizeof err), "an empty name: %s", err);
    n = one_tensor(raw, 1000, "x", 1, 1);
    put_bytes(p, raw, n);
    CHECK(refused(p, TF_ANY_SIZE, "claims 1000 tensors, more than its bytes can hold", err,
                  sizeof err),
          "a count the file cannot hold: %s", err);
    n = one_tensor(raw, 1, "x", 1, 1);
    raw[4] = 2;
    put_bytes(p, raw, n);
    CHECK(refused(p, TF_ANY_SIZE, "version 2", err, sizeof err), "another version: %s", err);
    raw[4] = 1;
    raw[0] = 'X';
    put_bytes(p, raw, n);
    CHECK(refused(p, TF_ANY_SIZE, "no RPTF magic", err, sizeof err), "another magic: %s", err);
    tf_file *e = tf_new();
    uint32_t one = 1;
    float z = 0;
    CHECK(e && tf_add(e, "", TF_F32, 1, &one, &z) != 0 && e->count == 0,
          "the writer refuses an empty name");
    tf_free(e);

    tf_free(f);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("test_tensorfile");
}
