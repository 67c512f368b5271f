/* The engine's tensor writer and reader at the edge of a records tree:
 *   - a symbolic link planted at the writer's old temporary name (PATH.tmp.<pid>) is never
 *     written through: the file it points to keeps its bytes, PATH gets the tensors
 *   - the temporary name is unguessable (PATH.tmp.<pid>.<16 hex>) and no temporary file
 *     stays behind
 *   - a folder that is a symbolic link is refused (ELOOP), nothing written through it
 *   - the reader refuses a link, a FIFO (without hanging) and a header that claims more
 *     data than the file holds (without allocating it)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../engine/atomicfile.h"
#include "../../engine/tensorfile.h"
#include "check.h"

static char dir[] = "/tmp/test_tensorfile.XXXXXX";

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
    tf_file *back = tf_read(target, err, sizeof err);
    CHECK(back && back->count == 1 && back->t[0].count == 3 &&
              ((float *)back->t[0].data)[1] == -2.0f,
          "the tensors read back: %s", back ? "" : err);
    tf_free(back);
    unlink(link);
    CHECK(temporaries() == 0, "no temporary file left (%d)", temporaries());

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
    CHECK(symlink(target, p) == 0 && tf_read(p, err, sizeof err) == NULL &&
              strstr(err, "symbolic link") != NULL,
          "a link is refused: %s", err);
    snprintf(p, sizeof p, "%s/fifo.rptf", dir);
    CHECK(mkfifo(p, 0600) == 0, "mkfifo");
    alarm(20); /* a hang fails the test instead of blocking it */
    CHECK(tf_read(p, err, sizeof err) == NULL && strstr(err, "not a regular file") != NULL,
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
    CHECK(tf_read(p, err, sizeof err) == NULL && strstr(err, "truncated data") != NULL,
          "a header claiming more than the file holds: %s", err);

    tf_free(f);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("test_tensorfile");
}
