/* test_csv.c: csv.h writes exactly the bytes it should, under a temporary name,
 * and refuses bad rows with a message that names the counts.
 *
 * The tests work in one directory made with mkdtemp in the working directory
 * (CTest runs this in the build tree); each removes what it made, and main
 * removes the directory at the end. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, mkdir: POSIX, not C17 */

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/csv.h"
#include "labkit/status.h"
#include "test_files.h"

/* The directory every test works in: made by main, removed at the end. */
static char dir[] = "test_csv_XXXXXX";

/* Opens a CSV file named name in dir with the given header; writes its path to
 * path. NULL, and a recorded failure, if csv_open refuses. */
static csv_file *open_in_dir(char *path, size_t size, const char *name, const char *const *columns,
                             int ncolumns)
{
    snprintf(path, size, "%s/%s", dir, name);
    csv_file *f = NULL;
    EXPECT_STATUS(csv_open(&f, path, columns, ncolumns), STATUS_OK);
    return f;
}

/* ---- the tests ------------------------------------------------------------------- */

static void test_rows_are_written_byte_for_byte_and_only_on_close(void)
{
    char path[512], content[512] = "";
    const char *columns[] = { "n", "time_s", "gflops" };
    csv_file *f = open_in_dir(path, sizeof path, "times.csv", columns, 3);
    REQUIRE(f != NULL);
    EXPECT_STATUS(csv_row(f, (const double[]){ 64, 0.5, 12.25 }, 3), STATUS_OK);
    EXPECT_STATUS(csv_row(f, (const double[]){ 1e6, 1.0 / 3.0, -2 }, 3), STATUS_OK);
    EXPECT_STATUS(csv_row_text(f, (const char *const[]){ "128", "", "x" }, 3), STATUS_OK);

    /* While open, the rows live under another name: the destination is absent. */
    EXPECT(!file_exists(path));
    EXPECT(count_entries(dir) == 1);

    EXPECT_STATUS(csv_close(f), STATUS_OK);
    EXPECT(read_file(path, content, sizeof content) >= 0);
    EXPECT(strcmp(content, "n,time_s,gflops\n"
                           "64,0.5,12.25\n"
                           "1000000,0.333333333,-2\n"
                           "128,,x\n") == 0);
    EXPECT(count_entries(dir) == 1); /* the temporary file was renamed, not copied */
cleanup:
    remove(path);
}

static void test_numbers_keep_nine_significant_digits(void)
{
    char path[512], content[256] = "";
    const char *columns[] = { "v" };
    csv_file *f = open_in_dir(path, sizeof path, "numbers.csv", columns, 1);
    const double values[] = { 0.1, 123456789012.0, 1.5e-7, 3.14159265358979, 0 };
    for (int i = 0; f != NULL && i < 5; i++) {
        EXPECT_STATUS(csv_row(f, &values[i], 1), STATUS_OK);
    }
    EXPECT_STATUS(csv_close(f), STATUS_OK);
    read_file(path, content, sizeof content);
    EXPECT(strcmp(content, "v\n0.1\n1.23456789e+11\n1.5e-07\n3.14159265\n0\n") == 0);
    remove(path);
}

static void test_text_cells_and_header_are_quoted_per_rfc4180(void)
{
    char path[512], content[512] = "";
    const char *columns[] = { "device", "note, with comma", "say \"hi\"" };
    csv_file *f = open_in_dir(path, sizeof path, "quoted.csv", columns, 3);
    REQUIRE(f != NULL);
    EXPECT_STATUS(csv_row_text(f, (const char *const[]){ "cpu", "a,b", "plain" }, 3), STATUS_OK);
    EXPECT_STATUS(csv_row_text(f, (const char *const[]){ "sim:0", "two\nlines", "\"q\"" }, 3), STATUS_OK);
    EXPECT_STATUS(csv_row_text(f, (const char *const[]){ " spaces ", "cr\r", "it's" }, 3), STATUS_OK);
    EXPECT_STATUS(csv_close(f), STATUS_OK);
    read_file(path, content, sizeof content);
    EXPECT(strcmp(content, "device,\"note, with comma\",\"say \"\"hi\"\"\"\n"
                           "cpu,\"a,b\",plain\n"
                           "sim:0,\"two\nlines\",\"\"\"q\"\"\"\n"
                           " spaces ,\"cr\r\",it's\n") == 0);
cleanup:
    remove(path);
}

