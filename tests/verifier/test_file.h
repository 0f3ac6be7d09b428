/* test_file.h - a fixture file read whole into memory, for the in-process
 * verifier tests (include after cmocka.h: it asserts). */
#ifndef TEST_FILE_H
#define TEST_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct file {
    uint8_t *data;
    size_t len;
};

static inline struct file load(const char *path)
{
    struct file f = {0};
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    f.len = (size_t)ftell(fp);
    rewind(fp);
    f.data = malloc(f.len);
    assert_non_null(f.data);
    assert_int_equal(fread(f.data, 1, f.len, fp), f.len);
    fclose(fp);
    return f;
}

#endif
