/* A minimal JSON reader for the C tests: enough to read the reference vectors in
 * tests/vectors/ (objects, arrays, numbers, strings, true/false/null).  Not a
 * validator: it trusts well-formed input and gives NULL on anything it cannot parse.
 *   jv *doc = jv_load("tests/vectors/stats.json");
 *   double x = jv_num(jv_get(doc, "paired_AB", "mean", NULL));
 *   jv_free(doc);
 */
#ifndef REPRO_JSON_MIN_H
#define REPRO_JSON_MIN_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ } jv_type;

typedef struct jv {
    jv_type type;
    double num;       /* JV_NUM; JV_BOOL as 0/1 */
    char *str;        /* JV_STR */
    struct jv *items; /* JV_ARR, JV_OBJ: (n) values */
    char **keys;      /* JV_OBJ: (n) keys */
    size_t n;
} jv;

static void jv_clear(jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jv_clear(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

static void jv_free(jv *v)
{
    if (!v)
        return;
    jv_clear(v);
    free(v);
}

static const char *jv_skip(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
        s++;
    return s;
}

/* A string literal at s (just past the opening quote); escapes other than \" and \\
 * become '?'. */
static const char *jv_parse_str(const char *s, char **out)
{
    size_t cap = 16, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    while (*s && *s != '"') {
        char c = *s++;
        if (c == '\\') {
            c = *s++;
            if (c == 'u')
                s += 4;
            if (c != '"' && c != '\\' && c != '/')
                c = '?';
        }
        if (len + 1 >= cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                free(buf);
                return NULL;
            }
            buf = grown;
        }
        buf[len++] = c;
    }
    if (*s != '"') {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    *out = buf;
    return s + 1;
}

static const char *jv_parse(const char *s, jv *v);

static const char *jv_parse_list(const char *s, jv *v, char close, int with_keys)
{
    size_t cap = 0;
    s = jv_skip(s);
    if (*s == close)
        return s + 1;
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 8;
            jv *items = realloc(v->items, cap * sizeof *items);
            if (!items)
                return NULL;
            v->items = items;
            if (with_keys) {
                char **keys = realloc(v->keys, cap * sizeof *keys);
                if (!keys)
                    return NULL;
                v->keys = keys;
            }
        }
        jv *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        if (with_keys) {
            s = jv_skip(s);
            if (*s != '"' || !(s = jv_parse_str(s + 1, &v->keys[v->n])))
                return NULL;
            s = jv_skip(s);
            if (*s++ != ':') {
                free(v->keys[v->n]);
                return NULL;
            }
        }
        s = jv_parse(s, item);
        if (!s) {
            if (with_keys)
                free(v->keys[v->n]);
            jv_clear(item);
            return NULL;
        }
        v->n++;
        s = jv_skip(s);
        if (*s == ',')
            s++;
        else if (*s == close)
            return s + 1;
        else
            return NULL;
    }
}

static const char *jv_parse(const char *s, jv *v)
{
    s = jv_skip(s);
    memset(v, 0, sizeof *v);
    switch (*s) {
    case '{':
        v->type = JV_OBJ;
        return jv_parse_list(s + 1, v, '}', 1);
    case '[':
        v->type = JV_ARR;
        return jv_parse_list(s + 1, v, ']', 0);
    case '"':
        v->type = JV_STR;
        return jv_parse_str(s + 1, &v->str);
    case 't':
        v->type = JV_BOOL;
        v->num = 1;
        return strncmp(s, "true", 4) == 0 ? s + 4 : NULL;
    case 'f':
        v->type = JV_BOOL;
        return strncmp(s, "false", 5) == 0 ? s + 5 : NULL;
    case 'n':
        v->type = JV_NULL;
        return strncmp(s, "null", 4) == 0 ? s + 4 : NULL;
    default: {
        char *end;
        v->type = JV_NUM;
        v->num = strtod(s, &end);
        return end == s ? NULL : end;
    }
    }
}

static jv *jv_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap) {
            cap = 2 * cap + 4096 + 1;
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                fclose(f);
                return NULL;
            }
            text = grown;
        }
        got = fread(text + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    fclose(f);
    text[len] = '\0';
    jv *v = malloc(sizeof *v);
    const char *end = v ? jv_parse(text, v) : NULL;
    free(text);
    if (!end) {
        if (v)
            jv_clear(v);
        free(v);
        return NULL;
    }
    return v;
}

/* Follows object keys (a NULL-terminated list); NULL when one is missing. */
static const jv *jv_get(const jv *v, ...)
{
    va_list ap;
    va_start(ap, v);
    const char *key;
    while (v && (key = va_arg(ap, const char *)) != NULL) {
        const jv *next = NULL;
        if (v->type == JV_OBJ)
            for (size_t i = 0; i < v->n && !next; i++)
                if (strcmp(v->keys[i], key) == 0)
                    next = &v->items[i];
        v = next;
    }
    va_end(ap);
    return v;
}

static const jv *jv_at(const jv *v, size_t i)
{
    return v && v->type == JV_ARR && i < v->n ? &v->items[i] : NULL;
}

/* The number (or boolean as 0/1), NaN when v is absent or of another type. */
static double jv_num(const jv *v)
{
    return v && (v->type == JV_NUM || v->type == JV_BOOL) ? v->num : NAN;
}

#endif