static void test_a_row_of_the_wrong_length_is_refused_with_both_counts(void)
{
    char path[512], content[256] = "";
    const char *columns[] = { "a", "b" };
    csv_file *f = open_in_dir(path, sizeof path, "counts.csv", columns, 2);
    REQUIRE(f != NULL);
    clear_error();
    EXPECT_STATUS(csv_row(f, (const double[]){ 1, 2, 3 }, 3), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "3 values");
    EXPECT_CONTAINS(last_error(), "2 columns");
    EXPECT_CONTAINS(last_error(), "counts.csv");
    clear_error();
    EXPECT_STATUS(csv_row_text(f, (const char *const[]){ "x" }, 1), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "1 cells");
    EXPECT_CONTAINS(last_error(), "2 columns");
    EXPECT_STATUS(csv_row_text(f, (const char *const[]){ "x", NULL }, 2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "cell 1 is NULL");
    EXPECT_STATUS(csv_row(f, NULL, 2), STATUS_BAD_ARGUMENT);

    /* The refused rows left no trace: the file holds the good row only. */
    EXPECT_STATUS(csv_row(f, (const double[]){ 1, 2 }, 2), STATUS_OK);
    EXPECT_STATUS(csv_close(f), STATUS_OK);
    read_file(path, content, sizeof content);
    EXPECT(strcmp(content, "a,b\n1,2\n") == 0);
cleanup:
    remove(path);
}

static void test_discard_leaves_nothing_behind(void)
{
    char path[512];
    const char *columns[] = { "a" };
    csv_file *f = open_in_dir(path, sizeof path, "discarded.csv", columns, 1);
    EXPECT_STATUS(csv_row(f, (const double[]){ 1 }, 1), STATUS_OK);
    EXPECT(count_entries(dir) == 1); /* the temporary file */
    csv_discard(f);
    EXPECT(!file_exists(path));
    EXPECT(count_entries(dir) == 0);
    csv_discard(NULL); /* allowed, does nothing */
}

static void test_close_replaces_an_existing_file(void)
{
    char path[512], content[256] = "";
    snprintf(path, sizeof path, "%s/old.csv", dir);
    FILE *old = fopen(path, "w");
    EXPECT(old != NULL);
    if (old != NULL) {
        fputs("stale contents that are longer than the new file\n", old);
        fclose(old);
    }
    const char *columns[] = { "new" };
    csv_file *f = NULL;
    EXPECT_STATUS(csv_open(&f, path, columns, 1), STATUS_OK);
    read_file(path, content, sizeof content);
    EXPECT(strncmp(content, "stale", 5) == 0); /* untouched until the close */
    EXPECT_STATUS(csv_close(f), STATUS_OK);
    read_file(path, content, sizeof content);
    EXPECT(strcmp(content, "new\n") == 0);
    remove(path);
}

static void test_bad_arguments_are_refused(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    const char *columns[] = { "a", "b" };
    const char *null_column[] = { "a", NULL };
    csv_file *f = (csv_file *)&f; /* any non-NULL value: csv_open must reset it */

    EXPECT_STATUS(csv_open(NULL, path, columns, 2), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(csv_open(&f, NULL, columns, 2), STATUS_BAD_ARGUMENT);
    EXPECT(f == NULL);
    EXPECT_STATUS(csv_open(&f, "", columns, 2), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(csv_open(&f, path, NULL, 2), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(csv_open(&f, path, columns, 0), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "ncolumns");
    EXPECT_STATUS(csv_open(&f, path, null_column, 2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "column name 1");
    EXPECT_STATUS(csv_row(NULL, (const double[]){ 1, 2 }, 2), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(csv_row_text(NULL, columns, 2), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(csv_close(NULL), STATUS_BAD_ARGUMENT);
    EXPECT(count_entries(dir) == 0); /* nothing was created on the way */
}

static void test_a_missing_directory_is_an_io_error_naming_the_path(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/no/such/dir/x.csv", dir);
    const char *columns[] = { "a" };
    csv_file *f = NULL;
    EXPECT_STATUS(csv_open(&f, path, columns, 1), STATUS_IO_FAILED);
    EXPECT(f == NULL);
    EXPECT_CONTAINS(last_error(), "no/such/dir/x.csv");
    EXPECT_CONTAINS(last_error(), "No such file or directory");
}

static void test_a_failed_rename_is_an_io_error_and_removes_the_temporary(void)
{
    /* The destination becomes a directory while the rows are written: the
     * final rename would replace it, so the close refuses. */
    char path[512];
    snprintf(path, sizeof path, "%s/taken.csv", dir);
    const char *columns[] = { "a" };
    csv_file *f = NULL;
    EXPECT_STATUS(csv_open(&f, path, columns, 1), STATUS_OK);
    EXPECT_STATUS(csv_row(f, (const double[]){ 1 }, 1), STATUS_OK);
    EXPECT(mkdir(path, 0755) == 0);
    EXPECT(count_entries(dir) == 2);
    EXPECT_STATUS(csv_close(f), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "became a directory");
    EXPECT_CONTAINS(last_error(), "taken.csv");
    EXPECT(count_entries(dir) == 1); /* only the directory: no temporary left */
    rmdir(path);
}

static void test_a_directory_or_a_link_is_refused_before_anything_is_written(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/taken.csv", dir);
    EXPECT(mkdir(path, 0755) == 0);
    const char *columns[] = { "a" };
    csv_file *f = NULL;
    EXPECT_STATUS(csv_open(&f, path, columns, 1), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "is a directory");
    EXPECT(f == NULL && count_entries(dir) == 1);
    rmdir(path);
    EXPECT(symlink("/proc/self/fd/1", path) == 0);
    EXPECT_STATUS(csv_open(&f, path, columns, 1), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "symbolic link");
    EXPECT(f == NULL && count_entries(dir) == 1);
    unlink(path);
}

static void test_a_250_character_name_is_written(void)
{
    char name[256], path[512], content[64] = "";
    memset(name, 'n', 246);
    memcpy(name + 246, ".csv", 5);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const char *columns[] = { "a" };
    csv_file *f = NULL;
    EXPECT_STATUS(csv_open(&f, path, columns, 1), STATUS_OK);
    EXPECT_STATUS(csv_row(f, (const double[]){ 1 }, 1), STATUS_OK);
    EXPECT_STATUS(csv_close(f), STATUS_OK);
    read_file(path, content, sizeof content);
    EXPECT_STREQ(content, "a\n1\n");
    remove(path);
}

static void test_dash_writes_to_standard_output(void)
{
    const char *columns[] = { "a", "b" };
    csv_file *f = NULL;
    capture c;
    char out[256];
    capture_begin(&c, STDOUT_FILENO);
    status opened = csv_open(&f, "-", columns, 2);
    if (opened == STATUS_OK) {
        csv_row(f, (const double[]){ 1, 2 }, 2);
        csv_close(f);
    }
    capture_end(&c, out, sizeof out);
    EXPECT_STATUS(opened, STATUS_OK);
    EXPECT_STREQ(out, "a,b\n1,2\n");
    EXPECT(count_entries(dir) == 0);
}

int main(void)
{
    if (mkdtemp(dir) == NULL) {
        perror("test_csv: mkdtemp");
        return 1;
    }
    RUN_TEST(test_rows_are_written_byte_for_byte_and_only_on_close);
    RUN_TEST(test_numbers_keep_nine_significant_digits);
    RUN_TEST(test_text_cells_and_header_are_quoted_per_rfc4180);
    RUN_TEST(test_a_row_of_the_wrong_length_is_refused_with_both_counts);
    RUN_TEST(test_discard_leaves_nothing_behind);
    RUN_TEST(test_close_replaces_an_existing_file);
    RUN_TEST(test_bad_arguments_are_refused);
    RUN_TEST(test_a_missing_directory_is_an_io_error_naming_the_path);
    RUN_TEST(test_a_failed_rename_is_an_io_error_and_removes_the_temporary);
    RUN_TEST(test_a_directory_or_a_link_is_refused_before_anything_is_written);
    RUN_TEST(test_a_250_character_name_is_written);
    RUN_TEST(test_dash_writes_to_standard_output);
    remove_tree(dir);
    return harness_finish();
}
