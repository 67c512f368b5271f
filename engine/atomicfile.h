/* Atomic file writes: the one writer of every file the suite puts in a records tree, the
 * paper or the build (the Lua host's sys.atomic, lua/lsys.c, and tf_write).
 *
 * af_open creates PATH.tmp.<pid>.<16 hex digits from the system's random source> in
 * PATH's folder with O_CREAT|O_EXCL|O_NOFOLLOW: an existing name (a planted symbolic link
 * above all) is never opened, only skipped for another name, and the random part makes
 * the name unguessable.  The folder itself is opened O_NOFOLLOW|O_DIRECTORY and the
 * temporary file is created and renamed relative to that descriptor, so a folder that is
 * a symbolic link (or is swapped for one while writing) is refused.  af_commit renames
 * the complete file over PATH (rename replaces a link at PATH itself, never its target);
 * af_abort removes the temporary file.  The random name is no result: result bytes never
 * depend on it.
 */
#ifndef REPRO_ATOMICFILE_H
#define REPRO_ATOMICFILE_H

#include <stddef.h>

typedef struct {
    int dirfd;  /* PATH's folder, or -1 */
    int fd;     /* the temporary file, or -1 once closed */
    char *name; /* PATH's last component */
    char *tmp;  /* the temporary file's name in the folder */
    long pid;   /* the process that created it: only it removes it (a forked child never) */
} af_file;

/* Opens a new temporary file for path; 0, or -1 with errno set (ELOOP: the folder is a
 * symbolic link; EEXIST: no free temporary name after many tries) and nothing held. */
int af_open(af_file *a, const char *path);
/* Writes all n bytes (retrying short writes); 0, or -1 with errno set. */
int af_write(af_file *a, const void *p, size_t n);
/* fsync when sync, close (unless the caller closed a->fd and set it to -1), rename over
 * PATH; 0, or -1 with errno set and the temporary file removed.  Frees a either way. */
int af_commit(af_file *a, int sync);
/* Closes and removes the temporary file; frees a.  Safe to call twice. */
void af_abort(af_file *a);

#endif
