/* Named-tensor files: checkpoints, exported weights and the PyTorch parity fixtures.
 *
 * Format (little endian), read identically by tests/reference/tensorfile.py:
 *   "RPTF"  u32 version (1)  u32 count
 *   count records:  u32 name_len, name bytes (no NUL), u32 dtype (0 f32, 1 i32, 2 f64),
 *                   u32 ndim, u32 dims[ndim], data (product(dims) elements)
 * Writing goes through the atomic writer (engine/atomicfile.h): a temporary file created
 * exclusively beside PATH, never through a link, renamed over PATH on success, so a reader
 * never sees a half-written file and a planted link is never written through.
 */
#ifndef REPRO_TENSORFILE_H
#define REPRO_TENSORFILE_H

#include <stddef.h>
#include <stdint.h>

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
/* Adds a copy of data; returns 0, or -1 when out of memory. */
int tf_add(tf_file *f, const char *name, enum tf_dtype dtype, int ndim, const uint32_t *dims,
           const void *data);
/* Atomic write; returns 0, or -1 with errno set. */
int tf_write(const tf_file *f, const char *path);
/* Reads a whole file; NULL on error with a message in err. */
tf_file *tf_read(const char *path, char *err, size_t errlen);
const tf_tensor *tf_find(const tf_file *f, const char *name);

#endif
