/* Named-tensor files: checkpoints, kept models and the PyTorch parity fixtures.
 *
 * Format (little endian), read identically by tests/reference/tensorfile.py:
 *   "RPTF"  u32 version (1)  u32 count (at most TF_MAX_TENSORS)
 *   count records:  u32 name_len (1..TF_NAME_MAX), name bytes (no NUL, each name once),
 *                   u32 dtype (0 f32, 1 i32, 2 f64), u32 ndim (0..4), u32 dims[ndim],
 *                   data (product(dims) elements)
 *   and nothing after the last record.
 * Writing goes through the atomic writer (engine/atomicfile.h): a temporary file created
 * exclusively beside PATH, never through a link, renamed over PATH on success, so a reader
 * never sees a half-written file and a planted link is never written through.
 */
#ifndef REPRO_TENSORFILE_H
#define REPRO_TENSORFILE_H

#include <stddef.h>
#include <stdint.h>

#define TF_NAME_MAX 255
#define TF_MAX_TENSORS 4096
/* tf_read's max_bytes for a file with no cap but its own size */
#define TF_ANY_SIZE UINT64_MAX

enum tf_dtype { TF_F32 = 0, TF_I32 = 1, TF_F64 = 2 };

typedef struct {
    char *name;
    enum tf_dtype dtype;
    int ndim;
    uint32_t dims[4];
    size_t count; /* product of dims */
    void *data;
} tf_tensor;

typedef struct {
    int count, cap;
    tf_tensor *t;
} tf_file;

tf_file *tf_new(void);
void tf_free(tf_file *f);
/* Adds a copy of data; returns 0, or -1 when out of memory, when name is empty or longer
 * than TF_NAME_MAX, or when f already holds TF_MAX_TENSORS tensors. */
int tf_add(tf_file *f, const char *name, enum tf_dtype dtype, int ndim, const uint32_t *dims,
           const void *data);
/* Atomic write; returns 0, or -1 with errno set. */
int tf_write(const tf_file *f, const char *path);
/* Called with the complete temporary file's path before it is renamed over PATH: the
 * caller notes what it is about to publish.  Non-zero refuses it (nothing is renamed). */
typedef int (*tf_vet_fn)(void *ud, const char *tmp_path);
/* tf_write, with vet (or NULL) called before the rename; -1 with errno ECANCELED when vet
 * refused. */
int tf_write_vetted(const tf_file *f, const char *path, tf_vet_fn vet, void *ud);
/* Reads a whole file, strictly: a file of a records tree is untrusted input.  Refused,
 * before anything is allocated for it: a link, anything but a regular file, a file larger
 * than max_bytes (TF_ANY_SIZE: no cap but its own size), a header that runs past the end
 * of the file, a bad magic, version, name, dtype or ndim, a name met twice, a tensor whose
 * data (overflow-safe) is more than the bytes left in the file; and after the last tensor,
 * any trailing byte.  NULL on error with a message in err naming path and what is wrong. */
tf_file *tf_read(const char *path, uint64_t max_bytes, char *err, size_t errlen);
/* The most bytes a file of ntensors tensors (each name at most TF_NAME_MAX bytes, at most 4
 * dims) holding data_bytes of tensor data takes: a reader's max_bytes. */
uint64_t tf_max_bytes(int ntensors, uint64_t data_bytes);
const tf_tensor *tf_find(const tf_file *f, const char *name);

#endif
