#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { AF_TRIES = 64 };

/* 64 unpredictable bits; a failing random source falls back to the clock and a counter
 * (the name is then guessable, but still created exclusively, so still never followed). */
static uint64_t temp_bits(void)
{
    static uint64_t counter;
    uint64_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v)
        return v;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    counter++;
    return ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (counter * 0x9e3779b97f4a7c15u);
}

static void af_clear(af_file *a)
{
    a->dirfd = -1;
    a->fd = -1;
    a->name = NULL;
    a->tmp = NULL;
    a->pid = (long)getpid();
}

int af_open(af_file *a, const char *path)
{
    af_clear(a);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (*base == '\0') {
        errno = EISDIR;
        return -1;
    }
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    char *dir = malloc(dlen + 2);
    a->name = malloc(strlen(base) + 1);
    a->tmp = malloc(strlen(base) + 64);
    if (!dir || !a->name || !a->tmp) {
        free(dir);
        af_abort(a);
        errno = ENOMEM;
        return -1;
    }
    if (!slash)
        strcpy(dir, ".");
    else if (dlen == 0)
        strcpy(dir, "/");
    else {
        memcpy(dir, path, dlen);
        dir[dlen] = '\0';
    }
    strcpy(a->name, base);
    a->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (a->dirfd < 0) {
        int e = errno;
        struct stat st;
        /* Linux says ENOTDIR for O_DIRECTORY|O_NOFOLLOW on a link: say what it is */
        if (e == ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
            e = ELOOP;
        free(dir);
        af_abort(a);
        errno = e;
        return -1;
    }
    free(dir);
    for (int i = 0; i < AF_TRIES; i++) {
        snprintf(a->tmp, strlen(base) + 64, "%s.tmp.%ld.%016llx", base, (long)getpid(),
                 (unsigned long long)temp_bits());
        a->fd = openat(a->dirfd, a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       0666);
        if (a->fd >= 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    free(a->tmp);
    a->tmp = NULL; /* nothing of ours to remove */
    af_abort(a);
    errno = e;
    return -1;
}

int af_write(af_file *a, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t got = write(a->fd, c, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0) {
            errno = EIO;
            return -1;
        }
        c += got;
        n -= (size_t)got;
    }
    return 0;
}

int af_commit(af_file *a, int sync)
{
    int bad = 0, e = 0;
    if (a->fd >= 0) {
        if (sync && fsync(a->fd) != 0) {
            bad = 1;
            e = errno;
        }
        if (close(a->fd) != 0 && !bad) {
            bad = 1;
            e = errno;
        }
        a->fd = -1;
    }
    if (!bad && renameat(a->dirfd, a->tmp, a->dirfd, a->name) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        af_abort(a);
        errno = e;
        return -1;
    }
    free(a->tmp);
    a->tmp = NULL;
    af_abort(a);
    return 0;
}

void af_abort(af_file *a)
{
    if (a->fd >= 0)
        close(a->fd);
    if (a->tmp && a->dirfd >= 0 && a->pid == (long)getpid())
        unlinkat(a->dirfd, a->tmp, 0);
    if (a->dirfd >= 0)
        close(a->dirfd);
    free(a->name);
    free(a->tmp);
    af_clear(a);
}
